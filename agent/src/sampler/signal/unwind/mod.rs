//! Where the caller of a frame AsyncGetCallTrace could not walk is, on
//! x86-64: from the code the signal interrupted (a stub, a compiled method's
//! entry or exit, the interpreter) and what that code is known to leave on
//! the stack, the caller's pc, sp and fp. Pure rules over two readers (the
//! thread's stack words and the interrupted code's bytes), so they are
//! tested without a JVM; the handler (`recover/`) gives AsyncGetCallTrace
//! each candidate in turn, and it checks the frame before walking it.
//!
//! The shapes are HotSpot's x86-64 code generators' (MacroAssembler's
//! `enter`/`leave`, the compilers' prologue and epilogue, the return poll,
//! the nmethod entry barrier); other architectures get no candidates.
//!
//! Here: which rules apply to the code the signal interrupted. Apart, the
//! rules by the code they know (`stub.rs`, `compiled.rs`, `interpreter.rs`),
//! the ways any frame leads to its caller that they share (`links.rs`), and
//! what they all work with (`frame.rs`: registers, the readers, the retries,
//! the instructions that make and unmake a frame).

mod compiled;
mod frame;
mod interpreter;
mod links;
mod stub;

pub use compiled::{compiled_frame_caller, saved_sp, saved_sp_word};
pub use frame::{AdapterRegs, Memory, Regs, Retry};
pub use interpreter::interpreted_frame_caller;
pub use stub::stub_caller;

use crate::code_map::{Blob, Code, StubLayout};
use compiled::compiled;
use frame::Callers;
use interpreter::interpreter_return;
use links::{in_registers, ret_at, through_native_frames, via_fp, via_fp_over_cookie};
use stub::stub;

/// The caller of `top`, which executes in `blob` (None: code the map does
/// not know).
pub fn callers(top: Regs, adapter: AdapterRegs, blob: Option<&Blob>, mem: &impl Memory) -> Callers {
    if !cfg!(target_arch = "x86_64") {
        return Callers::default();
    }
    let Some(blob) = blob else {
        return Callers::of([ret_at(top, 0, mem), through_native_frames(top, mem)]);
    };
    match blob.code {
        Code::Stub {
            layout: StubLayout::Frameless,
            ..
        } => Callers::of([ret_at(top, 0, mem), None, None]),
        // The interpreter: a frame-pointer frame once `enter` is done, its
        // caller's sp saved just below (see `interpreted_frame_caller`); at a
        // method's entry (before the frame, zeroing the locals) the return
        // address is on top of the stack or, once popped to make room for
        // the locals, in rax, with the caller's sp in r13 (the entry's
        // "sender SP"), as in the adapters.
        Code::Stub {
            layout: StubLayout::Interpreter,
            ..
        } => Callers::of([
            interpreter_return(top, adapter, mem),
            interpreted_frame_caller(top, mem),
            via_fp(top, mem),
            ret_at(top, 0, mem),
            in_registers(top, adapter),
        ]),
        // The i2c and c2i adapters: the return address on top of the stack
        // at entry and once pushed back, in rax while they move arguments.
        Code::Stub {
            layout: StubLayout::Adapter,
            ..
        } => Callers::of([ret_at(top, 0, mem), in_registers(top, adapter), None]),
        Code::Stub {
            layout: StubLayout::EntryBarrier,
            ..
        } => Callers::of([
            via_fp_over_cookie(top, mem),
            via_fp(top, mem),
            ret_at(top, 0, mem),
        ]),
        Code::Stub { .. } => stub(top, blob, mem),
        Code::Compiled { .. } => compiled(top, blob, mem),
    }
}

#[cfg(test)]
mod tests;
