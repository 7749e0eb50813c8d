//! `profrj merge`: the snapshots of several JVMs summed, exactly. MergeTruth
//! runs in three JVMs with different arguments (n = 3, 7, 10), each line's
//! count a known function of n (its `// M:NAME` marker names it); the
//! merged snapshot must hold the sum on every marked line, the calls of
//! every method and the call tree's counts. Two versions of one class (the
//! same name, other bytes) are refused by their class ids, which are
//! JaCoCo's own (checked against org.jacoco.core's CRC64).

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const RUNS: [u64; 3] = [3, 7, 10];
const TRUTH: &str = "profrj.harness.MergeTruth";

/// How many times a line marked `// M:NAME` runs in one JVM given n.
fn per_run(marker: &str, n: u64) -> i64 {
    let n = n as i64;
    match marker {
        "once" => 1,
        "header" => n + 1,
        "n" => n,
        // step(i) for i in 0..n: i % 3 == 0 for ceil(n / 3) of them.
        "third" => (n + 2) / 3,
        "rest" => n - (n + 2) / 3,
        "big" => i64::from(n > 5),
        "small" => i64::from(n <= 5),
        "never" => 0,
        m => panic!("unknown marker M:{m}"),
    }
}

/// Line → marker, from the harness source.
fn markers() -> BTreeMap<i64, String> {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/java-test-harness/src/profrj/harness/MergeTruth.java"
    ))
    .unwrap();
    src.lines()
        .enumerate()
        .filter_map(|(i, l)| {
            let m = l.split("// M:").nth(1)?;
            Some((i as i64 + 1, m.trim().to_owned()))
        })
        .collect()
}

/// Runs MergeTruth once per n, each JVM writing `snap-<pid>.xml`; answers
/// the snapshots' paths.
fn three_runs(dir: &Path, options: &str) -> Vec<PathBuf> {
    for n in RUNS {
        let file = dir.join("snap-%p.xml");
        let opts = format!("{options},file={}", file.display());
        run_java(dir, &opts, TRUTH, &[&n.to_string()]).assert_success();
    }
    let mut snaps: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("snap-")
        })
        .collect();
    snaps.sort();
    assert_eq!(snaps.len(), RUNS.len(), "one snapshot per JVM: {snaps:?}");
    snaps
}

fn merge(inputs: &[PathBuf], out: &Path) -> (i32, String) {
    let mut args: Vec<String> = vec!["merge".into()];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    args.extend(["-o".into(), out.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    profrj_run(&args)
}

fn class<'a, 'i>(doc: &'a roxmltree::Document<'i>, name: &str) -> roxmltree::Node<'a, 'i> {
    doc.descendants()
        .find(|n| n.has_tag_name("class") && n.attribute("name") == Some(name))
        .unwrap_or_else(|| panic!("no class {name}"))
}

#[test]
fn three_jvms_merge_to_the_exact_sum() {
    let dir = temp_dir("merge-sum");
    let snaps = three_runs(&dir, "coverage,profile");
    let out = dir.join("all.xml");
    let (code, text) = merge(&snaps, &out);
    assert_eq!(code, 0, "{text}");
    let xml = read_snapshot(&out);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let truth = class(&doc, TRUTH);
    // Every marked line: the sum over the runs.
    let mut lines = BTreeMap::new();
    for m in truth.children().filter(|c| c.has_tag_name("method")) {
        for (line, v) in footprints(m) {
            if v >= 0 {
                *lines.entry(line).or_insert(0) += v;
            }
        }
    }
    let markers = markers();
    assert!(markers.len() > 15, "markers: {markers:?}");
    for (line, marker) in &markers {
        let want: i64 = RUNS.iter().map(|&n| per_run(marker, n)).sum();
        assert_eq!(lines.get(line), Some(&want), "line {line} (M:{marker})");
    }
    // Every method's calls.
    let calls = |name: &str| -> u64 {
        let m = truth
            .children()
            .find(|c| c.has_tag_name("method") && c.attribute("name") == Some(name))
            .unwrap();
        attr_u64(m, "count")
    };
    let sum_n: u64 = RUNS.iter().sum();
    assert_eq!(calls("main"), 3);
    assert_eq!(calls("work"), 3);
    assert_eq!(calls("step"), sum_n);
    assert_eq!(calls("big"), 2);
    assert_eq!(calls("small"), 1);
    assert_eq!(calls("never"), 0);
    // Branches, outcome by outcome (javac's jumps: the fall-through is the
    // `if`'s body, the loop's body).
    let branches = |name: &str| -> String {
        let m = truth
            .children()
            .find(|c| c.has_tag_name("method") && c.attribute("name") == Some(name))
            .unwrap();
        m.children()
            .find(|c| c.has_tag_name("branches"))
            .and_then(|b| b.text())
            .unwrap_or_else(|| panic!("{name} has no <branches>"))
            .trim()
            .to_owned()
    };
    let sum = |marker: &str| -> i64 { RUNS.iter().map(|&n| per_run(marker, n)).sum() };
    let line_of = |marker: &str| {
        markers
            .iter()
            .find(|(_, m)| m.as_str() == marker)
            .map(|(l, _)| *l)
            .unwrap()
    };
    let if_line = line_of("big") - 1;
    let step_if = line_of("third") - 1;
    assert_eq!(
        branches("main"),
        format!("{if_line}:{},{}", sum("big"), sum("small"))
    );
    assert_eq!(
        branches("work"),
        format!("{}:{},{}", line_of("header"), sum("n"), RUNS.len())
    );
    assert_eq!(
        branches("step"),
        format!("{step_if}:{},{}", sum("third"), sum("rest"))
    );
    // Instructions: MergeTruth's lines run whole or not at all, so a merged
    // cell is known: all of the line's instructions ran where it ran.
    for m in truth.children().filter(|c| c.has_tag_name("method")) {
        let name = m.attribute("name").unwrap();
        let cells: Vec<(u64, u64)> = m
            .children()
            .find(|c| c.has_tag_name("instructions"))
            .and_then(|i| i.text())
            .unwrap_or_else(|| panic!("{name} has no <instructions>"))
            .split_whitespace()
            .map(|w| {
                let (c, t) = w.split_once('/').unwrap();
                (c.parse().unwrap(), t.parse().unwrap())
            })
            .collect();
        let prints = footprints(m);
        assert_eq!(cells.len(), prints.len(), "{name}");
        for ((c, t), (line, n)) in cells.into_iter().zip(prints) {
            let want = if n > 0 { t } else { 0 };
            assert_eq!(c, want, "{name} line {line}: {c}/{t}, footprint {n}");
            assert_eq!(t == 0, n < 0, "{name} line {line}");
        }
    }
    // The call tree: one main thread, the three JVMs' paths summed.
    let profile = doc
        .root_element()
        .children()
        .find(|n| n.has_tag_name("profile"))
        .unwrap();
    let mains: Vec<_> = profile
        .children()
        .filter(|t| t.has_tag_name("thread") && t.attribute("name") == Some("main"))
        .collect();
    assert_eq!(mains.len(), 1, "threads of one name merge into one");
    let node = |path: &[&str]| -> u64 {
        let mut at = mains[0];
        for p in path {
            at = at
                .children()
                .find(|c| c.attribute("name").is_some_and(|n| n.contains(p)))
                .unwrap_or_else(|| panic!("no {p} in {path:?}"));
        }
        attr_u64(at, "count")
    };
    assert_eq!(node(&["MergeTruth.main("]), 3);
    assert_eq!(node(&["MergeTruth.main(", "MergeTruth.work("]), 3);
    assert_eq!(
        node(&["MergeTruth.main(", "MergeTruth.work(", "MergeTruth.step("]),
        sum_n
    );
    assert_eq!(node(&["MergeTruth.main(", "MergeTruth.big("]), 2);
    assert_eq!(node(&["MergeTruth.main(", "MergeTruth.small("]), 1);
    // The merged snapshot reads as one: report's coverage agrees.
    let (code, report) = profrj_run(&["report", out.to_str().unwrap(), "--section", "coverage"]);
    assert_eq!(code, 0, "{report}");
}

/// The class id the agent writes is JaCoCo's: `CRC64.classId` of the class
/// file, run from Debian's org.jacoco.core.jar.
#[test]
fn class_id_is_jacocos() {
    let dir = temp_dir("merge-id");
    let snap = dir.join("s.xml");
    run_java(
        &dir,
        &format!("coverage,file={}", snap.display()),
        TRUTH,
        &["4"],
    )
    .assert_success();
    let xml = read_snapshot(&snap);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let ours = class(&doc, TRUTH).attribute("id").unwrap().to_owned();
    assert_eq!(ours.len(), 16);
    let file = Path::new(harness_classes()).join("profrj/harness/MergeTruth.class");
    assert_eq!(ours, jacoco_class_id(&dir, &file));
}

/// JaCoCo's class id of a class file, as `%016x`.
fn jacoco_class_id(dir: &Path, class_file: &Path) -> String {
    let core = "/usr/share/java/org.jacoco.core.jar";
    assert!(
        Path::new(core).is_file(),
        "{core} missing: install libjacoco-java"
    );
    std::fs::write(
        dir.join("ClassId.java"),
        "public class ClassId { public static void main(String[] a) throws Exception {\n\
         System.out.printf(\"%016x%n\", org.jacoco.core.internal.data.CRC64.classId(\n\
         java.nio.file.Files.readAllBytes(java.nio.file.Path.of(a[0])))); } }\n",
    )
    .unwrap();
    let cp = format!("{core}:/usr/share/java/asm.jar:{}", dir.display());
    stdout_of(
        Command::new(jdk_tool("javac"))
            .args(["-cp", &cp, "-d"])
            .arg(dir)
            .arg(dir.join("ClassId.java")),
    );
    stdout_of(
        Command::new(java())
            .args(["-cp", &cp, "ClassId"])
            .arg(class_file),
    )
    .trim()
    .to_owned()
}

/// One class, `Twice`, compiled from `body` into `dir`, run with the agent.
fn run_twice_version(dir: &Path, body: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let src = dir.join("Twice.java");
    std::fs::write(
        &src,
        format!("public class Twice {{\n    public static void main(String[] a) {{\n        {body}\n    }}\n}}\n"),
    )
    .unwrap();
    stdout_of(
        Command::new(jdk_tool("javac"))
            .args(["-g", "-d"])
            .arg(dir)
            .arg(&src),
    );
    let snap = dir.join("twice.xml");
    let out = Command::new(java())
        .arg(format!(
            "-agentpath:{}=coverage,file={}",
            agent().display(),
            snap.display()
        ))
        .args(["-cp", dir.to_str().unwrap(), "Twice"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    snap
}

#[test]
fn two_classes_of_one_name_are_refused() {
    let dir = temp_dir("merge-refuse");
    let v1 = run_twice_version(&dir.join("v1"), "int x = a.length; x++;");
    let v2 = run_twice_version(&dir.join("v2"), "int y = a.length * 2; y--; y++;");
    let again = run_twice_version(&dir.join("v1-again"), "int x = a.length; x++;");
    let out = dir.join("all.xml");
    let (code, text) = merge(&[v1.clone(), v2.clone()], &out);
    assert_ne!(code, 0, "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("profrj: "))
        .unwrap_or("");
    assert!(line.contains("class Twice"), "{text}");
    assert!(
        line.contains(v1.to_str().unwrap()) && line.contains(v2.to_str().unwrap()),
        "{text}"
    );
    assert_eq!(text.lines().count(), 1, "one error line: {text}");
    assert!(!out.exists(), "no output on a refusal");
    // The same bytes compiled twice are one class: they merge.
    let (code, text) = merge(&[v1.clone(), again], &out);
    assert_eq!(code, 0, "{text}");
    let xml = read_snapshot(&out);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let main = class(&doc, "Twice")
        .children()
        .find(|m| m.attribute("name") == Some("main"))
        .unwrap();
    assert_eq!(attr_u64(main, "count"), 2);
    // A snapshot without ids (an older profrj's) merges by name, warned.
    let old = dir.join("old.xml");
    let stripped = read_snapshot(&v2)
        .lines()
        .map(|l| match l.find(" id=\"") {
            Some(at) if l.trim_start().starts_with("<class ") => {
                format!("{}{}", &l[..at], &l[at + 22..])
            }
            _ => l.to_owned(),
        })
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!stripped.contains(" id=\""));
    std::fs::write(&old, stripped).unwrap();
    let out2 = dir.join("all2.xml");
    let (code, text) = merge(&[v1, old], &out2);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("merged by name only"), "{text}");
}
