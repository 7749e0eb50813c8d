//! Files and sockets another local user controls (issue 18): `profrj` run as
//! root against a JVM that runs as an unprivileged user (uid 65534), and the
//! agent's own files. These tests need root (CI runs as root): without it
//! they fail and say so, they never pass silently.

mod common;

use common::*;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const NOBODY: u32 = 65534;

fn require_root() {
    // SAFETY: geteuid has no preconditions.
    let euid = unsafe { libc::geteuid() };
    assert_eq!(
        euid, 0,
        "these tests run a JVM as uid {NOBODY} and profrj as root; run them as root (CI does)"
    );
}

/// A LongRunning JVM running as uid 65534 in a directory of its own.
struct NobodyJvm {
    child: Child,
    dir: PathBuf,
    pid: i32,
}

impl NobodyJvm {
    fn start(name: &str) -> Self {
        require_root();
        let dir = temp_dir(name);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let mut child = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(java())
            .args([
                "-Xmx128m",
                "-cp",
                harness_classes(),
                "profrj.harness.LongRunning",
            ])
            .arg(dir.join("stop"))
            .current_dir(&dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("cannot start java through setpriv");
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready", "target did not start");
        let pid = child.id() as i32;
        NobodyJvm { child, dir, pid }
    }
}

impl Drop for NobodyJvm {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `profrj ARGS` to its end (a hang fails the test, see `common::HANG`):
/// exit code, stdout and stderr together.
fn profrj(args: &[&str]) -> (i32, String) {
    let run = profrj_measured(args, None);
    run.assert_finished(&format!("profrj {}", args.join(" ")));
    (run.code, run.text())
}

/// A root-only file the attacker would like root to overwrite.
fn victim(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("profrj-victim-{}-{name}", std::process::id()));
    std::fs::write(&p, b"root's secret").unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    p
}

fn assert_untouched(victim: &Path) {
    assert_eq!(
        std::fs::read(victim).unwrap(),
        b"root's secret",
        "victim's content"
    );
    let m = std::fs::metadata(victim).unwrap();
    assert_eq!(m.mode() & 0o777, 0o600, "victim's mode");
    assert_eq!(m.uid(), 0, "victim's owner");
}

/// Makes a symbolic link as uid 65534 (as the JVM's user would).
fn link_as_nobody(target: &Path, link: &Path) {
    let ok = Command::new("setpriv")
        .args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "ln",
            "-s",
        ])
        .arg(target)
        .arg(link)
        .status()
        .unwrap()
        .success();
    assert!(ok, "cannot plant {}", link.display());
}

/// Finding 1: the `.attach_pid<pid>` trigger, planted as a link to a root
/// file in both places HotSpot looks (the JVM's working directory and /tmp),
/// must not make root write through it.
#[test]
fn the_attach_trigger_is_never_written_through_a_planted_link() {
    let jvm = NobodyJvm::start("sec-trigger");
    let victim = victim("trigger");
    let in_cwd = jvm.dir.join(format!(".attach_pid{}", jvm.pid));
    let in_tmp = PathBuf::from(format!("/tmp/.attach_pid{}", jvm.pid));
    link_as_nobody(&victim, &in_cwd);
    link_as_nobody(&victim, &in_tmp);
    let (code, out) = profrj(&[
        "attach",
        &jvm.pid.to_string(),
        "sampling",
        "--timeout",
        "3s",
    ]);
    let _ = std::fs::remove_file(&in_tmp);
    assert_untouched(&victim);
    assert_ne!(code, 0, "no usable trigger, so no attach: {out}");
    assert!(out.contains("trigger"), "{out}");
    std::fs::remove_file(&victim).unwrap();
}

/// Finding 2: a socket at `/tmp/.java_pid<pid>` that another user bound
/// first (here root, before the JVM's listener starts) is refused, and
/// nothing it says is printed as the agent's answer.
#[test]
fn a_forged_attach_socket_is_refused() {
    let jvm = NobodyJvm::start("sec-forged");
    let path = PathBuf::from(format!("/tmp/.java_pid{}", jvm.pid));
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
    let forger = std::thread::spawn(move || {
        listener.set_nonblocking(true).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok((mut s, _)) = listener.accept() {
                s.set_nonblocking(false).unwrap();
                let mut req = [0u8; 4096];
                let _ = s.read(&mut req);
                let _ = s.write_all(b"0\nreturn code: 0\n");
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    });
    let (code, out) = profrj(&["status", &jvm.pid.to_string(), "--timeout", "3s"]);
    let _ = std::fs::remove_file(&path);
    let _ = forger.join();
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("belongs to uid 0, not to the JVM's uid 65534"),
        "{out}"
    );
}

/// Findings 1–2, the working path: attaching as root to a JVM of another
/// user works, and leaves no trigger, reply file or reply directory behind.
#[test]
fn attaching_as_root_to_another_users_jvm_leaves_nothing_behind() {
    let jvm = NobodyJvm::start("sec-clean");
    let before = profrj_leftovers();
    let snap = jvm.dir.join("s.xml");
    let (code, out) = profrj(&[
        "attach",
        &jvm.pid.to_string(),
        &format!("sampling,file={}", snap.display()),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("started: sampling"), "{out}");
    let (code, out) = profrj(&["dump", &jvm.pid.to_string()]);
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        profrj_leftovers(),
        before,
        "reply files or directories left in /tmp"
    );
    assert!(!jvm.dir.join(format!(".attach_pid{}", jvm.pid)).exists());
    let m = std::fs::metadata(&snap).unwrap();
    assert_eq!(
        m.uid(),
        NOBODY,
        "the JVM wrote its snapshot as its own user"
    );
    assert_eq!(m.mode() & 0o777, 0o600);
}

fn profrj_leftovers() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir("/tmp")
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with(".profrj-"))
        .collect();
    v.sort();
    v
}

/// Finding 12: a stopped JVM gets a bounded wait and a message naming the
/// likely cause; an over-long request is refused up front, naming the limit.
#[test]
fn a_stopped_jvm_times_out_with_its_cause_and_long_requests_are_refused() {
    let jvm = NobodyJvm::start("sec-stopped");
    let pid = jvm.pid.to_string();
    // SAFETY (test): stopping our own child.
    unsafe { libc::kill(jvm.pid, libc::SIGSTOP) };
    let before = profrj_leftovers();
    // It ends (a hang fails in `profrj`), at its time-out: the message says so.
    let (code, out) = profrj(&["status", &pid, "--timeout", "2s"]);
    // SAFETY (test): as above.
    unsafe { libc::kill(jvm.pid, libc::SIGCONT) };
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains("stopped") && out.contains("within 2s"),
        "{out}"
    );
    assert_eq!(profrj_leftovers(), before, "nothing left behind");
    let long = format!("sampling,file=/tmp/{}.xml", "x".repeat(1100));
    let (code, out) = profrj(&["attach", &pid, &long]);
    assert_ne!(code, 0);
    assert!(out.contains("at most 1024 bytes"), "{out}");
}

/// Findings 3 and 9: a FIFO where the snapshot goes is refused (the JVM must
/// not block at exit), and a 250-byte file name still gets its snapshot
/// (the temporary's name no longer grows with it).
#[test]
fn the_agent_refuses_a_fifo_and_writes_long_names() {
    let dir = temp_dir("sec-fifo");
    let fifo = dir.join("out.xml");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let mut child = Command::new(java())
        .current_dir(&dir)
        .arg(format!(
            "-agentpath:{}=sampling,file=out.xml",
            agent().display()
        ))
        .args(["-cp", harness_classes(), "profrj.harness.Hello"])
        .stderr(Stdio::piped())
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            panic!("the JVM blocked on a FIFO at exit");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(err.contains("is a FIFO"), "{err}");

    let name = format!("{}.xml", "n".repeat(246));
    let run = run_java(
        &dir,
        &format!("sampling,file={name}"),
        "profrj.harness.Hello",
        &[],
    );
    run.assert_success();
    read_snapshot(&dir.join(&name));
}

/// Finding 4: `profrj flame -o` replaces a link instead of writing through
/// it, and refuses a FIFO.
#[test]
fn flame_output_never_follows_a_link_nor_blocks_on_a_fifo() {
    let dir = temp_dir("sec-flame");
    let run = run_java(&dir, "sampling,file=s.xml", "profrj.harness.Hello", &[]);
    run.assert_success();
    let victim = victim("flame");
    let link = dir.join("page.html");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let snap = dir.join("s.xml").display().to_string();
    let (code, out) = profrj(&["flame", &snap, "-o", &link.display().to_string()]);
    assert_eq!(code, 0, "{out}");
    assert_untouched(&victim);
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_file());
    let fifo = dir.join("fifo.html");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    // Refused at once: a writer blocked on the FIFO would hang (and fail in `profrj`).
    let (code, out) = profrj(&["flame", &snap, "-o", &fifo.display().to_string()]);
    assert_ne!(code, 0);
    assert!(out.contains("FIFO"), "{out}");
    std::fs::remove_file(&victim).unwrap();
}

/// Finding 9: a path that is not UTF-8 is refused at start-up with a clear
/// message, never silently changed into another path.
#[test]
fn a_non_utf8_path_is_refused_not_changed() {
    use std::os::unix::ffi::OsStringExt;
    let dir = temp_dir("sec-nonutf8");
    let mut arg = format!("-agentpath:{}=sampling,file=", agent().display()).into_bytes();
    arg.extend_from_slice(b"snap-\xff.xml");
    let out = Command::new(java())
        .current_dir(&dir)
        .arg(std::ffi::OsString::from_vec(arg))
        .args(["-cp", harness_classes(), "profrj.harness.Hello"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success(),
        "the JVM must not start profiling another path"
    );
    assert!(err.contains("not UTF-8"), "{err}");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "no file written"
    );
}
