//! Branch counts in `coverage` on real JVMs: every token of every
//! `<branches>` of a harness class against the counts written beside each
//! line of its source (BranchTruth), with derived counts and without, run
//! with full bytecode verification; then the converters' branch figures
//! against the same truth, read by real consumers: genhtml (LCOV) and
//! pycobertura and xmllint (Cobertura).

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const H: &str = "profrj.harness.BranchTruth";

/// Expected tokens from the source: line → the `//@` tokens, in order.
fn expectations() -> BTreeMap<i64, Vec<String>> {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/java-test-harness/src/profrj/harness/BranchTruth.java"
    ))
    .unwrap();
    let mut out = BTreeMap::new();
    for (i, line) in src.lines().enumerate() {
        let Some((code, spec)) = line.split_once("//@") else {
            continue;
        };
        if code.trim_start().starts_with(['*', '/']) {
            continue; // the class comment explaining the notation
        }
        let spec = spec.split("//").next().unwrap(); // a further comment
        let tokens = spec.split_whitespace().map(str::to_owned).collect();
        out.insert(i as i64 + 1, tokens);
    }
    out
}

/// Every `<branches>` token of BranchTruth and its nested classes, by line
/// (methods in document order, tokens in bytecode order).
fn branches(text: &str) -> BTreeMap<i64, Vec<String>> {
    let doc = roxmltree::Document::parse(text).unwrap();
    let mut out: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    let mut classes = 0;
    for class in doc.descendants().filter(|n| {
        n.has_tag_name("class")
            && n.attribute("name")
                .is_some_and(|c| c == H || c.starts_with(&format!("{H}$")))
    }) {
        classes += 1;
        for m in class.children().filter(|c| c.has_tag_name("method")) {
            let children: Vec<_> = m.children().filter(|c| c.is_element()).collect();
            let Some(at) = children.iter().position(|c| c.has_tag_name("branches")) else {
                continue;
            };
            assert!(
                children[at - 1].has_tag_name("footprints"),
                "<branches> follows <footprints>"
            );
            let text = children[at].text().unwrap_or_default();
            assert!(!text.trim().is_empty(), "an empty <branches> is left out");
            for token in text.split(' ') {
                let (line, counts) = token.split_once(':').unwrap_or_else(|| panic!("{token:?}"));
                let line: i64 = line.parse().unwrap();
                assert!(line > 0, "{token}: every instruction has a line");
                out.entry(line).or_default().push(counts.to_owned());
            }
        }
    }
    assert_eq!(
        classes, 1,
        "BranchTruth (its lambda is a method of its own)"
    );
    out
}

/// The truth's outcomes by line: each branching instruction's counts.
fn truth_outcomes() -> BTreeMap<u32, Vec<Vec<u64>>> {
    expectations()
        .into_iter()
        .map(|(line, tokens)| {
            let each = tokens
                .iter()
                .map(|t| t.split(',').map(|n| n.parse().unwrap()).collect())
                .collect();
            (line as u32, each)
        })
        .collect()
}

/// (outcomes, outcomes taken) of the whole truth.
fn truth_totals() -> (u64, u64) {
    let all: Vec<Vec<u64>> = truth_outcomes().into_values().flatten().collect();
    let valid = all.iter().map(|b| b.len() as u64).sum();
    let taken = all.iter().flatten().filter(|&&n| n > 0).count() as u64;
    (valid, taken)
}

/// A snapshot of BranchTruth in a directory of its own.
fn snapshot(name: &str) -> (PathBuf, PathBuf) {
    let (_, text) = run_verified(name, "coverage", H, &[]);
    let dir = temp_dir(&format!("{name}-out"));
    let snap = dir.join("coverage.xml");
    std::fs::write(&snap, text).unwrap();
    (dir, snap)
}

fn harness_src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("java-test-harness/src")
}

/// A consumer's run; a missing tool is a failure, never a skip.
fn consumer(cmd: &mut Command, what: &str) -> String {
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("cannot run {what} ({e}): scripts/test-all installs it (lcov, pycobertura)")
    });
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("Traceback"),
        "{what} failed: {:?}\n{stdout}\n{stderr}",
        out.status
    );
    stdout
}

/// Every method's `<instructions>`: one `C/T` per footprint cell, `0/0`
/// where the footprint is -1, instructions on every line with code, none
/// run on a line never reached, some on a line that ran (the footprints
/// are checked against their truth in tests/coverage.rs; per line
/// against JaCoCo in tests/coverage_jacoco.rs). Returns them by method.
fn instructions(text: &str) -> BTreeMap<String, String> {
    let doc = roxmltree::Document::parse(text).unwrap();
    let mut out = BTreeMap::new();
    for class in doc
        .descendants()
        .filter(|n| n.has_tag_name("class") && n.attribute("name") == Some(H))
    {
        for m in class.children().filter(|c| c.has_tag_name("method")) {
            let name = format!(
                "{}{}",
                m.attribute("name").unwrap(),
                m.attribute("signature").unwrap()
            );
            let prints: Vec<i64> = footprints(m).into_iter().map(|(_, n)| n).collect();
            let cells = m
                .children()
                .find(|c| c.has_tag_name("instructions"))
                .unwrap_or_else(|| panic!("{name}: no <instructions>"))
                .text()
                .unwrap_or_default();
            let cells: Vec<(u64, u64)> = cells
                .split(' ')
                .map(|c| {
                    let (ran, all) = c.split_once('/').unwrap();
                    (ran.parse().unwrap(), all.parse().unwrap())
                })
                .collect();
            assert_eq!(cells.len(), prints.len(), "{name}: one cell per footprint");
            for (&(ran, all), &n) in cells.iter().zip(&prints) {
                match n {
                    -1 => assert_eq!((ran, all), (0, 0), "{name}"),
                    0 => assert!(
                        ran == 0 && all > 0,
                        "{name}: {ran}/{all} on a line never run"
                    ),
                    _ => assert!(
                        ran > 0 && ran <= all,
                        "{name}: {ran}/{all} on a line run {n}"
                    ),
                }
            }
            out.insert(
                name,
                m.children()
                    .find(|c| c.has_tag_name("instructions"))
                    .unwrap()
                    .text()
                    .unwrap_or_default()
                    .to_owned(),
            );
        }
    }
    assert!(out.len() >= 19, "{out:?}");
    out
}

fn check(name: &str, options: &str) -> String {
    let (_, text) = run_verified(name, options, H, &[]);
    assert_eq!(branches(&text), expectations(), "{options}");
    text
}

#[test]
fn branch_counts_match_the_source() {
    check("branches-derived", "coverage");
}

/// Every point and outcome counted by its own counter: the same answer,
/// instructions included.
#[test]
fn branch_counts_match_without_derived_counts() {
    let each = check("branches-each", "coverage,derive=off");
    let derived = check("branches-derived-too", "coverage");
    assert_eq!(instructions(&each), instructions(&derived));
}

#[test]
fn branch_counts_match_with_stripes() {
    check("branches-stripes", "coverage,stripes=4");
}

/// `BRDA` per outcome, `BRF`/`BRH` the totals, as the truth has them; and
/// genhtml, asked for branch coverage, counts the same.
#[test]
fn lcov_branches_equal_the_truth_and_genhtml_reads_them() {
    let (dir, snap) = snapshot("branches-lcov");
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
    let record = text
        .split("end_of_record")
        .find(|r| r.contains("BranchTruth.java"))
        .unwrap();
    // line → block → outcomes, as BRDA lists them.
    let mut got: BTreeMap<u32, Vec<Vec<u64>>> = BTreeMap::new();
    let (mut brf, mut brh) = (None, None);
    for l in record.lines() {
        if let Some(v) = l.strip_prefix("BRDA:") {
            let f: Vec<&str> = v.split(',').collect();
            let (line, block, branch): (u32, usize, usize) = (
                f[0].parse().unwrap(),
                f[1].parse().unwrap(),
                f[2].parse().unwrap(),
            );
            let blocks = got.entry(line).or_default();
            if blocks.len() == block {
                blocks.push(Vec::new());
            }
            assert_eq!(blocks[block].len(), branch, "{l}: outcomes in order");
            assert_ne!(f[3], "-", "{l}: every branch of the truth ran");
            blocks[block].push(f[3].parse().unwrap());
        }
        brf = brf.or(l.strip_prefix("BRF:").map(|v| v.parse::<u64>().unwrap()));
        brh = brh.or(l.strip_prefix("BRH:").map(|v| v.parse::<u64>().unwrap()));
    }
    assert_eq!(got, truth_outcomes(), "every BRDA");
    let (valid, taken) = truth_totals();
    assert_eq!((brf, brh), (Some(valid), Some(taken)));
    let html = dir.join("html");
    let out = consumer(
        Command::new("genhtml")
            .arg("--branch-coverage")
            .arg("-o")
            .arg(&html)
            .arg(&info),
        "genhtml",
    );
    assert!(
        out.contains(&format!("({taken} of {valid} branches)")),
        "genhtml's branch total:\n{out}"
    );
}

/// Each line's `condition-coverage` and every `branch-rate` as the truth
/// has them; xmllint and pycobertura read the file, pycobertura's rates and
/// partly covered lines equal the truth's.
#[test]
fn cobertura_branches_equal_the_truth_and_pycobertura_reads_them() {
    let (dir, snap) = snapshot("branches-cobertura");
    let xml_path = dir.join("cobertura.xml");
    profrj_ok(&["convert", s(&snap), "--to", "cobertura", "-o", s(&xml_path)]);
    consumer(
        Command::new("xmllint").arg("--noout").arg(&xml_path),
        "xmllint",
    );
    let text = std::fs::read_to_string(&xml_path).unwrap();
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&text, opts).unwrap();
    let truth = truth_outcomes();
    let cover = |outcomes: &[&Vec<u64>]| {
        let valid: usize = outcomes.iter().map(|b| b.len()).sum();
        let taken = outcomes
            .iter()
            .copied()
            .flatten()
            .filter(|&&n| n > 0)
            .count();
        (valid as u64, taken as u64)
    };
    let rate = |(valid, taken): (u64, u64)| match valid {
        0 => 1.0,
        v => taken as f64 / v as f64,
    };
    let branch_rate =
        |n: roxmltree::Node| -> f64 { n.attribute("branch-rate").unwrap().parse().unwrap() };
    let class = doc
        .descendants()
        .find(|n| n.has_tag_name("class") && n.attribute("name") == Some(H))
        .unwrap();
    // The class's lines: condition-coverage on exactly the truth's lines.
    let lines = class.children().find(|c| c.has_tag_name("lines")).unwrap();
    let mut seen = 0;
    for l in lines.children().filter(|c| c.has_tag_name("line")) {
        let number = attr_u64(l, "number") as u32;
        match truth.get(&number) {
            Some(b) => {
                let (valid, taken) = cover(&b.iter().collect::<Vec<_>>());
                let want = format!("{}% ({taken}/{valid})", taken * 100 / valid);
                assert_eq!(l.attribute("branch"), Some("true"), "line {number}");
                assert_eq!(l.attribute("condition-coverage"), Some(want.as_str()));
                seen += 1;
            }
            None => assert_eq!(l.attribute("branch"), Some("false"), "line {number}"),
        }
    }
    assert_eq!(seen, truth.len(), "every branching line");
    // Each method's rate: the truth's lines in its range.
    for m in class.descendants().filter(|n| n.has_tag_name("method")) {
        let own: Vec<u32> = m
            .descendants()
            .filter(|n| n.has_tag_name("line"))
            .map(|l| attr_u64(l, "number") as u32)
            .collect();
        let outcomes: Vec<&Vec<u64>> = own.iter().filter_map(|l| truth.get(l)).flatten().collect();
        let name = m.attribute("name").unwrap();
        assert_eq!(branch_rate(m), rate(cover(&outcomes)), "{name}");
    }
    let totals = truth_totals();
    assert_eq!(branch_rate(class), rate(totals));
    let pkg = doc
        .descendants()
        .find(|n| n.has_tag_name("package") && n.attribute("name") == Some("profrj.harness"))
        .unwrap();
    assert_eq!(branch_rate(pkg), rate(totals));
    let root = doc.root_element();
    assert_eq!(branch_rate(root), rate(totals));
    assert_eq!(attr_u64(root, "branches-valid"), totals.0);
    assert_eq!(attr_u64(root, "branches-covered"), totals.1);

    // pycobertura: the same rates; a line some outcome of which was never
    // taken is partly covered.
    let script = format!(
        "from pycobertura import Cobertura\n\
         c = Cobertura({:?})\n\
         f = 'profrj/harness/BranchTruth.java'\n\
         print(c.branch_rate(), c.branch_rate(f))\n\
         print(' '.join(str(n) for n, s in c.line_statuses(f) if s == 'partial'))\n",
        s(&xml_path)
    );
    let out = consumer(Command::new("python3").args(["-c", &script]), "pycobertura");
    let mut lines = out.lines();
    let rates: Vec<f64> = lines
        .next()
        .unwrap()
        .split_whitespace()
        .map(|r| r.parse().unwrap())
        .collect();
    assert_eq!(
        rates,
        vec![rate(totals), rate(totals)],
        "pycobertura:\n{out}"
    );
    let partial: Vec<u32> = lines
        .next()
        .unwrap_or_default()
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    let want: Vec<u32> = truth
        .iter()
        .filter(|(_, b)| {
            let (valid, taken) = cover(&b.iter().collect::<Vec<_>>());
            taken > 0 && taken < valid
        })
        .map(|(l, _)| *l)
        .collect();
    assert!(!want.is_empty());
    assert_eq!(partial, want, "pycobertura's partly covered lines");
}

/// `report --section coverage`: the branch totals and each method's.
#[test]
fn report_shows_branches_per_class_and_method() {
    let (_, snap) = snapshot("branches-report");
    let out = profrj_ok(&["report", s(&snap), "--section", "coverage", "--top", "0"]);
    let (valid, taken) = truth_totals();
    let class_row = out
        .lines()
        .find(|l| l.ends_with(&format!("{H} (BranchTruth.java)")))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        class_row.contains(&format!(" {taken}/{valid} ")),
        "{class_row}"
    );
    // Methods: never(I)I has one outcome of two never taken.
    let never = out
        .lines()
        .find(|l| l.ends_with(&format!("{H}.never(I)I")))
        .unwrap_or_else(|| panic!("{out}"));
    let words: Vec<&str> = never.split_whitespace().collect();
    assert_eq!(words[1..3], ["1", "1/2"], "{never}");
}
