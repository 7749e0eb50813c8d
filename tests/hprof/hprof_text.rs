//! What the HPROF tests share: a small reader of the HPROF text (THREAD,
//! TRACE, CPU SAMPLES, CPU TIME, SITES, MONITOR TIME) into rows, the
//! harness snapshots it is converted from, and a snapshot's method name as
//! HPROF's method column writes it.

use crate::common::*;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// A row of CPU SAMPLES or CPU TIME.
#[derive(Debug)]
pub struct CpuRow {
    pub self_pct: f64,
    pub accum_pct: f64,
    pub count: u64,
    pub trace: u64,
    pub method: String,
}

/// A row of SITES.
#[derive(Debug)]
pub struct SiteRow {
    pub self_pct: f64,
    pub live: (u64, u64),
    pub allocated: (u64, u64),
    pub trace: u64,
    pub class: String,
}

#[derive(Debug, Default)]
pub struct Hprof {
    pub threads: Vec<(u64, String)>,
    pub ended: Vec<u64>,
    pub traces: HashMap<u64, Vec<String>>,
    /// Block title → (header total, rows).
    pub cpu: HashMap<String, (u64, Vec<CpuRow>)>,
    /// "ordered by …" → rows.
    pub sites: Vec<(String, Vec<SiteRow>)>,
}

pub fn pct(s: &str) -> f64 {
    s.strip_suffix('%').unwrap().parse().unwrap()
}

/// Reads java.hprof.txt as HPROF writes it; panics on any line it does not
/// expect, so every block must parse back.
pub fn read(text: &str) -> Hprof {
    let mut h = Hprof::default();
    let mut lines = text.lines().peekable();
    let first = lines.next().unwrap();
    assert!(first.starts_with("JAVA PROFILE 1.0.1, created "), "{first}");
    for l in lines.by_ref() {
        if l == "--------" {
            break;
        }
    }
    while let Some(l) = lines.next() {
        if l.is_empty() {
            continue;
        }
        if let Some(rest) = l.strip_prefix("THREAD START (") {
            let id = rest
                .split("id = ")
                .nth(1)
                .unwrap()
                .split(',')
                .next()
                .unwrap();
            let name = rest.split("name=\"").nth(1).unwrap();
            let name = name.rsplit_once("\", group=").unwrap().0;
            assert!(rest.ends_with(')'), "{l}");
            h.threads.push((id.parse().unwrap(), name.to_owned()));
        } else if let Some(rest) = l.strip_prefix("THREAD END (id = ") {
            h.ended
                .push(rest.strip_suffix(')').unwrap().parse().unwrap());
        } else if let Some(rest) = l.strip_prefix("TRACE ") {
            let id: u64 = rest.strip_suffix(':').unwrap().parse().unwrap();
            let mut frames = Vec::new();
            while let Some(f) = lines.next_if(|f| f.starts_with('\t')) {
                frames.push(f[1..].to_owned());
            }
            assert!(!frames.is_empty(), "TRACE {id} without frames");
            assert!(h.traces.insert(id, frames).is_none(), "TRACE {id} twice");
        } else if l.starts_with("CPU SAMPLES BEGIN")
            || l.starts_with("CPU TIME (ms) BEGIN")
            || l.starts_with("MONITOR TIME BEGIN")
        {
            let title = l.split(" BEGIN").next().unwrap().to_owned();
            let monitors = title == "MONITOR TIME";
            let total: u64 = l
                .split("(total = ")
                .nth(1)
                .unwrap()
                .split(')')
                .next()
                .unwrap()
                .trim_end_matches(" ms")
                .parse()
                .unwrap();
            let head = if monitors { "monitor" } else { "method" };
            assert_eq!(
                lines.next().map(String::from),
                Some(format!("rank   self  accum   count trace {head}"))
            );
            let mut rows = Vec::new();
            for r in lines.by_ref() {
                if r == format!("{title} END") {
                    break;
                }
                let w: Vec<&str> = r.split_whitespace().collect();
                // A monitor is its class and "(Java)", as HPROF wrote it.
                let w = match monitors {
                    true => {
                        assert_eq!(w.last(), Some(&"(Java)"), "{r}");
                        w[..w.len() - 1].to_vec()
                    }
                    false => w,
                };
                assert_eq!(w.len(), 6, "{r}");
                assert_eq!(w[0].parse::<usize>().unwrap(), rows.len() + 1, "rank: {r}");
                rows.push(CpuRow {
                    self_pct: pct(w[1]),
                    accum_pct: pct(w[2]),
                    count: w[3].parse().unwrap(),
                    trace: w[4].parse().unwrap(),
                    method: w[5].to_owned(),
                });
            }
            assert!(h.cpu.insert(title, (total, rows)).is_none());
        } else if let Some(rest) = l.strip_prefix("SITES BEGIN (ordered by ") {
            let order = rest.split(')').next().unwrap().to_owned();
            assert_eq!(
                lines.next(),
                Some("          percent          live          alloc'ed  stack class")
            );
            assert_eq!(
                lines.next(),
                Some(" rank   self  accum     bytes objs     bytes  objs trace name")
            );
            let mut rows = Vec::new();
            for r in lines.by_ref() {
                if r == "SITES END" {
                    break;
                }
                let w: Vec<&str> = r.split_whitespace().collect();
                assert!(w.len() >= 9, "{r}");
                assert_eq!(w[0].parse::<usize>().unwrap(), rows.len() + 1, "rank: {r}");
                let n = |i: usize| w[i].parse::<u64>().unwrap();
                rows.push(SiteRow {
                    self_pct: pct(w[1]),
                    live: (n(3), n(4)),
                    allocated: (n(5), n(6)),
                    trace: n(7),
                    class: w[8..].join(" "),
                });
            }
            h.sites.push((order, rows));
        } else {
            panic!("unexpected line: {l:?}");
        }
    }
    // Every trace a row names is defined; shares add up in order.
    let mut named = Vec::new();
    for (_, rows) in h.cpu.values() {
        let mut accum = 0.0;
        for r in rows {
            accum += r.self_pct;
            assert!(
                (accum - r.accum_pct).abs() < 0.02 * rows.len() as f64,
                "{r:?}"
            );
            named.push(r.trace);
        }
    }
    for (_, rows) in &h.sites {
        named.extend(rows.iter().map(|r| r.trace));
    }
    for t in named {
        assert!(h.traces.contains_key(&t), "TRACE {t} is not defined");
    }
    let ids: Vec<u64> = h.threads.iter().map(|t| t.0).collect();
    assert!(h.ended.iter().all(|e| ids.contains(e)));
    h
}

/// `p.C.m(args)` → `p.C.m`; a constructor `p.C(args)` → `p.C.<init>`. A
/// constructor is told by its class being one whose methods the snapshot
/// names (`classes`: a hidden class `Foo$$Lambda$14.0x…` has no capital),
/// else by a capital; the converter's rule, which the harness's names
/// (lowercase methods, uppercase classes) also meet.
pub fn method_column(name: &str, classes: &HashSet<String>) -> String {
    if !name.contains('(') {
        // No Java method (a pseudo-frame, a stub): one frame, spaces as `_`.
        return name.replace(' ', "_");
    }
    let before = name.split('(').next().unwrap();
    let (prefix, last) = before.rsplit_once('.').unwrap_or(("", before));
    let upper = last.starts_with(|c: char| c.is_uppercase());
    let ctor = !last.starts_with('<')
        && (classes.contains(before) || (!classes.contains(prefix) && upper));
    if ctor {
        format!("{before}.<init>")
    } else {
        before.to_owned()
    }
}

/// Every class whose method a node of the snapshot names (`p.C.m(…)` with
/// `m` lowercase, `<init>`-like or `_`).
pub fn classes(doc: &roxmltree::Document) -> HashSet<String> {
    let mut out = HashSet::new();
    for n in doc.descendants().filter(|d| d.has_tag_name("profile")) {
        let Some(name) = n.attribute("name") else {
            continue;
        };
        if let Some((prefix, last)) = name.split('(').next().and_then(|b| b.rsplit_once('.')) {
            if last.starts_with(|c: char| c.is_lowercase() || c == '<' || c == '_') {
                out.insert(prefix.to_owned());
            }
        }
    }
    out
}

pub fn convert(snap: &Path, extra: &[&str]) -> Hprof {
    let mut args = vec!["convert", s(snap), "--to", "hprof"];
    args.extend_from_slice(extra);
    read(&profrj_ok(&args))
}

pub fn snapshot(name: &str, options: &str, main: &str) -> (PathBuf, String) {
    let dir = temp_dir(name);
    let snap = dir.join("snapshot.xml");
    let run = run_java(
        &dir,
        &format!("{options},file={}", snap.display()),
        main,
        &[],
    );
    run.assert_success();
    let xml = read_snapshot(&snap);
    (snap, xml)
}
