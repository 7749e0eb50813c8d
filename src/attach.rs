//! HotSpot's dynamic attach protocol, spoken directly (no JDK tools needed):
//! find the JVM's `/tmp/.java_pid<pid>` socket (through `/proc/<pid>/root`, so a
//! JVM in another mount namespace works too), wake the attach listener with an
//! `.attach_pid<pid>` file and SIGQUIT if the socket is not there yet, then send
//! `load <agent> true <options>` and read the answer.
//!
//! Run as root against another user's JVM, nothing here trusts that user's
//! files: the trigger is created as the JVM's user, exclusively and not
//! through a link; the socket must belong to the JVM's user, and so must the
//! peer on the other end (SO_PEERCRED), as jcmd checks.

use crate::safe_fs;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// HotSpot's attach protocol takes each argument up to this many bytes
/// (`AttachOperation::arg_length_max`); a longer one fails with no reason.
pub const MAX_ARGUMENT: usize = 1024;

/// A JVM process to attach to.
pub struct Target {
    pub pid: i32,
    /// The pid as the JVM itself sees it (differs inside a PID namespace).
    ns_pid: i32,
    /// `/proc/<pid>/root`: the JVM's view of the file system.
    root: PathBuf,
    uid: u32,
    gid: u32,
    /// How long to wait for the JVM at each step (socket, answer).
    timeout: Duration,
}

impl Target {
    pub fn find(pid: i32, timeout: Duration) -> Result<Self, String> {
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
            timeout,
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

    /// The JVM's user: (uid, gid).
    pub fn owner(&self) -> (u32, u32) {
        (self.uid, self.gid)
    }

    /// Connects to the attach listener, starting it if needed. The socket and
    /// the process answering on it must both be the JVM's user's.
    fn connect(&self) -> Result<UnixStream, String> {
        let socket = self.socket_path();
        if fs::symlink_metadata(&socket).is_err() {
            self.start_listener(&socket)?;
        }
        self.check_socket_owner(&socket)?;
        let stream = self.connect_as_target(&socket)?;
        self.check_peer(&stream, &socket)?;
        Ok(stream)
    }

    /// The socket file must be a socket owned by the JVM's user: another user
    /// who bound it first would otherwise answer in the JVM's name.
    fn check_socket_owner(&self, socket: &Path) -> Result<(), String> {
        use std::os::unix::fs::FileTypeExt;
        let meta =
            fs::symlink_metadata(socket).map_err(|e| format!("{}: {e}", socket.display()))?;
        if !meta.file_type().is_socket() {
            return Err(format!("{} is not a socket; refusing it", socket.display()));
        }
        if meta.uid() != self.uid {
            return Err(format!(
                "{} belongs to uid {}, not to the JVM's uid {}: refusing it (another user's socket could answer in the JVM's name)",
                socket.display(),
                meta.uid(),
                self.uid
            ));
        }
        Ok(())
    }

    /// The process on the other end must run as the JVM's user.
    fn check_peer(&self, stream: &UnixStream, socket: &Path) -> Result<(), String> {
        use std::os::unix::io::AsRawFd;
        // SAFETY: all-zero ucred is a valid out-parameter.
        let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
        // SAFETY: a connected socket and a buffer of `len` bytes.
        let rc = unsafe {
            libc::getsockopt(
                stream.as_raw_fd(),
                libc::SOL_SOCKET,
                libc::SO_PEERCRED,
                (&mut cred as *mut libc::ucred).cast(),
                &mut len,
            )
        };
        if rc != 0 {
            return Err(format!(
                "cannot check who answers on {}: {}",
                socket.display(),
                std::io::Error::last_os_error()
            ));
        }
        if cred.uid != self.uid {
            return Err(format!(
                "the process answering on {} runs as uid {}, not as the JVM's uid {}: refusing it",
                socket.display(),
                cred.uid,
                self.uid
            ));
        }
        Ok(())
    }

    fn connect_as_target(&self, socket: &Path) -> Result<UnixStream, String> {
        as_target_user(self.uid, self.gid, || UnixStream::connect(socket)).map_err(|e| {
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

    /// The JVM opens its attach socket when it sees `.attach_pid<pid>` on
    /// SIGQUIT. The trigger is made as the JVM's user (as jcmd does), never
    /// through a link; one already there is used only if it is a regular file
    /// of the JVM's user (HotSpot checks that too).
    fn start_listener(&self, socket: &Path) -> Result<(), String> {
        let trigger_dirs = [
            PathBuf::from(format!("/proc/{}/cwd", self.pid)),
            self.host_path("/tmp"),
        ];
        let name = format!(".attach_pid{}", self.ns_pid);
        let mut made = None;
        let mut usable = false;
        for dir in &trigger_dirs {
            let p = dir.join(&name);
            if as_target_user(self.uid, self.gid, || safe_fs::create_new(&p, 0o600)).is_ok() {
                made = Some(p);
                usable = true;
                break;
            }
            let theirs = fs::symlink_metadata(&p)
                .is_ok_and(|m| m.file_type().is_file() && m.uid() == self.uid);
            if theirs {
                usable = true;
                break;
            }
        }
        if !usable {
            return Err(format!(
                "cannot create the {name} trigger file as uid {} in the JVM's working directory or /tmp",
                self.uid
            ));
        }
        // SAFETY: kill has no memory preconditions; the target was checked to be a JVM.
        let sent = unsafe { libc::kill(self.pid, libc::SIGQUIT) } == 0;
        let deadline = Instant::now() + self.timeout;
        let mut pause = Duration::from_millis(20);
        let present = || fs::symlink_metadata(socket).is_ok();
        while sent && !present() && Instant::now() < deadline {
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(200));
        }
        if let Some(p) = made {
            let _ = as_target_user(self.uid, self.gid, || fs::remove_file(&p));
        }
        if !sent {
            return Err(format!(
                "cannot signal process {}: {}",
                self.pid,
                std::io::Error::last_os_error()
            ));
        }
        if !present() {
            return Err(self.why_no_socket());
        }
        Ok(())
    }

    /// Why the attach socket did not appear: the likeliest cause first.
    fn why_no_socket(&self) -> String {
        let waited = format!(
            "the JVM did not open its attach socket within {:?}",
            self.timeout
        );
        let cmdline = fs::read(format!("/proc/{}/cmdline", self.pid)).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains("DisableAttachMechanism") {
            return format!("{waited}: attach is disabled (-XX:+DisableAttachMechanism)");
        }
        if process_state(self.pid) == Some('T') {
            return format!("{waited}: the JVM is stopped (SIGSTOP or a debugger)");
        }
        match process_age(self.pid) {
            Some(age) if age < Duration::from_secs(5) + self.timeout => format!(
                "{waited}: the JVM is still starting ({:.1} s old) and its attach listener is not ready yet; try again",
                age.as_secs_f64()
            ),
            _ => format!("{waited}: the JVM is not responding (too busy, or attach is disabled)"),
        }
    }

    /// `load <library> true <options>`: runs Agent_OnAttach with `options`.
    /// Returns the agent's return code.
    pub fn load_agent(&self, library: &str, options: &str) -> Result<i32, String> {
        for (what, arg) in [
            ("the agent library's path", library),
            ("the agent options", options),
        ] {
            if arg.len() > MAX_ARGUMENT {
                return Err(format!(
                    "{what} is {} bytes; HotSpot's attach protocol takes at most {MAX_ARGUMENT} bytes per argument",
                    arg.len()
                ));
            }
        }
        let mut stream = self.connect()?;
        stream.set_read_timeout(Some(self.timeout)).ok();
        stream.set_write_timeout(Some(self.timeout)).ok();
        // Protocol version 1: the command and exactly three arguments, each NUL-terminated.
        let mut request = Vec::new();
        for part in ["1", "load", library, "true", options] {
            request.extend_from_slice(part.as_bytes());
            request.push(0);
        }
        stream
            .write_all(&request)
            .map_err(|e| self.io_failure("sending the attach request", &e))?;
        let mut answer = String::new();
        stream
            .read_to_string(&mut answer)
            .map_err(|e| self.io_failure("reading the attach answer", &e))?;
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

impl Target {
    /// A failed read or write, with the likely cause of a time-out.
    fn io_failure(&self, what: &str, e: &std::io::Error) -> String {
        use std::io::ErrorKind::{TimedOut, WouldBlock};
        if matches!(e.kind(), WouldBlock | TimedOut) {
            let cause = if process_state(self.pid) == Some('T') {
                "the JVM is stopped (SIGSTOP or a debugger)"
            } else {
                "the JVM is too busy, or stuck at a safepoint"
            };
            format!(
                "{what}: no answer within {:?} (--timeout): {cause}",
                self.timeout
            )
        } else {
            format!("{what}: {e}")
        }
    }
}

/// A process's state letter (`R`, `S`, `T` stopped, …) from /proc.
fn process_state(pid: i32) -> Option<char> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.trim_start().chars().next()
}

/// How long ago a process started.
fn process_age(pid: i32) -> Option<Duration> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 22 (starttime, in clock ticks after boot), counted after the ")".
    let start: f64 = stat
        .rsplit_once(')')?
        .1
        .split_whitespace()
        .nth(19)?
        .parse()
        .ok()?;
    let uptime: f64 = fs::read_to_string("/proc/uptime")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    Some(Duration::from_secs_f64(
        (uptime - start / hz.max(1.0)).max(0.0),
    ))
}

/// Runs `f` with our effective uid/gid switched to the JVM's (root only): the
/// JVM checks its peer's credentials, and files made in the JVM's directories
/// are made with the JVM's user's rights, not root's.
pub fn as_target_user<T>(
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
