//! The host JVM's output belongs to the application (issue 18, finding 11):
//! under `-Xcheck:jni`, in every mode, at start-up and under thread churn,
//! stdout carries only the program's own lines (HotSpot prints JNI warnings
//! there) and stderr only `profrj:` lines.

mod common;

use common::*;

fn check(options: &str, main: &str, args: &[&str], stdout: &[&str]) {
    let dir = temp_dir(&format!("hygiene-{}", options.replace([',', '='], "-")));
    let run = run_java_with(&dir, &["-Xcheck:jni"], options, main, args);
    run.assert_success();
    let own: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(own, stdout, "{options}: stdout is the program's alone");
    for line in run.stderr.lines() {
        assert!(
            line.starts_with("profrj:"),
            "{options}: foreign stderr line {line:?}"
        );
    }
}

#[test]
fn checked_jni_is_silent_on_both_streams_in_every_mode() {
    for options in [
        "sampling,file=h.xml",
        "profile,file=h.xml",
        "memory,file=h.xml",
        "coverage,file=h.xml",
        "sampling,profile,memory,coverage,file=h.xml",
        "lock,file=h.xml",
        "trace=h-trace.xml,memory,lock,file=h.xml",
        "sampling,alloc,lock,jfr=h.jfr,file=h.xml",
    ] {
        check(
            options,
            "profrj.harness.Hello",
            &[],
            &["hello from the harness"],
        );
    }
}

/// `lock`'s monitor events and its monitor dump (taken at exit, with two
/// threads deadlocked) under `-Xcheck:jni`.
#[test]
fn checked_jni_is_silent_with_a_monitor_dump() {
    check(
        "lock,file=d.xml",
        "profrj.harness.Deadlock",
        &[],
        &["deadlocked"],
    );
    // The same on ReentrantLocks: the dump reads each parked thread's blocker.
    check(
        "lock,file=r.xml",
        "profrj.harness.Deadlock",
        &["reentrant"],
        &["deadlocked"],
    );
}

#[test]
fn checked_jni_is_silent_under_thread_churn() {
    check(
        "sampling,profile,memory,interval=1ms,file=m.xml",
        "profrj.harness.ManyThreads",
        &["300"],
        &["joined 300"],
    );
}

/// Finding 8: names XML 1.0 cannot hold (a control character, an ANSI
/// escape) are written as `\uXXXX`, a backslash as `\\`; the snapshot stays
/// well-formed, profrj's reader gets the names back, and `profrj report`
/// never sends the escape to the terminal.
#[test]
fn names_with_control_characters_keep_the_snapshot_readable() {
    let dir = temp_dir("oddnames");
    for mode in ["sampling", "profile,include=profrj.*"] {
        let run = run_java(
            &dir,
            &format!("{mode},file=o.xml"),
            "profrj.harness.OddNames",
            &[],
        );
        run.assert_success();
        let xml = read_snapshot(&dir.join("o.xml"));
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let section = if mode == "sampling" {
            "sampler"
        } else {
            "profile"
        };
        for written in ["odd\\u0001one", "\\u001B[31mred\\u001B[0m", "back\\\\slash"] {
            assert_eq!(
                threads(&doc, section, written).len(),
                1,
                "{mode}: thread {written:?}"
            );
        }
        let report = |thread: &str| {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_profrj"))
                .args(["report", "--thread", thread])
                .arg(dir.join("o.xml"))
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(
                out.status.success(),
                "{mode}: {text}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            text
        };
        let text = report("\u{1b}[31mred\u{1b}[0m");
        assert!(
            !text.contains('\u{1b}'),
            "{mode}: raw escape in the report: {text}"
        );
        let text = report("odd\u{1}one");
        assert!(
            text.contains("odd\\u{1}one"),
            "{mode}: decoded name shown escaped: {text}"
        );
    }
}
