//! A container whose `/tmp` is an absolute link to a host path (issue 29,
//! item 2). The container is real, made the way runtimes make one: a mount
//! and PID namespace (`unshare`) and a root directory (`chroot`) with the
//! host's /usr, /etc, /dev and the JDK bound into it and its own /proc; the
//! JVM runs there as uid 65534, pid 1. The host kernel resolves paths below
//! `/proc/<pid>/root` against the host's root, so a root `profrj` used to
//! follow that link out of the container and make its files in the host
//! directory it names. Now every path is resolved inside the container:
//! nothing lands outside, and a link with nothing behind it inside is named
//! in the error. The same again with openat2 hidden by a seccomp filter (as
//! on a kernel before 5.6), which takes the fallback walk. Needs root (CI
//! runs as root): without it the tests fail and say so.

mod common;

use common::*;
use std::io::{BufRead, BufReader};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Container {
    child: Child,
    base: PathBuf,
    root: PathBuf,
    /// The host directory the container's /tmp names.
    host_dir: PathBuf,
    /// The JVM, as the host sees it.
    pid: i32,
}

impl Container {
    /// A container whose /tmp is a link to `host_dir` (absolute), running
    /// LongRunning as uid 65534. With `inside`, that path exists inside the
    /// container too (a 1777 directory, as /tmp is), so the link is good.
    fn start(name: &str, inside: bool) -> Self {
        // SAFETY: geteuid has no preconditions.
        let euid = unsafe { libc::geteuid() };
        assert_eq!(
            euid, 0,
            "this test makes namespaces and a chroot: run it as root (CI does)"
        );
        let base = temp_dir(&format!("ctr-{name}"));
        let root = base.join("root");
        let host_dir = PathBuf::from(format!(
            "/var/tmp/profrj-host-{}-{name}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&host_dir);
        std::fs::create_dir_all(&host_dir).unwrap();
        std::fs::set_permissions(&host_dir, std::fs::Permissions::from_mode(0o1777)).unwrap();
        for d in ["usr", "etc", "dev", "proc", "jdk", "classes", "work"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::set_permissions(root.join("work"), std::fs::Permissions::from_mode(0o777))
            .unwrap();
        // Merged /usr: /bin, /lib, /lib64 … are links into it, here as on the host.
        for d in ["bin", "sbin", "lib", "lib32", "lib64", "libx32"] {
            if let Ok(target) = std::fs::read_link(Path::new("/").join(d)) {
                std::os::unix::fs::symlink(target, root.join(d)).unwrap();
            } else if Path::new("/").join(d).is_dir() {
                std::fs::create_dir_all(root.join(d)).unwrap();
            }
        }
        std::os::unix::fs::symlink(&host_dir, root.join("tmp")).unwrap();
        if inside {
            let there = root.join(host_dir.strip_prefix("/").unwrap());
            std::fs::create_dir_all(&there).unwrap();
            std::fs::set_permissions(&there, std::fs::Permissions::from_mode(0o1777)).unwrap();
        }
        let home = java_home();
        let mut binds = vec![
            ("/usr".to_owned(), "usr"),
            ("/etc".to_owned(), "etc"),
            ("/dev".to_owned(), "dev"),
            (home.display().to_string(), "jdk"),
            (harness_classes().to_owned(), "classes"),
        ];
        for d in ["bin", "sbin", "lib", "lib32", "lib64", "libx32"] {
            let host = Path::new("/").join(d);
            if host.is_dir() && std::fs::read_link(&host).is_err() {
                binds.push((host.display().to_string(), d));
            }
        }
        let r = root.display();
        let mut script: String = binds
            .iter()
            .map(|(from, to)| format!("mount --bind '{from}' '{r}/{to}' && "))
            .collect();
        let marker = format!("/work/stop-{}-{name}", std::process::id());
        script.push_str(&format!(
            "mount -t proc proc '{r}/proc' && cd '{r}' && exec chroot '{r}' \
             /usr/bin/setpriv --reuid=65534 --regid=65534 --clear-groups --pdeathsig KILL -- \
             /jdk/bin/java -Xmx128m -cp /classes profrj.harness.LongRunning {marker}"
        ));
        let mut child = Command::new("unshare")
            .args([
                "--mount",
                "--pid",
                "--fork",
                "--kill-child",
                "sh",
                "-c",
                &script,
            ])
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(base.join("stderr.txt")).unwrap())
            .spawn()
            .expect("cannot run unshare");
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        let stderr = std::fs::read_to_string(base.join("stderr.txt")).unwrap_or_default();
        if line.trim() != "ready" {
            let _ = child.kill();
            panic!("the container's JVM did not start: {stderr}");
        }
        let pid = std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .find(|pid| {
                let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
                let cmd = String::from_utf8_lossy(&cmd);
                cmd.starts_with("/jdk/bin/java\0") && cmd.contains(&marker)
            });
        let Some(pid) = pid else {
            let _ = child.kill(); // and with it the JVM (--pdeathsig)
            panic!("the container's JVM is not in /proc");
        };
        Container {
            child,
            base,
            root,
            host_dir,
            pid,
        }
    }

    /// The container's /tmp, as the JVM sees it, from the host.
    fn tmp_inside(&self) -> PathBuf {
        self.root.join(self.host_dir.strip_prefix("/").unwrap())
    }

    /// What is in the host directory the container's /tmp names.
    fn host_entries(&self) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(&self.host_dir)
            .unwrap()
            .filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
            .collect();
        v.sort();
        v
    }
}

impl Drop for Container {
    fn drop(&mut self) {
        // SAFETY (test): the JVM this test started, still ours (its parent,
        // unshare, has not been reaped). --pdeathsig covers a panic before
        // its pid was known.
        unsafe { libc::kill(self.pid, libc::SIGKILL) };
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.host_dir);
        let _ = std::fs::remove_dir_all(&self.base);
    }
}

/// The JDK (or runtime) of the test's `java`: bound into the container.
fn java_home() -> PathBuf {
    let java = java();
    let java = if java.is_absolute() {
        java
    } else {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path)
            .map(|d| d.join(&java))
            .find(|p| p.is_file())
            .expect("java is not on PATH")
    };
    let real = java.canonicalize().unwrap();
    real.parent().unwrap().parent().unwrap().to_path_buf()
}

/// `profrj ARGS`, with `hide_openat2` under a seccomp filter that answers
/// openat2 with ENOSYS, as a kernel before 5.6 does.
fn profrj(args: &[&str], hide_openat2: bool) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_profrj"));
    cmd.args(args).env("PROFRJ_AGENT", agent());
    if hide_openat2 {
        // The seccomp filter below names x86_64's architecture; elsewhere it
        // would hide nothing, and the fallback test would prove nothing.
        #[cfg(not(target_arch = "x86_64"))]
        panic!("the openat2-hiding filter is written for x86_64 only");
        // SAFETY: between fork and exec only prctl is called, which is
        // async-signal-safe, on a filter that lives in this frame.
        unsafe { cmd.pre_exec(hide_openat2_from_child) };
    }
    let out = cmd.output().unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// Installs a seccomp filter: openat2 fails with ENOSYS, all else runs.
fn hide_openat2_from_child() -> std::io::Result<()> {
    const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
    const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
    const RET_K: u16 = 0x06; // BPF_RET | BPF_K
    const AUDIT_ARCH_X86_64: u32 = 0xc000_003e;
    const RET_ALLOW: u32 = 0x7fff_0000;
    let op = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let filter = [
        op(LD_W_ABS, 0, 0, 4), // seccomp_data.arch
        op(JEQ_K, 0, 3, AUDIT_ARCH_X86_64),
        op(LD_W_ABS, 0, 0, 0), // seccomp_data.nr
        op(JEQ_K, 0, 1, libc::SYS_openat2 as u32),
        op(RET_K, 0, 0, libc::SECCOMP_RET_ERRNO | libc::ENOSYS as u32),
        op(RET_K, 0, 0, RET_ALLOW),
    ];
    let prog = libc::sock_fprog {
        len: filter.len() as u16,
        filter: filter.as_ptr() as *mut libc::sock_filter,
    };
    // SAFETY: plain prctl calls; `prog` and `filter` outlive them (the
    // kernel copies the program).
    unsafe {
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0
            || libc::prctl(libc::PR_SET_SECCOMP, libc::SECCOMP_MODE_FILTER, &prog) != 0
        {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

fn attach_lands_inside_the_container(name: &str, hide_openat2: bool) {
    let ctr = Container::start(name, true);
    let pid = ctr.pid.to_string();
    let (code, out) = profrj(&["attach", &pid, "sampling,file=/work/s.xml"], hide_openat2);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("started: sampling"), "{out}");
    let (code, out) = profrj(&["status", &pid], hide_openat2);
    assert_eq!(code, 0, "{out}");
    assert!(out.starts_with("running: sampling"), "{out}");
    assert_eq!(
        ctr.host_entries(),
        Vec::<String>::new(),
        "profrj made files in the host directory the container's /tmp names"
    );
    // Inside: the agent's copy (the container's user's, closed to others), no
    // reply directory left, and the JVM's own socket.
    let inside = ctr.tmp_inside();
    let lib_dir = inside.join(".profrj-lib-65534");
    let m = std::fs::symlink_metadata(&lib_dir).unwrap();
    assert!(m.is_dir());
    assert_eq!((m.uid(), m.mode() & 0o777), (65534, 0o700));
    let lib = std::fs::symlink_metadata(lib_dir.join("libprofrj.so")).unwrap();
    assert_eq!(lib.uid(), 65534);
    assert_eq!(lib.len(), std::fs::metadata(agent()).unwrap().len());
    let names: Vec<String> = std::fs::read_dir(&inside)
        .unwrap()
        .filter_map(|e| Some(e.ok()?.file_name().to_string_lossy().into_owned()))
        .collect();
    assert!(names.contains(&".java_pid1".to_owned()), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with(".profrj-") && n != ".profrj-lib-65534"),
        "a reply directory was left: {names:?}"
    );
    assert!(
        !names.iter().any(|n| n.starts_with(".attach_pid")),
        "{names:?}"
    );
    // The session's snapshot, written by the JVM as its user when it exits.
    let marker = ctr
        .root
        .join(format!("work/stop-{}-{name}", std::process::id()));
    std::fs::write(&marker, b"").unwrap();
    let snap = ctr.root.join("work/s.xml");
    let deadline = Instant::now() + Duration::from_secs(30);
    while !snap.exists() {
        assert!(
            Instant::now() < deadline,
            "no snapshot at {}",
            snap.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    read_snapshot(&snap);
    assert_eq!(std::fs::metadata(&snap).unwrap().uid(), 65534);
}

fn a_link_out_of_the_container_is_named(name: &str, hide_openat2: bool) {
    let ctr = Container::start(name, false);
    let pid = ctr.pid.to_string();
    let (code, out) = profrj(&["status", &pid, "--timeout", "5s"], hide_openat2);
    eprintln!("{out}");
    assert_eq!(code, 1, "{out}");
    let link = format!("/tmp -> {}", ctr.host_dir.display());
    assert!(
        out.contains("cannot reach the JVM's /tmp")
            && out.contains(&link)
            && out.contains("No such file or directory")
            && out.contains(&format!("inside the JVM's root /proc/{pid}/root")),
        "{out}"
    );
    assert_eq!(ctr.host_entries(), Vec::<String>::new(), "{out}");
}

#[test]
fn a_containers_tmp_linked_to_a_host_path_is_resolved_inside_it() {
    attach_lands_inside_the_container("inside", false);
}

#[test]
fn the_fallback_walk_resolves_inside_the_container_too() {
    attach_lands_inside_the_container("inside-walk", true);
}

#[test]
fn a_containers_tmp_linked_out_of_it_is_an_error_naming_the_link() {
    a_link_out_of_the_container_is_named("dangling", false);
}

#[test]
fn the_fallback_walk_names_the_link_too() {
    a_link_out_of_the_container_is_named("dangling-walk", true);
}
