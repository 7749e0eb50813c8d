//! Where the caller of a frame AsyncGetCallTrace could not walk is, on
//! x86-64: from the code the signal interrupted (a stub, a compiled method's
//! entry or exit, the interpreter) and what that code is known to leave on
//! the stack, the caller's pc, sp and fp. Pure rules over two readers (the
//! thread's stack words and the interrupted code's bytes), so they are
//! tested without a JVM; the handler (`recover.rs`) gives AsyncGetCallTrace
//! each candidate in turn, and it checks the frame before walking it.
//!
//! The shapes are HotSpot's x86-64 code generators' (MacroAssembler's
//! `enter`/`leave`, the compilers' prologue and epilogue, the return poll,
//! the nmethod entry barrier); other architectures get no candidates.

use crate::code_map::{Blob, Code, StubLayout};

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
const MAX_SHIFT_WORDS: usize = 12;

/// The retries, the likeliest first.
#[derive(Default, Debug, PartialEq, Eq)]
pub struct Callers {
    list: [Option<Retry>; 3 + MAX_SHIFT_WORDS],
}

impl Callers {
    fn of<const N: usize>(guesses: [Option<Regs>; N]) -> Self {
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
const RET: u8 = 0xc3;
const PUSH_RBP: u8 = 0x55;
const POP_RBP: u8 = 0x5d;
/// `push rbp; mov rbp, rsp`: MacroAssembler::enter, how most stubs begin.
/// HotSpot's assembler encodes the move as `mov r64, r/m64` (`48 8b ec`:
/// every C1 runtime stub, `counter_overflow` among them, begins so); a C
/// compiler's `48 89 e5` is the same instruction, accepted too.
const ENTERS: [[u8; 4]; 2] = [[0x55, 0x48, 0x8b, 0xec], [0x55, 0x48, 0x89, 0xe5]];

/// Does the code read by `at` (offsets from the blob's start) begin with `enter`?
fn begins_with_enter(at: impl Fn(usize) -> Option<u8>) -> bool {
    ENTERS
        .iter()
        .any(|enter| enter.iter().enumerate().all(|(k, &b)| at(k) == Some(b)))
}

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

/// The caller of a runtime stub stopped in the VM (its frame complete, sp
/// the anchor's): a frame-pointer frame if it begins with `enter` (C1's
/// runtime stubs), else the frame its first instructions build, `[push
/// rbp;] sub rsp, N` (C2's runtime stubs, which then store rbp at the top of
/// their frame).
pub fn stub_caller(anchor: Regs, blob: &Blob, mem: &impl Memory) -> Option<Regs> {
    let at = |k: usize| mem.byte(blob.start + k);
    if begins_with_enter(at) {
        return via_fp(anchor, mem);
    }
    let pushed = at(0) == Some(PUSH_RBP);
    let sub = pushed as usize;
    let n = match (at(sub)?, at(sub + 1)?, at(sub + 2)?) {
        (0x48, 0x83, 0xec) => at(sub + 3)? as usize,
        (0x48, 0x81, 0xec) => {
            u32::from_le_bytes([at(sub + 3)?, at(sub + 4)?, at(sub + 5)?, at(sub + 6)?]) as usize
        }
        _ => return None,
    };
    ret_at(anchor, n.checked_add(if pushed { 8 } else { 0 })?, mem)
}

/// A stub: frameless at its first instruction and its `ret`; past `enter`,
/// a frame-pointer frame.
fn stub(top: Regs, blob: &Blob, mem: &impl Memory) -> Callers {
    let at = |k: usize| mem.byte(top.pc.wrapping_add(k));
    if top.pc == blob.start || at(0) == Some(RET) {
        return Callers::of([ret_at(top, 0, mem), None, None]);
    }
    let enters = begins_with_enter(|k| mem.byte(blob.start + k));
    if enters && top.pc == blob.start + 1 {
        // `push rbp` done, `mov rbp, rsp` not yet.
        return Callers::of([ret_at(top, 8, mem), None, None]);
    }
    if enters {
        return Callers::of([via_fp(top, mem), ret_at(top, 0, mem), None]);
    }
    Callers::of([ret_at(top, 0, mem), via_fp(top, mem), None])
}

/// A compiled method: at its prologue or epilogue the caller is where
/// [`compiled_edge`] says; in its body, the frame itself with sp moved up.
fn compiled(top: Regs, blob: &Blob, mem: &impl Memory) -> Callers {
    compiled_edge(top, blob, mem).unwrap_or_else(|| compiled_body(top, mem))
}

/// A compiled method whose frame is not complete: its prologue (`push rbp;
/// sub rsp, N`, a stack bang before or the entry barrier after), or its
/// epilogue (`add rsp, N; pop rbp`, the return poll, `ret`). None in the
/// body.
fn compiled_edge(top: Regs, blob: &Blob, mem: &impl Memory) -> Option<Callers> {
    let at = |k: isize| mem.byte(top.pc.wrapping_add_signed(k));
    let here = at(0);
    // Nothing pushed yet (before `push rbp`: the inline-cache check, the
    // stack bang), or everything popped (`ret`, after `pop rbp`).
    let bare = ret_at(top, 0, mem);
    // `push rbp` done: the caller's rbp on top, the return address above.
    let pushed = ret_at(top, 8, mem);
    if top.pc == blob.start || here == Some(RET) || here == Some(PUSH_RBP) || is_stack_bang(&at) {
        return Some(Callers::of([bare, None, None]));
    }
    if at(-1) == Some(PUSH_RBP) || here == Some(POP_RBP) {
        return Some(Callers::of([pushed, None, None]));
    }
    if at(-1) == Some(POP_RBP) {
        return Some(Callers::of([bare, None, None]));
    }
    if let Some(rest) = epilogue_rest(&at) {
        return Some(Callers::of([rest.caller(top, mem), None, None]));
    }
    if let Some(n) = rbp_store_offset(&at) {
        // C2 without a stack bang: `sub rsp, N; mov [rsp + N], rbp`, at the mov.
        return Some(Callers::of([
            ret_at(top, n + 8, mem).map(|r| Regs { fp: top.fp, ..r }),
            None,
            None,
        ]));
    }
    // Past `push rbp; sub rsp, N` (the nmethod entry barrier of JDK 21+
    // comes there): the whole frame is built.
    if is_entry_barrier(&at) {
        let built = frame_built(&at).and_then(|n| ret_at(top, n.checked_add(8)?, mem));
        return Some(Callers::of([built, None, None]));
    }
    None
}

/// In a compiled method's body the frame is whole, but code inside it (an
/// intrinsic) may have moved sp: the frame itself with sp moved up, then
/// the prologue's shapes, in case it is there.
fn compiled_body(top: Regs, mem: &impl Memory) -> Callers {
    let at = |k: isize| mem.byte(top.pc.wrapping_add_signed(k));
    let bare = ret_at(top, 0, mem);
    let pushed = ret_at(top, 8, mem);
    let built = frame_built(&at).and_then(|n| ret_at(top, n.checked_add(8)?, mem));
    let mut c = Callers::default();
    for (k, slot) in c.list.iter_mut().take(MAX_SHIFT_WORDS).enumerate() {
        let sp = top.sp.wrapping_add(8 * (k + 1));
        *slot = mem.word(sp).map(|_| Retry::Unshifted(Regs { sp, ..top }));
    }
    let tail = &mut c.list[MAX_SHIFT_WORDS..];
    for (slot, g) in tail.iter_mut().zip([bare, pushed, built]) {
        *slot = g.map(Retry::Caller);
    }
    c
}

/// The frame's own registers when the signal found a compiled method's
/// body inside an intrinsic that moved sp after saving it on top of the
/// stack: C2's `string_indexof` (`String.indexOf(String)`, and the
/// Latin-1/UTF-16 variants) begins `mov rcx, rsp`, may move sp down to copy
/// a short string that ends near a page boundary, pushes its operands and
/// then rcx, searches, and ends with `pop rsp`. HotSpot's frame code does
/// not know this: AsyncGetCallTrace takes the caller from the moved sp, and
/// either fails or reads a stale word below the frame as the return address
/// and walks a stack the thread does not have (JDK 21 and 25, where the
/// method is compiled on its own: `String.indexOf` under
/// `System.nanoTime`, a call the loop made before, in 12% (JDK 21) to 26%
/// (JDK 25) of its samples). The word on top of the stack is then a stack address
/// 1 to [`MAX_SHIFT_WORDS`] words above sp and, as a compiled frame's sp
/// always is on x86-64, 16-byte aligned: that is the frame's sp. None
/// outside a compiled method's body (in its prologue or epilogue the word
/// on top may be the caller's frame pointer, a stack address just above).
pub fn saved_sp(top: Regs, blob: &Blob, mem: &impl Memory) -> Option<Regs> {
    if !cfg!(target_arch = "x86_64") || !matches!(blob.code, Code::Compiled { .. }) {
        return None;
    }
    let saved = saved_sp_word(top, mem)?;
    // The frame's own sp lies inside this stack too (checked last: the
    // prologue's reading is the costliest).
    (mem.word(saved).is_some() && compiled_edge(top, blob, mem).is_none())
        .then_some(Regs { sp: saved, ..top })
}

/// [`saved_sp`]'s first test, with no code looked at (one stack word): the
/// word on top of the stack, if it is a 16-byte-aligned address 1 to
/// [`MAX_SHIFT_WORDS`] words above sp.
pub fn saved_sp_word(top: Regs, mem: &impl Memory) -> Option<usize> {
    let saved = mem.word(top.sp)?;
    let above = saved.checked_sub(top.sp)?;
    ((8..=8 * MAX_SHIFT_WORDS).contains(&above) && saved.is_multiple_of(16)).then_some(saved)
}

/// `mov [rsp + disp8 / disp32], rbp`: its displacement.
fn rbp_store_offset(at: &impl Fn(isize) -> Option<u8>) -> Option<usize> {
    match (at(0)?, at(1)?, at(2)?, at(3)?) {
        (0x48, 0x89, 0x6c, 0x24) => Some(at(4)? as usize),
        (0x48, 0x89, 0xac, 0x24) => {
            Some(u32::from_le_bytes([at(4)?, at(5)?, at(6)?, at(7)?]) as usize)
        }
        _ => None,
    }
}

/// `cmp dword [r15 + disp8], imm32` (the nmethod entry barrier), or the
/// `jne` right after it.
fn is_entry_barrier(at: &impl Fn(isize) -> Option<u8>) -> bool {
    let cmp_at =
        |k: isize| at(k) == Some(0x41) && at(k + 1) == Some(0x81) && at(k + 2) == Some(0x7f);
    cmp_at(0) || (cmp_at(-8) && matches!(at(0), Some(0x0f | 0x75)))
}

/// The `N` of a `push rbp; sub rsp, N` that ends at most 24 bytes before
/// the interrupted instruction (alignment padding and the entry barrier's
/// compare may come between).
fn frame_built(at: &impl Fn(isize) -> Option<u8>) -> Option<usize> {
    for end in 0..=24isize {
        let imm8 = (at(-end - 5), at(-end - 4), at(-end - 3), at(-end - 2));
        if imm8 == (Some(PUSH_RBP), Some(0x48), Some(0x83), Some(0xec)) {
            return Some(at(-end - 1)? as usize);
        }
        let imm32 = (at(-end - 8), at(-end - 7), at(-end - 6), at(-end - 5));
        if imm32 == (Some(PUSH_RBP), Some(0x48), Some(0x81), Some(0xec)) {
            let n = [at(-end - 4)?, at(-end - 3)?, at(-end - 2)?, at(-end - 1)?];
            return Some(u32::from_le_bytes(n) as usize);
        }
    }
    None
}

/// `mov [rsp + disp32], eax`: the stack bang, before anything is pushed.
fn is_stack_bang(at: &impl Fn(isize) -> Option<u8>) -> bool {
    at(0) == Some(0x89) && at(1) == Some(0x84) && at(2) == Some(0x24)
}

/// What is left of an epilogue from the interrupted instruction on.
#[derive(Debug, PartialEq, Eq)]
enum EpilogueRest {
    /// `add rsp, N` still to run, then `pop rbp`.
    AddThenPop(usize),
    /// Only the return poll and `ret`: the frame is gone.
    Gone,
}

impl EpilogueRest {
    fn caller(&self, top: Regs, mem: &impl Memory) -> Option<Regs> {
        match *self {
            EpilogueRest::AddThenPop(n) => ret_at(top, n.checked_add(8)?, mem),
            EpilogueRest::Gone => ret_at(top, 0, mem),
        }
    }
}

/// Reads forward from the interrupted instruction through the instructions
/// an epilogue is made of, to its `ret`. None if anything else comes first.
fn epilogue_rest(at: &impl Fn(isize) -> Option<u8>) -> Option<EpilogueRest> {
    let mut k = 0isize;
    let mut add = None;
    for _ in 0..8 {
        let b = |i: isize| at(k + i);
        match (b(0)?, b(1)?, b(2)?) {
            (RET, _, _) => return Some(EpilogueRest::Gone),
            // add rsp, imm8 / imm32
            (0x48, 0x83, 0xc4) if add.is_none() => {
                add = Some(b(3)? as usize);
                k += 4;
            }
            (0x48, 0x81, 0xc4) if add.is_none() => {
                add = Some(u32::from_le_bytes([b(3)?, b(4)?, b(5)?, b(6)?]) as usize);
                k += 7;
            }
            // At `pop rbp` itself (no `add` before it here) the caller's
            // rbp is still on top: the caller of this function handles it.
            (POP_RBP, _, _) => return add.map(EpilogueRest::AddThenPop),
            // cmp rsp, [r15 + disp8 / disp32]: the return poll (JDK 16+)
            (0x49, 0x3b, 0x67) if add.is_none() => k += 4,
            (0x49, 0x3b, 0xa7) if add.is_none() => k += 7,
            // mov r10, [r15 + disp8 / disp32]; test [r10], eax: JDK 11's poll
            (0x4d, 0x8b, 0x57) if add.is_none() => k += 4,
            (0x4d, 0x8b, 0x97) if add.is_none() => k += 7,
            (0x41, 0x85, 0x02) if add.is_none() => k += 3,
            // ja rel32 / rel8 to the poll's slow path
            (0x0f, 0x87, _) if add.is_none() => k += 6,
            (0x77, _, _) if add.is_none() => k += 2,
            // vzeroupper
            (0xc5, 0xf8, 0x77) => k += 3,
            _ => return None,
        }
    }
    None
}

/// The caller when its return address is `off` bytes above sp (and, for
/// `off >= 8`, the caller's rbp just below it).
fn ret_at(top: Regs, off: usize, mem: &impl Memory) -> Option<Regs> {
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

/// The caller of an interpreter frame being built (the method entry's
/// `generate_fixed_frame`, past `push rax; enter; push r13`): the return
/// address above fp, the caller's own sp (HotSpot's "sender SP", which the
/// entry got in r13) in the word below fp. A compiled caller that reached the
/// interpreter through a c2i adapter has its frame at that sp, above the
/// arguments the adapter laid out, so `fp + 16` would not do for it.
fn interpreted_frame_caller(top: Regs, mem: &impl Memory) -> Option<Regs> {
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
fn interpreter_return(top: Regs, regs: AdapterRegs, mem: &impl Memory) -> Option<Regs> {
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

/// The caller as code between frames keeps it in registers: the return
/// address in rax, the caller's sp in r13, its fp not yet saved (None when
/// the registers are not known).
fn in_registers(top: Regs, adapter: AdapterRegs) -> Option<Regs> {
    (adapter != AdapterRegs::default()).then_some(Regs {
        pc: adapter.rax,
        sp: adapter.r13,
        fp: top.fp,
    })
}

/// The caller of a frame-pointer frame: saved rbp at fp, return address above.
fn via_fp(top: Regs, mem: &impl Memory) -> Option<Regs> {
    via_fp_returning_at(top, 8, mem)
}

/// The entry barrier stub's frame: `push -1` (a word HotSpot may set when it
/// deoptimises), then `enter`: the return address two words above fp.
fn via_fp_over_cookie(top: Regs, mem: &impl Memory) -> Option<Regs> {
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
fn through_native_frames(top: Regs, mem: &impl Memory) -> Option<Regs> {
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

#[cfg(test)]
mod tests;
