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
        // SAFETY: pipe2 writes two descriptors into the array we own.
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
            // SAFETY: one valid pollfd; -1 = no timeout.
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
        // SAFETY: reads into a buffer we own; the descriptor is non-blocking.
        while unsafe { libc::read(self.read_fd, buf.as_mut_ptr().cast(), buf.len()) } > 0 {}
    }
}

/// Asks the control thread for a dump. Async-signal-safe.
pub fn wake() {
    let fd = WRITE_FD.load(Ordering::Acquire);
    if fd >= 0 {
        // SAFETY: write(2) is async-signal-safe; a full pipe (EAGAIN) means a
        // wake-up is already pending, which is all we want.
        unsafe { libc::write(fd, b"d".as_ptr().cast(), 1) };
    }
}

extern "C" fn on_dump_signal(_sig: libc::c_int) {
    // SAFETY: errno is thread-local; saving and restoring it keeps the
    // interrupted code's view intact, as a signal handler must.
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
    // SAFETY: a zeroed sigaction is valid; with a null new action, sigaction only reads the current one.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
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
    // SAFETY: a zeroed sigaction is valid; we fill handler, mask and flags.
    let mut sa: libc::sigaction = unsafe { std::mem::zeroed() };
    sa.sa_sigaction = mine;
    sa.sa_flags = libc::SA_RESTART;
    // SAFETY: sa_mask is ours to initialise.
    unsafe { libc::sigemptyset(&mut sa.sa_mask) };
    // SAFETY: installs a handler that only calls async-signal-safe functions.
    if unsafe { libc::sigaction(signal, &sa, std::ptr::null_mut()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
