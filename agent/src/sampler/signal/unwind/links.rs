//! The ways any frame leads to its caller, whatever code it is: a return
//! address at a known distance above sp, a frame-pointer frame (or a chain
//! of them through native code), registers that hold the caller. Apart
//! because the rules for stubs, compiled methods and the interpreter each
//! combine them.

use super::frame::{AdapterRegs, Memory, Regs};

/// The caller when its return address is `off` bytes above sp (and, for
/// `off >= 8`, the caller's rbp just below it).
pub(super) fn ret_at(top: Regs, off: usize, mem: &impl Memory) -> Option<Regs> {
    let slot = top.sp.checked_add(off)?;
    let pc = mem.word(slot)?;
    let fp = if off >= 8 {
        mem.word(slot - 8)?
    } else {
        top.fp
    };
    Some(Regs {
        pc,
        sp: slot.checked_add(8)?,
        fp,
    })
}

/// The caller as code between frames keeps it in registers: the return
/// address in rax, the caller's sp in r13, its fp not yet saved (None when
/// the registers are not known).
pub(super) fn in_registers(top: Regs, adapter: AdapterRegs) -> Option<Regs> {
    (adapter != AdapterRegs::default()).then_some(Regs {
        pc: adapter.rax,
        sp: adapter.r13,
        fp: top.fp,
    })
}

/// The caller of a frame-pointer frame: saved rbp at fp, return address above.
pub(super) fn via_fp(top: Regs, mem: &impl Memory) -> Option<Regs> {
    via_fp_returning_at(top, 8, mem)
}

/// The entry barrier stub's frame: `push -1` (a word HotSpot may set when it
/// deoptimises), then `enter`: the return address two words above fp.
pub(super) fn via_fp_over_cookie(top: Regs, mem: &impl Memory) -> Option<Regs> {
    via_fp_returning_at(top, 16, mem)
}

/// The most frames of the VM's own C++ code (or a library's) followed by
/// their frame pointers to reach generated code.
const MAX_NATIVE_FRAMES: usize = 32;

/// The first frame of generated code under native code that keeps frame
/// pointers (HotSpot is built so): rbp's chain followed up the stack until
/// a return address lies in the code cache, whose frame is then the
/// caller's. A thread in the VM's code without a last Java frame set (a
/// compiled method's call of a leaf runtime function, G1's write barrier
/// refining cards, an allocation's slow path after its last Java frame was
/// cleared) has its Java frames there. Each fp must lie above the last, in
/// the stack, so the chain ends.
pub(super) fn through_native_frames(top: Regs, mem: &impl Memory) -> Option<Regs> {
    let mut fp = top.fp;
    let mut above = top.sp;
    for _ in 0..MAX_NATIVE_FRAMES {
        if fp < above || !fp.is_multiple_of(8) {
            return None;
        }
        let ret = mem.word(fp.checked_add(8)?)?;
        let caller_fp = mem.word(fp)?;
        if mem.is_code(ret) {
            return Some(Regs {
                pc: ret,
                sp: fp.checked_add(16)?,
                fp: caller_fp,
            });
        }
        above = fp.checked_add(16)?;
        fp = caller_fp;
    }
    None
}

/// A frame-pointer frame whose return address is `ret` bytes above fp.
fn via_fp_returning_at(top: Regs, ret: usize, mem: &impl Memory) -> Option<Regs> {
    if top.fp < top.sp {
        return None;
    }
    let slot = top.fp.checked_add(ret)?;
    Some(Regs {
        pc: mem.word(slot)?,
        sp: slot.checked_add(8)?,
        fp: mem.word(top.fp)?,
    })
}
