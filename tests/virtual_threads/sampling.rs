//! Sampling and jfr on virtual threads: a carrier's samples show the virtual
//! thread it runs (or, with `vthreads=off`, the carrier as the JVM reports
//! it), and whole virtual stacks in the snapshot and in JFR's recording.

use crate::common::json::jfr_events;
use crate::runs::*;
use std::path::Path;

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

/// The stacks of a JFR recording's execution and wall-clock samples, read
/// by the JDK's `jfr print --json`: each its frames top first, one a line,
/// as `pkg.Cls.method(descriptor` (a synthetic frame: `.[name]`).
fn jfr_stacks(file: &Path) -> Vec<String> {
    let jfr = vt_java().with_file_name("jfr");
    let events = jfr_events(
        &jfr,
        file,
        "jdk.ExecutionSample,profiler.WallClockSample",
        64,
    );
    events
        .iter()
        .map(|e| {
            let frames = e.get("values").get("stackTrace").get("frames").items();
            let names: Vec<String> = frames
                .iter()
                .map(|f| {
                    let m = f.get("method");
                    let class = m.get("type").get("name").str().replace('/', ".");
                    format!(
                        "{class}.{}{}",
                        m.get("name").str(),
                        m.get("descriptor").str()
                    )
                })
                .collect();
            names.join("\n")
        })
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
    // A signal's walk that caught a carrier mounting or unmounting sees
    // only the frames HotSpot has thawed: the rest, still frozen in the
    // virtual thread's heap chunk, are marked where they are missing (right
    // above `Continuation.enterSpecial`), never left out silently.
    for s in &stacks {
        let lines: Vec<&str> = s.lines().map(str::trim).collect();
        for (i, l) in lines.iter().enumerate() {
            if l.contains("[frozen_frames]") {
                let next = lines.get(i + 1).copied().unwrap_or_default();
                assert!(
                    next.starts_with("jdk.internal.vm.Continuation.enterSpecial("),
                    "[frozen_frames] not right above enterSpecial: {s}"
                );
            }
        }
    }
    for s in stacks.iter().filter(|s| s.contains("VirtualTruth.task()")) {
        assert!(
            s.contains("java.lang.VirtualThread.run(") || s.contains("[frozen_frames]"),
            "cut: {s}"
        );
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
