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
//! Memory read by a recovery: words of the thread's own stack (inside its
//! bounds as HotSpot has them) and bytes of the interrupted code's blob (code
//! cache memory, committed for the VM's life), each checked before it is
//! read, so no read can fault. AsyncGetCallTrace checks each frame it is given
//! before walking it (`safe_for_sender`), and a candidate caller is given
//! only if its pc lies in known code and its sp above the interrupted one.
//!
//! Here: the walk the handler calls, and what it keeps of a failed one for
//! `PROFRJ_WALK_DEBUG`. Apart, each way of recovering (`saved_sp.rs`,
//! `in_vm.rs`, `from_caller.rs`), what they share (`thread_memory.rs`, the
//! only memory they read; `top_frame.rs`, the frame put over the callers)
//! and their counts (`counts.rs`).

mod counts;
mod from_caller;
mod in_vm;
mod saved_sp;
pub(super) mod thread_memory;
mod top_frame;

pub use counts::{recovered_counts, Recovered};

use super::diag;
use super::unwind::{self, Memory, Regs};
use crate::code_map::{self, Code};
use crate::vm::async_trace::{
    self, CallFrame, NOT_WALKABLE_JAVA, NOT_WALKABLE_NOT_JAVA, UNKNOWN_JAVA, UNKNOWN_NOT_JAVA,
};
use crate::vm::hotspot;
use from_caller::from_caller;
use in_vm::in_vm;
use jni_sys::{jint, JNIEnv};
use saved_sp::from_saved_sp;
use std::ffi::c_void;
use thread_memory::{stack_in_use, ThreadMemory};

/// Where a recovered walk walked from: the registers AsyncGetCallTrace was
/// given and the first of the frames it wrote (those above are the frames
/// a recovery put on top). None after a walk from the signal's context or
/// the thread's own anchor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WalkStart {
    pub regs: Regs,
    pub first: usize,
}

/// Walks the interrupted thread's stack into `frames` (top first, at most
/// `max`), recovering as above, and says in `start` where a recovery walked
/// from. Returns the number of frames, or a negative `ticks_*` code.
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
    start: &mut Option<WalkStart>,
) -> jint {
    // SAFETY: the caller's promise.
    let n = unsafe { walk_and_recover(env, frames, max, ucontext, start) };
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
    start: &mut Option<WalkStart>,
) -> jint {
    // SAFETY: the caller's promise.
    if let Some(n) = unsafe { from_saved_sp(env, frames, max, ucontext, start) } {
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
    unsafe { from_caller(env, frames, max, ucontext, code, start) }.unwrap_or(code)
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
