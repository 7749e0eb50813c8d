//! The first recovery tried: a compiled frame whose sp an intrinsic moved
//! and saved on top of the stack (C2's `String.indexOf`), walked from the
//! saved sp before AsyncGetCallTrace is given the moved one. Apart: its own
//! rule ([`unwind::saved_sp`]), tried before the first walk, not after it
//! fails.

use super::counts::RECOVERED_SAVED_SP;
use super::thread_memory::{regs_of, stack_in_use, ThreadMemory};
use super::WalkStart;
use crate::code_map;
use crate::sampler::signal::unwind;
use crate::vm::async_trace::{self, CallFrame};
use jni_sys::{jint, JNIEnv};
use std::ffi::c_void;
use std::sync::atomic::Ordering;

/// The walk of a compiled frame whose sp an intrinsic moved and saved on
/// top of the stack ([`unwind::saved_sp`]: C2's `String.indexOf`), made
/// from the saved sp before AsyncGetCallTrace is given the moved one, which
/// it may walk to a stack the thread does not have rather than fail. None
/// when the pattern is not there (one stack word read, the code map
/// searched only when it is) or the walk from the saved sp fails.
///
/// # Safety
/// As [`walk`](super::walk).
#[cfg(target_arch = "x86_64")]
pub(super) unsafe fn from_saved_sp(
    env: *mut JNIEnv,
    frames: *mut CallFrame,
    max: jint,
    ucontext: *mut c_void,
    start: &mut Option<WalkStart>,
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
    *start = Some(WalkStart {
        regs: frame,
        first: 0,
    });
    Some(n)
}

/// Nothing to do on other architectures.
///
/// # Safety
/// None needed; `unsafe` only to match the x86-64 version.
#[cfg(not(target_arch = "x86_64"))]
pub(super) unsafe fn from_saved_sp(
    _env: *mut JNIEnv,
    _frames: *mut CallFrame,
    _max: jint,
    _ucontext: *mut c_void,
    _start: &mut Option<WalkStart>,
) -> Option<jint> {
    None
}
