//! `coverage` side by side with JaCoCo (Debian's libjacoco-java) on the same
//! harness programs: every line JaCoCo calls covered (fully or partly) has a
//! count above 0 in profrj's snapshot, every line it calls missed has 0, and
//! the lines with code are the same lines — except where the harness source
//! marks a line `// JaCoCo: missed` or `// JaCoCo: no code` with the reason
//! (JaCoCo's own limits, which profrj does not share); each marker must
//! match a real difference, so a stale one fails too. Branches too: each
//! line's covered and missed branch outcomes (JaCoCo's cb/mb; profrj's
//! outcomes taken and never taken on the line, from `<branches>`) are the
//! same, except on a line marked `// JaCoCo: branches` with the reason
//! (what JaCoCo's filters merge or drop). And instructions: each line's
//! instructions run and in all (JaCoCo's ci and ci + mi; profrj's
//! `<instructions>` C/T), except on a line marked `// JaCoCo:
//! instructions` with the reason.

mod common;

use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Debian's JaCoCo agent, with JacocoLines (the report reader) beside it.
/// Built once per test binary.
fn jacoco_tools() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| jacoco_tools_in("jacoco-tools", "JacocoLines"))
}

/// Per (class, line): covered (true) or missed, the branch outcomes
/// covered and missed, and the instructions run and in all.
type Lines<T> = BTreeMap<(String, u32), (T, (u64, u64), (u64, u64))>;

/// JaCoCo's verdict per (class, line): true covered, false missed; its cb/mb.
fn jacoco_lines(name: &str, main: &str, args: &[&str]) -> Lines<bool> {
    let tools = jacoco_tools();
    let dir = temp_dir(&format!("jacoco-{name}"));
    let exec = dir.join("jacoco.exec");
    let cp = under_jacoco_class_path(harness_classes());
    // Its own classes are on the class path, so it must not instrument them.
    let agent = format!(
        "-javaagent:{}=destfile={},excludes=org.jacoco.*:org.objectweb.*",
        tools.join("jacocoagent.jar").display(),
        exec.display()
    );
    let out = Command::new(java())
        .current_dir(&dir)
        .args([agent.as_str(), "-cp", &cp, main])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{main} under JaCoCo: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = Command::new(java())
        .args([
            "-cp",
            &format!("{}:{}", tools.display(), jacoco_class_path()),
        ])
        .arg("JacocoLines")
        .arg(&exec)
        .arg(harness_classes())
        .output()
        .unwrap();
    assert!(report.status.success(), "JacocoLines failed");
    String::from_utf8_lossy(&report.stdout)
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            let n = |k: usize| w[k].parse::<u64>().unwrap();
            let key = (w[0].to_owned(), w[1].parse().unwrap());
            (key, (w[2] == "covered", (n(3), n(4)), (n(5), n(5) + n(6))))
        })
        .collect()
}

/// profrj's counts per (class, line), a line's largest count over the
/// methods whose footprints hold it (-1 where none has code there), and
/// its branch outcomes taken and never taken over those methods.
fn profrj_lines(name: &str, main: &str, args: &[&str]) -> Lines<i64> {
    let dir = temp_dir(&format!("profrj-{name}"));
    let out = dir.join("cov.xml");
    let run = run_java_with(
        &dir,
        &["-Xverify:all"],
        &format!("coverage,file={}", out.display()),
        main,
        args,
    );
    run.assert_success();
    let text = read_snapshot(&out);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let mut lines = BTreeMap::new();
    for class in doc.descendants().filter(|n| n.has_tag_name("class")) {
        let cname = class.attribute("name").unwrap().to_owned();
        for m in class.children().filter(|c| c.has_tag_name("method")) {
            for (line, v) in footprints(m) {
                let e = lines
                    .entry((cname.clone(), line as u32))
                    .or_insert((-1, (0, 0), (0, 0)));
                e.0 = e.0.max(v);
            }
            let first: u32 = m.attribute("firstline").unwrap().parse().unwrap_or(0);
            let insns = m.children().find(|c| c.has_tag_name("instructions"));
            let cells = insns.and_then(|b| b.text()).unwrap_or_default();
            for (k, cell) in cells.split_whitespace().enumerate() {
                let (ran, all) = cell.split_once('/').unwrap();
                let (ran, all): (u64, u64) = (ran.parse().unwrap(), all.parse().unwrap());
                if all > 0 {
                    let e = lines.get_mut(&(cname.clone(), first + k as u32)).unwrap();
                    e.2 = (e.2 .0 + ran, e.2 .1 + all);
                }
            }
            let branches = m.children().find(|c| c.has_tag_name("branches"));
            for token in branches
                .and_then(|b| b.text())
                .unwrap_or_default()
                .split_whitespace()
            {
                let (line, counts) = token.split_once(':').unwrap();
                let e = lines
                    .entry((cname.clone(), line.parse().unwrap()))
                    .or_insert((-1, (0, 0), (0, 0)));
                for n in counts.split(',') {
                    match n.parse::<u64>().unwrap() {
                        0 => e.1 .1 += 1,
                        _ => e.1 .0 += 1,
                    }
                }
            }
        }
    }
    lines
}

/// `// JaCoCo: <verdict>` markers in the source of class `main`'s file:
/// (class's outer name, line) → verdict (`missed` or `no code`).
fn known_differences(main: &str) -> BTreeMap<u32, String> {
    let file = main.rsplit('.').next().unwrap();
    let path = format!(
        "{}/java-test-harness/src/profrj/harness/{file}.java",
        env!("CARGO_MANIFEST_DIR")
    );
    let src = std::fs::read_to_string(path).unwrap();
    src.lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let verdict = l.split_once("// JaCoCo: ")?.1;
            let verdict = if verdict.starts_with("missed") {
                "missed"
            } else if verdict.starts_with("branches") {
                "branches"
            } else if verdict.starts_with("instructions") {
                "instructions"
            } else {
                assert!(verdict.starts_with("no code"), "bad marker: {l}");
                "no code"
            };
            Some((i as u32 + 1, verdict.to_owned()))
        })
        .collect()
}

/// Compares, and returns how many lines JaCoCo saw branches on.
fn compare(name: &str, main: &str, args: &[&str]) -> usize {
    let jacoco = jacoco_lines(name, main, args);
    let ours = profrj_lines(name, main, args);
    let classes: BTreeSet<&String> = ours.keys().map(|k| &k.0).collect();
    let mut checked = 0;
    // (class, line) → JaCoCo's verdict where it differs from profrj's count.
    let mut differences: BTreeMap<(String, u32), (String, i64)> = BTreeMap::new();
    let mut branch_lines = 0;
    for ((class, line), &(covered, branches, insns)) in &jacoco {
        if !classes.contains(class) {
            continue; // never loaded in our run: not in the snapshot
        }
        let (count, ours_branches, ours_insns) = ours
            .get(&(class.clone(), *line))
            .copied()
            .unwrap_or((-1, (0, 0), (0, 0)));
        checked += 1;
        branch_lines += (branches != (0, 0)) as usize;
        if covered != (count > 0) || count < 0 {
            let verdict = if covered { "covered" } else { "missed" };
            differences.insert((class.clone(), *line), (verdict.into(), count));
        } else if branches != ours_branches {
            let (b, o) = (branches, ours_branches);
            let verdict = format!("branches {}/{} (profrj {}/{})", b.0, b.1, o.0, o.1);
            differences.insert((class.clone(), *line), (verdict, count));
        } else if insns != ours_insns {
            let (j, o) = (insns, ours_insns);
            let verdict = format!("instructions {}/{} (profrj {}/{})", j.0, j.1, o.0, o.1);
            differences.insert((class.clone(), *line), (verdict, count));
        }
    }
    // And no line has code (or branches) for profrj that JaCoCo sees as empty.
    for ((class, line), &(count, branches, _)) in &ours {
        if count >= 0 && !jacoco.contains_key(&(class.clone(), *line)) {
            let verdict = match branches {
                (0, 0) => "no code".to_owned(),
                b => format!("no code, profrj branches {}/{}", b.0, b.1),
            };
            differences.insert((class.clone(), *line), (verdict, count));
        }
    }
    // Markers are in the main class's file, which holds its nested classes.
    let known = known_differences(main);
    let mut unexplained = Vec::new();
    for ((class, line), (verdict, count)) in &differences {
        let in_file = class == main || class.starts_with(&format!("{main}$"));
        let kind = verdict.split(' ').next().unwrap_or_default();
        let kind = if verdict.starts_with("no code") {
            "no code"
        } else {
            kind
        };
        if !(in_file && known.get(line).map(String::as_str) == Some(kind)) {
            unexplained.push(format!("{class}:{line} JaCoCo {verdict}, profrj {count}"));
        }
    }
    for (line, verdict) in &known {
        let seen = differences.iter().any(|((c, l), (v, _))| {
            l == line && v.starts_with(verdict.as_str()) && c.starts_with(main)
        });
        if !seen {
            unexplained.push(format!("{main}:{line} marked '{verdict}' but agrees"));
        }
    }
    assert!(
        unexplained.is_empty(),
        "{main}: {} differences:\n{}",
        unexplained.len(),
        unexplained.join("\n")
    );
    assert!(checked >= 15, "{main}: only {checked} lines compared");
    branch_lines
}

#[test]
fn coverage_truth_agrees_with_jacoco() {
    assert!(compare("truth", "profrj.harness.CoverageTruth", &[]) > 0);
}

#[test]
fn branch_truth_agrees_with_jacoco() {
    let lines = compare("branch-truth", "profrj.harness.BranchTruth", &[]);
    assert!(lines >= 20, "only {lines} lines with branches");
}

#[test]
fn profile_truth_agrees_with_jacoco() {
    compare("profile-truth", "profrj.harness.ProfileTruth", &[]);
}

#[test]
fn benchmarks_agree_with_jacoco() {
    compare("bench", "profrj.harness.Bench", &["2", "2000"]);
    compare("callbench", "profrj.harness.CallBench", &["15", "2"]);
}
