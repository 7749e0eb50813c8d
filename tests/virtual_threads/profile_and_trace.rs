//! Profile and trace follow a virtual thread's calls across carriers:
//! VirtualTruth's exact tree per group, and a trace balanced per virtual
//! thread.

use crate::common::*;
use crate::runs::*;
use std::collections::BTreeMap;

#[test]
fn profile_tree_is_exact_across_unmounts() {
    let (dir, xml) = run_truth("vt-truth-profile", &format!("profile,include={VT}"));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let threads = section_threads(&doc, "profile");
    for (group, n) in [("[virtual threads]", UNNAMED), ("worker-#", NAMED)] {
        let t = threads[group];
        assert_eq!(group_size(t), Some(n), "{group}");
        let tree = paths(t);
        assert_task_tree(&tree, group, n);
        // A call that waits is one call: its wall time holds the wait
        // (each work() sleeps >= 1 ms), its CPU time does not.
        let work = tree["task/work"];
        let (wall, cpu) = (
            attr_u64(work, "cumulatedElapsed"),
            attr_u64(work, "cumulated"),
        );
        let compute_cpu = attr_u64(tree["task/work/compute"], "cumulated");
        eprintln!("{group}: work() wall {wall} µs, CPU {cpu} µs; compute() CPU {compute_cpu} µs");
        assert!(
            wall >= 10 * n * 1000,
            "{group}: work() wall {wall} µs < 1 ms a call"
        );
        assert!(
            cpu >= compute_cpu,
            "{group}: work() CPU {cpu} < compute() {compute_cpu}"
        );
        assert!(
            cpu * 4 < wall,
            "{group}: work() CPU {cpu} µs holds the waits ({wall} µs)"
        );
    }
    // One at a time: the lockers' and parkers' single calls.
    for (group, path) in [("locker-#", "enterGate"), ("parker-#", "takeLock")] {
        let t = threads[group];
        assert_eq!(group_size(t), Some(ROUNDS), "{group}");
        let tree = paths(t);
        assert_eq!(tree.keys().collect::<Vec<_>>(), [path], "{group}");
        assert_eq!(attr_u64(tree[path], "count"), ROUNDS, "{group}");
    }
    // The platform thread is the OS thread it is, as before.
    let main = paths(threads["main"]);
    assert_eq!(group_size(threads["main"]), None);
    assert_eq!(attr_u64(main["main/platformWork/work"], "count"), 5);
    assert_eq!(attr_u64(main["main/platformWork/work/compute"], "count"), 5);
    assert_eq!(
        attr_u64(main["main/startVirtual"], "count"),
        UNNAMED + NAMED + 2 * ROUNDS
    );
    assert!(!threads.keys().any(|k| k.is_empty()), "a nameless <thread>");
    // The readers know the groups: report --thread and the flame page's
    // thread picker say how many virtual threads a group holds.
    let snap = dir.join("vt.xml");
    let report = profrj_ok(&["report", s(&snap), "--thread", "[virtual threads]"]);
    let facts = format!("thread \"[virtual threads]\": a group of {UNNAMED} virtual threads");
    assert!(report.contains(&facts), "{report}");
    let page = dir.join("vt.html");
    profrj_ok(&["flame", s(&snap), "-o", s(&page)]);
    let page = std::fs::read_to_string(&page).unwrap();
    let picker = format!("\"name\":\"worker-#\",\"virtualThreads\":{NAMED}");
    assert!(
        page.contains(&picker),
        "the flame page's threads lack {picker}"
    );
}

#[test]
fn trace_is_balanced_per_virtual_thread() {
    let (dir, _) = run_truth("vt-truth-trace", &format!("trace,include={VT}"));
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().ends_with("-trace.xml"))
        .expect("no trace file");
    let text = std::fs::read_to_string(&file).unwrap();
    let doc = roxmltree::Document::parse(&text).unwrap();
    let mut names = BTreeMap::new();
    let mut open: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut entries: BTreeMap<&str, u64> = BTreeMap::new();
    let mut ended = 0;
    for e in doc.descendants() {
        match e.tag_name().name() {
            "threadStart" => {
                names.insert(
                    e.attribute("threadId").unwrap(),
                    e.attribute("threadName").unwrap(),
                );
            }
            "methodEntry" => {
                let t = e.attribute("threadIdRef").unwrap();
                open.entry(t)
                    .or_default()
                    .push(e.attribute("ticket").unwrap());
                *entries.entry(t).or_default() += 1;
            }
            "methodExit" => {
                let t = e.attribute("threadIdRef").unwrap();
                let top = open.entry(t).or_default().pop();
                assert_eq!(
                    top,
                    e.attribute("ticket"),
                    "thread {t}: an exit that is not its last entry's"
                );
            }
            "threadEnd" => ended += 1,
            _ => {}
        }
    }
    for (t, stack) in &open {
        assert!(
            stack.is_empty(),
            "thread {t} ({}) left calls open",
            names[t]
        );
    }
    // Each virtual thread is a thread of its own in the trace, named after
    // its group, with its own Task's 44 entries.
    let per_task: u64 = TASK_TREE.iter().map(|e| e.1).sum();
    let mut per_group: BTreeMap<&str, Vec<u64>> = BTreeMap::new();
    for (t, n) in &entries {
        let name = names[t];
        let group = if name == "main" {
            name
        } else {
            name.rsplit_once(' ').unwrap().0
        };
        per_group.entry(group).or_default().push(*n);
    }
    assert_eq!(
        per_group["[virtual threads]"],
        vec![per_task; UNNAMED as usize]
    );
    assert_eq!(per_group["worker-#"], vec![per_task; NAMED as usize]);
    assert_eq!(per_group["locker-#"], vec![1; ROUNDS as usize]);
    assert_eq!(per_group["parker-#"], vec![1; ROUNDS as usize]);
    assert!(
        ended >= (UNNAMED + NAMED + 2 * ROUNDS) as usize,
        "{ended} thread ends"
    );
}
