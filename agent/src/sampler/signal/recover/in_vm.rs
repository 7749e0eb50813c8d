//! A thread in the VM's own code whose walk failed: walked again from its
//! anchor made walkable, or from the caller of the runtime stub the anchor
//! is in. Apart: the one recovery that moves the thread's anchor rather
//! than the signal's registers.

use super::counts::RECOVERED_VM;
use super::thread_memory::{stack_in_use, ThreadMemory};
use super::top_frame::top_frame;
use crate::code_map::{self, Code};
use crate::sampler::signal::unwind::{self, Memory, Regs};
use crate::vm::async_trace::{self, CallFrame};
use crate::vm::hotspot;
use jni_sys::{jint, JNIEnv};
use std::ffi::c_void;
use std::sync::atomic::Ordering;

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
/// As [`walk`](super::walk).
pub(super) unsafe fn in_vm(
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
/// As [`walk`](super::walk), with `max >= 2`; the thread in the VM
/// ([`in_vm`]'s checks).
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
