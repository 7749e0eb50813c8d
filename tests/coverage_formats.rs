//! `profrj convert --to lcov|cobertura` on the coverage ground truth
//! (CoverageTruth, whose every line carries its count as a `//=` comment):
//! every `DA` count and every Cobertura `hits` equals the truth, a line two
//! methods share (main and its lambda) counts once with the sum; then real
//! consumers read the files: genhtml (Debian's lcov) and pycobertura (PyPI).
//! A missing consumer fails the test: scripts/test-all installs both
//! (pycobertura is run as `python3 -m pycobertura`, wherever pip put its script).

mod common;

use common::*;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

const H: &str = "profrj.harness.CoverageTruth";
const FILE: &str = "profrj/harness/CoverageTruth.java";

fn harness_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("java-test-harness/src")
}

/// Line → count of the whole file: the `//=` count plus every `name=N` of
/// another method sharing the line (tests/coverage.rs reads the same notation).
fn truth() -> BTreeMap<u32, u64> {
    let src = std::fs::read_to_string(harness_src().join(FILE)).unwrap();
    let mut out = BTreeMap::new();
    for (i, line) in src.lines().enumerate() {
        let Some((code, spec)) = line.split_once("//=") else {
            continue;
        };
        if code.trim_start().starts_with(['*', '/']) {
            continue;
        }
        let spec = spec.split("//").next().unwrap();
        let mut words = spec.split_whitespace();
        let mut n: u64 = words.next().unwrap().parse().unwrap();
        for w in words {
            n += w.split_once('=').unwrap().1.parse::<u64>().unwrap();
        }
        out.insert(i as u32 + 1, n);
    }
    out
}

/// A coverage snapshot of CoverageTruth, in a directory of its own.
fn snapshot(name: &str) -> (PathBuf, PathBuf) {
    let (_, text) = run_verified(name, "coverage", H, &[]);
    let dir = temp_dir(&format!("{name}-out"));
    let snap = dir.join("coverage.xml");
    std::fs::write(&snap, text).unwrap();
    (dir, snap)
}

/// A consumer's run; a missing tool is a failure, never a skip.
fn consumer(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {what} ({e}): scripts/test-all installs it (lcov, pycobertura)")
    });
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed: {:?}\n{stdout}\n{stderr}",
        out.status
    );
    for word in ["WARNING", "ERROR", "Traceback"] {
        assert!(
            !stderr.contains(word) && !stdout.contains(word),
            "{what} complained:\n{stdout}\n{stderr}"
        );
    }
    stdout
}

/// One LCOV record: its `SF` and its lines by key.
struct Record {
    sf: String,
    fields: Vec<(String, String)>,
}

fn records(text: &str) -> Vec<Record> {
    let mut out = Vec::new();
    let mut cur: Option<Record> = None;
    for line in text.lines() {
        if line == "end_of_record" {
            out.push(cur.take().expect("a record before end_of_record"));
            continue;
        }
        let (k, v) = line.split_once(':').expect("KEY:value");
        if k == "SF" {
            assert!(cur.is_none(), "SF inside a record");
            cur = Some(Record {
                sf: v.to_owned(),
                fields: Vec::new(),
            });
        } else if k != "TN" {
            let r = cur.as_mut().expect("a field outside a record");
            r.fields.push((k.to_owned(), v.to_owned()));
        }
    }
    assert!(cur.is_none(), "a record without end_of_record");
    out
}

#[test]
fn lcov_counts_equal_the_truth_and_genhtml_reads_it() {
    let (dir, snap) = snapshot("lcov");
    let info = dir.join("coverage.info");
    let root = harness_src();
    profrj_ok(&[
        "convert",
        s(&snap),
        "--to",
        "lcov",
        "--source-root",
        s(&root),
        "-o",
        s(&info),
    ]);
    let text = std::fs::read_to_string(&info).unwrap();
    let recs = records(&text);
    let sf = format!("{}/{FILE}", root.display());
    let matching: Vec<_> = recs.iter().filter(|r| r.sf == sf).collect();
    assert_eq!(matching.len(), 1, "one record for {sf}");
    let r = matching[0];
    let field = |k: &str| -> Vec<&str> {
        r.fields
            .iter()
            .filter(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
            .collect()
    };
    let mut da = BTreeMap::new();
    for v in field("DA") {
        let (line, n) = v.split_once(',').unwrap();
        let line: u32 = line.parse().unwrap();
        assert!(
            da.insert(line, n.parse::<u64>().unwrap()).is_none(),
            "DA:{line} twice"
        );
    }
    assert_eq!(da, truth(), "every DA line and count");
    let lf: u64 = field("LF")[0].parse().unwrap();
    let lh: u64 = field("LH")[0].parse().unwrap();
    assert_eq!(lf, da.len() as u64);
    assert_eq!(lh, da.values().filter(|&&n| n > 0).count() as u64);
    // Functions: a call count per method, from the section's count.
    let calls: HashMap<&str, u64> = field("FNDA")
        .into_iter()
        .map(|v| {
            let (n, name) = v.split_once(',').unwrap();
            (name, n.parse().unwrap())
        })
        .collect();
    assert_eq!(field("FN").len(), calls.len());
    for (name, n) in [
        ("CoverageTruth.<clinit>()V", 1),
        ("CoverageTruth.<init>(I)V", 2),
        ("CoverageTruth.loop(I)J", 3),
        ("CoverageTruth.neverCalled()V", 0),
        ("CoverageTruth.pick(I)I", 5),
        ("CoverageTruth.lambda$main$0(I)I", 5),
        ("CoverageTruth$Hello.<init>()V", 2),
        ("CoverageTruth$Idle.unused()I", 0),
    ] {
        assert_eq!(calls.get(name), Some(&n), "FNDA of {name}");
    }
    let fnh: usize = field("FNH")[0].parse().unwrap();
    assert_eq!(fnh, calls.values().filter(|&&n| n > 0).count());
    assert_eq!(field("FNF")[0], calls.len().to_string());

    // genhtml reads it, with the sources, and agrees on the totals.
    let html = dir.join("html");
    let out = consumer(
        Command::new("genhtml").arg("-o").arg(&html).arg(&info),
        "genhtml",
    );
    let total_lf: u64 = recs
        .iter()
        .flat_map(|r| &r.fields)
        .filter(|(k, _)| k == "LF")
        .map(|(_, v)| v.parse::<u64>().unwrap())
        .sum();
    assert!(
        out.contains(&format!(" of {total_lf} lines)")),
        "genhtml's total:\n{out}"
    );
    assert!(html.join("index.html").is_file());
}

#[test]
fn cobertura_hits_equal_the_truth_and_pycobertura_reads_it() {
    let (dir, snap) = snapshot("cobertura");
    let xml_path = dir.join("cobertura.xml");
    let root = harness_src();
    profrj_ok(&[
        "convert",
        s(&snap),
        "--to",
        "cobertura",
        "--source-root",
        s(&root),
        "-o",
        s(&xml_path),
    ]);
    let text = std::fs::read_to_string(&xml_path).unwrap();
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&text, opts).unwrap();
    let cov = doc.root_element();
    assert_eq!(cov.tag_name().name(), "coverage");
    for a in [
        "line-rate",
        "branch-rate",
        "lines-covered",
        "lines-valid",
        "branches-covered",
        "branches-valid",
        "complexity",
        "version",
        "timestamp",
    ] {
        assert!(
            cov.attribute(a).is_some(),
            "<coverage {a}> (required by the DTD)"
        );
    }
    let source = doc
        .descendants()
        .find(|n| n.has_tag_name("source"))
        .unwrap();
    assert_eq!(source.text(), Some(s(&root)));

    let lines_of = |n: roxmltree::Node| -> BTreeMap<u32, u64> {
        let lines = n.children().find(|c| c.has_tag_name("lines")).unwrap();
        let mut out = BTreeMap::new();
        for l in lines.children().filter(|c| c.has_tag_name("line")) {
            let number = attr_u64(l, "number") as u32;
            assert!(
                out.insert(number, attr_u64(l, "hits")).is_none(),
                "line {number} twice"
            );
        }
        out
    };
    let rate = |valid: u64, covered: u64| {
        if valid == 0 {
            1.0
        } else {
            covered as f64 / valid as f64
        }
    };
    let rate_of = |n: roxmltree::Node| n.attribute("line-rate").unwrap().parse::<f64>().unwrap();

    // Per line of the file: the classes' hits summed equal the truth; each
    // class's and package's rate is its lines'.
    let mut file_lines: BTreeMap<u32, u64> = BTreeMap::new();
    let mut classes = 0;
    let (mut all_valid, mut all_covered) = (0, 0);
    for pkg in doc.descendants().filter(|n| n.has_tag_name("package")) {
        let (mut valid, mut covered) = (0u64, 0u64);
        for class in pkg.descendants().filter(|n| n.has_tag_name("class")) {
            let lines = lines_of(class);
            let (v, c) = (
                lines.len() as u64,
                lines.values().filter(|&&h| h > 0).count() as u64,
            );
            assert_eq!(rate_of(class), rate(v, c), "{:?}", class.attribute("name"));
            valid += v;
            covered += c;
            // A class's line is the sum of its methods' counts on it.
            let mut summed: BTreeMap<u32, u64> = BTreeMap::new();
            for m in class.descendants().filter(|n| n.has_tag_name("method")) {
                for (l, h) in lines_of(m) {
                    *summed.entry(l).or_default() += h;
                }
            }
            assert_eq!(summed, lines, "{:?}", class.attribute("name"));
            if class.attribute("filename") == Some(FILE) {
                classes += 1;
                for (l, h) in lines {
                    *file_lines.entry(l).or_default() += h;
                }
            }
        }
        assert_eq!(
            rate_of(pkg),
            rate(valid, covered),
            "{:?}",
            pkg.attribute("name")
        );
        all_valid += valid;
        all_covered += covered;
    }
    assert_eq!(classes, 4, "CoverageTruth, $Idle, $Greeter, $Hello");
    assert_eq!(file_lines, truth(), "every line's hits");
    assert_eq!(attr_u64(cov, "lines-valid"), all_valid);
    assert_eq!(attr_u64(cov, "lines-covered"), all_covered);

    // pycobertura reads it and counts the same lines.
    let out = consumer(
        Command::new("python3")
            .args(["-m", "pycobertura", "show", "--format", "json"])
            .arg(&xml_path),
        "pycobertura",
    );
    // pycobertura's misses: the lines never run and those run with an
    // outcome of a branch never taken (`condition-coverage` below 100%;
    // branch figures are checked against their truth in
    // tests/coverage_branches.rs).
    let t = truth();
    let partly: usize = doc
        .descendants()
        .filter(|n| n.has_tag_name("class") && n.attribute("filename") == Some(FILE))
        .flat_map(|c| c.children().filter(|n| n.has_tag_name("lines")))
        .flat_map(|l| l.children().filter(|n| n.has_tag_name("line")))
        .filter(|l| {
            attr_u64(*l, "hits") > 0
                && l.attribute("condition-coverage")
                    .is_some_and(|c| !c.starts_with("100%"))
        })
        .count();
    assert!(partly > 0, "CoverageTruth has branches never taken");
    let stmts = format!("\"Stmts\": {}", t.len());
    let miss = format!(
        "\"Miss\": {}",
        t.values().filter(|&&n| n == 0).count() + partly
    );
    assert!(
        out.contains(&stmts) && out.contains(&miss),
        "pycobertura:\n{out}"
    );
    // And with the sources found under <source>.
    consumer(
        Command::new("python3")
            .args(["-m", "pycobertura", "show", "--format", "html", "--output"])
            .arg(dir.join("report.html"))
            .arg(&xml_path),
        "pycobertura (html)",
    );
}

/// A snapshot without <coverage>: a clear error, no empty report.
#[test]
fn no_coverage_section_is_an_error() {
    let dir = temp_dir("no-coverage");
    let snap = dir.join("s.xml");
    std::fs::write(&snap, "<doc><sampler/></doc>").unwrap();
    for to in ["lcov", "cobertura"] {
        let out = profrj(&["convert", s(&snap), "--to", to]);
        assert!(!out.status.success());
        assert!(String::from_utf8_lossy(&out.stderr).contains("no <coverage> section"));
    }
}
