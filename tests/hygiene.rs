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
    ] {
        check(
            options,
            "profrj.harness.Hello",
            &[],
            &["hello from the harness"],
        );
    }
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
