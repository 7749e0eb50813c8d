//! What the reader tests share: running `profrj`, reading its tables and
//! collapsed lines, decoding pprof with `protoc` (against
//! tests/data/profile.proto) and loading the flame page in headless Chromium.

use super::attr_u64;
use std::collections::HashMap;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

pub fn profrj(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_profrj"))
        .args(args)
        .output()
        .expect("cannot run profrj")
}

pub fn profrj_ok(args: &[&str]) -> String {
    let out = profrj(args);
    assert!(
        out.status.success(),
        "profrj {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Sum of an attribute over every `<profile>` node of a section.
pub fn sum_nodes(xml: &str, section: &str, attr: &str) -> u64 {
    let doc = roxmltree::Document::parse(xml).unwrap();
    doc.root_element()
        .children()
        .filter(|c| c.has_tag_name(section))
        .flat_map(|c| c.descendants())
        .filter(|d| d.has_tag_name("profile") && d.parent().is_some_and(|p| !p.has_tag_name("doc")))
        .map(|d| d.attribute(attr).map_or(0, |v| v.parse::<u64>().unwrap()))
        .sum()
}

/// Sum of a `<thread>` attribute over a section.
pub fn sum_threads(xml: &str, section: &str, attr: &str) -> u64 {
    let doc = roxmltree::Document::parse(xml).unwrap();
    doc.root_element()
        .children()
        .filter(|c| c.has_tag_name(section))
        .flat_map(|c| c.children())
        .filter(|t| t.has_tag_name("thread"))
        .map(|t| attr_u64(t, attr))
        .sum()
}

/// A report row: (self %, total %, columns) for the method named `name`.
pub fn report_row<'a>(report: &'a str, name: &str) -> Vec<&'a str> {
    report
        .lines()
        .find(|l| l.ends_with(&format!("  {name}")))
        .unwrap_or_else(|| panic!("no row for {name} in\n{report}"))
        .split_whitespace()
        .collect()
}

/// The rows of a report's table: after the `rank` header, before the END line.
pub fn table_rows(report: &str) -> Vec<&str> {
    report
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("rank"))
        .skip(1)
        .take_while(|l| !l.contains(" END "))
        .collect()
}

pub fn percent(col: &str) -> f64 {
    col.trim_end_matches('%').parse().unwrap()
}

/// Parses `frames count` lines: total and per stack.
pub fn collapsed_lines(text: &str) -> HashMap<String, u64> {
    let mut m = HashMap::new();
    for line in text.lines() {
        let (stack, n) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("bad line {line:?}"));
        let n: u64 = n
            .parse()
            .unwrap_or_else(|_| panic!("bad count in {line:?}"));
        assert!(n > 0, "{line}");
        // A stack may come more than once (per thread, streamed): its
        // counts add up, as flamegraph.pl and speedscope sum them.
        let e: &mut u64 = m.entry(stack.to_owned()).or_default();
        *e = e.saturating_add(n);
    }
    m
}

/// `protoc --decode` of a gzipped profile: the text form.
pub fn protoc_decode(pb_gz: &Path) -> String {
    let raw = {
        use std::io::Read;
        let mut d = gunzip(pb_gz);
        let mut v = Vec::new();
        d.read_to_end(&mut v).unwrap();
        v
    };
    let proto_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    let mut child = Command::new("protoc")
        .arg(format!("--proto_path={}", proto_dir.display()))
        .args(["--decode", "perftools.profiles.Profile", "profile.proto"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("protoc is required for this test (Debian: apt-get install protobuf-compiler; .ci/run installs it)");
    {
        use std::io::Write;
        child.stdin.take().unwrap().write_all(&raw).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "protoc: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// gunzip with the system's `gzip -dc` (the crate's flate2 is not a test dependency).
pub fn gunzip(p: &Path) -> std::io::Cursor<Vec<u8>> {
    let out = Command::new("gzip")
        .arg("-dc")
        .arg(p)
        .output()
        .expect("gzip");
    assert!(out.status.success(), "not gzip: {}", p.display());
    std::io::Cursor::new(out.stdout)
}

/// What the test reads from protoc's text form.
pub struct Decoded {
    pub strings: Vec<String>,
    pub sample_types: Vec<(usize, usize)>,
    /// Per sample: values, and location ids.
    pub samples: Vec<(Vec<u64>, Vec<u64>)>,
    /// function id -> name index
    pub functions: HashMap<u64, usize>,
    pub default_sample_type: usize,
}

pub fn parse_decoded(text: &str) -> Decoded {
    let mut d = Decoded {
        strings: Vec::new(),
        sample_types: Vec::new(),
        samples: Vec::new(),
        functions: HashMap::new(),
        default_sample_type: 0,
    };
    let mut block: Vec<String> = Vec::new();
    let (mut vt, mut func) = ((0, 0), (0, 0));
    for line in text.lines().map(str::trim) {
        if let Some(name) = line.strip_suffix(" {") {
            block.push(name.to_owned());
            match name {
                "sample" if block.len() == 1 => d.samples.push((Vec::new(), Vec::new())),
                "sample_type" => vt = (0, 0),
                "function" => func = (0, 0),
                _ => {}
            }
            continue;
        }
        if line == "}" {
            match block.pop().as_deref() {
                Some("sample_type") => d.sample_types.push(vt),
                Some("function") => {
                    d.functions.insert(func.0, func.1);
                }
                _ => {}
            }
            continue;
        }
        let (k, v) = line
            .split_once(": ")
            .unwrap_or_else(|| panic!("protoc line {line:?}"));
        let num = || v.parse::<u64>().unwrap();
        match (
            block
                .iter()
                .map(String::as_str)
                .collect::<Vec<_>>()
                .as_slice(),
            k,
        ) {
            ([], "string_table") => d.strings.push(unquote(v)),
            ([], "default_sample_type") => d.default_sample_type = num() as usize,
            (["sample_type"], "type") => vt.0 = num() as usize,
            (["sample_type"], "unit") => vt.1 = num() as usize,
            (["sample"], "value") => d.samples.last_mut().unwrap().0.push(num()),
            (["sample"], "location_id") => d.samples.last_mut().unwrap().1.push(num()),
            (["function"], "id") => func.0 = num(),
            (["function"], "name") => func.1 = num() as usize,
            _ => {}
        }
    }
    d
}

/// protoc's text-format string literal (names here are ASCII; octal escapes decoded).
pub fn unquote(v: &str) -> String {
    let inner = &v[1..v.len() - 1];
    let mut out = Vec::new();
    let b = inner.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            let c = b[i + 1];
            if c.is_ascii_digit() {
                let oct = std::str::from_utf8(&b[i + 1..i + 4]).unwrap();
                out.push(u8::from_str_radix(oct, 8).unwrap());
                i += 4;
                continue;
            }
            out.push(match c {
                b'n' => b'\n',
                b't' => b'\t',
                c => c,
            });
            i += 2;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// Runs Chromium headless on a page; returns stdout. Fails loudly without it.
pub fn chromium(args: &[&str]) -> String {
    let mut child = Command::new("chromium")
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("chromium is required for this test (Debian: apt-get install chromium; .ci/run installs it)");
    let start = Instant::now();
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        use std::io::Read;
        stdout.read_to_string(&mut s).unwrap();
        s
    });
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "chromium {args:?}: {status}");
            break;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium {args:?} did not finish in 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    reader.join().unwrap()
}

/// The frame `<div>`s of a dumped page, as attribute maps.
pub fn frames(dom: &str) -> Vec<HashMap<String, String>> {
    let mut out = Vec::new();
    for chunk in dom.split("<div class=\"frame").skip(1) {
        let tag = &chunk[..chunk.find('>').unwrap()];
        let mut attrs = HashMap::new();
        attrs.insert(
            "class".to_owned(),
            format!("frame{}", &tag[..tag.find('"').unwrap()]),
        );
        for part in tag.split("\" ").skip(1) {
            if let Some((k, v)) = part.split_once("=\"") {
                attrs.insert(
                    k.trim().to_owned(),
                    v.trim_end_matches('"')
                        .replace("&amp;", "&")
                        .replace("&lt;", "<")
                        .replace("&gt;", ">"),
                );
            }
        }
        out.push(attrs);
    }
    with_paths(out)
}

pub fn width(frame: &HashMap<String, String>) -> f64 {
    let style = &frame["style"];
    let w = style.split("width:").nth(1).unwrap();
    w[..w.find('%').unwrap()].parse().unwrap()
}

/// Each drawn frame's path of names from the view's root, rebuilt from the
/// frames' `data-id`/`data-parent` (the page carries ids, not paths).
pub fn with_paths(mut fs: Vec<HashMap<String, String>>) -> Vec<HashMap<String, String>> {
    let by_id: HashMap<String, (String, String)> = fs
        .iter()
        .map(|f| {
            (
                f["data-id"].clone(),
                (f["data-name"].clone(), f["data-parent"].clone()),
            )
        })
        .collect();
    for f in &mut fs {
        let mut names = Vec::new();
        let (mut name, mut parent) = (f["data-name"].clone(), f["data-parent"].clone());
        while !parent.is_empty() {
            names.push(name);
            let (n, p) = by_id.get(&parent).cloned().unwrap_or_default();
            name = n;
            parent = p;
        }
        names.reverse();
        f.insert("path".into(), names.join(";"));
    }
    fs
}
