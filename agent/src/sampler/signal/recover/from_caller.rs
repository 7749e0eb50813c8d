//! A walk that failed in code without a Java frame of its own (a stub, a
//! compiled method's entry or exit, the interpreter setting up a frame):
//! walked again from each caller the unwinder finds, the signal's registers
//! moved and then restored, stepping through up to a few such frames.
//! Apart: the longest recovery, up to [`MAX_RETRIES`] walks over up to
//! [`MAX_STEPS`] frames.

use super::counts::{RECOVERED_COMPILED, RECOVERED_STUB, RECOVERED_UNKNOWN};
use super::thread_memory::{regs_of, stack_in_use, ThreadMemory};
use super::top_frame::top_frame;
use super::WalkStart;
use crate::code_map::{self, Code};
use crate::sampler::signal::unwind::{self, AdapterRegs, Regs, Retry};
use crate::vm::async_trace::{self, CallFrame};
use crate::vm::hotspot;
use jni_sys::{jint, JNIEnv};
use std::ffi::c_void;
use std::sync::atomic::Ordering;

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
/// As [`walk`](super::walk), with `max >= 2` and `ucontext` the handler's
/// non-null `ucontext_t`.
#[cfg(target_arch = "x86_64")]
pub(super) unsafe fn from_caller(
    env: *mut JNIEnv,
    frames: *mut CallFrame,
    max: jint,
    ucontext: *mut c_void,
    code: jint,
    start: &mut Option<WalkStart>,
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
    let no_frame = CallFrame::new(code, std::ptr::null_mut());
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
            // Each frame lies above the one before, in this stack; a caller
            // at the same sp only where the frame is already gone and the
            // code is on its way back to it (the interpreter's return past
            // `mov rsp, rbx`: sp is the caller's, its pc in r13), so a step
            // always moves the pc or the sp up.
            let same_sp_caller =
                matches!(retry, Retry::Caller(_)) && regs.sp == here.sp && regs.pc != here.pc;
            if (regs.sp <= here.sp && !same_sp_caller) || regs.sp >= high {
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
                *start = Some(WalkStart { regs, first: kept });
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
pub(super) unsafe fn from_caller(
    _env: *mut JNIEnv,
    _frames: *mut CallFrame,
    _max: jint,
    _ucontext: *mut c_void,
    _code: jint,
    _start: &mut Option<WalkStart>,
) -> Option<jint> {
    None
}
