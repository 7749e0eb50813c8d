//! Memory and lock count exactly what virtual threads do: objects kept and
//! made per group, parked and blocked waits.

use crate::common::*;
use crate::runs::*;
use std::collections::BTreeMap;
use std::process::Command;

#[test]
fn memory_counts_exactly_per_group() {
    let (_, xml) = run_truth("vt-truth-memory", "memory");
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let threads = section_threads(&doc, "memory");
    let payloads = |t: roxmltree::Node| -> u64 {
        t.children()
            .filter(|r| {
                r.attribute("class")
                    .is_some_and(|c| c.ends_with("VirtualTruth$Payload"))
            })
            .map(|r| attr_u64(r, "count"))
            .sum()
    };
    assert_eq!(payloads(threads["[virtual threads]"]), 3 * UNNAMED);
    assert_eq!(group_size(threads["[virtual threads]"]), Some(UNNAMED));
    assert_eq!(payloads(threads["worker-#"]), 3 * NAMED);
    assert_eq!(payloads(threads["main"]), 3);
    let total: u64 = threads.values().map(|t| payloads(*t)).sum();
    assert_eq!(total, 3 * (UNNAMED + NAMED + 1));
}

/// `memory` with virtual threads: their objects take weak references (they
/// do not stamp), the platform thread's take stamps; the totals are exact
/// whichever thread rows hold them.
#[test]
fn memory_counts_what_virtual_threads_make() {
    let dir = temp_dir("vt-memory");
    let out = Command::new(vt_java())
        .current_dir(&dir)
        .arg(format!(
            "-agentpath:{}=memory,file=m.xml",
            agent().display()
        ))
        .args(["-cp", harness_classes(), "profrj.harness.VirtualAlloc"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let xml = read_snapshot(&dir.join("m.xml"));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let cell = "profrj.harness.VirtualAlloc$Cell";
    let sites = doc.descendants().find(|n| n.has_tag_name("sites")).unwrap();
    let (mut count, mut made) = (0, 0);
    for n in sites.descendants() {
        if n.has_tag_name("profile") && n.attribute("name") == Some(cell) {
            count += attr_u64(n, "count");
            made += attr_u64(n, "allocated");
        }
    }
    assert_eq!((count, made), (2_100, 92_350), "{xml}");
    assert!(stderr.contains("classes given a stamp field"), "{stderr}");
}

/// The lock section's contended waits in `class` by thread: (count, ns).
fn lock_waits(xml: &str, class: &str) -> BTreeMap<String, (u64, u64)> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let mut out = BTreeMap::new();
    for (name, t) in section_threads(&doc, "lock") {
        for n in t
            .descendants()
            .filter(|n| n.attribute("name") == Some(class))
        {
            let e = out.entry(name.clone()).or_insert((0, 0));
            e.0 += attr_u64(n, "count");
            e.1 += attr_u64(n, "time");
        }
    }
    out
}

#[test]
fn lock_counts_parked_and_blocked_virtual_threads() {
    let (_, xml) = run_truth("vt-truth-lock", "lock");
    // Parked on a ReentrantLock (the virtual thread unmounts; JDK 21+'s
    // park never reaches Unsafe.park), ~30 ms each time.
    let parked = lock_waits(&xml, "java.util.concurrent.locks.ReentrantLock$NonfairSync");
    let (count, ns) = parked["parker-#"];
    assert_eq!(count, ROUNDS, "{parked:?}");
    assert!(ns >= ROUNDS * 25_000_000, "parked {ns} ns");
    // Blocked on a monitor (pinned on 21, unmounted on 24+).
    let blocked = lock_waits(&xml, "java.lang.Object");
    let (count, ns) = blocked["locker-#"];
    assert_eq!(count, ROUNDS, "{blocked:?}");
    assert!(ns >= ROUNDS * 25_000_000, "blocked {ns} ns");
}
