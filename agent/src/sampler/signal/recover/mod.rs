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

use super::diag;
use super::unwind::{self, AdapterRegs, Memory, Regs, Retry};
use crate::code_map::{self, Blob, Code};
use crate::vm::async_trace::{
    self, CallFrame, NOT_WALKABLE_JAVA, NOT_WALKABLE_NOT_JAVA, UNKNOWN_JAVA, UNKNOWN_NOT_JAVA,
};
use crate::vm::async_trace::{NATIVE_CODE_BCI, STUB_FRAME_BCI};
use crate::vm::hotspot;
use jni_sys::{jint, JNIEnv};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering};

/// `bci` of a compiled method's frame recovered at its entry or exit: no
/// bytecode index is known there.
pub const NO_BCI: jint = -1;

/// Walks whose top was recovered, by what the top was.
static RECOVERED_STUB: AtomicU64 = AtomicU64::new(0);
static RECOVERED_COMPILED: AtomicU64 = AtomicU64::new(0);
static RECOVERED_UNKNOWN: AtomicU64 = AtomicU64::new(0);
/// Walks of threads in the VM made from their anchor's frame.
static RECOVERED_VM: AtomicU64 = AtomicU64::new(0);
/// Walks of compiled frames made from the sp an intrinsic saved.
static RECOVERED_SAVED_SP: AtomicU64 = AtomicU64::new(0);

/// Walks recovered so far, by what the thread was in.
#[derive(Clone, Copy, Debug, Default)]
pub struct Recovered {
    pub stub: u64,
    pub compiled: u64,
    pub unknown: u64,
    pub vm: u64,
    pub saved_sp: u64,
}

pub fn recovered_counts() -> Recovered {
    Recovered {
        stub: RECOVERED_STUB.load(Ordering::Relaxed),
        compiled: RECOVERED_COMPILED.load(Ordering::Relaxed),
        unknown: RECOVERED_UNKNOWN.load(Ordering::Relaxed),
        vm: RECOVERED_VM.load(Ordering::Relaxed),
        saved_sp: RECOVERED_SAVED_SP.load(Ordering::Relaxed),
    }
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
    // SAFETY: the caller's promise.
    let n = unsafe { walk_and_recover(env, frames, max, ucontext) };
    if n <= 0 && diag::on() {
        // SAFETY: the caller's promise.
        unsafe { note_failure(env, n, ucontext) };
    }
    n
}

/// [`walk`] without the debugging record.
///
/// # Safety
/// As [`walk`].
unsafe fn walk_and_recover(
    env: *mut JNIEnv,
    frames: *mut CallFrame,
    max: jint,
    ucontext: *mut c_void,
) -> jint {
    // SAFETY: the caller's promise.
    if let Some(n) = unsafe { from_saved_sp(env, frames, max, ucontext) } {
        return n;
    }
    // SAFETY: the caller's promise is `async_trace::walk`'s.
    let code = unsafe { async_trace::walk(env, frames, max, ucontext) };
    if code == UNKNOWN_NOT_JAVA || code == NOT_WALKABLE_NOT_JAVA {
        // SAFETY: the caller's promise.
        return unsafe { in_vm(env, frames, max, ucontext, code) };
    }
    if (code != UNKNOWN_JAVA && code != NOT_WALKABLE_JAVA) || max < 2 || ucontext.is_null() {
        return code;
    }
    // SAFETY: the caller's promise, with `max >= 2` and a non-null
    // `ucontext` (checked above).
    unsafe { from_caller(env, frames, max, ucontext, code) }.unwrap_or(code)
}

/// The walk of a compiled frame whose sp an intrinsic moved and saved on
/// top of the stack ([`unwind::saved_sp`]: C2's `String.indexOf`), made
/// from the saved sp before AsyncGetCallTrace is given the moved one, which
/// it may walk to a stack the thread does not have rather than fail. None
/// when the pattern is not there (one stack word read, the code map
/// searched only when it is) or the walk from the saved sp fails.
///
/// # Safety
/// As [`walk`].
#[cfg(target_arch = "x86_64")]
unsafe fn from_saved_sp(
    env: *mut JNIEnv,
    frames: *mut CallFrame,
    max: jint,
    ucontext: *mut c_void,
) -> Option<jint> {
    use libc::REG_RSP;
    if ucontext.is_null() {
        return None;
    }
    // SAFETY: `env` is the calling thread's own JNIEnv and `ucontext` the
    // handler's (the caller's promise).
    let (low, high) = unsafe { stack_in_use(env, ucontext) }?;
    let uc = ucontext as *mut libc::ucontext_t;
    // SAFETY: the kernel's ucontext_t for this signal (non-null, checked
    // above), this handler's alone until it returns; no reference is made:
    // AsyncGetCallTrace reads it between our writes.
    let gregs = unsafe { std::ptr::addr_of_mut!((*uc).uc_mcontext.gregs) };
    // SAFETY: as above.
    let top = unsafe { regs_of(gregs) };
    let stack = ThreadMemory {
        low,
        high,
        code: None,
    };
    // The cheap test first, before the code map is searched.
    unwind::saved_sp_word(top, &stack)?;
    let blob = code_map::find(top.pc)?;
    let mem = ThreadMemory {
        code: Some((blob.start, blob.end)),
        ..stack
    };
    let frame = unwind::saved_sp(top, &blob, &mem)?;
    // SAFETY: as above.
    unsafe { (*gregs)[REG_RSP as usize] = frame.sp as i64 };
    // SAFETY: `walk`'s promise holds as for the first walk.
    let n = unsafe { async_trace::walk(env, frames, max, ucontext) };
    // SAFETY: as above; the context as the kernel gave it.
    unsafe { (*gregs)[REG_RSP as usize] = top.sp as i64 };
    if n <= 0 {
        return None;
    }
    RECOVERED_SAVED_SP.fetch_add(1, Ordering::Relaxed);
    Some(n)
}

/// The pc, sp and fp of a signal's context.
///
/// # Safety
/// `gregs` points into the live ucontext_t of the signal being handled.
#[cfg(target_arch = "x86_64")]
unsafe fn regs_of(gregs: *const [libc::greg_t; 23]) -> Regs {
    use libc::{REG_RBP, REG_RIP, REG_RSP};
    // SAFETY: the caller's promise; the indices are registers of x86-64's
    // gregs array.
    unsafe {
        Regs {
            pc: (*gregs)[REG_RIP as usize] as usize,
            sp: (*gregs)[REG_RSP as usize] as usize,
            fp: (*gregs)[REG_RBP as usize] as usize,
        }
    }
}

/// Nothing to do on other architectures.
///
/// # Safety
/// None needed; `unsafe` only to match the x86-64 version.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn from_saved_sp(
    _env: *mut JNIEnv,
    _frames: *mut CallFrame,
    _max: jint,
    _ucontext: *mut c_void,
) -> Option<jint> {
    None
}

/// A thread in the VM's own code whose walk failed: its anchor (the last
/// Java frame, which AsyncGetCallTrace walks from) is not walkable. Two
/// cases are mended, the way HotSpot itself would see the frame:
/// - the VM was called from the interpreter, and the anchor has the frame's
///   sp but not yet its pc, which HotSpot fills in only when it walks the
///   stack itself (`JavaFrameAnchor::make_walkable`: the return address
///   below sp);
/// - the anchor is in a runtime stub whose frame HotSpot never considers
///   complete (C1's `counter_overflow`, C2's `_new_instance_Java`, say),
///   which AsyncGetCallTrace will not walk through: the stub's frame pointer
///   or the frame its first instructions build gives its caller, and the
///   walk starts there, under a frame naming the stub.
///
/// The anchor is set for the walk and put back after. Only in the VM: the
/// thread then holds off safepoints and handshakes, so no other thread
/// reads its anchor meanwhile (in native code, a GC could).
///
/// # Safety
/// As [`walk`].
unsafe fn in_vm(
    env: *mut JNIEnv,
    frames: *mut CallFrame,
    max: jint,
    ucontext: *mut c_void,
    code: jint,
) -> jint {
    // SAFETY: `env` is the calling thread's (the caller's promise).
    let Some(thread) = (unsafe { hotspot::OwnThread::of(env) }) else {
        return code;
    };
    // SAFETY: as above.
    let Some((low, high)) = (unsafe { stack_in_use(env, ucontext) }) else {
        return code;
    };
    if thread.state() != hotspot::THREAD_IN_VM || max < 2 {
        return code;
    }
    let saved = thread.anchor();
    if saved.sp == 0 {
        // No Java frame on this thread's stack at all.
        return 0;
    }
    let in_code = |pc: usize| code_map::find(pc).is_some() || hotspot::in_code_cache(pc);
    let stack = ThreadMemory {
        low,
        high,
        code: None,
    };
    // The anchor's frame, made walkable.
    let mut frame = saved;
    if frame.pc == 0 {
        let Some(pc) = stack
            .word(saved.sp.wrapping_sub(8))
            .filter(|&pc| in_code(pc))
        else {
            return code;
        };
        frame.pc = pc;
        // SAFETY: the caller's promise.
        let n =
            unsafe { walk_from_anchor(&thread, saved, frame, None, env, frames, max, ucontext) };
        if n > 0 {
            return n;
        }
    }
    // The anchor's frame is a stub's: walk from the stub's caller.
    let Some(stub) = code_map::find(frame.pc).filter(|b| matches!(b.code, Code::Stub { .. }))
    else {
        return code;
    };
    let mem = ThreadMemory {
        code: Some((stub.start, stub.end)),
        ..stack
    };
    let regs = Regs {
        pc: frame.pc,
        sp: frame.sp,
        fp: frame.fp,
    };
    let Some(caller) =
        unwind::stub_caller(regs, &stub, &mem).filter(|c| in_code(c.pc) && c.sp > frame.sp)
    else {
        return code;
    };
    let caller = hotspot::Anchor {
        pc: caller.pc,
        sp: caller.sp,
        fp: caller.fp,
    };
    let top = top_frame(Some(&stub), frame.pc, code);
    // SAFETY: the caller's promise.
    let n = unsafe {
        walk_from_anchor(
            &thread,
            saved,
            caller,
            Some(top),
            env,
            frames,
            max,
            ucontext,
        )
    };
    if n > 0 {
        n
    } else {
        code
    }
}

/// AsyncGetCallTrace with the thread's anchor set to `from` (then back to
/// `saved`), under `top` if given; counts a walk that succeeds.
///
/// # Safety
/// As [`walk`], with `max >= 2`; the thread in the VM ([`in_vm`]'s checks).
#[allow(clippy::too_many_arguments)]
unsafe fn walk_from_anchor(
    thread: &hotspot::OwnThread,
    saved: hotspot::Anchor,
    from: hotspot::Anchor,
    top: Option<CallFrame>,
    env: *mut JNIEnv,
    frames: *mut CallFrame,
    max: jint,
    ucontext: *mut c_void,
) -> jint {
    let skip = top.is_some() as usize;
    // SAFETY: in the handler, the thread in the VM (the caller's promise).
    unsafe { thread.set_anchor(from) };
    // SAFETY: the caller's promise is `async_trace::walk`'s; `frames + skip`
    // is writable for `max - skip` entries (`max >= 2`).
    let n = unsafe { async_trace::walk(env, frames.add(skip), max - skip as jint, ucontext) };
    // SAFETY: as above; the anchor as it was.
    unsafe { thread.set_anchor(saved) };
    if n <= 0 {
        return n;
    }
    RECOVERED_VM.fetch_add(1, Ordering::Relaxed);
    if let Some(top) = top {
        // SAFETY: `frames` is writable for `max >= 2` entries.
        unsafe { *frames = top };
    }
    n + skip as jint
}

/// The part of this thread's stack that is certainly mapped: from the
/// handler's own frame (or, on an alternate signal stack, the interrupted
/// sp) up to the stack's base. Not the whole stack as HotSpot bounds it:
/// its lowest pages are guard zones (red, yellow, reserved), protected, and
/// a word read there (from a frame pointer that holds some other number,
/// say) would fault, and a fault in this handler ends the JVM.
///
/// # Safety
/// In the signal handler: `env` is this thread's JNIEnv; `ucontext` null or
/// the handler's.
unsafe fn stack_in_use(env: *mut JNIEnv, ucontext: *mut c_void) -> Option<(usize, usize)> {
    // SAFETY: the caller's promise.
    let (low, high) = unsafe { hotspot::stack_bounds(env) }?;
    let here = std::hint::black_box(&low) as *const usize as usize;
    let from = if (low..high).contains(&here) {
        here
    } else {
        interrupted_sp(ucontext).filter(|sp| (low..high).contains(sp))?
    };
    Some((from, high))
}

/// The interrupted stack pointer, from the handler's `ucontext` (null: none).
#[cfg(target_arch = "x86_64")]
fn interrupted_sp(ucontext: *mut c_void) -> Option<usize> {
    let uc = ucontext as *const libc::ucontext_t;
    // SAFETY: null or the kernel's ucontext_t for this signal (the callers'
    // promise, `stack_in_use`'s); read only.
    (!uc.is_null()).then(|| unsafe { (*uc).uc_mcontext.gregs[libc::REG_RSP as usize] } as usize)
}

#[cfg(not(target_arch = "x86_64"))]
fn interrupted_sp(_ucontext: *mut c_void) -> Option<usize> {
    None
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
        // SAFETY: an aligned word of this thread's own stack between the
        // handler's frame and the base (`stack_in_use`): mapped, and written
        // only by this thread, which is running this handler. Volatile:
        // memory of other frames, read as the machine has it.
        inside.then(|| unsafe { std::ptr::read_volatile(at as *const usize) })
    }

    fn is_code(&self, pc: usize) -> bool {
        hotspot::in_code_cache(pc)
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

/// The frame that stands for code without a Java frame of its own (at `pc`,
/// in `blob`) over its callers.
fn top_frame(blob: Option<&Blob>, pc: usize, code: jint) -> CallFrame {
    match blob.map(|b| b.code) {
        Some(Code::Stub { name, .. }) => CallFrame {
            bci: STUB_FRAME_BCI,
            method: name as usize as jni_sys::jmethodID,
        },
        Some(Code::Compiled { method }) => CallFrame {
            bci: NO_BCI,
            method: method as jni_sys::jmethodID,
        },
        // The VM's or a library's own code, named by its library later.
        None if !hotspot::in_code_cache(pc) => CallFrame {
            bci: NATIVE_CODE_BCI,
            method: pc as jni_sys::jmethodID,
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

/// The most AsyncGetCallTrace calls one sample's recovery makes (each that
/// fails costs a few microseconds of the interrupted thread's time).
const MAX_RETRIES: usize = 16;

/// How many frames of code without a Java frame of its own (VM code, a
/// stub, a compiled method's entry) a walk steps through to reach one
/// AsyncGetCallTrace walks from (VM code called by the nmethod entry
/// barrier stub called by a method's prologue takes three).
const MAX_STEPS: usize = 3;

/// The retry: each candidate in turn, until AsyncGetCallTrace walks; when
/// none walks and a candidate caller is itself in generated code, that
/// caller is unwound in turn (up to [`MAX_STEPS`] frames), each frame
/// stepped through kept as a frame of the sample.
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
    use libc::{REG_R13, REG_RAX, REG_RBP, REG_RBX, REG_RIP, REG_RSP};
    // SAFETY: `env` is the calling thread's own JNIEnv and `ucontext` the
    // handler's (the caller's promise).
    let (low, high) = unsafe { stack_in_use(env, ucontext) }?;
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
    let saved = unsafe { regs_of(gregs) };
    // SAFETY: as for `set`.
    let adapter = unsafe {
        AdapterRegs {
            rax: (*gregs)[REG_RAX as usize] as usize,
            r13: (*gregs)[REG_R13 as usize] as usize,
            rbx: (*gregs)[REG_RBX as usize] as usize,
        }
    };
    let first = code_map::find(saved.pc);
    let no_frame = CallFrame {
        bci: code,
        method: std::ptr::null_mut(),
    };
    // The frames stepped through, top first (`tops[k]` stands for step k).
    let mut tops = [no_frame; MAX_STEPS];
    let (mut here, mut blob) = (saved, first);
    let mut walked = None;
    let mut retries = 0;
    // `max >= 2`: room for one top frame and a walk.
    let steps = MAX_STEPS.min(max as usize - 1);
    'steps: for (step, top) in tops.iter_mut().enumerate().take(steps) {
        *top = top_frame(blob.as_ref(), here.pc, code);
        let mem = ThreadMemory {
            low,
            high,
            code: blob.map(|b| (b.start, b.end)),
        };
        let mut next = None;
        // The adapters' registers belong to the interrupted frame only.
        let adapter = if step == 0 {
            adapter
        } else {
            AdapterRegs::default()
        };
        for retry in unwind::callers(here, adapter, blob.as_ref(), &mem).retries() {
            // Frames written before the walk's: the steps so far, and this
            // one unless the retry walks this very frame.
            let (regs, kept) = match retry {
                Retry::Caller(caller) => {
                    let Some(pc) = caller_pc(caller.pc) else {
                        continue;
                    };
                    (Regs { pc, ..caller }, step + 1)
                }
                Retry::Unshifted(regs) => (regs, step),
            };
            // Each frame lies above the one before, in this stack.
            if regs.sp <= here.sp || regs.sp >= high {
                continue;
            }
            retries += 1;
            if retries > MAX_RETRIES {
                break 'steps;
            }
            set(regs);
            // SAFETY: `walk`'s promise holds as for the first walk; `kept <=
            // step + 1 < max`, so `frames + kept` is writable for `max - kept`.
            let n =
                unsafe { async_trace::walk(env, frames.add(kept), max - kept as jint, ucontext) };
            if n > 0 {
                walked = Some((n, kept));
                break 'steps;
            }
            if let (Retry::Caller(caller), None) = (retry, next) {
                next = code_map::find(caller.pc).map(|b| (caller, b));
            }
        }
        let Some((caller, caller_blob)) = next else {
            break;
        };
        (here, blob) = (caller, Some(caller_blob));
    }
    set(saved);
    let (n, kept) = walked?;
    let counter = match first.map(|b| b.code) {
        Some(Code::Stub { .. }) => &RECOVERED_STUB,
        Some(Code::Compiled { .. }) => &RECOVERED_COMPILED,
        None => &RECOVERED_UNKNOWN,
    };
    counter.fetch_add(1, Ordering::Relaxed);
    for (k, top) in tops.iter().take(kept).enumerate() {
        // SAFETY: `kept < max` (above): slots below it are writable.
        unsafe { *frames.add(k) = *top };
    }
    Some(n + kept as jint)
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

/// Keeps a failed walk's registers, thread state and anchor for
/// `PROFRJ_WALK_DEBUG` ([`diag`]); reads only this thread's stack (bounded)
/// and its own JavaThread's fields.
///
/// # Safety
/// As [`walk`].
unsafe fn note_failure(env: *mut JNIEnv, code: jint, ucontext: *mut c_void) {
    let mut f = diag::Failure {
        code: code as i64,
        state: -1,
        ..Default::default()
    };
    // SAFETY: `env` is the calling thread's and `ucontext` the handler's
    // (the caller's promise).
    let bounds = unsafe { stack_in_use(env, ucontext) };
    let stack = bounds.map(|(low, high)| ThreadMemory {
        low,
        high,
        code: None,
    });
    #[cfg(target_arch = "x86_64")]
    if !ucontext.is_null() {
        use libc::{REG_RBP, REG_RIP, REG_RSP};
        // SAFETY: the kernel's ucontext_t for this signal (the caller's
        // promise), read only.
        let gregs = unsafe { &(*(ucontext as *const libc::ucontext_t)).uc_mcontext.gregs };
        f.pc = gregs[REG_RIP as usize] as usize;
        f.sp = gregs[REG_RSP as usize] as usize;
        f.fp = gregs[REG_RBP as usize] as usize;
        f.top_word = stack.as_ref().and_then(|m| m.word(f.sp)).unwrap_or(0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = ucontext;
    // SAFETY: as above.
    if let Some(thread) = unsafe { hotspot::OwnThread::of(env) } {
        f.state = thread.state() as i64;
        let a = thread.anchor();
        f.anchor_sp = a.sp;
        f.anchor_pc = a.pc;
        f.anchor_fp = a.fp;
        f.below_anchor = stack
            .as_ref()
            .and_then(|m| m.word(a.sp.wrapping_sub(8)))
            .unwrap_or(0);
        let stub = (a.pc != 0)
            .then(|| code_map::find(a.pc))
            .flatten()
            .filter(|b| matches!(b.code, Code::Stub { .. }));
        if let (Some(stub), Some((low, high))) = (stub, bounds) {
            let mem = ThreadMemory {
                low,
                high,
                code: Some((stub.start, stub.end)),
            };
            let regs = Regs {
                pc: a.pc,
                sp: a.sp,
                fp: a.fp,
            };
            if let Some(c) = unwind::stub_caller(regs, &stub, &mem) {
                f.stub_caller_pc = c.pc;
                f.stub_caller_sp = c.sp;
            }
        }
    }
    diag::keep(f);
}
