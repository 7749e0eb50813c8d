//! The profiling signal: its handler, and the two ways a sample is asked for
//! (a queued signal to one thread, or that thread's CPU-time timer). The
//! handler runs on the interrupted Java thread and only walks its stack into
//! the ring: no allocation, no lock, no JNI call beyond GetEnv, no panic path.

use super::frame_kinds;
use super::perf_event;
use super::recover;
use super::ring::Ring;
use crate::error::AgentError;
use crate::native;
use crate::vm::async_trace::{CallFrame, NATIVE_CODE_BCI};
use crate::vm::{async_trace, hotspot};
use profrj_format::frame_types::FrameType;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};

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
/// A perf event's signal (`F_SETSIG`): the descriptor is in the siginfo.
const POLL_IN: c_int = 1;
const POLL_HUP: c_int = 6;
/// Kernel frames taken at most from a perf sample.
const MAX_KERNEL_FRAMES: usize = 128;

/// The start of a Linux `siginfo_t` for the codes we send: `a`/`b` are
/// (pid, uid) for SI_QUEUE and (timer id, overrun) for SI_TIMER, and
/// `value` is the token; a perf event's (POLL_IN, POLL_HUP) has its band in
/// `a`/`b` and its descriptor in `value`'s low half.
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
pub fn install(signo: c_int, name: &str) -> Result<(), AgentError> {
    if INSTALLED.load(Ordering::Acquire) {
        return Ok(());
    }
    // SAFETY: sigaction is plain data (integers, a mask, a handler address):
    // all-zero is a valid value.
    let mut old: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a null new action only reads the current one into `old`, a live local.
    if unsafe { libc::sigaction(signo, std::ptr::null(), &mut old) } != 0 {
        return Err(AgentError::Unsupported(format!(
            "cannot read the {name} handler: {}",
            std::io::Error::last_os_error()
        )));
    }
    if old.sa_sigaction != libc::SIG_DFL && old.sa_sigaction != libc::SIG_IGN {
        return Err(AgentError::Refused(format!(
            "{name} is already handled in this JVM (by the application or another agent); profrj leaves it alone"
        )));
    }
    // SAFETY: all-zero is a valid sigaction (above).
    let mut action: libc::sigaction = unsafe { std::mem::zeroed() };
    action.sa_sigaction = on_signal as *const () as usize;
    // SA_RESTART: a system call the signal interrupts resumes instead of failing with EINTR.
    action.sa_flags = libc::SA_SIGINFO | libc::SA_RESTART;
    // SAFETY: sa_mask is a sigset_t inside `action`, a live local.
    unsafe { libc::sigemptyset(&mut action.sa_mask) };
    // SAFETY: the action's handler has the SA_SIGINFO signature and is
    // async-signal-safe (on_signal); the signal was unhandled (checked above).
    if unsafe { libc::sigaction(signo, &action, std::ptr::null_mut()) } != 0 {
        return Err(AgentError::Unsupported(format!(
            "cannot install the {name} handler: {}",
            std::io::Error::last_os_error()
        )));
    }
    INSTALLED.store(true, Ordering::Release);
    Ok(())
}

/// Is our handler still the one installed? An application can replace it
/// at any time (sun.misc.Signal, a native library); then signals must stop,
/// or every sample would run the application's handler.
pub fn still_ours(signo: c_int) -> bool {
    // SAFETY: all-zero is a valid sigaction (see `install`).
    let mut now: libc::sigaction = unsafe { std::mem::zeroed() };
    // SAFETY: a null new action only reads the current one into `now`, a live local.
    if unsafe { libc::sigaction(signo, std::ptr::null(), &mut now) } != 0 {
        return false;
    }
    now.sa_sigaction == on_signal as *const () as usize
}

/// The handler. Runs on whichever Java thread the signal interrupted.
///
/// # Safety
/// Only the kernel calls this, as an SA_SIGINFO handler: `info` and
/// `ucontext` are the signal's, on the interrupted thread.
unsafe extern "C" fn on_signal(_signo: c_int, info: *mut libc::siginfo_t, ucontext: *mut c_void) {
    // SAFETY: __errno_location gives this thread's errno, a live int; it is
    // restored before returning, as a handler must.
    let saved_errno = unsafe { *libc::__errno_location() };
    // SAFETY: the kernel's siginfo_t and ucontext for this signal, on this
    // thread (the caller's promise).
    unsafe { record(info.cast(), ucontext) };
    // SAFETY: as above: this thread's errno.
    unsafe { *libc::__errno_location() = saved_errno };
}

/// # Safety
/// Only from [`on_signal`], with its arguments: `info` null or the
/// signal's siginfo_t, `ucontext` its context, on the interrupted thread.
unsafe fn record(info: *const SigInfo, ucontext: *mut c_void) {
    if info.is_null() || !ACTIVE.load(Ordering::Acquire) {
        return;
    }
    // SAFETY: the kernel's siginfo_t (the caller's promise) is 128 bytes,
    // which SigInfo spans (asserted above), so these fields are in it.
    let (code, b, token) = unsafe { ((*info).code, (*info).b, (*info).value) };
    let (weight, token, perf) = match code {
        SI_QUEUE => (1, token, None),
        // A CPU timer that expired again before its signal was taken: one
        // signal stands for 1 + overrun intervals.
        SI_TIMER => (1 + b.max(0) as u32, token, None),
        // A perf event's: its thread's token is in its slot.
        POLL_IN | POLL_HUP => match perf_event::slot(token as u32 as i32) {
            Some(slot) => (1, slot.token, Some(slot)),
            None => return,
        },
        _ => return, // not ours (kill(1) from outside, another sender)
    };
    let target = TARGET.load(Ordering::Acquire);
    if target.is_null() || token == 0 {
        return;
    }
    // SAFETY: a non-null TARGET is a Box leaked by `set_ring`, never freed,
    // published with Release (loaded with Acquire above).
    let ring = unsafe { (*target).ring };
    if super::is_jvm_token(token) {
        record_jvm_thread(ring, token, weight, ucontext, perf);
        return;
    }
    let env = async_trace::current_env();
    if env.is_null() {
        NOT_JAVA.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let tid = hotspot::current_tid();
    // SAFETY: `env` is this thread's JNIEnv (GetEnv, just now, on this thread).
    let room = unsafe { hotspot::stack_room(env) };
    ring.record(token, weight, tid, |frames, max| {
        if room.is_some_and(|r| r < MIN_STACK_ROOM) {
            return (async_trace::NEAR_STACK_LIMIT, own_cpu_ns());
        }
        // The kernel's frames first (`kernel=on`), then the rest.
        // SAFETY: the ring's slot is writable for `max` frames.
        let k = unsafe { kernel_frames(perf, frames, max.saturating_sub(2)) };
        let max = (max - k).min(i32::MAX as usize) as i32;
        // SAFETY: in the signal handler, on the interrupted thread, with its
        // env and the handler's context (the caller's promise); the ring's
        // slot is writable for `max` frames after the kernel's
        // (`Ring::record`). Native frames (`cstack=`) first, typed as they
        // are written, then the Java ones.
        let code = unsafe {
            native::walk_with_java(env, frames.add(k), max, ucontext, |frames, max| {
                let mut start = None;
                // SAFETY: as above, for the part of the slot left.
                let code = recover::walk(env, frames, max, ucontext, &mut start);
                if code > 0 {
                    // SAFETY: the walk wrote `code` (<= max) frames there,
                    // this handler's alone until `record` returns.
                    let walked = std::slice::from_raw_parts_mut(frames, code as usize);
                    // Every Java frame's kind is set: an earlier sample's is
                    // in the padding AsyncGetCallTrace does not write.
                    // SAFETY: in the handler, on the interrupted thread, with
                    // its env and the handler's context, after the walk.
                    frame_kinds::classify(env, walked, ucontext, start);
                }
                code
            })
        };
        // A failed walk keeps its code (the kernel's frames go with it).
        let code = if code > 0 { code + k as i32 } else { code };
        (code, own_cpu_ns())
    });
}

/// Writes the newest kernel call chain of `perf`'s event into `frames` (at
/// most `max`), each a native-code frame typed kernel; how many. None
/// without a perf event.
///
/// # Safety
/// `frames` is writable for `max` entries.
unsafe fn kernel_frames(
    perf: Option<&perf_event::Slot>,
    frames: *mut CallFrame,
    max: usize,
) -> usize {
    let Some(slot) = perf else {
        return 0;
    };
    let mut chain = [0usize; MAX_KERNEL_FRAMES];
    let n = slot.kernel_chain(&mut chain[..max.min(MAX_KERNEL_FRAMES)]);
    for (i, &pc) in chain[..n].iter().enumerate() {
        let mut frame = CallFrame::new(NATIVE_CODE_BCI, pc as jni_sys::jmethodID);
        frame.kind = FrameType::Kernel as u8;
        // SAFETY: i < n <= max: inside the caller's writable range.
        unsafe { frames.add(i).write(frame) };
    }
    n
}

/// A sample of a thread of the JVM itself (a GC worker, a compiler thread,
/// the VM thread: `jvmthreads`): no Java frame to walk (a compiler thread
/// has a JNIEnv, but runs no Java code), so the sample holds its native
/// frames with `cstack=` and none without, and the sampler counts it under
/// the thread's root frame (`[jvm_gc]`…).
fn record_jvm_thread(
    ring: &Ring,
    token: u64,
    weight: u32,
    ucontext: *mut c_void,
    perf: Option<&perf_event::Slot>,
) {
    let tid = hotspot::current_tid();
    ring.record(token, weight, tid, |frames, max| {
        // SAFETY: the ring's slot is writable for `max` frames.
        let k = unsafe { kernel_frames(perf, frames, max) };
        // With `cstack=`, its native frames (the sampler puts them above
        // the thread's root frame: `stacks/jvm_threads.rs`, `answer`).
        // SAFETY: in the handler, on the interrupted thread, with the
        // handler's context; the ring's slot is writable for `max` frames,
        // `k` of them the kernel's.
        let code = unsafe { native::walk_jvm_thread(ucontext, frames.add(k), max - k) };
        (code + k as i32, own_cpu_ns())
    });
}

/// The calling thread's CPU time, ns (clock_gettime is async-signal-safe).
fn own_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a clock id and a live timespec to write; async-signal-safe.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    (ts.tv_sec as u64)
        .wrapping_mul(1_000_000_000)
        .wrapping_add(ts.tv_nsec as u64)
}

/// Asks thread `tid` of this process for a stack: queues `signo` to it with `token`.
pub fn ask(tid: i32, signo: c_int, token: u64) -> std::io::Result<()> {
    // SAFETY: SigInfo is integers and bytes: all-zero is a valid value.
    let mut info: SigInfo = unsafe { std::mem::zeroed() };
    info.signo = signo;
    info.code = SI_QUEUE;
    // SAFETY: getpid takes no arguments and cannot fail.
    info.a = unsafe { libc::getpid() };
    // SAFETY: getuid takes no arguments and cannot fail.
    info.b = unsafe { libc::getuid() } as c_int;
    info.value = token;
    // SAFETY: rt_tgsigqueueinfo(tgid, tid, sig, info) reads a full 128-byte
    // siginfo from `info`, a live local; a wrong tid is an error (ESRCH).
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
