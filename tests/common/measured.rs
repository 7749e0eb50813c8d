//! Running `profrj` to its end and reading what it cost from the kernel
//! (wait4's resource usage): CPU time and peak memory, which a loaded machine
//! does not inflate the way it stretches wall time. A bound on CPU time is
//! enforced by the kernel (RLIMIT_CPU), not by a clock in the test; the wall
//! clock only guards against a hang, with a limit far beyond any load.

use std::io::Read;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A run that would take longer than this has hung (blocked on a FIFO, a
/// socket, a lock): every command the tests run ends in seconds, even on a
/// machine loaded many times over.
pub const HANG: Duration = Duration::from_secs(300);

/// What a finished (or killed) run left.
pub struct Measured {
    /// Exit code; -1 when a signal ended it.
    pub code: i32,
    /// The signal that ended it, if one did.
    pub signal: Option<i32>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// User + system CPU time.
    pub cpu: Duration,
    pub max_rss_kib: i64,
    /// Killed by the hang guard.
    pub hung: bool,
}

impl Measured {
    /// stdout and stderr, the first 2,000 characters of each (a flood
    /// printed whole would bury a failure).
    pub fn text(&self) -> String {
        let head = |b: &[u8]| {
            String::from_utf8_lossy(b)
                .chars()
                .take(2000)
                .collect::<String>()
        };
        format!("{}{}", head(&self.stdout), head(&self.stderr))
    }

    /// stdout, whole.
    pub fn out(&self) -> String {
        String::from_utf8_lossy(&self.stdout).into_owned()
    }

    /// Fails the test if the run hung or ran out of its CPU time.
    pub fn assert_finished(&self, what: &str) {
        assert!(!self.hung, "{what} did not finish within {HANG:?}: it hung");
        assert_ne!(
            self.signal,
            Some(libc::SIGXCPU),
            "{what} used up its CPU time limit ({:?}): not linear?",
            self.cpu
        );
    }
}

/// Runs `profrj ARGS` with this build's agent; with `cpu_limit`, the kernel
/// stops it (SIGXCPU) once it has used that much CPU time.
pub fn profrj_measured(args: &[&str], cpu_limit: Option<Duration>) -> Measured {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_profrj"));
    cmd.args(args).env("PROFRJ_AGENT", super::agent());
    if let Some(limit) = cpu_limit {
        let secs = limit.as_secs().max(1) as libc::rlim_t;
        // SAFETY: between fork and exec only setrlimit runs (async-signal-safe).
        unsafe {
            cmd.pre_exec(move || {
                let lim = libc::rlimit {
                    rlim_cur: secs,
                    rlim_max: secs + 1,
                };
                if libc::setrlimit(libc::RLIMIT_CPU, &lim) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            })
        };
    }
    run_measured(&mut cmd)
}

/// Runs `cmd` to its end, reaping it with wait4 for its resource usage.
#[allow(clippy::zombie_processes)] // reaped by wait4 below, which std cannot see
pub fn run_measured(cmd: &mut Command) -> Measured {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    let pid = child.id() as libc::pid_t;
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + HANG;
    let mut hung = false;
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid out-parameter.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: our own child, reaped only here (never through `child`).
        let reaped = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if reaped == pid {
            break;
        }
        assert_eq!(reaped, 0, "wait4: {}", std::io::Error::last_os_error());
        if Instant::now() > deadline && !hung {
            hung = true;
            // SAFETY: our own child, not yet reaped.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let status = std::process::ExitStatus::from_raw(status);
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Measured {
        code: status.code().unwrap_or(-1),
        signal: status.signal(),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        cpu: tv(usage.ru_utime) + tv(usage.ru_stime),
        max_rss_kib: usage.ru_maxrss,
        hung,
    }
}
