//! Wake-ups for the `profrj control` thread: a self-pipe that the dump signal's
//! handler, the DataDumpRequest event (`kill -3`) and anyone else can write a
//! byte to. A signal handler may do almost nothing safely; writing one byte to
//! a pipe is one of the few things it may, so that is all it does.

use std::io;
use std::sync::atomic::{AtomicI32, Ordering};

/// Write end of the pipe, read by the signal handler (an atomic: no locks there).
static WRITE_FD: AtomicI32 = AtomicI32::new(-1);

pub struct Wakeups {
    read_fd: i32,
}

impl Wakeups {
    /// Creates the pipe (once per process).
    pub fn new() -> io::Result<Self> {
        let mut fds = [0i32; 2];
        // SAFETY: pipe2 writes two descriptors into `fds`, a live [i32; 2].
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC | libc::O_NONBLOCK) } != 0 {
            return Err(io::Error::last_os_error());
        }
        WRITE_FD.store(fds[1], Ordering::Release);
        Ok(Self { read_fd: fds[0] })
    }

    /// Blocks until at least one wake-up arrives; several pending ones count as one.
    pub fn wait(&self) {
        let mut pfd = libc::pollfd {
            fd: self.read_fd,
            events: libc::POLLIN,
            revents: 0,
        };
        loop {
            // SAFETY: `pfd` is one live pollfd (count 1); -1 = no timeout.
            let n = unsafe { libc::poll(&mut pfd, 1, -1) };
            if n > 0 {
                break;
            }
            if n < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                // Should not happen; do not spin if it does.
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        }
        let mut buf = [0u8; 64];
        // SAFETY: reads at most `buf.len()` bytes into `buf`, a live local; the
        // descriptor is the pipe's read end, ours for the process's life and
        // non-blocking, so the loop ends when the pipe is empty.
        while unsafe { libc::read(self.read_fd, buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
    }
}

/// Asks the control thread for a dump. Async-signal-safe.
pub fn wake() {
    let fd = WRITE_FD.load(Ordering::Acquire);
    if fd >= 0 {
        // SAFETY: writes one byte from a static; `fd` is the pipe's write
        // end, never closed. write(2) is async-signal-safe; a full pipe
        // (EAGAIN) means a wake-up is already pending, which is all we want.
        unsafe { libc::write(fd, b"d".as_ptr().cast(), 1) };
    }
}

extern "C" fn on_dump_signal(_sig: libc::c_int) {
    // SAFETY: __errno_location gives this thread's errno, a live int;
    // saving and restoring it keeps the interrupted code's view intact, as a
    // signal handler must. `wake` is async-signal-safe.
    unsafe {
        let errno = libc::__errno_location();
        let saved = *errno;
        wake();
        *errno = saved;
    }
}

/// Installs the handler that turns `signal` into a dump request, unless some
/// other handler (the application's, say) already owns the signal: that one
/// is left alone and an error says so.
pub fn install_dump_signal(signal: i32) -> io::Result<()> {
    // SAFETY: sigaction is plain data (integers, a mask, a handler address):
    // all-zero is a valid value.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: with a null new action, sigaction only reads the current one
    // into `old`, a live local; a bad signal number is an error (EINVAL).
    if unsafe { libc::sigaction(signal, std::ptr::null(), &mut old) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mine = on_dump_signal as extern "C" fn(libc::c_int) as usize;
    if old.sa_sigaction == mine {
        return Ok(());
    }
    if old.sa_sigaction != libc::SIG_DFL {
        return Err(io::Error::other(
            "it already has a handler (the application's?), which is left in place; choose another with signal=RTMIN+N",
        ));
    }
    // SAFETY: all-zero is a valid sigaction (above); handler, mask and flags
    // are set below.
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = mine;
    sa.sa_flags = libc::SA_RESTART;
    // SAFETY: sa_mask is a sigset_t inside `sa`, a live local.
    unsafe { libc::sigemptyset(&mut sa.sa_mask) };
    // SAFETY: `sa` is a live sigaction whose handler (on_dump_signal) has the
    // plain-handler signature and does only async-signal-safe things; the
    // signal had no handler (checked above).
    if unsafe { libc::sigaction(signal, &sa, std::ptr::null_mut()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
