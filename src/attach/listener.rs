//! Reaching the JVM's attach listener: its socket `/tmp/.java_pid<pid>`
//! found inside the JVM's root, checked (a socket of the JVM's user, with a
//! peer of that user), and connected to before the deadline; or, when there
//! is no socket yet, the `.attach_pid<pid>` trigger and SIGQUIT that start it.

use super::{as_target_user, jvm_root, Dir, Target};
use crate::error::CliError;
use std::fs;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

impl Target {
    /// The attach socket's name in the JVM's /tmp.
    fn socket_name(&self) -> String {
        format!(".java_pid{}", self.ns_pid)
    }

    /// Connects to the attach listener, starting it if needed. The socket and
    /// the process answering on it must both be the JVM's user's.
    pub(super) fn connect(&self) -> Result<UnixStream, CliError> {
        let tmp = self.tmp()?;
        let name = self.socket_name();
        let shown = tmp.jvm_path(&name);
        if tmp.entry(&name).is_err() {
            self.start_listener(&tmp)?;
        }
        let socket = tmp
            .entry_fd(&name)
            .map_err(|e| CliError::Attach(format!("the JVM's {shown}: {e}")))?;
        self.check_socket_owner(&socket, &shown)?;
        let stream = self.connect_as_target(&socket, &shown)?;
        self.check_peer(&stream, &shown)?;
        Ok(stream)
    }

    /// The socket file must be a socket owned by the JVM's user: another user
    /// who bound it first would otherwise answer in the JVM's name.
    fn check_socket_owner(&self, socket: &OwnedFd, shown: &str) -> Result<(), CliError> {
        let meta = fs::File::from(
            socket
                .try_clone()
                .map_err(|e| CliError::Attach(e.to_string()))?,
        )
        .metadata()
        .map_err(|e| CliError::Attach(format!("{shown}: {e}")))?;
        if !meta.file_type().is_socket() {
            return Err(CliError::Attach(format!(
                "{shown} is not a socket; refusing it"
            )));
        }
        if meta.uid() != self.uid {
            return Err(CliError::Attach(format!(
                "{shown} belongs to uid {}, not to the JVM's uid {}: refusing it (another user's socket could answer in the JVM's name)",
                meta.uid(),
                self.uid
            )));
        }
        Ok(())
    }

    /// The process on the other end must run as the JVM's user.
    fn check_peer(&self, stream: &UnixStream, shown: &str) -> Result<(), CliError> {
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
            return Err(CliError::Attach(format!(
                "cannot check who answers on {shown}: {}",
                io::Error::last_os_error()
            )));
        }
        if cred.uid != self.uid {
            return Err(CliError::Attach(format!(
                "the process answering on {shown} runs as uid {}, not as the JVM's uid {}: refusing it",
                cred.uid, self.uid
            )));
        }
        Ok(())
    }

    /// Connects, as the JVM's user, to the socket `socket` is open on
    /// (through `/proc/self/fd/N`: connect() would follow a link put in its
    /// place since), waiting no longer than the time left.
    fn connect_as_target(&self, socket: &OwnedFd, shown: &str) -> Result<UnixStream, CliError> {
        let left = self
            .time_left()
            .ok_or_else(|| self.timed_out(&format!("connecting to {shown}")))?;
        let path = jvm_root::fd_path(socket);
        as_target_user(self.uid, self.gid, || connect_within(&path, left)).map_err(|e| {
            match e.kind() {
                io::ErrorKind::PermissionDenied => {
                    CliError::Attach(format!("permission denied connecting to {shown}"))
                }
                io::ErrorKind::ConnectionRefused => CliError::Attach(format!(
                    "{shown} refuses connections (a stale socket? is the JVM still running?)"
                )),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => {
                    self.timed_out(&format!("connecting to {shown}"))
                }
                _ => CliError::Attach(format!("cannot connect to {shown}: {e}")),
            }
        })
    }

    /// The JVM opens its attach socket when it sees `.attach_pid<pid>` on
    /// SIGQUIT. The trigger is made as the JVM's user (as jcmd does), never
    /// through a link, in the JVM's working directory or its /tmp (both
    /// where HotSpot looks); one already there is used only if it is a
    /// regular file of the JVM's user (HotSpot checks that too).
    fn start_listener(&self, tmp: &Dir) -> Result<(), CliError> {
        let cwd = PathBuf::from(format!("/proc/{}/cwd", self.pid));
        let cwd = Dir::open_host(&cwd, "the working directory").ok();
        let name = format!(".attach_pid{}", self.ns_pid);
        let mut made = None;
        let mut usable = false;
        for dir in cwd.iter().chain([tmp]) {
            let create = || dir.create_new(&name, 0o600);
            if as_target_user(self.uid, self.gid, create).is_ok() {
                made = Some(dir);
                usable = true;
                break;
            }
            let theirs = dir
                .entry(&name)
                .is_ok_and(|m| m.file_type().is_file() && m.uid() == self.uid);
            if theirs {
                usable = true;
                break;
            }
        }
        if !usable {
            return Err(CliError::Attach(format!(
                "cannot create the {name} trigger file as uid {} in the JVM's working directory or /tmp",
                self.uid
            )));
        }
        // SAFETY: kill has no memory preconditions; the target was checked to be a JVM.
        let sent = unsafe { libc::kill(self.pid, libc::SIGQUIT) } == 0;
        let mut pause = Duration::from_millis(20);
        let present = || tmp.entry(&self.socket_name()).is_ok();
        while sent && !present() {
            let Some(left) = self.time_left() else { break };
            std::thread::sleep(pause.min(left));
            pause = (pause * 2).min(Duration::from_millis(200));
        }
        if let Some(dir) = made {
            let _ = as_target_user(self.uid, self.gid, || dir.remove(&name));
        }
        if !sent {
            return Err(CliError::Attach(format!(
                "cannot signal process {}: {}",
                self.pid,
                io::Error::last_os_error()
            )));
        }
        if !present() {
            return Err(self.why_no_socket());
        }
        Ok(())
    }

    /// Why the attach socket did not appear: the likeliest cause first.
    fn why_no_socket(&self) -> CliError {
        CliError::Attach(self.why_no_socket_text())
    }

    fn why_no_socket_text(&self) -> String {
        let waited = format!(
            "the JVM did not open its attach socket within {:?}",
            self.timeout
        );
        let cmdline = fs::read(format!("/proc/{}/cmdline", self.pid)).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains("DisableAttachMechanism") {
            return format!("{waited}: attach is disabled (-XX:+DisableAttachMechanism)");
        }
        if super::process_state(self.pid) == Some('T') {
            return format!("{waited}: the JVM is stopped (SIGSTOP or a debugger)");
        }
        match super::process_age(self.pid) {
            Some(age) if age < Duration::from_secs(5) + self.timeout => format!(
                "{waited}: the JVM is still starting ({:.1} s old) and its attach listener is not ready yet; try again",
                age.as_secs_f64()
            ),
            _ => format!("{waited}: the JVM is not responding (too busy, or attach is disabled)"),
        }
    }
}

/// connect() to the Unix socket at `path`, waiting at most `limit` (a
/// listener whose backlog is full would otherwise keep us forever).
fn connect_within(path: &Path, limit: Duration) -> io::Result<UnixStream> {
    // SAFETY: plain socket creation.
    let fd = unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a descriptor the kernel just gave us, owned by nothing else.
    let stream = UnixStream::from(unsafe { OwnedFd::from_raw_fd(fd) });
    // SO_SNDTIMEO bounds a blocking connect() on a Unix socket too.
    stream.set_write_timeout(Some(limit))?;
    // SAFETY: all-zero is a valid sockaddr_un.
    let mut addr: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    addr.sun_family = libc::AF_UNIX as libc::sa_family_t;
    let bytes = path.as_os_str().as_encoded_bytes();
    if bytes.len() >= addr.sun_path.len() {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    for (to, from) in addr.sun_path.iter_mut().zip(bytes) {
        *to = *from as libc::c_char;
    }
    loop {
        // SAFETY: an open socket and an initialised address of the size given.
        let rc = unsafe {
            libc::connect(
                stream.as_raw_fd(),
                (&addr as *const libc::sockaddr_un).cast(),
                std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t,
            )
        };
        if rc == 0 {
            return Ok(stream);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}
