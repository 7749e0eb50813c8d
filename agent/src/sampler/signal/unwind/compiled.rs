//! The rules for compiled methods: at the prologue or epilogue the caller
//! is where the instructions left so far put it; in the body the frame is
//! whole but an intrinsic may have moved sp, which is tried moved back up
//! (and, for C2's `String.indexOf`, read from where it was saved).

use super::frame::{Callers, Memory, Regs, Retry, MAX_SHIFT_WORDS, POP_RBP, PUSH_RBP, RET};
use super::links::ret_at;
use crate::code_map::{Blob, Code};

/// A compiled method: at its prologue or epilogue the caller is where
/// [`compiled_edge`] says; in its body, the frame itself with sp moved up.
pub(super) fn compiled(top: Regs, blob: &Blob, mem: &impl Memory) -> Callers {
    compiled_edge(top, blob, mem).unwrap_or_else(|| compiled_body(top, mem))
}

/// The caller of a compiled method's frame of `frame_words` words (its
/// nmethod's `_frame_size`, the return address and saved rbp included)
/// whose sp is `top.sp`: the return address in the frame's top word, the
/// caller's rbp below it. On the interrupted frame (`interrupted`), where
/// the prologue or epilogue leaves it instead when the frame is not whole.
pub fn compiled_frame_caller(
    top: Regs,
    blob: &Blob,
    frame_words: u32,
    interrupted: bool,
    mem: &impl Memory,
) -> Option<Regs> {
    if interrupted {
        if let Some(edge) = compiled_edge(top, blob, mem) {
            return match edge.list[0] {
                Some(Retry::Caller(c)) => Some(c),
                _ => None,
            };
        }
    }
    let size = (frame_words as usize).checked_mul(8)?;
    ret_at(top, size.checked_sub(8)?, mem)
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
    // Past `push rbp; sub rsp, N` or C2's `sub rsp, N; mov [rsp + N - 8],
    // rbp` (the nmethod entry barrier of JDK 21+ comes there): the whole
    // frame is built.
    if is_entry_barrier(&at) {
        let built = frame_built(&at).and_then(|n| ret_at(top, n, mem));
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
    let built = frame_built(&at).and_then(|n| ret_at(top, n, mem));
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

/// Where the return address lies above sp once a prologue that ends at
/// most 24 bytes before the interrupted instruction (alignment padding and
/// the entry barrier's compare may come between) has built the frame:
/// `push rbp; sub rsp, N` (C1, and C2 with a stack bang) puts it at `N + 8`;
/// C2's `sub rsp, N; mov [rsp + N - 8], rbp` (no stack bang: a leaf or a
/// small frame; JDK 21's megamorphic call targets, 2-4% of their samples
/// lost before this form was known) at `N`. Both leave the caller's rbp
/// in the word below it.
fn frame_built(at: &impl Fn(isize) -> Option<u8>) -> Option<usize> {
    for end in 0..=24isize {
        let imm8 = (at(-end - 5), at(-end - 4), at(-end - 3), at(-end - 2));
        if imm8 == (Some(PUSH_RBP), Some(0x48), Some(0x83), Some(0xec)) {
            return (at(-end - 1)? as usize).checked_add(8);
        }
        let imm32 = (at(-end - 8), at(-end - 7), at(-end - 6), at(-end - 5));
        if imm32 == (Some(PUSH_RBP), Some(0x48), Some(0x81), Some(0xec)) {
            let n = [at(-end - 4)?, at(-end - 3)?, at(-end - 2)?, at(-end - 1)?];
            return (u32::from_le_bytes(n) as usize).checked_add(8);
        }
        if let Some(n) = sub_then_store_rbp(&|k| at(k - end)) {
            return Some(n);
        }
    }
    None
}

/// C2's prologue without `push rbp` ending just before offset 0: `sub rsp,
/// N` (imm8 or imm32) then `mov [rsp + N - 8], rbp` (disp8 or disp32): its
/// `N`, if the store lands in the frame's top word as it must.
fn sub_then_store_rbp(at: &impl Fn(isize) -> Option<u8>) -> Option<usize> {
    // The store: 5 bytes with a disp8, 8 with a disp32.
    let (disp, store_len) = match (at(-5), at(-4), at(-3), at(-2)) {
        (Some(0x48), Some(0x89), Some(0x6c), Some(0x24)) => (at(-1)? as usize, 5),
        _ => match (at(-8), at(-7), at(-6), at(-5)) {
            (Some(0x48), Some(0x89), Some(0xac), Some(0x24)) => {
                let d = [at(-4)?, at(-3)?, at(-2)?, at(-1)?];
                (u32::from_le_bytes(d) as usize, 8)
            }
            _ => return None,
        },
    };
    let s = -store_len;
    let n = match (at(s - 4), at(s - 3), at(s - 2)) {
        (Some(0x48), Some(0x83), Some(0xec)) => at(s - 1)? as usize,
        _ => match (at(s - 7), at(s - 6), at(s - 5)) {
            (Some(0x48), Some(0x81), Some(0xec)) => {
                u32::from_le_bytes([at(s - 4)?, at(s - 3)?, at(s - 2)?, at(s - 1)?]) as usize
            }
            _ => return None,
        },
    };
    (disp.checked_add(8)? == n).then_some(n)
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
