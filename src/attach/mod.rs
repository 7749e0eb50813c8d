//! HotSpot's dynamic attach protocol, spoken directly (no JDK tools needed):
//! find the JVM's `/tmp/.java_pid<pid>` socket (inside the JVM's root, so a
//! JVM in another mount namespace works too), wake the attach listener with an
//! `.attach_pid<pid>` file and SIGQUIT if the socket is not there yet, then send
//! `load <agent> true <options>` and read the answer.
//!
//! Run as root against another user's JVM, nothing here trusts that user's
//! files: the trigger is created as the JVM's user, exclusively and not
//! through a link; the socket must belong to the JVM's user, and so must the
//! peer on the other end (SO_PEERCRED), as jcmd checks. Even so the peer may
//! be any process of that user that maps a `libjvm.so`: its answer is read
//! up to [`MAX_ANSWER`] bytes, the whole exchange ends at one deadline
//! (`--timeout`), and what it says is printed with its control characters
//! escaped. Paths in the JVM's root are resolved inside it (`jvm_root`).

use crate::error::CliError;
mod jvm_root;
mod listener;

pub use jvm_root::Dir;
use jvm_root::JvmRoot;

use crate::printable::printable;
use std::fs;
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

/// HotSpot's attach protocol takes each argument up to this many bytes
/// (`AttachOperation::arg_length_max`); a longer one fails with no reason.
pub const MAX_ARGUMENT: usize = 1024;

/// The most of an answer to `load` read back. HotSpot's longest is an error
/// naming the library (its path is at most [`MAX_ARGUMENT`] bytes) twice, in
/// its own words and the dynamic loader's: 2,051 bytes for a 999-byte path
/// on JDK 17. Anything longer is not a JVM's answer.
pub const MAX_ANSWER: usize = 4096;

/// A JVM process to attach to.
pub struct Target {
    pub pid: i32,
    /// The pid as the JVM itself sees it (differs inside a PID namespace).
    ns_pid: i32,
    /// `/proc/<pid>/root`, open: the JVM's view of the file system.
    root: JvmRoot,
    uid: u32,
    gid: u32,
    /// `--timeout`: the whole exchange ends by `deadline`.
    timeout: Duration,
    deadline: Instant,
}

impl Target {
    /// Finds the JVM `pid`; `timeout` starts now and covers everything after
    /// (the attach socket, the connection, the request and the answer).
    pub fn find(pid: i32, timeout: Duration) -> Result<Self, CliError> {
        let deadline = Instant::now() + timeout;
        let proc_dir = format!("/proc/{pid}");
        let status = fs::read_to_string(format!("{proc_dir}/status"))
            .map_err(|_| CliError::Attach(format!("no such process: {pid}")))?;
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
            .ok_or_else(|| CliError::Attach("cannot read the process's uid".into()))?
            as u32;
        let gid = field("Gid:")
            .and_then(|v| v.get(1).copied())
            .ok_or_else(|| CliError::Attach("cannot read the process's gid".into()))?
            as u32;
        // SAFETY: geteuid has no preconditions.
        let me = unsafe { libc::geteuid() };
        if me != 0 && me != uid {
            return Err(CliError::Attach(format!("permission denied: process {pid} runs as uid {uid}, you are uid {me} (run as that user or as root)")));
        }
        match fs::read_to_string(format!("{proc_dir}/maps")) {
            Ok(maps) if maps.contains("/libjvm.so") => {}
            Ok(_) => {
                return Err(CliError::Attach(format!(
                    "process {pid} is not a JVM (no libjvm.so mapped)"
                )))
            }
            Err(e) => {
                return Err(CliError::Attach(format!(
                    "cannot inspect process {pid}: {e}"
                )))
            }
        }
        Ok(Self {
            pid,
            ns_pid,
            root: JvmRoot::open(pid)?,
            uid,
            gid,
            timeout,
            deadline,
        })
    }

    /// Is the JVM's root another than ours (a container, a chroot)?
    pub fn foreign_root(&self) -> bool {
        match (self.root.metadata(), fs::metadata("/proc/self/root")) {
            (Ok(a), Ok(b)) => (a.dev(), a.ino()) != (b.dev(), b.ino()),
            _ => false,
        }
    }

    /// The JVM's `/tmp`, resolved inside its root.
    pub fn tmp(&self) -> Result<Dir, CliError> {
        self.root.dir("/tmp")
    }

    /// The JVM's user: (uid, gid).
    pub fn owner(&self) -> (u32, u32) {
        (self.uid, self.gid)
    }

    /// What is left of `--timeout`; None once it has run out.
    fn time_left(&self) -> Option<Duration> {
        self.deadline
            .checked_duration_since(Instant::now())
            .filter(|d| !d.is_zero())
    }

    /// `load <library> true <options>`: runs Agent_OnAttach with `options`.
    /// Returns the agent's return code.
    pub fn load_agent(&self, library: &str, options: &str) -> Result<i32, CliError> {
        for (what, arg) in [
            ("the agent library's path", library),
            ("the agent options", options),
        ] {
            if arg.len() > MAX_ARGUMENT {
                return Err(CliError::Attach(format!(
                    "{what} is {} bytes; HotSpot's attach protocol takes at most {MAX_ARGUMENT} bytes per argument",
                    arg.len()
                )));
            }
        }
        let mut stream = self.connect()?;
        // Protocol version 1: the command and exactly three arguments, each NUL-terminated.
        let mut request = Vec::new();
        for part in ["1", "load", library, "true", options] {
            request.extend_from_slice(part.as_bytes());
            request.push(0);
        }
        let what = "sending the attach request";
        let left = self.time_left().ok_or_else(|| self.timed_out(what))?;
        stream.set_write_timeout(Some(left)).ok();
        stream
            .write_all(&request)
            .map_err(|e| self.io_failure(what, &e))?;
        let answer = self.read_answer(&mut stream)?;
        let mut lines = answer.lines();
        let status = lines.next().unwrap_or("").trim();
        let rest: Vec<&str> = lines.collect();
        if status != "0" {
            return Err(CliError::Attach(format!(
                "the JVM refused to load the agent: {}",
                printable(rest.join(" ").trim())
            )));
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
            .ok_or_else(|| {
                CliError::Attach(format!(
                    "unexpected answer from the JVM: \"{}\"",
                    printable(&answer).replace('\n', "\\n")
                ))
            })?;
        Ok(code)
    }

    /// Reads the answer until the peer closes, at most [`MAX_ANSWER`] bytes
    /// and never past the deadline (each read waits only for what is left).
    fn read_answer(&self, stream: &mut UnixStream) -> Result<String, CliError> {
        let what = "reading the attach answer";
        let mut answer = Vec::new();
        let mut chunk = [0u8; 1024];
        loop {
            let left = self.time_left().ok_or_else(|| self.timed_out(what))?;
            stream.set_read_timeout(Some(left)).ok();
            match stream.read(&mut chunk) {
                Ok(0) => break,
                Ok(n) if answer.len() + n > MAX_ANSWER => {
                    return Err(CliError::Attach(format!(
                        "{what}: the answer is longer than {MAX_ANSWER} bytes, which no JVM sends; refusing it (is process {} a JVM?)",
                        self.pid
                    )))
                }
                Ok(n) => answer.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(self.io_failure(what, &e)),
            }
        }
        Ok(String::from_utf8_lossy(&answer).into_owned())
    }

    /// A failed read or write, with the likely cause of a time-out.
    fn io_failure(&self, what: &str, e: &std::io::Error) -> CliError {
        use std::io::ErrorKind::{TimedOut, WouldBlock};
        if matches!(e.kind(), WouldBlock | TimedOut) {
            self.timed_out(what)
        } else {
            CliError::Attach(format!("{what}: {e}"))
        }
    }

    /// `--timeout` ran out during `what`: say so, with the likely cause.
    fn timed_out(&self, what: &str) -> CliError {
        let cause = if process_state(self.pid) == Some('T') {
            "the JVM is stopped (SIGSTOP or a debugger)"
        } else {
            "the JVM is too busy, or stuck at a safepoint"
        };
        CliError::Attach(format!(
            "{what}: no complete answer within {:?} (--timeout): {cause}",
            self.timeout
        ))
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
