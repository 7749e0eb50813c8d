//! HotSpot's dynamic attach protocol, spoken directly (no JDK tools needed):
//! find the JVM's `/tmp/.java_pid<pid>` socket (through `/proc/<pid>/root`, so a
//! JVM in another mount namespace works too), wake the attach listener with an
//! `.attach_pid<pid>` file and SIGQUIT if the socket is not there yet, then send
//! `load <agent> true <options>` and read the answer.

use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long a JVM gets to open its attach socket after SIGQUIT.
const SOCKET_WAIT: Duration = Duration::from_secs(10);

/// A JVM process to attach to.
pub struct Target {
    pub pid: i32,
    /// The pid as the JVM itself sees it (differs inside a PID namespace).
    ns_pid: i32,
    /// `/proc/<pid>/root`: the JVM's view of the file system.
    root: PathBuf,
    uid: u32,
    gid: u32,
}

impl Target {
    pub fn find(pid: i32) -> Result<Self, String> {
        let proc_dir = PathBuf::from(format!("/proc/{pid}"));
        let status = fs::read_to_string(proc_dir.join("status"))
            .map_err(|_| format!("no such process: {pid}"))?;
        let field = |name: &str| -> Option<Vec<i64>> {
            let line = status.lines().find(|l| l.starts_with(name))?;
            Some(
                line[name.len()..]
                    .split_whitespace()
                    .filter_map(|v| v.parse().ok())
                    .collect(),
            )
        };
        let ns_pid = field("NSpid:")
            .and_then(|v| v.last().copied())
            .unwrap_or(pid as i64) as i32;
        // Effective ids: the JVM accepts attach connections only from its own euid/egid.
        let uid = field("Uid:")
            .and_then(|v| v.get(1).copied())
            .ok_or("cannot read the process's uid")? as u32;
        let gid = field("Gid:")
            .and_then(|v| v.get(1).copied())
            .ok_or("cannot read the process's gid")? as u32;
        let target = Self {
            pid,
            ns_pid,
            root: proc_dir.join("root"),
            uid,
            gid,
        };
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if me != 0 && me != uid {
            return Err(format!("permission denied: process {pid} runs as uid {uid}, you are uid {me} (run as that user or as root)"));
        }
        match fs::read_to_string(proc_dir.join("maps")) {
            Ok(maps) if maps.contains("/libjvm.so") => Ok(target),
            Ok(_) => Err(format!("process {pid} is not a JVM (no libjvm.so mapped)")),
            Err(e) => Err(format!("cannot inspect process {pid}: {e}")),
        }
    }

    /// Is the JVM in another mount namespace than we are?
    pub fn foreign_root(&self) -> bool {
        match (fs::metadata(&self.root), fs::metadata("/proc/self/root")) {
            (Ok(a), Ok(b)) => (a.dev(), a.ino()) != (b.dev(), b.ino()),
            _ => false,
        }
    }

    /// A path as the JVM sees it, reached from here.
    pub fn host_path(&self, jvm_path: &str) -> PathBuf {
        self.root.join(jvm_path.trim_start_matches('/'))
    }

    fn socket_path(&self) -> PathBuf {
        self.host_path(&format!("/tmp/.java_pid{}", self.ns_pid))
    }

    /// Connects to the attach listener, starting it if needed.
    fn connect(&self) -> Result<UnixStream, String> {
        let socket = self.socket_path();
        if !socket.exists() {
            self.start_listener(&socket)?;
        }
        as_target_user(self.uid, self.gid, || UnixStream::connect(&socket)).map_err(|e| {
            match e.kind() {
                std::io::ErrorKind::PermissionDenied => {
                    format!("permission denied connecting to {}", socket.display())
                }
                std::io::ErrorKind::ConnectionRefused => {
                    format!(
                        "{} refuses connections (a stale socket? is the JVM still running?)",
                        socket.display()
                    )
                }
                _ => format!("cannot connect to {}: {e}", socket.display()),
            }
        })
    }

    /// The JVM opens its attach socket when it sees `.attach_pid<pid>` on SIGQUIT.
    fn start_listener(&self, socket: &Path) -> Result<(), String> {
        let trigger_dirs = [
            format!("/proc/{}/cwd", self.pid),
            self.host_path("/tmp").display().to_string(),
        ];
        let trigger = trigger_dirs
            .iter()
            .map(|d| PathBuf::from(d).join(format!(".attach_pid{}", self.ns_pid)))
            .find(|p| fs::write(p, b"").is_ok())
            .ok_or_else(|| format!("cannot create the .attach_pid{} trigger file", self.ns_pid))?;
        // SAFETY: lchown on a path we just created; failure is harmless (root-owned trigger still works for root JVMs).
        if let Ok(c) = std::ffi::CString::new(trigger.as_os_str().as_encoded_bytes()) {
            unsafe { libc::lchown(c.as_ptr(), self.uid, self.gid) };
        }
        // SAFETY: kill has no memory preconditions; the target was checked to be a JVM.
        let sent = unsafe { libc::kill(self.pid, libc::SIGQUIT) } == 0;
        let deadline = Instant::now() + SOCKET_WAIT;
        let mut pause = Duration::from_millis(20);
        while sent && !socket.exists() && Instant::now() < deadline {
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(200));
        }
        let _ = fs::remove_file(&trigger);
        if !sent {
            return Err(format!(
                "cannot signal process {}: {}",
                self.pid,
                std::io::Error::last_os_error()
            ));
        }
        if !socket.exists() {
            return Err(format!(
                "the JVM did not open its attach socket within {}s: attach is disabled (-XX:+DisableAttachMechanism) or the JVM is not responding",
                SOCKET_WAIT.as_secs()
            ));
        }
        Ok(())
    }

    /// `load <library> true <options>`: runs Agent_OnAttach with `options`.
    /// Returns the agent's return code.
    pub fn load_agent(&self, library: &str, options: &str) -> Result<i32, String> {
        let mut stream = self.connect()?;
        stream.set_read_timeout(Some(Duration::from_secs(60))).ok();
        // Protocol version 1: the command and exactly three arguments, each NUL-terminated.
        let mut request = Vec::new();
        for part in ["1", "load", library, "true", options] {
            request.extend_from_slice(part.as_bytes());
            request.push(0);
        }
        stream
            .write_all(&request)
            .map_err(|e| format!("sending the attach request: {e}"))?;
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .map_err(|e| format!("reading the attach answer: {e}"))?;
        let mut lines = answer.lines();
        let status = lines.next().unwrap_or("").trim();
        let rest: Vec<&str> = lines.collect();
        if status != "0" {
            return Err(format!(
                "the JVM refused to load the agent: {}",
                rest.join(" ").trim()
            ));
        }
        // JDK 9+: "return code: N"; older: "N".
        let code = rest
            .iter()
            .find_map(|l| {
                l.trim()
                    .strip_prefix("return code:")
                    .or(Some(l.trim()))
                    .and_then(|n| n.trim().parse().ok())
            })
            .ok_or_else(|| format!("unexpected answer from the JVM: {answer:?}"))?;
        Ok(code)
    }
}

/// Runs `f` with our effective uid/gid switched to the JVM's (root only): the
/// JVM checks its peer's credentials.
fn as_target_user<T>(
    uid: u32,
    gid: u32,
    f: impl FnOnce() -> std::io::Result<T>,
) -> std::io::Result<T> {
    // SAFETY: plain id getters.
    let (my_uid, my_gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    if my_uid != 0 || (uid == my_uid && gid == my_gid) {
        return f();
    }
    // SAFETY: switching effective ids of this single-threaded CLI; restored below.
    unsafe {
        libc::setegid(gid);
        libc::seteuid(uid);
    }
    let r = f();
    // SAFETY: back to root (allowed: the saved set-user-id is still 0).
    unsafe {
        libc::seteuid(my_uid);
        libc::setegid(my_gid);
    }
    r
}
