//! diff-cover (PyPI `diff_cover`) reads `convert --to jacoco`: a tiny git
//! repository holds a program, a branch changes and adds lines (each new
//! or changed line with code marked `// run` or `// never` by what the run
//! does to it, known by construction), the program runs under the agent,
//! and diff-cover, given the JaCoCo report and `--src-roots`, must report
//! exactly the changed lines with code: the `// never` ones missing, the
//! `// run` ones covered — the same lines the snapshot's footprints say.

mod common;

use common::*;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

const V1: &str = "package demo;

public class Cover {
    static int sink;

    public static void main(String[] args) {
        int n = args.length;
        sink += twice(n);
    }

    static int twice(int n) {
        return n * 2;
    }
}
";

/// Run with two arguments: `n > 100` is false.
const V2: &str = "package demo;

public class Cover {
    static int sink;

    public static void main(String[] args) {
        int n = args.length;
        sink += twice(n);
        if (n > 100) { // run
            sink += never(n); // never
        }
        sink += added(n); // run
    }

    static int twice(int n) {
        return n * 3; // run
    }

    static int added(int n) {
        int k = n + 1; // run
        return k; // run
    }

    static int never(int n) {
        return -n; // never
    }
}
";

const SOURCE: &str = "src/main/java/demo/Cover.java";

fn git(repo: &Path, args: &[&str]) {
    stdout_of(
        Command::new("git")
            .current_dir(repo)
            .args([
                "-c",
                "user.name=profrj",
                "-c",
                "user.email=profrj@localhost",
            ])
            .args(args),
    );
}

/// The lines of `V2` whose marker is `mark`.
fn marked(mark: &str) -> BTreeSet<u64> {
    V2.lines()
        .enumerate()
        .filter(|(_, l)| l.trim_end().ends_with(&format!("// {mark}")))
        .map(|(i, _)| i as u64 + 1)
        .collect()
}

#[test]
fn diff_cover_reads_the_jacoco_report() {
    let dir = temp_dir("diff-cover");
    let repo = dir.join("repo");
    std::fs::create_dir_all(repo.join("src/main/java/demo")).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join(SOURCE), V1).unwrap();
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-qm", "v1"]);
    git(&repo, &["checkout", "-qb", "feature"]);
    std::fs::write(repo.join(SOURCE), V2).unwrap();
    git(&repo, &["commit", "-qam", "v2"]);
    let classes = dir.join("classes");
    stdout_of(
        Command::new(jdk_tool("javac"))
            .args(["-g", "-d"])
            .arg(&classes)
            .arg(repo.join(SOURCE)),
    );
    let snap = dir.join("cov.xml");
    let out = Command::new(java())
        .arg(format!(
            "-agentpath:{}=coverage,include=demo.*,file={}",
            agent().display(),
            snap.display()
        ))
        .args(["-cp", classes.to_str().unwrap(), "demo.Cover", "a", "b"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = dir.join("jacoco.xml");
    let (code, text) = profrj_run(&[
        "convert",
        snap.to_str().unwrap(),
        "--to",
        "jacoco",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    let json = dir.join("diff-cover.json");
    let run = Command::new("diff-cover")
        .current_dir(&repo)
        .arg(&report)
        .args(["--compare-branch=main", "--src-roots", "src/main/java"])
        .arg(format!("--format=json:{}", json.display()))
        .output()
        .expect("diff-cover missing: scripts/test-all --install-only (pip install diff_cover)");
    assert!(
        run.status.success(),
        "diff-cover: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let result: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let stats = &result["src_stats"][SOURCE];
    let lines = |key: &str| -> BTreeSet<u64> {
        stats[key]
            .as_array()
            .unwrap_or_else(|| panic!("no {key} for {SOURCE}: {result}"))
            .iter()
            .map(|v| v.as_u64().unwrap())
            .collect()
    };
    let (run_lines, never) = (marked("run"), marked("never"));
    assert_eq!((run_lines.len(), never.len()), (5, 2));
    assert_eq!(lines("violation_lines"), never, "{result}");
    assert_eq!(lines("covered_lines"), run_lines, "{result}");
    // The snapshot agrees: the covered lines ran, the missing ones did not.
    let xml = read_snapshot(&snap);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let mut counts = std::collections::BTreeMap::new();
    for m in doc.descendants().filter(|n| n.has_tag_name("method")) {
        for (line, v) in footprints(m) {
            if v >= 0 {
                *counts.entry(line as u64).or_insert(0) += v;
            }
        }
    }
    for l in &run_lines {
        assert!(
            counts.get(l).is_some_and(|&n| n > 0),
            "line {l}: {counts:?}"
        );
    }
    for l in &never {
        assert_eq!(counts.get(l), Some(&0), "line {l}");
    }
}
