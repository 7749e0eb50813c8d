//! What attaching refuses with a clear error while the JVM runs on: a dump
//! with nothing started, targets that are not a JVM or not there, a second
//! copy of the library.

use crate::common::*;
use crate::target::*;
use std::time::Duration;

#[test]
fn dump_with_no_profiling_started_is_a_clear_error_and_the_jvm_runs_on() {
    let mut t = Target::start("noprof", &[]);
    let pid = t.pid.to_string();
    let (code, out) = profrj_run(&["dump", &pid]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("profrj is not running in this JVM"), "{out}");
    let (code, out) = profrj_run(&["attach", &pid, "sampling,interval=10"]);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("bad value for interval"), "{out}");
    assert!(t.alive());
    // Still attachable after both errors.
    let (code, out) = profrj_run(&[
        "attach",
        &pid,
        &format!("file={}", t.path("late.xml").display()),
    ]);
    assert_eq!(code, 0, "{out}");
    std::thread::sleep(Duration::from_millis(500));
    t.finish();
    wait_snapshot(&t.path("late.xml"));
}

#[test]
fn clear_errors_for_wrong_targets() {
    let (code, out) = profrj_run(&["status", "999999"]);
    assert_eq!(code, 1);
    assert!(out.contains("no such process"), "{out}");
    let (code, out) = profrj_run(&["status", &std::process::id().to_string()]);
    assert_eq!(code, 1);
    assert!(out.contains("is not a JVM"), "{out}");
    let mut t = Target::start("disabled", &["-XX:+DisableAttachMechanism"]);
    let (code, out) = profrj_run(&["status", &t.pid.to_string()]);
    assert_eq!(code, 1);
    assert!(out.contains("attach is disabled"), "{out}");
    assert!(t.alive(), "the JVM survives the SIGQUIT that probes it");
    t.finish();
}

/// A copy of the library at another path would be a second agent with its own
/// state: it refuses, naming the copy that runs.
#[test]
fn a_second_copy_of_the_library_is_refused() {
    let mut t = Target::start("copy", &[]);
    let pid = t.pid.to_string();
    let (code, out) = profrj_run(&[
        "attach",
        &pid,
        &format!("file={}", t.path("one.xml").display()),
    ]);
    assert_eq!(code, 0, "{out}");
    let copy = t.path("libprofrj-copy.so");
    std::fs::copy(agent(), &copy).unwrap();
    let copy = copy.display().to_string();
    for command in [vec!["attach", &pid, "sampling"], vec!["status", &pid]] {
        let mut args = command.clone();
        args.extend(["--agent", &copy]);
        let (code, out) = profrj_run(&args);
        assert_eq!(code, 1, "{out}");
        assert!(
            out.contains("another copy of profrj") && out.contains(&agent().display().to_string()),
            "{out}"
        );
    }
    std::thread::sleep(Duration::from_millis(300));
    t.finish();
    wait_snapshot(&t.path("one.xml"));
}
