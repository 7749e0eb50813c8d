//! Whether a signal asked of a thread is still on its way, from the kernel's
//! own account of the thread (`/proc/self/task/<tid>/status`: `SigPnd`, the
//! signals pending for that thread, and `SigBlk`, those it blocks).
//!
//! Why the sampler needs it: a thread that does not answer is given up on
//! (walked with JVMTI from then on), which is right for a thread that blocks
//! the signal and wrong for one that has simply not run since it was asked:
//! on a loaded 2-core VM (16 busy threads and 3 shell loops), busy Java
//! threads were seen with SIGPROF pending and not blocked for 50 to 90 of the
//! sampler's ticks, their CPU clocks still. Such a thread answers in the
//! end, with a real stack, so it is waited for.
//! Read on the sampler's side only, never in the handler.

use std::io::Read;

/// What the kernel says of a signal asked of one thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// Pending and not blocked: the kernel delivers it when the thread next
    /// enters the kernel.
    OnItsWay,
    /// Pending and blocked: it waits for the thread to unblock it.
    Blocked,
    /// Not pending: taken (the answer is on its way or was lost), or never queued.
    NotPending,
    /// No such thread, or its status could not be read.
    Unknown,
}

/// A status file is a few hundred bytes; never read more than this.
const STATUS_MAX: u64 = 16 << 10;

/// Where signal `signo` asked of thread `tid` of this process stands.
pub fn delivery(tid: i32, signo: i32) -> Delivery {
    let Ok(file) = std::fs::File::open(format!("/proc/self/task/{tid}/status")) else {
        return Delivery::Unknown;
    };
    let mut text = String::new();
    if file.take(STATUS_MAX).read_to_string(&mut text).is_err() {
        return Delivery::Unknown;
    }
    of_status(&text, signo)
}

/// [`delivery`] from a status file's text.
fn of_status(text: &str, signo: i32) -> Delivery {
    let mask = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
    };
    let (Some(pending), Some(blocked)) = (mask("SigPnd:"), mask("SigBlk:")) else {
        return Delivery::Unknown;
    };
    let Some(bit) = u32::try_from(signo - 1)
        .ok()
        .and_then(|b| 1u64.checked_shl(b))
    else {
        return Delivery::Unknown;
    };
    match (pending & bit != 0, blocked & bit != 0) {
        (true, false) => Delivery::OnItsWay,
        (true, true) => Delivery::Blocked,
        (false, _) => Delivery::NotPending,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_are_read_from_the_status_text() {
        let status = |pnd: &str, blk: &str| {
            format!("Name:\tbusy-7\nState:\tR (running)\nSigQ:\t17/96364\nSigPnd:\t{pnd}\nShdPnd:\t0000000000000000\nSigBlk:\t{blk}\n")
        };
        let prof = libc::SIGPROF;
        assert_eq!(
            of_status(&status("0000000004000000", "0000000000000004"), prof),
            Delivery::OnItsWay
        );
        assert_eq!(
            of_status(&status("0000000004000000", "0000000004000004"), prof),
            Delivery::Blocked
        );
        assert_eq!(
            of_status(&status("0000000000000000", "0000000004000000"), prof),
            Delivery::NotPending
        );
        assert_eq!(of_status("Name:\tx\n", prof), Delivery::Unknown);
        assert_eq!(of_status(&status("zz", "0"), prof), Delivery::Unknown);
        assert_eq!(of_status(&status("1", "0"), 0), Delivery::Unknown);
        assert_eq!(of_status(&status("1", "0"), 99), Delivery::Unknown);
    }

    /// A real thread that blocks a signal: the kernel reports it pending and
    /// blocked; once the thread is gone, unknown.
    #[test]
    fn a_thread_that_blocks_the_signal_is_seen_blocking_it() {
        let sig = libc::SIGWINCH; // ignored by default: harmless if it were taken
        let (tx, rx) = std::sync::mpsc::channel();
        let (done_tx, done_rx) = std::sync::mpsc::channel::<()>();
        let t = std::thread::spawn(move || {
            // SAFETY: a zeroed sigset_t filled by sigemptyset/sigaddset, and
            // this thread's own mask.
            unsafe {
                let mut set: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut set);
                libc::sigaddset(&mut set, sig);
                libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            }
            // SAFETY: gettid takes no arguments.
            tx.send(unsafe { libc::syscall(libc::SYS_gettid) } as i32)
                .unwrap();
            done_rx.recv().unwrap();
        });
        let tid = rx.recv().unwrap();
        assert_eq!(delivery(tid, sig), Delivery::NotPending);
        // SAFETY: tgkill to a live thread of this process, which blocks `sig`.
        let rc = unsafe { libc::syscall(libc::SYS_tgkill, libc::getpid(), tid, sig) };
        assert_eq!(rc, 0);
        assert_eq!(delivery(tid, sig), Delivery::Blocked);
        done_tx.send(()).unwrap();
        t.join().unwrap();
        assert_eq!(delivery(tid, sig), Delivery::Unknown);
    }
}
