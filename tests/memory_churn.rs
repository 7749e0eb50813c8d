//! `memory` under churn (issue 43): LiveChurn keeps exactly N objects alive
//! while it replaces them as fast as it can, so a GC always finds garbage
//! beside the N. A snapshot taken meanwhile (`profrj dump`) counts, as
//! `count`, the objects alive at the end of its own GC (docs/MEMORY.md), or
//! under ZGC at its censuses: N, or N + 1 with the one just made and not
//! yet stored. `max`, taken only where what is alive is known (the ends of
//! full GCs, censuses, snapshots), is N or N + 1 too: never the garbage.
//! Before, `count` counted what was made after that GC too, dead or not
//! (G1: 2,097,493 of 2,000,000 `byte[16]`; Parallel: 2,306,470), and `max`
//! read 3.5 to 8.3 M. And JdkLiveSet: a live set made of the JDK's objects
//! only (a HashMap of boxed keys and strings).

mod common;

use common::*;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

const MAIN: &str = "profrj.harness.LiveChurn";
const N: u64 = 1_000_000;

/// The `<memory>` section's `<thread>` named `name`.
fn memory_rows<'a>(doc: &'a roxmltree::Document, name: &str) -> roxmltree::Node<'a, 'a> {
    doc.descendants()
        .filter(|n| n.has_tag_name("memory"))
        .flat_map(|m| m.children())
        .find(|t| t.has_tag_name("thread") && t.attribute("name") == Some(name))
        .unwrap_or_else(|| panic!("no <memory> rows of {name}"))
}

/// main's `count` and `max` of `class` in a snapshot taken while LiveChurn
/// churns `kind` objects under `gc` (it churns from "ready" until told to stop).
fn count_under_churn(name: &str, gc: &[&str], kind: &str, class: &str) -> (u64, u64) {
    let dir = temp_dir(name);
    let stop = dir.join("stop");
    let mut child = Command::new(java())
        .current_dir(&dir)
        .arg("-Xmx1g")
        .args(gc)
        .arg(format!(
            "-agentpath:{}=memory,file={}",
            agent().display(),
            dir.join("exit.xml").display()
        ))
        .args(["-cp", harness_classes(), MAIN, kind, &N.to_string()])
        .arg(&stop)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready", "{name}");
    // Let it churn: several GCs, each finding garbage beside the N.
    std::thread::sleep(Duration::from_millis(1500));
    let snap = dir.join("dump.xml");
    let file = snap.display().to_string();
    let pid = child.id().to_string();
    let (code, said) = profrj_run(&["dump", "--timeout", "60s", "--file", &file, &pid]);
    assert_eq!(code, 0, "{name}: {said}");
    let text = wait_snapshot_for(&snap, 60);
    std::fs::write(&stop, b"").unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    let done = child.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&done.stderr)
    );
    let replaced: u64 = line
        .trim()
        .strip_prefix("replaced=")
        .and_then(|r| r.split(' ').next())
        .and_then(|r| r.parse().ok())
        .unwrap_or_else(|| panic!("{name}: {line}"));
    let doc = roxmltree::Document::parse(&text).unwrap();
    let main = memory_rows(&doc, "main");
    let row = main
        .children()
        .find(|r| r.attribute("class") == Some(class))
        .unwrap_or_else(|| panic!("{name}: main has no {class} row"));
    let count = row.attribute("count").unwrap().parse().unwrap();
    let max = row.attribute("max").unwrap().parse().unwrap();
    eprintln!("{name}: count {count}, max {max} of {N} alive, {replaced} replaced in all");
    (count, max)
}

/// The program's own class (stamps) and `byte[16]` (weak references on the
/// pause collectors, tags on ZGC), on G1, Parallel and ZGC.
#[test]
fn count_and_max_are_the_live_set_under_churn() {
    let item = "profrj.harness.LiveChurn$Item";
    let zgc: &[&str] = &["-XX:+UnlockExperimentalVMOptions", "-XX:+UseZGC"];
    let runs: [(&str, &[&str], &str, &str); 6] = [
        ("churn-g1-bytes", &["-XX:+UseG1GC"], "bytes", "byte[]"),
        ("churn-g1-items", &["-XX:+UseG1GC"], "items", item),
        (
            "churn-par-bytes",
            &["-XX:+UseParallelGC"],
            "bytes",
            "byte[]",
        ),
        ("churn-par-items", &["-XX:+UseParallelGC"], "items", item),
        ("churn-zgc-bytes", zgc, "bytes", "byte[]"),
        ("churn-zgc-items", zgc, "items", item),
    ];
    for (name, gc, kind, class) in runs {
        let (count, max) = count_under_churn(name, gc, kind, class);
        let alive = N..=N + 1;
        assert!(
            alive.contains(&count) && alive.contains(&max),
            "{name}: count {count}, max {max}; {N} alive (+1 in flight)"
        );
    }
}

/// The JDK's objects only (JdkLiveSet, the JDK in scope): a HashMap of
/// 10,000 boxed keys and their strings, each value replaced three times.
/// What the thread left alive is known by construction; the replaced
/// strings and the map's outgrown tables died.
#[test]
fn the_jdks_objects_count_their_live_set() {
    let dir = temp_dir("jdk-live-set");
    let snap = dir.join("s.xml");
    let run = run_java(
        &dir,
        &format!("memory,include=*,file={}", snap.display()),
        "profrj.harness.JdkLiveSet",
        &[],
    );
    run.assert_success();
    assert!(run.stdout.contains("entries=10000"), "{}", run.stdout);
    let text = std::fs::read_to_string(&snap).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let thread = memory_rows(&doc, "jdk-live");
    let count = |class: &str| -> u64 {
        let rows: Vec<u64> = thread
            .children()
            .filter(|r| r.attribute("class") == Some(class))
            .map(|r| attr_u64(r, "count"))
            .collect();
        assert_eq!(rows.len(), 1, "{class}: {rows:?}");
        rows[0]
    };
    for class in [
        "java.util.HashMap$Node",
        "java.lang.Integer",
        "java.lang.String",
        "byte[]",
    ] {
        assert_eq!(count(class), 10_000, "{class}");
    }
    assert_eq!(count("java.util.HashMap"), 1);
    assert_eq!(count("java.util.HashMap$Node[]"), 1);
}
