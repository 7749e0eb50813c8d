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
pub fn interpreted_frame_caller(top: Regs, mem: &impl Memory) -> Option<Regs> {
    let caller = via_fp(top, mem)?;
    let sender_sp = mem.word(top.fp.checked_sub(8)?)?;
    (sender_sp >= caller.sp).then_some(Regs {
        sp: sender_sp,
        ..caller
    })
}

/// `pop r13; mov rsp, rbx`: after `leave`, the interpreter removing a frame
/// as its method returns (`InterpreterMacroAssembler::remove_activation`,
/// then a jump to r13), the same bytes on JDK 11 to 25.
const POP_R13_MOV_RSP_RBX: [u8; 5] = [0x41, 0x5d, 0x48, 0x8b, 0xe3];
/// `leave`.
const LEAVE: u8 = 0xc9;
/// JDK 25 clears a byte of the thread between `leave` and `pop r13`:
/// `movb [r15 + disp32], 0`, 8 bytes, these 3 first and 0 last.
const CLEAR_BYTE: [u8; 3] = [0x41, 0xc6, 0x87];
const CLEAR_BYTE_LEN: usize = 8;
/// `jmp r13`, where the return ends (JDK 21 checks the stack watermark
/// between the two).
const JMP_R13: [u8; 3] = [0x41, 0xff, 0xe5];
/// How far from the pc the return's instructions are looked for.
const RETURN_REACH: usize = 48;

/// Where a return's instructions lie, as offsets from its `leave`.
struct ReturnShape {
    /// `pop r13`.
    pop: usize,
    /// `mov rsp, rbx`, and the instruction after it.
    mov: usize,
    after: usize,
}

/// The return whose `leave` is at `at(0)`, if one is there.
fn return_shape(at: &impl Fn(usize) -> Option<u8>) -> Option<ReturnShape> {
    if at(0)? != LEAVE {
        return None;
    }
    let is = |from: usize, bytes: &[u8]| {
        bytes
            .iter()
            .enumerate()
            .all(|(k, &b)| at(from + k) == Some(b))
    };
    let pop = if is(1, &CLEAR_BYTE) && at(CLEAR_BYTE_LEN) == Some(0) {
        1 + CLEAR_BYTE_LEN
    } else {
        1
    };
    is(pop, &POP_R13_MOV_RSP_RBX).then_some(ReturnShape {
        pop,
        mov: pop + 2,
        after: pop + 5,
    })
}

/// The caller of the interpreter caught returning from a method, its frame
/// gone (past `leave`): the return address on top of the stack, then in
/// r13; the caller's sp in rbx, then in rsp, until the jump.
pub(super) fn interpreter_return(top: Regs, regs: AdapterRegs, mem: &impl Memory) -> Option<Regs> {
    if regs == AdapterRegs::default() {
        return None;
    }
    // The `leave` at most RETURN_REACH bytes back, and its shape.
    let (back, shape) = (0..=RETURN_REACH).find_map(|b| {
        let from = top.pc.checked_sub(b)?;
        let shape = return_shape(&|k: usize| mem.byte(from.checked_add(k)?))?;
        Some((b, shape))
    })?;
    match back {
        // At `leave`: the frame is whole.
        0 => None,
        // Past `leave`, up to `pop r13`: the return address on top.
        b if b <= shape.pop && (b == 1 || b == shape.pop) => Some(Regs {
            pc: mem.word(top.sp)?,
            sp: regs.rbx,
            fp: top.fp,
        }),
        // At `mov rsp, rbx`.
        b if b == shape.mov => Some(Regs {
            pc: regs.r13,
            sp: regs.rbx,
            fp: top.fp,
        }),
        // Past it, up to the `jmp r13`.
        b if b >= shape.after => {
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
        // Inside an instruction: not a boundary.
        _ => None,
    }
}
