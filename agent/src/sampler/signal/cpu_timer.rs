//! A thread's CPU-time sampling clock (`event=cpu`): a POSIX timer on the
//! thread's CPU clock (JFR's JEP 509 and async-profiler's `itimer`/`ctimer`
//! do the same), or with `kernel=on` a perf event on it, whose samples also
//! carry the kernel's call chain (`perf_event.rs`). Either signals the
//! thread itself each `interval` of CPU it uses.

use super::perf_event::{self, PerfEvent};
use crate::log;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// `kernel=on` for this session, until the kernel refuses an event.
static KERNEL: AtomicBool = AtomicBool::new(false);

/// Sets whether timers made from now on are perf events (`kernel=on`).
pub fn use_perf_events(on: bool) {
    KERNEL.store(on, Ordering::Release);
}

/// Whether kernel frames are being taken (on, and not refused).
pub fn kernel_frames() -> bool {
    KERNEL.load(Ordering::Acquire)
}

enum Clock {
    Posix(libc::timer_t),
    /// Held only: dropping it closes the event.
    Perf {
        _event: PerfEvent,
    },
}

/// One thread's sampling clock; dropping it stops it.
pub struct CpuTimer {
    clock: Clock,
    /// The thread's CPU clock just before the timer was armed (ns).
    armed_cpu_ns: Option<u64>,
}

// SAFETY: a timer id is a plain handle of the process (timer_t is a pointer
// only in type), a perf event a descriptor and a slot only it frees; usable
// from any thread; only `drop` deletes either.
unsafe impl Send for CpuTimer {}

impl CpuTimer {
    pub fn start(tid: i32, signo: c_int, interval: Duration, token: u64) -> std::io::Result<Self> {
        let armed_cpu_ns = crate::clock::thread_cpu_ns(tid);
        if kernel_frames() {
            match PerfEvent::open(tid, signo, interval, token) {
                Ok(event) => {
                    return Ok(CpuTimer {
                        clock: Clock::Perf { _event: event },
                        armed_cpu_ns,
                    })
                }
                Err(e) => refused(&e),
            }
        }
        let id = posix_timer(tid, signo, interval, token)?;
        Ok(CpuTimer {
            clock: Clock::Posix(id),
            armed_cpu_ns,
        })
    }

    /// The thread's CPU time when its timer was armed (ns), for
    /// `stacks/cpu_credit.rs`.
    pub fn armed_cpu_ns(&self) -> Option<u64> {
        self.armed_cpu_ns
    }
}

/// A perf event the kernel would not give: where it refuses them to this
/// process (`perf_event_paranoid`), none is asked for again this session;
/// any other failure (the locked-memory limit on the rings, the descriptor
/// table) costs that thread its kernel frames only. Said once either way.
fn refused(e: &std::io::Error) {
    let errno = e.raw_os_error().unwrap_or(0);
    if [
        libc::EACCES,
        libc::EPERM,
        libc::ENOENT,
        libc::ENOSYS,
        libc::EINVAL,
    ]
    .contains(&errno)
    {
        KERNEL.store(false, Ordering::Release);
        let paranoid = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
            .map(|s| s.trim().to_owned())
            .unwrap_or_else(|_| "unknown".into());
        log::warn_once(
            "kernel-refused",
            &format!(
                "sampling: kernel=on: the kernel refused a perf event ({e}; perf_event_paranoid={paranoid}, needs root or <= 1): event=cpu runs on the threads' CPU timers, without kernel frames"
            ),
        );
    } else {
        log::warn_once(
            "kernel-one-thread",
            &format!("sampling: kernel=on: a thread's perf event failed ({e}); it is sampled by its CPU timer, without kernel frames (said once)"),
        );
    }
}

fn posix_timer(
    tid: i32,
    signo: c_int,
    interval: Duration,
    token: u64,
) -> std::io::Result<libc::timer_t> {
    // The kernel's per-thread CPU clock id: MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED).
    let clock = ((!tid) << 3) | 6;
    // SAFETY: sigevent is integers, a union of them and pointers, and
    // padding: all-zero is a valid value; the fields used are set below.
    let mut ev: libc::sigevent = unsafe { std::mem::zeroed() };
    ev.sigev_notify = libc::SIGEV_THREAD_ID;
    ev.sigev_signo = signo;
    ev.sigev_value = libc::sigval {
        sival_ptr: token as usize as *mut c_void,
    };
    ev.sigev_notify_thread_id = tid;
    let mut timer: libc::timer_t = std::ptr::null_mut();
    // SAFETY: `ev` and `timer` are live locals; a bad clock id or thread
    // is an error (EINVAL), not undefined behaviour.
    if unsafe { libc::timer_create(clock, &mut ev, &mut timer) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let ts = libc::timespec {
        tv_sec: interval.as_secs() as libc::time_t,
        tv_nsec: interval.subsec_nanos() as libc::c_long,
    };
    let spec = libc::itimerspec {
        it_interval: ts,
        it_value: ts,
    };
    // SAFETY: a timer just created and a live spec; a null old value is allowed.
    if unsafe { libc::timer_settime(timer, 0, &spec, std::ptr::null_mut()) } != 0 {
        let e = std::io::Error::last_os_error();
        // SAFETY: the timer just created, deleted once on this path.
        unsafe { libc::timer_delete(timer) };
        return Err(e);
    }
    Ok(timer)
}

impl Drop for CpuTimer {
    fn drop(&mut self) {
        if let Clock::Posix(id) = self.clock {
            // SAFETY: a timer `start` created, deleted only here, once.
            unsafe { libc::timer_delete(id) };
        }
        // A perf event closes itself (its ring unmapped two ticks later).
    }
}

/// Sampler tick: frees what dropped perf events left.
pub fn reclaim() {
    perf_event::reclaim();
}
