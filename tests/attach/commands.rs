//! The ways to attach and control a running JVM: jcmd's `JVMTI.agent_load`
//! (with `kill -3` and the dump signal), jattach, and `profrj
//! attach/status/dump/stop/resume`.

use crate::common::*;
use crate::target::*;
use std::process::Command;
use std::time::Duration;

fn jcmd_load(pid: i32, options: &str) -> String {
    let (code, text) = run(Command::new(jdk_tool("jcmd"))
        .args([&pid.to_string(), "JVMTI.agent_load"])
        .arg(agent())
        .arg(options));
    assert_eq!(code, 0, "jcmd failed: {text}");
    text
}

#[test]
fn jcmd_attach_then_kill_quit_signal_and_stop() {
    let mut t = Target::start("jcmd", &[]);
    let opts = format!(
        "\"sampling,interval=2ms,file={}\"",
        t.path("s-%n.xml").display()
    );
    assert!(jcmd_load(t.pid, &opts).contains("return code: 0"));
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY (test): signalling our own child.
    unsafe { libc::kill(t.pid, libc::SIGQUIT) };
    wait_snapshot(&t.path("s-1.xml"));
    unsafe { libc::kill(t.pid, libc::SIGUSR1) };
    wait_snapshot(&t.path("s-2.xml"));
    assert!(jcmd_load(t.pid, "stop").contains("return code: 0"));
    wait_snapshot(&t.path("s-3.xml"));
    let stderr = t.finish();
    assert!(stderr.contains("stopped; snapshot written to"), "{stderr}");
    assert!(
        !t.path("s-4.xml").exists(),
        "a stopped session writes nothing more at exit"
    );
}

#[test]
fn jcmd_without_quotes_gets_quoting_advice() {
    let mut t = Target::start("jcmd-unquoted", &[]);
    // jcmd splits `sampling,file=/x` at '=' and passes only `sampling,file`.
    let text = jcmd_load(
        t.pid,
        &format!("sampling,file={}", t.path("x.xml").display()),
    );
    assert!(text.contains("return code: -1"), "{text}");
    assert!(
        t.stderr().contains("quote the whole option string"),
        "{}",
        t.stderr()
    );
    assert!(t.alive());
    t.finish();
}

#[test]
fn jattach_attach_and_dump_then_exit_writes_the_final_snapshot() {
    let mut t = Target::start("jattach", &[]);
    let lib = agent().display().to_string();
    let pid = t.pid.to_string();
    let file = format!("sampling,file={}", t.path("final.xml").display());
    let (code, text) = run(Command::new("jattach").args([&pid, "load", &lib, "true", &file]));
    assert_eq!(code, 0, "{text}");
    std::thread::sleep(Duration::from_millis(500));
    let dump = format!("dump,file={}", t.path("now.xml").display());
    let (code, text) = run(Command::new("jattach").args([&pid, "load", &lib, "true", &dump]));
    assert_eq!(code, 0, "{text}");
    wait_snapshot(&t.path("now.xml"));
    // A bad command: jattach reports the agent's -1 as its exit status.
    let (code, _) =
        run(Command::new("jattach").args([&pid, "load", &lib, "true", "stop,interval=1ms"]));
    assert_ne!(code, 0);
    t.finish();
    wait_snapshot(&t.path("final.xml"));
}

#[test]
fn profrj_cli_attach_twice_status_dump_stop_resume() {
    let mut t = Target::start("cli", &[]);
    let pid = t.pid.to_string();
    let opts = format!(
        "sampling,interval=5ms,file={}",
        t.path("cli-%n.xml").display()
    );
    let (code, out) = profrj_run(&["attach", &pid, &opts]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("started: sampling every 5ms"), "{out}");
    let (code, out) = profrj_run(&["attach", &pid, "sampling"]);
    assert_eq!(code, 1, "second attach must fail: {out}");
    assert!(out.contains("already profiling"), "{out}");
    std::thread::sleep(Duration::from_millis(300));
    let (code, out) = profrj_run(&["status", &pid]);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("running: sampling every 5ms"), "{out}");
    let one_off = t.path("one-off.xml");
    let (code, out) = profrj_run(&["dump", &pid, "--file", &one_off.display().to_string()]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("snapshot written to"), "{out}");
    wait_snapshot(&one_off);
    let (code, out) = profrj_run(&["dump", &pid]);
    assert_eq!(code, 0, "{out}");
    wait_snapshot(&t.path("cli-2.xml"));
    let (code, out) = profrj_run(&["stop", &pid]);
    assert_eq!(code, 0, "{out}");
    wait_snapshot(&t.path("cli-3.xml"));
    let (_, out) = profrj_run(&["status", &pid]);
    assert!(out.starts_with("stopped"), "{out}");
    let (code, out) = profrj_run(&["resume", &pid]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("resumed"), "{out}");
    std::thread::sleep(Duration::from_millis(300));
    t.finish();
    // Resumed, so the VM-exit snapshot is written, with every sample of the session.
    let last = wait_snapshot(&t.path("cli-4.xml"));
    let doc = roxmltree::Document::parse(&last).unwrap();
    let stopped = read_snapshot(&t.path("cli-3.xml"));
    let hits = |xml: &str| {
        let d = roxmltree::Document::parse(xml).unwrap();
        let main = threads(&d, "sampler", "main");
        attr_u64(main[0], "cumulatedElapsed")
    };
    assert!(
        hits(&last) > hits(&stopped),
        "resume adds to the stopped profile"
    );
    assert!(!threads(&doc, "sampler", "main").is_empty());
}
