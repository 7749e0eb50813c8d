//! Signals after an attach: sampling takes stacks from SIGPROF in threads
//! that started before it, and leaves SIGPROF and the application's own
//! handlers alone where the application owns them.

use crate::common::*;
use crate::target::*;
use std::time::{Duration, Instant};

/// Threads that started before the agent (all of them, when it attaches)
/// never ran ThreadStart under it: their OS ids come from HotSpot's own
/// structures, and their stacks from signals like any other thread's.
#[test]
fn attached_sampling_takes_stacks_from_signals() {
    let mut t = Target::start("attach-signals", &[]);
    let pid = t.pid.to_string();
    let snap = t.path("s.xml");
    let opts = format!("sampling,interval=5ms,file={}", snap.display());
    let (code, out) = profrj_run(&["attach", &pid, &opts]);
    assert_eq!(code, 0, "{out}");
    std::thread::sleep(Duration::from_millis(1000));
    let (code, out) = profrj_run(&["status", &pid]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("stacks from SIGPROF + AsyncGetCallTrace"),
        "{out}"
    );
    let from_signals: u64 = out
        .split(" stacks from signals")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no signal count in {out}"));
    // main runs all the time: some 200 ticks on an idle machine; a stack
    // from a signal only when main ran since the last tick, fewer when a
    // loaded machine deschedules it across ticks, but never none.
    assert!(from_signals >= 10, "main runs all the time: {out}");
    t.finish();
    wait_snapshot(&snap);
}

/// A JVM whose application already handles SIGPROF: attaching says so, and
/// samples with JVMTI instead of taking the signal over.
#[test]
fn attaching_where_the_application_owns_sigprof_leaves_it_alone() {
    let mut t = Target::start_main("owns-prof", &[], "profrj.harness.OwnsProf");
    let pid = t.pid.to_string();
    let snap = t.path("p.xml");
    let (code, out) = profrj_run(&[
        "attach",
        &pid,
        &format!("sampling,interval=5ms,file={}", snap.display()),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("SIGPROF is already handled in this JVM"),
        "{out}"
    );
    assert!(out.contains("stacks from JVMTI"), "{out}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while t.alive() {
        assert!(Instant::now() < deadline, "target did not finish");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut rest = String::new();
    std::io::Read::read_to_string(t.child.stdout.as_mut().unwrap(), &mut rest).unwrap();
    assert!(rest.contains("prof-handled=0"), "{rest}");
    let xml = wait_snapshot_any(&snap);
    assert!(
        xml.contains("profrj.harness.BusyThreads.spin()"),
        "sampled with JVMTI"
    );
}

/// An application that handles SIGUSR1 itself keeps its handler; the client is told.
#[test]
fn the_applications_own_signal_handler_is_left_alone() {
    let mut t = Target::start_main("owns-usr1", &[], "profrj.harness.OwnsUsr1");
    let pid = t.pid.to_string();
    let (code, out) = profrj_run(&[
        "attach",
        &pid,
        &format!("file={}", t.path("u.xml").display()),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("no dump signal: SIGUSR1 it already has a handler"),
        "{out}"
    );
    // SAFETY (test): signalling our own child.
    unsafe { libc::kill(t.pid, libc::SIGUSR1) };
    let deadline = Instant::now() + Duration::from_secs(10);
    while !t.path("usr1-received").exists() {
        assert!(
            Instant::now() < deadline,
            "the application's USR1 handler did not run"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(t.alive());
    // Time for the sampler to see the hot method (the signal alone can come
    // within a few ticks of the attach on a busy machine: seen in CI).
    std::thread::sleep(Duration::from_millis(700));
    t.finish();
    wait_snapshot(&t.path("u.xml"));
}
