//! What every unwinding rule works with: a frame's registers, the two
//! readers (stack words, code bytes), the retries a rule answers, and the
//! x86-64 instructions that make and unmake a frame, which the rules look
//! for. Apart so that each rule's file depends on it and not on another.

/// A frame's registers: where it executes, its stack and frame pointers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Regs {
    pub pc: usize,
    pub sp: usize,
    pub fp: usize,
}

/// The registers that code between frames keeps its caller in, besides the
/// stack: the adapters between interpreted and compiled code and the
/// interpreter's method entry have the return address once popped in rax
/// and the caller's sp (HotSpot's "sender SP") in r13; the interpreter's
/// return has the return address in r13 and the caller's sp in rbx.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdapterRegs {
    pub rax: usize,
    pub r13: usize,
    pub rbx: usize,
}

/// What the rules may read.
pub trait Memory {
    /// The aligned word at `at` of the thread's own stack; None outside it.
    fn word(&self, at: usize) -> Option<usize>;
    /// The code byte at `at`; None outside the interrupted code's blob.
    fn byte(&self, at: usize) -> Option<u8>;
    /// Is `pc` in the VM's generated code (the code cache)?
    fn is_code(&self, pc: usize) -> bool;
}

/// A context to walk again from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retry {
    /// The interrupted frame's caller: the interrupted code becomes a
    /// frame of its own on top.
    Caller(Regs),
    /// The interrupted frame itself, with the stack pointer its frame had
    /// before the code pushed onto the stack or realigned it (an intrinsic
    /// inside a compiled method): AsyncGetCallTrace then walks it in full.
    Unshifted(Regs),
}

/// How far above the interrupted sp a compiled frame's own sp is tried:
/// intrinsics push a few registers and realign the stack by up to 15
/// bytes (C2's `string_indexof` keeps the old sp on the stack).
pub(super) const MAX_SHIFT_WORDS: usize = 12;

/// The retries, the likeliest first.
#[derive(Default, Debug, PartialEq, Eq)]
pub struct Callers {
    pub(super) list: [Option<Retry>; 3 + MAX_SHIFT_WORDS],
}

impl Callers {
    pub(super) fn of<const N: usize>(guesses: [Option<Regs>; N]) -> Self {
        let mut c = Self::default();
        for (slot, g) in c.list.iter_mut().zip(guesses) {
            *slot = g.map(Retry::Caller);
        }
        c
    }

    /// Every retry, in order.
    pub fn retries(&self) -> impl Iterator<Item = Retry> + '_ {
        self.list.iter().flatten().copied()
    }

    /// The callers only, in order.
    #[cfg(test)]
    pub fn iter(&self) -> impl Iterator<Item = Regs> + '_ {
        self.retries().filter_map(|r| match r {
            Retry::Caller(c) => Some(c),
            Retry::Unshifted(_) => None,
        })
    }
}

/// `ret` (also the end of `leave; ret`).
pub(super) const RET: u8 = 0xc3;
pub(super) const PUSH_RBP: u8 = 0x55;
pub(super) const POP_RBP: u8 = 0x5d;
/// `push rbp; mov rbp, rsp`: MacroAssembler::enter, how most stubs begin.
/// HotSpot's assembler encodes the move as `mov r64, r/m64` (`48 8b ec`:
/// every C1 runtime stub, `counter_overflow` among them, begins so); a C
/// compiler's `48 89 e5` is the same instruction, accepted too.
const ENTERS: [[u8; 4]; 2] = [[0x55, 0x48, 0x8b, 0xec], [0x55, 0x48, 0x89, 0xe5]];

/// Does the code read by `at` (offsets from the blob's start) begin with `enter`?
pub(super) fn begins_with_enter(at: impl Fn(usize) -> Option<u8>) -> bool {
    ENTERS
        .iter()
        .any(|enter| enter.iter().enumerate().all(|(k, &b)| at(k) == Some(b)))
}
