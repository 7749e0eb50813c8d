//! `lock` against ground truth (harness `LockContention`): threads contend
//! on two monitors held 1 ms at a time and measure their own waits with
//! `System.nanoTime`; the reported wait per site must be within ±20% of
//! what they measured, the contended acquisitions between the waits the
//! threads know were contended (over 200 µs) and all acquisitions; a
//! monitor no other thread wants and `Object.wait` show nothing. Then the
//! readers on that snapshot, and a deliberate deadlock (harness `Deadlock`)
//! in the monitor dump. Set PROFRJ_TEST_JAVA for another JDK
//! (scripts/test-all runs these on JDK 11, 17, 21 and 25).

mod common;

use common::*;
use roxmltree::{Document, Node};
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::Duration;

const MAIN: &str = "profrj.harness.LockContention";
const SITE_A: &str = "profrj.harness.LockContention.siteA()";
const HOLD: &str = "profrj.harness.LockContention$Shared.hold()";
const GATE: &str = "profrj.harness.LockContention$Gate";
const SHARED: &str = "profrj.harness.LockContention$Shared";

/// The `<lock>` element of a snapshot.
fn section<'a, 'i>(doc: &'a Document<'i>) -> Node<'a, 'i> {
    doc.root_element()
        .children()
        .find(|n| n.has_tag_name("lock"))
        .expect("no <lock> section")
}

/// (time, count) of the class frames `class` right below `method`.
fn site(lock: Node, method: &str, class: &str) -> (f64, u64) {
    let mut sum = (0.0, 0);
    for n in lock.descendants().filter(|n| {
        n.has_tag_name("profile")
            && n.attribute("name") == Some(class)
            && n.parent().and_then(|p| p.attribute("name")) == Some(method)
    }) {
        assert_eq!(
            n.attribute("class"),
            Some("true"),
            "a class frame is marked"
        );
        assert!(
            n.children().all(|c| !c.is_element()),
            "a class frame is a leaf"
        );
        sum.0 += attr_u64(n, "time") as f64;
        sum.1 += attr_u64(n, "count");
    }
    sum
}

/// What the harness printed for a site: (waitNs, acquisitions, longWaits).
fn measured(stdout: &str, site: &str) -> (f64, u64, u64) {
    let line = stdout
        .lines()
        .find(|l| l.starts_with(&format!("{site} ")))
        .unwrap_or_else(|| panic!("no line for {site} in:\n{stdout}"));
    let field = |k: &str| -> u64 {
        line.split_whitespace()
            .find_map(|w| w.strip_prefix(&format!("{k}=")))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no {k} in {line}"))
    };
    (
        field("waitNs") as f64,
        field("acquisitions"),
        field("longWaits"),
    )
}

fn check_site(stdout: &str, lock: Node, name: &str, method: &str, class: &str) {
    let (want, acquisitions, long) = measured(stdout, name);
    let (got, count) = site(lock, method, class);
    assert!(
        (got / want - 1.0).abs() <= 0.2,
        "{name}: {got:.0} ns waited, the threads measured {want:.0} ns (± 20%)"
    );
    assert!(
        long <= count && count <= acquisitions,
        "{name}: {count} contended acquisitions, the threads saw {long} waits over 200 µs in {acquisitions} acquisitions"
    );
}

/// The LockContention run with `lock`, shared by the tests below.
fn run() -> &'static (String, PathBuf) {
    static RUN: OnceLock<(String, PathBuf)> = OnceLock::new();
    RUN.get_or_init(|| {
        let (run, text) = run_verified("lock-default", "lock", MAIN, &[]);
        let path = temp_dir("lock-default-copy").join("snapshot.xml");
        std::fs::write(&path, text).unwrap();
        (run.stdout, path)
    })
}

#[test]
fn contended_waits_per_site_match_what_the_threads_measured() {
    let (stdout, path) = run();
    let text = read_snapshot(path);
    let doc = Document::parse(&text).unwrap();
    let lock = section(&doc);
    assert_eq!(attr_u64(lock, "threshold"), 0);
    check_site(stdout, lock, "siteA", SITE_A, GATE);
    // A synchronized method: the method itself is the frame that waited.
    check_site(stdout, lock, "siteB", HOLD, SHARED);
    // A monitor nobody else wants, and Object.wait (with its re-entry
    // after a notify, made to wait by the notifier), are not contention.
    for absent in [
        "profrj.harness.LockContention$Lonely",
        "profrj.harness.LockContention.lonely()",
    ] {
        assert!(
            find_nodes(lock, absent).is_empty(),
            "{absent} is in the <lock> section"
        );
    }
    // (The waiter may wait for another thread's class initialization,
    // HotSpot's `int[]` init lock: that is a real wait, not its Cond.)
    assert_eq!(
        site(
            lock,
            "profrj.harness.LockContention.waitLoop()",
            "profrj.harness.LockContention$Cond"
        ),
        (0.0, 0),
        "Object.wait's re-entry counted"
    );
    assert!(
        lock.descendants()
            .filter(|n| n.has_tag_name("profile"))
            .all(|n| !n
                .attribute("name")
                .unwrap()
                .starts_with("java.lang.Object.wait")),
        "Object.wait counted"
    );
    // A thread's totals are its top frames' cumulated figures.
    for t in lock.children().filter(|n| n.has_tag_name("thread")) {
        for (total, cumulated) in [("count", "cumulatedCount"), ("time", "cumulatedTime")] {
            let roots: u64 = t
                .children()
                .filter(|n| n.has_tag_name("profile"))
                .map(|n| attr_u64(n, cumulated))
                .sum();
            assert_eq!(roots, attr_u64(t, total), "{total}");
        }
    }
}

/// `java.util.concurrent`: the same sites on ReentrantLocks, seen through
/// the agent's probes in `LockSupport.park`: the time parked per site, each
/// park a wait (at least as many as the waits the threads know were long),
/// the lock's synchronizer as the class frame right below the method that
/// called `lock()` (the frames of java.util.concurrent.locks left out), and
/// `Condition.await` not counted.
#[test]
fn reentrant_lock_waits_per_site_match_what_the_threads_measured() {
    let (run, text) = run_verified("lock-reentrant", "lock", MAIN, &["reentrant"]);
    let doc = Document::parse(&text).unwrap();
    let lock = section(&doc);
    let sync = "java.util.concurrent.locks.ReentrantLock$NonfairSync";
    for (name, method) in [
        ("lockA", "profrj.harness.LockContention.lockA()"),
        ("lockB", "profrj.harness.LockContention.lockB()"),
    ] {
        let (want, _, long) = measured(&run.stdout, name);
        let (got, count) = site(lock, method, sync);
        assert!(
            (got / want - 1.0).abs() <= 0.2,
            "{name}: {got:.0} ns parked, the threads measured {want:.0} ns (± 20%)"
        );
        assert!(long <= count, "{name}: {count} parks, {long} long waits");
    }
    for n in lock.descendants().filter(|n| n.has_tag_name("profile")) {
        let name = n.attribute("name").unwrap();
        assert!(
            !name.starts_with("java.util.concurrent.locks.")
                || n.attribute("class") == Some("true"),
            "{name}: a frame of the parking machinery"
        );
    }
    assert!(
        !text.contains("CountDownLatch"),
        "CountDownLatch.await counted"
    );
    // (As for Object.wait: a class-initialization wait in awaitLoop is real.)
    assert_eq!(
        site(lock, "profrj.harness.LockContention.awaitLoop()", sync),
        (0.0, 0),
        "Condition.await counted"
    );
}

#[test]
fn a_threshold_keeps_only_longer_waits() {
    let (_, text) = run_verified("lock-threshold", "lock=500us", MAIN, &[]);
    let doc = Document::parse(&text).unwrap();
    let lock = section(&doc);
    assert_eq!(attr_u64(lock, "threshold"), 500_000);
    let classes: Vec<Node> = lock
        .descendants()
        .filter(|n| n.attribute("class") == Some("true"))
        .collect();
    assert!(!classes.is_empty(), "no waits over 500 µs recorded");
    for n in classes {
        assert!(
            attr_u64(n, "time") >= attr_u64(n, "count") * 500_000,
            "a wait under the threshold was recorded"
        );
    }
}

#[test]
fn readers_show_monitor_time() {
    let (_, path) = run();
    let text = read_snapshot(path);
    let report = profrj_ok(&["report", s(path), "--section", "lock"]);
    assert!(report.contains("MONITOR TIME <lock>"), "{report}");
    let row = report_row(&report, SITE_A);
    assert!(row.contains(&GATE), "{report}");
    assert!(report.contains("MONITOR DUMP BEGIN"), "{report}");
    // collapsed: lines end in the monitor's class, and add up to the section.
    for (metric, attr) in [("time", "time"), ("count", "count")] {
        let out = profrj_ok(&[
            "convert",
            s(path),
            "--to",
            "collapsed",
            "--section",
            "lock",
            "--metric",
            metric,
        ]);
        let lines = collapsed_lines(&out);
        assert_eq!(
            lines.values().sum::<u64>(),
            sum_threads(&text, "lock", attr),
            "{metric}"
        );
        assert!(lines
            .keys()
            .any(|k| k.ends_with(&format!("siteA();{GATE}"))));
    }
    // pprof: Go's mutex profile types.
    let pb = temp_dir("lock-pprof").join("lock.pb.gz");
    profrj_ok(&[
        "convert",
        s(path),
        "--to",
        "pprof",
        "--section",
        "lock",
        "-o",
        s(&pb),
    ]);
    let d = parse_decoded(&protoc_decode(&pb));
    let types: Vec<(&str, &str)> = d
        .sample_types
        .iter()
        .map(|&(t, u)| (d.strings[t].as_str(), d.strings[u].as_str()))
        .collect();
    assert_eq!(types, [("contentions", "count"), ("delay", "nanoseconds")]);
    let sum = |i: usize| d.samples.iter().map(|s| s.0[i]).sum::<u64>();
    assert_eq!(sum(0), sum_threads(&text, "lock", "count"));
    assert_eq!(sum(1), sum_threads(&text, "lock", "time"));
    // diff and flame read it.
    let diff = profrj_ok(&["diff", s(path), s(path), "--section", "lock"]);
    assert!(diff.contains("<lock>"), "{diff}");
    let html = temp_dir("lock-flame").join("f.html");
    profrj_ok(&["flame", s(path), "--section", "lock", "-o", s(&html)]);
    assert!(std::fs::read_to_string(&html).unwrap().contains(GATE));
}

#[test]
fn a_deadlock_shows_in_the_monitor_dump() {
    let dir = temp_dir("lock-deadlock");
    let stop = dir.join("stop");
    let file = dir.join("dump-%n.xml");
    let mut child = Command::new(java())
        .current_dir(&dir)
        .arg(format!(
            "-agentpath:{}=lock,file={}",
            agent().display(),
            file.display()
        ))
        .args(["-cp", harness_classes(), "profrj.harness.Deadlock"])
        .arg(&stop)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "deadlocked");
    // The dump signal writes a snapshot of the running session.
    // SAFETY: kill on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGUSR1) };
    let text = wait_snapshot_for(&dir.join("dump-1.xml"), 20);
    std::fs::write(&stop, b"").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let doc = Document::parse(&text).unwrap();
    let dump = section(&doc)
        .children()
        .find(|n| n.has_tag_name("monitorDump"))
        .expect("no <monitorDump>");
    let thread = |name: &str| {
        dump.children()
            .find(|n| n.has_tag_name("thread") && n.attribute("name") == Some(name))
            .unwrap_or_else(|| panic!("{name} not in the dump"))
    };
    let (a, b) = (thread("deadlock-a"), thread("deadlock-b"));
    let id = |n: Node| attr_u64(n, "id");
    let monitor = |class: &str| {
        dump.children()
            .find(|n| {
                n.has_tag_name("monitor")
                    && n.attribute("class") == Some(&format!("profrj.harness.Deadlock${class}"))
            })
            .unwrap_or_else(|| panic!("monitor {class} not in the dump"))
    };
    let (first, second) = (monitor("First"), monitor("Second"));
    for (t, top) in [(a, "aThenB()"), (b, "bThenA()")] {
        assert_eq!(t.attribute("state"), Some("MW"));
        let frame = t.children().find(|f| f.has_tag_name("frame")).unwrap();
        assert_eq!(
            frame.attribute("name"),
            Some(format!("profrj.harness.Deadlock.{top}").as_str())
        );
    }
    // Each monitor's owner is the other thread's; each waits for the other's.
    assert_eq!(attr_u64(first, "owner"), id(a));
    assert_eq!(attr_u64(second, "owner"), id(b));
    assert_eq!(attr_u64(first, "entryCount"), 1);
    assert_eq!(attr_u64(a, "monitor"), attr_u64(second, "id"));
    assert_eq!(attr_u64(b, "monitor"), attr_u64(first, "id"));
    let waiting = |m: Node| -> Vec<u64> {
        m.children()
            .filter(|w| w.has_tag_name("waiting"))
            .map(|w| attr_u64(w, "thread"))
            .collect()
    };
    assert_eq!(waiting(first), [id(b)]);
    assert_eq!(waiting(second), [id(a)]);
    // The cycle.
    let cycles: Vec<Vec<u64>> = dump
        .children()
        .filter(|n| n.has_tag_name("deadlock"))
        .map(waiting)
        .collect();
    let mut want = vec![id(a), id(b)];
    want.sort();
    assert_eq!(cycles, [want]);
    // report prints it.
    let path = dir.join("dump-1.xml");
    let report = profrj_ok(&["report", s(&path), "--section", "lock"]);
    assert!(report.contains("DEADLOCK: thread"), "{report}");
    assert!(report.contains("\"deadlock-a\", status: MW"), "{report}");
}

/// `lock` through attach, beside `sampling` (`start,sampling,lock`): a dump
/// holds both sections, the contended sites (a monitor, and a ReentrantLock
/// through `LockSupport` retransformed at attach) and the monitor dump.
#[test]
fn attached_lock_beside_sampling_finds_the_site() {
    let dir = temp_dir("lock-attach");
    let stop = dir.join("stop");
    let mut child = Command::new(java())
        .current_dir(&dir)
        .args(["-cp", harness_classes(), MAIN, "until"])
        .arg(&stop)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    await_ready(&mut child);
    let pid = child.id().to_string();
    let snap = dir.join("a-%n.xml");
    let opts = format!("start,sampling,lock,file={}", snap.display());
    let (code, out) = profrj_run(&["attach", &pid, &opts]);
    assert_eq!(code, 0, "{out}");
    // Dumps a second apart until the waits asserted below have piled up:
    // on a busy machine four threads contend less often in a second, and
    // a dump's figures only grow, so the bars keep their meaning.
    let sync = "java.util.concurrent.locks.ReentrantLock$NonfairSync";
    let mut xml = String::new();
    for n in 1..=20 {
        std::thread::sleep(Duration::from_millis(1000));
        let (code, out) = profrj_run(&["dump", &pid]);
        assert_eq!(code, 0, "{out}");
        xml = wait_snapshot_for(&dir.join(format!("a-{n}.xml")), 20);
        let doc = Document::parse(&xml).unwrap();
        let lock = section(&doc);
        let (time_a, count_a) = site(lock, SITE_A, GATE);
        let (time, count) = site(lock, "profrj.harness.LockContention.lockA()", sync);
        if count_a >= 20 && time_a >= 0.02e9 && count >= 20 && time >= 0.2e9 {
            break;
        }
    }
    std::fs::write(&stop, b"").unwrap();
    let done = child.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let doc = Document::parse(&xml).unwrap();
    let sections: Vec<&str> = doc
        .root_element()
        .children()
        .filter(|n| n.is_element())
        .map(|n| n.tag_name().name())
        .collect();
    assert_eq!(sections, ["sampler", "lock"]);
    let lock = section(&doc);
    let (time, count) = site(lock, SITE_A, GATE);
    // Four threads on a monitor held 1 ms at a time: most of a second is waits.
    assert!(count >= 20 && time >= 0.02e9, "{count} waits, {time} ns");
    let (time, count) = site(lock, "profrj.harness.LockContention.lockA()", sync);
    assert!(
        count >= 20 && time >= 0.2e9,
        "lockA: {count} parks, {time} ns"
    );
    assert!(lock.children().any(|n| n.has_tag_name("monitorDump")));
}

/// The same deadlock on two ReentrantLocks, in the dump at exit: both
/// threads parked (CW) for a lock (`lock="true"`) the other owns, and the
/// cycle.
#[test]
fn a_reentrant_lock_deadlock_shows_in_the_monitor_dump() {
    let (_, text) = run_verified(
        "lock-deadlock-reentrant",
        "lock",
        "profrj.harness.Deadlock",
        &["reentrant"],
    );
    let doc = Document::parse(&text).unwrap();
    let dump = section(&doc)
        .children()
        .find(|n| n.has_tag_name("monitorDump"))
        .expect("no <monitorDump>");
    let thread = |name: &str| {
        dump.children()
            .find(|n| n.has_tag_name("thread") && n.attribute("name") == Some(name))
            .unwrap_or_else(|| panic!("{name} not in the dump"))
    };
    let (a, b) = (thread("deadlock-a"), thread("deadlock-b"));
    let locks: Vec<Node> = dump
        .children()
        .filter(|n| n.has_tag_name("monitor") && n.attribute("lock") == Some("true"))
        .collect();
    assert_eq!(locks.len(), 2, "{text}");
    for (t, other) in [(a, b), (b, a)] {
        assert_eq!(t.attribute("state"), Some("CW"));
        let waits_for = attr_u64(t, "monitor");
        let lock = locks
            .iter()
            .find(|l| attr_u64(**l, "id") == waits_for)
            .expect("the lock it waits for");
        assert_eq!(
            lock.attribute("class"),
            Some("java.util.concurrent.locks.ReentrantLock$NonfairSync")
        );
        assert_eq!(attr_u64(*lock, "owner"), attr_u64(other, "id"));
    }
    let cycles: Vec<Vec<u64>> = dump
        .children()
        .filter(|n| n.has_tag_name("deadlock"))
        .map(|d| {
            d.children()
                .filter(|w| w.has_tag_name("waiting"))
                .map(|w| attr_u64(w, "thread"))
                .collect()
        })
        .collect();
    let mut want = vec![attr_u64(a, "id"), attr_u64(b, "id")];
    want.sort();
    assert_eq!(cycles, [want]);
}
