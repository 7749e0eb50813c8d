//! The handler's walk: AsyncGetCallTrace from the signal's context, and when
//! it cannot walk from there (the thread is in a stub, a vtable or itable
//! stub, a compiled method's entry or exit, the interpreter setting up a
//! frame: HotSpot's `unknown_Java`/`not_walkable_Java`), a walk from the
//! caller: the code map names the code at the pc, the unwinder says where
//! that code leaves its caller's pc, sp and fp, and AsyncGetCallTrace walks
//! again from there with the context's registers moved and then restored.
//! The sample then shows the stub (or the compiled method) as its top frame
//! over its real callers.
//!
//! Memory read here: words of the thread's own stack (inside its bounds as
//! HotSpot has them) and bytes of the interrupted code's blob (code cache
//! memory, committed for the VM's life), each checked before it is read, so
//! no read can fault. AsyncGetCallTrace checks each frame it is given
//! before walking it (`safe_for_sender`), and a candidate caller is given
//! only if its pc lies in known code and its sp above the interrupted one.

use super::code_map::{self, Blob, Code};
use super::unwind::{self, Memory, Regs, Retry};
use crate::vm::async_trace::{self, CallFrame, NOT_WALKABLE_JAVA, UNKNOWN_JAVA};
use crate::vm::hotspot;
use jni_sys::{jint, JNIEnv};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

/// `bci` of a frame that names a stub (or other generated code that is no
/// Java method); its `method` is the name's number in the code map.
pub const STUB_FRAME_BCI: jint = -0x5354;

/// `bci` of a compiled method's frame recovered at its entry or exit: no
/// bytecode index is known there.
pub const NO_BCI: jint = -1;

/// Walks whose top was recovered, by what the top was.
static RECOVERED_STUB: AtomicU64 = AtomicU64::new(0);
static RECOVERED_COMPILED: AtomicU64 = AtomicU64::new(0);
static RECOVERED_UNKNOWN: AtomicU64 = AtomicU64::new(0);

/// (stub, compiled method, unknown code) tops recovered so far.
pub fn recovered_counts() -> (u64, u64, u64) {
    (
        RECOVERED_STUB.load(Ordering::Relaxed),
        RECOVERED_COMPILED.load(Ordering::Relaxed),
        RECOVERED_UNKNOWN.load(Ordering::Relaxed),
    )
}

/// Walks the interrupted thread's stack into `frames` (top first, at most
/// `max`), recovering as above. Returns the number of frames, or a negative
/// `ticks_*` code.
///
/// # Safety
/// Only from a signal handler running on the thread whose `env` this is,
/// with `ucontext` the handler's third argument (or null); `frames` must be
/// writable for `max` entries. `ucontext` is modified during a retry and
/// restored before returning.
pub unsafe fn walk(
    env: *mut JNIEnv,
    frames: *mut CallFrame,
    max: jint,
    ucontext: *mut c_void,
) -> jint {
    // SAFETY: the caller's promise is `async_trace::walk`'s.
    let code = unsafe { async_trace::walk(env, frames, max, ucontext) };
    if (code != UNKNOWN_JAVA && code != NOT_WALKABLE_JAVA) || max < 2 || ucontext.is_null() {
        return code;
    }
    // SAFETY: the caller's promise, with `max >= 2` and a non-null
    // `ucontext` (checked above).
    unsafe { from_caller(env, frames, max, ucontext, code) }.unwrap_or(code)
}

/// This thread's stack words and the interrupted blob's bytes.
struct ThreadMemory {
    low: usize,
    high: usize,
    /// The blob the pc is in, if the code map knows it.
    code: Option<(usize, usize)>,
}

impl Memory for ThreadMemory {
    fn word(&self, at: usize) -> Option<usize> {
        let inside = at >= self.low && at.checked_add(8)? <= self.high && at.is_multiple_of(8);
        // SAFETY: an aligned word inside this thread's own stack, between its
        // bounds as HotSpot has them: mapped, and written only by this
        // thread, which is running this handler. Volatile: memory of other
        // frames, read as the machine has it.
        inside.then(|| unsafe { std::ptr::read_volatile(at as *const usize) })
    }

    fn byte(&self, at: usize) -> Option<u8> {
        let (start, end) = self.code?;
        // SAFETY: a byte of a blob of generated code the VM reported and has
        // not freed, or freed into code cache memory that stays committed
        // for the VM's life: mapped and readable. Volatile: the VM may patch
        // code meanwhile; any byte value is fine here.
        (start <= at && at < end).then(|| unsafe { std::ptr::read_volatile(at as *const u8) })
    }
}

/// The frame that stands for the interrupted code over its callers.
fn top_frame(blob: Option<&Blob>, code: jint) -> CallFrame {
    match blob.map(|b| b.code) {
        Some(Code::Stub { name, .. }) => CallFrame {
            bci: STUB_FRAME_BCI,
            method: name as usize as jni_sys::jmethodID,
        },
        Some(Code::Compiled { method }) => CallFrame {
            bci: NO_BCI,
            method: method as jni_sys::jmethodID,
        },
        None => CallFrame {
            bci: code,
            method: std::ptr::null_mut(),
        },
    }
}

/// The pc to give AsyncGetCallTrace for a caller whose return address is
/// `ret`: None unless it lies in generated code. In a compiled method, the
/// address of the call itself (`ret - 1`): HotSpot looks for the debug
/// information that ends after the pc it is given, which for the call's
/// return address would be the next instruction's.
fn caller_pc(ret: usize) -> Option<usize> {
    match code_map::find(ret).map(|b| b.code) {
        Some(Code::Compiled { .. }) => ret.checked_sub(1),
        Some(Code::Stub { .. }) => Some(ret),
        None => hotspot::in_code_cache(ret).then_some(ret),
    }
}

/// The retry: each candidate caller in turn, until AsyncGetCallTrace walks.
///
/// # Safety
/// As [`walk`], with `max >= 2` and `ucontext` the handler's non-null
/// `ucontext_t`.
#[cfg(target_arch = "x86_64")]
unsafe fn from_caller(
    env: *mut JNIEnv,
    frames: *mut CallFrame,
    max: jint,
    ucontext: *mut c_void,
    code: jint,
) -> Option<jint> {
    use libc::{REG_RBP, REG_RIP, REG_RSP};
    // SAFETY: `env` is the calling thread's own JNIEnv (the caller's promise).
    let (low, high) = unsafe { hotspot::stack_bounds(env) }?;
    let uc = ucontext as *mut libc::ucontext_t;
    // The registers stay behind a raw pointer, not a `&mut`: AsyncGetCallTrace
    // reads them through `ucontext` between our writes.
    // SAFETY: the kernel's ucontext_t for this signal (non-null, the caller's
    // promise), this handler's alone until it returns; no reference is made.
    let gregs = unsafe { std::ptr::addr_of_mut!((*uc).uc_mcontext.gregs) };
    let set = |r: Regs| {
        // SAFETY: `gregs` points into the live ucontext_t (above); the indices
        // are registers of x86-64's gregs array.
        unsafe {
            (*gregs)[REG_RIP as usize] = r.pc as i64;
            (*gregs)[REG_RSP as usize] = r.sp as i64;
            (*gregs)[REG_RBP as usize] = r.fp as i64;
        }
    };
    // SAFETY: as for `set`.
    let saved = unsafe {
        Regs {
            pc: (*gregs)[REG_RIP as usize] as usize,
            sp: (*gregs)[REG_RSP as usize] as usize,
            fp: (*gregs)[REG_RBP as usize] as usize,
        }
    };
    let blob = code_map::find(saved.pc);
    let mem = ThreadMemory {
        low,
        high,
        code: blob.map(|b| (b.start, b.end)),
    };
    let mut walked = None;
    for retry in unwind::callers(saved, blob.as_ref(), &mem).retries() {
        let (regs, below_top) = match retry {
            Retry::Caller(caller) => {
                let Some(pc) = caller_pc(caller.pc) else {
                    continue;
                };
                (Regs { pc, ..caller }, true)
            }
            Retry::Unshifted(regs) => (regs, false),
        };
        // The frame lies above the interrupted sp, in this stack.
        if regs.sp <= saved.sp || regs.sp >= high {
            continue;
        }
        set(regs);
        let skip = below_top as usize;
        // SAFETY: `walk`'s promise holds as for the first walk; `frames +
        // skip` is writable for `max - skip` entries (`max >= 2`).
        let n = unsafe { async_trace::walk(env, frames.add(skip), max - skip as jint, ucontext) };
        if n > 0 {
            walked = Some((n + skip as jint, below_top));
            break;
        }
    }
    set(saved);
    let (n, below_top) = walked?;
    let counter = match blob.map(|b| b.code) {
        Some(Code::Stub { .. }) => &RECOVERED_STUB,
        Some(Code::Compiled { .. }) => &RECOVERED_COMPILED,
        None => &RECOVERED_UNKNOWN,
    };
    counter.fetch_add(1, Ordering::Relaxed);
    if below_top {
        // SAFETY: `frames` is writable for `max >= 2` entries.
        unsafe { *frames = top_frame(blob.as_ref(), code) };
    }
    Some(n)
}

/// No recovery on other architectures.
///
/// # Safety
/// None needed; `unsafe` only to match the x86-64 version.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn from_caller(
    _env: *mut JNIEnv,
    _frames: *mut CallFrame,
    _max: jint,
    _ucontext: *mut c_void,
    _code: jint,
) -> Option<jint> {
    None
}
