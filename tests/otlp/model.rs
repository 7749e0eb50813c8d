//! What the tests compare: a request's profiles as the collector wrote them
//! (JSON with the dictionary's indices resolved), and a snapshot's call
//! sections, both as own figures per (section, thread, call path). A frame
//! with a source line (the agent's `lines`) is `name:line` in both.

use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};

/// One sample, its stack root first.
#[derive(Debug, Clone)]
pub struct Sample {
    pub thread: String,
    pub stack: Vec<String>,
    pub value: i64,
}

#[derive(Debug, Clone)]
pub struct Profile {
    pub ty: String,
    pub unit: String,
    pub period_type: Option<(String, String)>,
    pub period: i64,
    pub start: u64,
    pub duration: u64,
    pub samples: Vec<Sample>,
}

/// One request: its resource's attributes and profiles.
#[derive(Debug, Clone)]
pub struct Request {
    pub resource: HashMap<String, String>,
    pub scope: (String, String),
    pub profiles: Vec<Profile>,
}

fn int(v: &Value) -> i64 {
    match v {
        Value::Number(n) => n.as_i64().unwrap(),
        Value::String(s) => s.parse().unwrap(),
        Value::Null => 0,
        other => panic!("not an integer: {other}"),
    }
}

fn idx(v: &Value, key: &str) -> usize {
    int(v.get(key).unwrap_or(&Value::Null)) as usize
}

fn list<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], |a| a.as_slice())
}

/// A JSON request (one line of the file exporter) with every index resolved.
pub fn request(json: &Value) -> Request {
    let dict = &json["dictionary"];
    let strings: Vec<String> = list(dict, "stringTable")
        .iter()
        .map(|s| s.as_str().unwrap().to_owned())
        .collect();
    let s = |i: usize| strings[i].clone();
    let functions: Vec<String> = list(dict, "functionTable")
        .iter()
        .map(|f| s(idx(f, "nameStrindex")))
        .collect();
    let names: HashSet<&String> = functions.iter().collect();
    assert_eq!(names.len(), functions.len(), "one function per name");
    // (function, line) of each location: a function on two lines is two.
    let lines: Vec<(usize, i64)> = list(dict, "locationTable")
        .iter()
        .map(|l| {
            let lines = list(l, "lines");
            assert!(lines.len() <= 1, "a location of one line: {l}");
            lines.first().map_or((0, 0), |line| {
                (
                    idx(line, "functionIndex"),
                    int(line.get("line").unwrap_or(&Value::Null)),
                )
            })
        })
        .collect();
    let distinct: HashSet<&(usize, i64)> = lines.iter().collect();
    assert_eq!(
        distinct.len(),
        lines.len(),
        "one location per function and line"
    );
    let locations: Vec<String> = lines
        .iter()
        .map(|&(function, line)| match line {
            0 => functions[function].clone(),
            line => format!("{}:{line}", functions[function]),
        })
        .collect();
    let stacks: Vec<Vec<String>> = list(dict, "stackTable")
        .iter()
        .map(|st| {
            let mut frames: Vec<String> = list(st, "locationIndices")
                .iter()
                .map(|i| locations[int(i) as usize].clone())
                .collect();
            frames.reverse(); // leaf first in OTLP
            frames
        })
        .collect();
    let any = |v: &Value| -> String {
        if let Some(x) = v.get("stringValue") {
            x.as_str().unwrap().to_owned()
        } else if v.get("stringValueStrindex").is_some() {
            s(idx(v, "stringValueStrindex"))
        } else if let Some(x) = v.get("intValue") {
            int(x).to_string()
        } else {
            String::new()
        }
    };
    let key = |a: &Value| -> String {
        match a.get("key") {
            Some(k) => k.as_str().unwrap().to_owned(),
            None => s(idx(a, "keyStrindex")),
        }
    };
    let attributes: Vec<(String, String)> = list(dict, "attributeTable")
        .iter()
        .map(|a| (key(a), any(&a["value"])))
        .collect();
    let rps = list(json, "resourceProfiles");
    assert_eq!(rps.len(), 1, "one resource per request");
    let rp = &rps[0];
    let resource = list(&rp["resource"], "attributes")
        .iter()
        .map(|a| (key(a), any(&a["value"])))
        .collect();
    let sps = list(rp, "scopeProfiles");
    assert_eq!(sps.len(), 1, "one scope per request");
    let scope = (
        sps[0]["scope"]["name"].as_str().unwrap_or("").to_owned(),
        sps[0]["scope"]["version"].as_str().unwrap_or("").to_owned(),
    );
    let vt = |v: &Value| (s(idx(v, "typeStrindex")), s(idx(v, "unitStrindex")));
    let profiles = list(&sps[0], "profiles")
        .iter()
        .map(|p| {
            let (ty, unit) = vt(&p["sampleType"]);
            let period_type = p.get("periodType").map(vt).filter(|t| !t.0.is_empty());
            Profile {
                ty,
                unit,
                period_type,
                period: int(p.get("period").unwrap_or(&Value::Null)),
                start: int(p.get("timeUnixNano").unwrap_or(&Value::Null)) as u64,
                duration: int(p.get("durationNano").unwrap_or(&Value::Null)) as u64,
                samples: list(p, "samples")
                    .iter()
                    .map(|smp| {
                        let values = list(smp, "values");
                        assert_eq!(values.len(), 1, "one value per sample");
                        let thread = list(smp, "attributeIndices")
                            .iter()
                            .map(|i| &attributes[int(i) as usize])
                            .find(|(k, _)| k == "thread.name")
                            .map(|(_, v)| v.clone())
                            .expect("every sample names its thread");
                        Sample {
                            thread,
                            stack: stacks[idx(smp, "stackIndex")].clone(),
                            value: int(&values[0]),
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    Request {
        resource,
        scope,
        profiles,
    }
}

/// (section, thread, path root first) -> own figures, in the order below.
pub type Figures = BTreeMap<(String, String, Vec<String>), [i64; 3]>;

/// Where each sample type goes: (section, figure slot).
fn slot(ty: &str) -> (&'static str, usize) {
    match ty {
        "samples" => ("sampler", 0),
        "runnable_samples" => ("sampler", 1),
        "calls" => ("profile", 0),
        "wall" => ("profile", 1),
        "cpu" => ("profile", 2),
        "alloc_objects" => ("alloc", 0),
        "alloc_space" => ("alloc", 1),
        "contentions" => ("lock", 0),
        "delay" => ("lock", 1),
        other => panic!("unexpected sample type {other}"),
    }
}

/// The figures of requests, summed; profile times (ns) as µs rounded down,
/// as a snapshot writes them.
pub fn figures(requests: &[Request]) -> Figures {
    let mut f = Figures::new();
    for r in requests {
        for p in &r.profiles {
            let (section, i) = slot(&p.ty);
            for s in &p.samples {
                let e = f
                    .entry((section.into(), s.thread.clone(), s.stack.clone()))
                    .or_default();
                e[i] += s.value;
            }
        }
    }
    for ((section, ..), v) in f.iter_mut() {
        if section == "profile" {
            v[1] /= 1000;
            v[2] /= 1000;
        }
    }
    f.retain(|_, v| *v != [0; 3]);
    f
}

/// A snapshot's own figures per path: sampler (elapsed, hits, with the
/// samples without a frame as `[no Java frame]`), profile (count,
/// methodElapsed, method), alloc (objects, bytes), lock (count, time).
pub fn snapshot_figures(text: &str) -> Figures {
    let doc = roxmltree::Document::parse(text).unwrap();
    let mut f = Figures::new();
    let n =
        |e: roxmltree::Node, a: &str| -> i64 { e.attribute(a).map_or(0, |v| v.parse().unwrap()) };
    for section in doc.root_element().children().filter(|e| e.is_element()) {
        let name = section.tag_name().name();
        let attrs: [&str; 3] = match name {
            "sampler" => ["elapsed", "hits", ""],
            "profile" => ["count", "methodElapsed", "method"],
            "alloc" => ["objects", "bytes", ""],
            "lock" => ["count", "time", ""],
            _ => continue,
        };
        for t in section.children().filter(|t| t.has_tag_name("thread")) {
            let thread = t.attribute("name").unwrap().to_owned();
            let mut roots = [0i64; 2];
            for node in t.descendants().filter(|d| d.has_tag_name("profile")) {
                let mut path: Vec<String> = node
                    .ancestors()
                    .take_while(|a| a.has_tag_name("profile"))
                    .map(|a| {
                        let name = a.attribute("name").unwrap();
                        match a.attribute("line") {
                            Some(line) => format!("{name}:{line}"),
                            None => name.to_owned(),
                        }
                    })
                    .collect();
                path.reverse();
                if name == "sampler" && path.len() == 1 {
                    roots[0] += n(node, "cumulatedElapsed");
                    roots[1] += n(node, "cumulated");
                }
                let e = f.entry((name.into(), thread.clone(), path)).or_default();
                for (i, a) in attrs.iter().enumerate() {
                    if !a.is_empty() {
                        e[i] += n(node, a);
                    }
                }
            }
            if name == "sampler" {
                let frameless = [
                    n(t, "cumulatedElapsed") - roots[0],
                    n(t, "cumulated") - roots[1],
                    0,
                ];
                let key = (name.into(), thread, vec!["[no Java frame]".to_owned()]);
                let e = f.entry(key).or_default();
                e[0] += frameless[0];
                e[1] += frameless[1];
            }
        }
    }
    f.retain(|_, v| *v != [0; 3]);
    f
}

/// The agent's `otlp` summary line in `stderr`.
fn summary_line(stderr: &str) -> &str {
    stderr
        .lines()
        .find(|l| l.starts_with("profrj: otlp to "))
        .unwrap_or_else(|| panic!("no otlp summary in:\n{stderr}"))
}

/// The number just before `word` in `line` (after a space or a
/// parenthesis); 0 without `word`.
fn number_before(line: &str, word: &str) -> u64 {
    line.find(word).map_or(0, |i| {
        line[..i]
            .trim_end()
            .rsplit([' ', '('])
            .next()
            .unwrap()
            .parse()
            .unwrap()
    })
}

/// The summary line's counts: (sent, requests, dropped, retries), in
/// periods.
pub fn summary(stderr: &str) -> (u64, u64, u64, u64) {
    let line = summary_line(stderr);
    let after = |word: &str| -> u64 {
        line.find(word).map_or(0, |i| {
            line[i + word.len()..]
                .split(|c: char| !c.is_ascii_digit())
                .next()
                .unwrap()
                .parse()
                .unwrap()
        })
    };
    (
        number_before(line, " periods sent"),
        after("periods sent of "),
        number_before(line, " dropped ("),
        number_before(line, " retries"),
    )
}

/// The summary line's pushes (requests the collector accepted) and the
/// sampling samples it says were dropped.
pub fn pushes_and_dropped_samples(stderr: &str) -> (u64, u64) {
    let line = summary_line(stderr);
    (
        number_before(line, " pushes;"),
        number_before(line, " samples;"),
    )
}
