//! Coverage snapshots the agent wrote from CoverageTruth: the report's and
//! the page's per-class figures against the snapshot and the `//=` comments
//! of its source, classes compiled without line numbers, and which section
//! `report` shows when a snapshot has several.

use crate::common::*;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;

pub(super) const COV: &str = "profrj.harness.CoverageTruth";

const COV_IDLE: &str = "profrj.harness.CoverageTruth$Idle";

/// Runs CoverageTruth (classes from `classpath`) under `options,file=…` and
/// returns the snapshot's path and text.
pub(super) fn coverage_run(name: &str, options: &str, classpath: &str) -> (PathBuf, String) {
    coverage_run_of(name, options, classpath, COV)
}

/// [`coverage_run`] of the harness program `main`.
pub(super) fn coverage_run_of(
    name: &str,
    options: &str,
    classpath: &str,
    main: &str,
) -> (PathBuf, String) {
    let dir = temp_dir(name);
    let snap = dir.join("cov.xml");
    let out = Command::new(java())
        .current_dir(&dir)
        .arg(format!(
            "-agentpath:{}={options},file={}",
            agent().display(),
            snap.display()
        ))
        .args(["-Xverify:all", "-Xmx256m", "-cp", classpath, main])
        .output()
        .expect("cannot start java");
    assert!(
        out.status.success(),
        "java failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = read_snapshot(&snap);
    (snap, text)
}

/// Per class, as the snapshot says with no help from profrj's reader:
/// (lines covered, lines with code, methods run, methods). A line in several
/// methods (a lambda on its enclosing method's line) counts once.
pub(super) fn coverage_truth_from_xml(xml: &str) -> std::collections::BTreeMap<String, [u64; 4]> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let mut out = std::collections::BTreeMap::new();
    for class in doc.descendants().filter(|n| n.has_tag_name("class")) {
        let mut lines: HashMap<i64, bool> = HashMap::new();
        let (mut run, mut methods) = (0, 0);
        for m in class.children().filter(|c| c.has_tag_name("method")) {
            methods += 1;
            run += (attr_u64(m, "count") > 0) as u64;
            for (line, v) in footprints(m) {
                if v >= 0 {
                    *lines.entry(line).or_default() |= v > 0;
                }
            }
        }
        let covered = lines.values().filter(|&&c| c).count() as u64;
        out.insert(
            class.attribute("name").unwrap().to_owned(),
            [covered, lines.len() as u64, run, methods],
        );
    }
    out
}

/// Per class, from the snapshot's `<branches>`: (outcomes taken, outcomes).
fn branches_from_xml(xml: &str) -> std::collections::BTreeMap<String, (u64, u64)> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let mut out = std::collections::BTreeMap::new();
    for class in doc.descendants().filter(|n| n.has_tag_name("class")) {
        let (mut taken, mut all) = (0, 0);
        for b in class.descendants().filter(|n| n.has_tag_name("branches")) {
            for token in b.text().unwrap_or_default().split_whitespace() {
                for n in token.split_once(':').unwrap().1.split(',') {
                    all += 1;
                    taken += (n != "0") as u64;
                }
            }
        }
        out.insert(class.attribute("name").unwrap().to_owned(), (taken, all));
    }
    out
}

/// The report's branches column for (taken, outcomes): `-` without any.
fn branch_cell((taken, all): (u64, u64)) -> String {
    match all {
        0 => "-".to_owned(),
        _ => format!("{taken}/{all}"),
    }
}

/// Summed over the classes of CoverageTruth.java (CoverageTruth and its
/// nested classes).
fn file_totals(want: &std::collections::BTreeMap<String, [u64; 4]>) -> [u64; 4] {
    want.iter()
        .filter(|(k, _)| *k == COV || k.starts_with(&format!("{COV}$")))
        .fold([0; 4], |mut t, (_, c)| {
            for i in 0..4 {
                t[i] += c[i];
            }
            t
        })
}

/// CoverageTruth.java's (lines covered, lines with code) from the `//= N` comments
/// beside its lines (`name=N` after N: another method on that line).
fn coverage_truth_from_source() -> (u64, u64) {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/java-test-harness/src/profrj/harness/CoverageTruth.java"
    ))
    .unwrap();
    let (mut covered, mut lines) = (0, 0);
    for line in src.lines() {
        let Some((code, spec)) = line.split_once("//=") else {
            continue;
        };
        if code.trim_start().starts_with(['*', '/']) {
            continue; // the class comment explaining the notation
        }
        let spec = spec.split("//").next().unwrap();
        let ran = spec.split_whitespace().any(|w| {
            let n = w.rsplit('=').next().unwrap();
            n.parse::<i64>().unwrap() > 0
        });
        lines += 1;
        covered += ran as u64;
    }
    (covered, lines)
}

fn pct1(part: u64, whole: u64) -> String {
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

/// The `report --section coverage` row of a class: its columns.
fn coverage_row<'a>(report: &'a str, class: &str) -> Vec<&'a str> {
    let row = report
        .lines()
        .find(|l| l.split_whitespace().nth(5) == Some(class))
        .unwrap_or_else(|| panic!("no row for {class} in\n{report}"));
    row.split_whitespace().collect()
}

/// A real `coverage` snapshot of CoverageTruth: the report's and the page's
/// per-class figures equal those worked out from the snapshot (and, for
/// CoverageTruth, from the `//=` comments of its source); least covered
/// first; a total row; `report` alone shows coverage.
#[test]
fn coverage_report_and_page_on_a_real_snapshot() {
    let (snap, xml) = coverage_run("report-cov", "coverage", harness_classes());
    let want = coverage_truth_from_xml(&xml);
    eprintln!("{want:?}");
    let (covered, lines) = coverage_truth_from_source();
    assert_eq!(
        file_totals(&want)[..2],
        [covered, lines],
        "snapshot vs //= comments (the file's classes)"
    );
    assert!(covered < lines, "CoverageTruth has lines that never run");
    assert_eq!(want[COV][2..], [14, 15], "every method but neverCalled ran");
    assert_eq!(want[COV_IDLE], [0, 2, 0, 2], "Idle: listed with zeros");

    let report = profrj_ok(&["report", s(&snap), "--section", "coverage", "--top", "0"]);
    eprintln!("{report}");
    let sum = want.values().fold([0; 4], |mut t, c| {
        for i in 0..4 {
            t[i] += c[i];
        }
        t
    });
    let branches = branches_from_xml(&xml);
    let (taken, outcomes) = branches
        .values()
        .fold((0, 0), |t, b| (t.0 + b.0, t.1 + b.1));
    assert!(outcomes > 0, "CoverageTruth has branches");
    assert!(
        report.starts_with(&format!(
            "COVERAGE <coverage>: {} classes, lines {}/{} ({}), methods run {}/{}, branches {taken}/{outcomes} ({})\n",
            want.len(),
            sum[0],
            sum[1],
            pct1(sum[0], sum[1]),
            sum[2],
            sum[3],
            pct1(taken, outcomes)
        )),
        "{report}"
    );
    for (class, [c, l, r, m]) in &want {
        let row = coverage_row(&report, class);
        assert_eq!(row[1], pct1(*c, *l), "{class}: {report}");
        assert_eq!(row[2], format!("{c}/{l}"), "{class}: {report}");
        assert_eq!(row[3], format!("{r}/{m}"), "{class}: {report}");
        assert_eq!(row[4], branch_cell(branches[class]), "{class}: {report}");
        assert_eq!(row.get(6), Some(&"(CoverageTruth.java)"), "{report}");
        assert!(!row.iter().any(|w| w.contains("&lt;")), "{report}");
    }
    // Least covered first: Idle (0%) is first, shares never go down.
    // The class table (the methods' branch table follows it).
    let classes_part = report.split("branches by method").next().unwrap();
    let rows: Vec<Vec<&str>> = table_rows(classes_part)
        .into_iter()
        .map(|l| l.split_whitespace().collect())
        .filter(|r: &Vec<&str>| r[0].parse::<u32>().is_ok())
        .collect();
    assert_eq!(rows.len(), want.len(), "{report}");
    assert_eq!(rows[0][5], COV_IDLE, "{report}");
    let shares: Vec<f64> = rows.iter().map(|r| percent(r[1])).collect();
    assert!(shares.windows(2).all(|w| w[0] <= w[1]), "{report}");
    let total = report
        .lines()
        .find(|l| l.contains(&format!("total ({} classes)", want.len())))
        .unwrap_or_else(|| panic!("no total row: {report}"));
    let total: Vec<_> = total.split_whitespace().collect();
    assert_eq!(
        total[..3],
        [
            pct1(sum[0], sum[1]).as_str(),
            &format!("{}/{}", sum[0], sum[1]),
            &format!("{}/{}", sum[2], sum[3])
        ],
        "{report}"
    );

    // A snapshot holding only <coverage>: `report` shows it, with no note.
    let out = profrj(&["report", s(&snap), "--top", "0"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), report);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The page: no flame graph, the coverage table with the same figures.
    let page = snap.with_extension("html");
    profrj_ok(&["flame", s(&snap), "-o", s(&page)]);
    let dom = chromium(&["--dump-dom", &format!("file://{}", page.display())]);
    assert!(!dom.contains("class=\"frame"));
    assert!(dom.contains("no call tree in this snapshot"), "{dom}");
    let table = &dom[dom.find("<table id=\"coverage\">").expect("coverage table")..];
    let table = &table[..table.find("</table>").unwrap()];
    for (class, [c, l, r, m]) in &want {
        let start = table
            .find(&format!(
                "<tr data-class=\"{class}\" data-covered=\"{}\">",
                pct1(*c, *l).trim_end_matches('%')
            ))
            .unwrap_or_else(|| panic!("{class} row: {table}"));
        let row = &table[start..];
        let row = &row[..row.find("</tr>").unwrap()];
        assert!(
            row.contains(&format!("<td>{c}/{l}</td><td>{r}/{m}</td>")),
            "{row}"
        );
    }
    assert!(
        table.find(&format!("data-class=\"{COV_IDLE}\""))
            < table.find(&format!("data-class=\"{COV}\"")),
        "least covered first: {table}"
    );
    assert!(
        table.contains(&format!(
            "<tr class=\"total\" data-covered=\"{}\">",
            pct1(sum[0], sum[1]).trim_end_matches('%')
        )),
        "{table}"
    );
    assert!(
        table.contains(&format!(
            "<td>{}/{}</td><td>{}/{}</td>",
            sum[0], sum[1], sum[2], sum[3]
        )),
        "{table}"
    );
}

/// CoverageTruth compiled with `javac -g:none`: every method has
/// `firstline="-1"` and empty footprints. The report keeps the calls (methods
/// run) and says the lines are unknown instead of failing or claiming 0%.
#[test]
fn coverage_of_classes_without_line_numbers() {
    let dir = temp_dir("report-cov-nolines");
    let classes = dir.join("classes");
    let javac = jdk_tool("javac");
    let status = Command::new(&javac)
        .args(["-g:none", "--release", "11", "-d"])
        .arg(&classes)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/java-test-harness/src/profrj/harness/CoverageTruth.java"
        ))
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", javac.display()));
    assert!(status.success());
    let (snap, xml) = coverage_run("report-cov-nolines-run", "coverage", s(&classes));
    assert!(xml.contains("firstline=\"-1\""), "{xml}");
    let want = coverage_truth_from_xml(&xml);
    assert_eq!(want[COV], [0, 0, 14, 15]);

    let report = profrj_ok(&["report", s(&snap)]);
    eprintln!("{report}");
    let all = want.values().fold([0; 4], |mut t, c| {
        for i in 0..4 {
            t[i] += c[i];
        }
        t
    });
    assert!(
        report.contains(&format!("lines 0/0 (-), methods run {}/{}", all[2], all[3])),
        "{report}"
    );
    let row = coverage_row(&report, COV);
    assert_eq!(row[1..4], ["-", "0/0", "14/15"], "{report}");
    // Branches need no line numbers (theirs are -1).
    assert_eq!(
        row[4],
        branch_cell(branches_from_xml(&xml)[COV]),
        "{report}"
    );
    assert_eq!(row[6..], ["[no", "line", "numbers]"], "{report}");
    // Without lines, fewer methods run first: Idle (0/2) before CoverageTruth.
    assert_eq!(coverage_row(&report, COV_IDLE)[0], "1", "{report}");
    assert!(report.contains("javac -g:none"), "{report}");

    let page = snap.with_extension("html");
    profrj_ok(&["flame", s(&snap), "-o", s(&page)]);
    let dom = chromium(&["--dump-dom", &format!("file://{}", page.display())]);
    assert!(
        dom.contains(&format!("<tr data-class=\"{COV}\" data-covered=\"-\">")),
        "{dom}"
    );
}

/// A snapshot with several sections: `report` picks sampler, then profile,
/// then memory, then coverage, and names the others on stderr.
#[test]
fn report_without_section_picks_in_the_documented_order() {
    let (snap, xml) = coverage_run(
        "report-cov-all",
        "coverage,profile,sampling,interval=1ms",
        harness_classes(),
    );
    let out = profrj(&["report", s(&snap)]);
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stdout.contains(" <sampler> "), "{stdout}");
    assert_eq!(
        stderr.trim_end(),
        "profrj: showing <sampler>; the snapshot also has: --section profile, --section coverage"
    );
    // By calls: loop(int)'s three calls take tens of microseconds of CPU,
    // and the probes' CPU clock (wall time between reads of the thread's
    // clock, never run backwards: tsc.rs) can stand still through them on a
    // loaded machine; a row of 0 is not listed (seen in CI).
    let profile = profrj_ok(&[
        "report",
        s(&snap),
        "--section",
        "profile",
        "--metric",
        "calls",
    ]);
    assert!(profile.contains(&format!("{COV}.loop(int)")), "{profile}");
    let cov = profrj_ok(&["report", s(&snap), "--section", "coverage"]);
    let want = coverage_truth_from_xml(&xml);
    let row = coverage_row(&cov, COV);
    assert_eq!(
        row[2],
        format!("{}/{}", want[COV][0], want[COV][1]),
        "{cov}"
    );
    let (covered, lines) = coverage_truth_from_source();
    assert_eq!(file_totals(&want)[..2], [covered, lines]);
}
