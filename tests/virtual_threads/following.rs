//! When the agent follows virtual threads: from a late attach on, and no
//! longer once the last mode that needs it stops.

use crate::common::*;
use crate::runs::*;
use std::process::Command;

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
