//! A JVM in its own PID and mount namespace (a container): attached by its
//! host pid, its snapshot written inside its root.

use crate::common::*;
use crate::target::*;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// A JVM as in a container: its own PID namespace (it is pid 1 there) and
/// mount namespace with a private /tmp, so its attach socket and our reply file
/// are reachable only through /proc/<pid>/root. Needs root (CI runs as root).
#[test]
fn jvm_in_its_own_pid_and_mount_namespace() {
    // SAFETY: plain getter.
    assert_eq!(
        unsafe { libc::geteuid() },
        0,
        "this test needs root to create namespaces"
    );
    let dir = temp_dir("namespace");
    // The JVM gets a /tmp of its own: what it runs (the classes, and the
    // agent the client names) must live outside /tmp, wherever this
    // checkout is.
    let outside = PathBuf::from(format!("/var/tmp/profrj-ns-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&outside);
    copy_dir(Path::new(harness_classes()), &outside.join("classes"));
    let agent_copy = outside.join("libprofrj.so");
    std::fs::copy(agent(), &agent_copy).unwrap();
    let script = format!(
        "mount -t tmpfs tmpfs /tmp && mkdir /tmp/x && exec {} -Xmx128m -cp {} profrj.harness.LongRunning /tmp/x/stop",
        java().display(),
        outside.join("classes").display()
    );
    let mut outer = Command::new("unshare")
        .args([
            "--mount",
            "--pid",
            "--fork",
            "--mount-proc",
            "sh",
            "-c",
            &script,
        ])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("stderr.txt")).unwrap())
        .spawn()
        .expect("cannot run unshare");
    let mut line = String::new();
    BufReader::new(outer.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "ready");
    // The JVM is a child of unshare's forked child; find it by its NSpid of 1.
    let jvm = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .find(|pid| {
            let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
            let cmd = std::fs::read_to_string(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            cmd.contains("LongRunning")
                && cmd.contains("/tmp/x/stop")
                && status
                    .lines()
                    .any(|l| l.starts_with("NSpid:") && l.ends_with("\t1"))
        })
        .expect("JVM process not found");
    let pid = jvm.to_string();
    let profrj = |args: &[&str]| {
        run(Command::new(env!("CARGO_BIN_EXE_profrj"))
            .args(args)
            .env("PROFRJ_AGENT", &agent_copy))
    };
    let (code, out) = profrj(&["attach", &pid, "sampling,interval=5ms,file=/tmp/x/ns.xml"]);
    assert_eq!(code, 0, "{out}");
    std::thread::sleep(Duration::from_millis(500));
    let (code, out) = profrj(&["dump", &pid]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("snapshot written to /tmp/x/ns.xml"), "{out}");
    let inside = PathBuf::from(format!("/proc/{jvm}/root/tmp/x"));
    wait_snapshot(&inside.join("ns.xml"));
    std::fs::write(inside.join("stop"), b"").unwrap();
    let status = outer.wait().unwrap();
    let _ = std::fs::remove_dir_all(&outside);
    assert!(
        status.success(),
        "{}",
        std::fs::read_to_string(dir.join("stderr.txt")).unwrap()
    );
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}
