//! The profiling signal: its handler, and the two ways a sample is asked for
//! (a queued signal to one thread, or that thread's CPU-time timer). The
//! handler runs on the interrupted Java thread and only walks its stack into
//! the ring: no allocation, no lock, no JNI call beyond GetEnv, no panic path.

use super::ring::Ring;
use crate::vm::{async_trace, hotspot};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::time::Duration;

/// What the handler reads: published once, never freed.
struct Target {
    ring: &'static Ring,
}

static TARGET: AtomicPtr<Target> = AtomicPtr::new(std::ptr::null_mut());
/// Off between sessions: a late signal is then ignored.
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Signals that reached a thread with no JNIEnv (not a Java thread).
static NOT_JAVA: AtomicU64 = AtomicU64::new(0);
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Stack the handler needs below the interrupted code: HotSpot's guard zones
/// (4 pages) and AsyncGetCallTrace's frames with margin. Closer to the end of
/// the stack, a walk could touch the guard zone, which HotSpot would turn into
/// a StackOverflowError in the program (seen in a 9,000-frame recursion
/// loading a class); the sample then goes under `[near_stack_limit]`.
const MIN_STACK_ROOM: usize = 64 << 10;

const SI_QUEUE: c_int = -1;
const SI_TIMER: c_int = -2;

/// The start of a Linux `siginfo_t` for the two codes we send: `a`/`b` are
/// (pid, uid) for SI_QUEUE and (timer id, overrun) for SI_TIMER; `value` is
/// the token either way.
#[repr(C)]
struct SigInfo {
    signo: c_int,
    errno: c_int,
    code: c_int,
    _pad: c_int,
    a: c_int,
    b: c_int,
    value: u64,
    _rest: [u8; 96],
}
const _: () = assert!(std::mem::size_of::<SigInfo>() == 128);

/// Points the handler at `ring` (samples go there from now on).
pub fn set_ring(ring: &'static Ring) {
    let target = Box::into_raw(Box::new(Target { ring }));
    // The old target is leaked on purpose: a handler may still be reading it.
    TARGET.store(target, Ordering::Release);
}

pub fn set_active(on: bool) {
    ACTIVE.store(on, Ordering::Release);
}

pub fn not_java_count() -> u64 {
    NOT_JAVA.load(Ordering::Relaxed)
}

/// Installs the handler for `signo`, unless someone else (the application,
/// another agent) handles it already: then that handler stays and the error
/// says so.
pub fn install(signo: c_int, name: &str) -> Result<(), String> {
    if INSTALLED.load(Ordering::Acquire) {
        return Ok(());
    }
    // SAFETY: all-zero sigaction is a valid out-parameter.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: querying only (null new action).
    if unsafe { libc::sigaction(signo, std::ptr::null(), &mut old) } != 0 {
        return Err(format!(
            "cannot read the {name} handler: {}",
            std::io::Error::last_os_error()
        ));
    }
    if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN {
        return Err(format!(
            "{name} is already handled in this JVM (by the application or another agent); profrj leaves it alone"
        ));
    }
    // SAFETY: as above.
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = on_signal as *const () as usize;
    // SA_RESTART: a system call the signal interrupts resumes instead of failing with EINTR.
    action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
    // SAFETY: sa_mask is a valid sigset_t inside `action`.
    unsafe { libc::sigemptyset(&mut action.sa_mask) };
    // SAFETY: a valid action whose handler has the SA_SIGINFO signature.
    if unsafe { libc::sigaction(signo, &action, std::ptr::null_mut()) } != 0 {
        return Err(format!(
            "cannot install the {name} handler: {}",
            std::io::Error::last_os_error()
        ));
    }
    INSTALLED.store(true, Ordering::Release);
    Ok(())
}

/// Is our handler still the one installed? An application can replace it
/// at any time (sun.misc.Signal, a native library); then signals must stop,
/// or every sample would run the application's handler.
pub fn still_ours(signo: c_int) -> bool {
    // SAFETY: all-zero sigaction is a valid out-parameter.
    let mut now: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: querying only.
    if unsafe { libc::sigaction(signo, std::ptr::null(), &mut now) } != 0 {
        return false;
    }
    now.sa_sigaction == on_signal as *const () as usize
}

/// The handler. Runs on whichever Java thread the signal interrupted.
extern "C" fn on_signal(_signo: c_int, info: *mut libc::siginfo_t, ucontext: *mut c_void) {
    // SAFETY: errno is this thread's; it is restored before returning.
    let saved_errno = unsafe { *libc::__errno_location() };
    // SAFETY: the kernel passes a valid siginfo_t and ucontext for SA_SIGINFO.
    unsafe { record(info.cast(), ucontext) };
    // SAFETY: as above.
    unsafe { *libc::__errno_location() = saved_errno };
}

/// # Safety
/// Only from [`on_signal`], with its arguments.
unsafe fn record(info: *const SigInfo, ucontext: *mut c_void) {
    if info.is_null() || !ACTIVE.load(Ordering::Acquire) {
        return;
    }
    // SAFETY: the kernel's siginfo_t is at least 128 bytes.
    let (code, b, token) = unsafe { ((*info).code, (*info).b, (*info).value) };
    let weight = match code {
        SI_QUEUE => 1,
        // A CPU timer that expired again before its signal was taken: one
        // signal stands for 1 + overrun intervals.
        SI_TIMER => 1 + b.max(0) as u32,
        _ => return, // not ours (kill(1) from outside, another sender)
    };
    let target = TARGET.load(Ordering::Acquire);
    if target.is_null() || token == 0 {
        return;
    }
    // SAFETY: targets are leaked, never freed.
    let ring = unsafe { (*target).ring };
    // SAFETY: called in a signal handler, as current_env allows.
    let env = unsafe { async_trace::current_env() };
    if env.is_null() {
        NOT_JAVA.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let tid = hotspot::current_tid();
    // SAFETY: `env` is this thread's.
    let room = unsafe { hotspot::stack_room(env) };
    ring.record(token, weight, tid, |frames, max| {
        if room.is_some_and(|r| r < MIN_STACK_ROOM) {
            return (async_trace::NEAR_STACK_LIMIT, own_cpu_ns());
        }
        // SAFETY: on the interrupted thread, with its env and context; the
        // ring gives `max` frames.
        let max = max.min(i32::MAX as usize) as i32;
        let code = unsafe { async_trace::walk_recovering(env, frames, max, ucontext) };
        (code, own_cpu_ns())
    });
}

/// The calling thread's CPU time, ns (clock_gettime is async-signal-safe).
fn own_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and out-pointer.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// Asks thread `tid` of this process for a stack: queues `signo` to it with `token`.
pub fn ask(tid: i32, signo: c_int, token: u64) -> std::io::Result<()> {
    // SAFETY: all-zero is a valid siginfo payload; fields set below.
    let mut info: SigInfo = unsafe { std::mem::zeroed() };
    info.signo = signo;
    info.code = SI_QUEUE;
    // SAFETY: getpid/getuid cannot fail.
    info.a = unsafe { libc::getpid() };
    // SAFETY: as above.
    info.b = unsafe { libc::getuid() } as c_int;
    info.value = token;
    // SAFETY: rt_tgsigqueueinfo(tgid, tid, sig, info) with a full 128-byte siginfo.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_rt_tgsigqueueinfo,
            libc::getpid(),
            tid,
            signo,
            &info as *const SigInfo,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// A POSIX timer on one thread's CPU clock that signals that thread each
/// `interval` of CPU it uses (JFR's JEP 509 and async-profiler's `cpu` do the same).
pub struct CpuTimer(libc::timer_t);

// SAFETY: a timer id is a plain handle, usable from any thread of the process.
unsafe impl Send for CpuTimer {}

impl CpuTimer {
    pub fn start(tid: i32, signo: c_int, interval: Duration, token: u64) -> std::io::Result<Self> {
        // The kernel's per-thread CPU clock id: MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED).
        let clock = ((!tid) << 3) | 6;
        // SAFETY: all-zero sigevent is valid; fields set below.
        let mut ev: libc::sigevent = unsafe { std::mem::zeroed() };
        ev.sigev_notify = libc::SIGEV_THREAD_ID;
        ev.sigev_signo = signo;
        ev.sigev_value = libc::sigval {
            sival_ptr: token as usize as *mut c_void,
        };
        ev.sigev_notify_thread_id = tid;
        let mut timer: libc::timer_t = std::ptr::null_mut();
        // SAFETY: valid clock id, event and out-pointer.
        if unsafe { libc::timer_create(clock, &mut ev, &mut timer) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        let t = CpuTimer(timer);
        let ts = libc::timespec {
            tv_sec: interval.as_secs() as libc::time_t,
            tv_nsec: interval.subsec_nanos() as libc::c_long,
        };
        let spec = libc::itimerspec {
            it_interval: ts,
            it_value: ts,
        };
        // SAFETY: a timer we just created and a valid spec.
        if unsafe { libc::timer_settime(t.0, 0, &spec, std::ptr::null_mut()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(t)
    }
}

impl Drop for CpuTimer {
    fn drop(&mut self) {
        // SAFETY: a timer created by `start` and deleted only here.
        unsafe { libc::timer_delete(self.0) };
    }
}
