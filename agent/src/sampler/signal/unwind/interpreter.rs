//! The rules for the interpreter: a frame being built at a method's entry
//! (its caller's sp saved below fp) and a frame removed as its method
//! returns (the caller in r13 and rbx). Apart: the interpreter keeps its
//! caller in ways no other code does.

use super::frame::{AdapterRegs, Memory, Regs};
use super::links::via_fp;

/// The caller of an interpreter frame being built (the method entry's
/// `generate_fixed_frame`, past `push rax; enter; push r13`): the return
/// address above fp, the caller's own sp (HotSpot's "sender SP", which the
/// entry got in r13) in the word below fp. A compiled caller that reached the
/// interpreter through a c2i adapter has its frame at that sp, above the
/// arguments the adapter laid out, so `fp + 16` would not do for it.
pub(super) fn interpreted_frame_caller(top: Regs, mem: &impl Memory) -> Option<Regs> {
    let caller = via_fp(top, mem)?;
    let sender_sp = mem.word(top.fp.checked_sub(8)?)?;
    (sender_sp >= caller.sp).then_some(Regs {
        sp: sender_sp,
        ..caller
    })
}

/// `leave; pop r13; mov rsp, rbx`: the interpreter removing a frame as its
/// method returns (`InterpreterMacroAssembler::remove_activation`, then a
/// jump to r13), the same bytes on JDK 11 to 25.
const INTERPRETER_RETURN: [u8; 6] = [0xc9, 0x41, 0x5d, 0x48, 0x8b, 0xe3];
/// `jmp r13`, where the return ends (JDK 21 checks the stack watermark
/// between the two).
const JMP_R13: [u8; 3] = [0x41, 0xff, 0xe5];
/// How far from the pc the return's instructions are looked for.
const RETURN_REACH: usize = 32;

/// The caller of the interpreter caught returning from a method, its frame
/// gone (past `leave`): the return address on top of the stack, then in
/// r13; the caller's sp in rbx, then in rsp, until the jump.
pub(super) fn interpreter_return(top: Regs, regs: AdapterRegs, mem: &impl Memory) -> Option<Regs> {
    if regs == AdapterRegs::default() {
        return None;
    }
    let at = |k: usize| mem.byte(top.pc.checked_sub(RETURN_REACH)?.checked_add(k)?);
    // Where the sequence begins, as an offset back from the pc.
    let back = (0..=RETURN_REACH).find(|&b| {
        INTERPRETER_RETURN
            .iter()
            .enumerate()
            .all(|(k, &byte)| at(RETURN_REACH - b + k) == Some(byte))
    })?;
    match back {
        // At `leave`: the frame is whole.
        0 => None,
        // At `pop r13`: the return address on top.
        1 => Some(Regs {
            pc: mem.word(top.sp)?,
            sp: regs.rbx,
            fp: top.fp,
        }),
        // At `mov rsp, rbx`.
        3 => Some(Regs {
            pc: regs.r13,
            sp: regs.rbx,
            fp: top.fp,
        }),
        // Inside `pop r13` or `mov rsp, rbx`: not an instruction boundary.
        2 | 4 | 5 => None,
        // Past it, up to the `jmp r13`.
        _ => {
            let jmp_ahead = (0..RETURN_REACH).find(|&k| {
                JMP_R13
                    .iter()
                    .enumerate()
                    .all(|(i, &byte)| mem.byte(top.pc + k + i) == Some(byte))
            });
            jmp_ahead.is_some().then_some(Regs {
                pc: regs.r13,
                sp: top.sp,
                fp: top.fp,
            })
        }
    }
}
