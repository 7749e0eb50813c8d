//! The handler's native walk: from the signal's registers up through native
//! frames (a JNI library's, libc's, libjvm's) until the pc is in the JVM's
//! generated code (a Java frame, a stub, an adapter: AsyncGetCallTrace
//! walks from there, as without `cstack=`) or the walk ends. Each frame is
//! written as a `NATIVE_CODE_BCI` frame (method = pc) typed vm or native.
//!
//! Memory read: words of the thread's own stack between the interrupted sp
//! and the stack's base, each checked to lie there before it is read, and
//! the published table of objects (agent memory). No allocation, no lock,
//! no panic path. Each caller's frame must lie above the frame before it,
//! so a walk ends.

use super::cfi::{self, CFA_FP, CFA_SP};
use super::table::{self, Table};
use super::CStack;
use crate::code_map;
use crate::vm::async_trace::{CallFrame, NATIVE_CODE_BCI};
use crate::vm::hotspot;
use profrj_format::frame_types::FrameType;

/// The registers a walk steps with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Regs {
    pub pc: usize,
    pub sp: usize,
    pub fp: usize,
}

/// The stack a walk may read: `low..high`, certainly mapped (from the
/// interrupted sp up to the thread's stack base).
#[derive(Clone, Copy, Debug)]
pub struct Stack {
    pub low: usize,
    pub high: usize,
}

impl Stack {
    fn word(&self, at: usize) -> Option<usize> {
        let inside = at >= self.low && at.checked_add(8)? <= self.high && at.is_multiple_of(8);
        // SAFETY: an aligned word of the interrupted thread's stack between
        // its sp and its base (the caller of `native_frames` promises this
        // range is its stack in use): mapped. Volatile: memory of other
        // frames, read as the machine has it.
        inside.then(|| unsafe { std::ptr::read_volatile(at as *const usize) })
    }
}

/// Is `pc` in the JVM's generated code (where AsyncGetCallTrace takes over)?
fn is_generated(pc: usize) -> bool {
    hotspot::in_code_cache(pc) || code_map::find(pc).is_some()
}

/// Writes the native frames from `regs` up into `frames` (at most `max`):
/// returns how many, and the registers where the walk entered the JVM's
/// generated code (None: it ended elsewhere). No frame when `mode` is
/// [`CStack::No`] or `regs.pc` is generated code already.
///
/// # Safety
/// `stack` is the calling thread's stack in use (mapped: its interrupted sp
/// up to its base); `frames` is writable for `max` entries. Callable from a
/// signal handler on any thread, a JVM thread with no Java frame included.
pub unsafe fn native_frames(
    mode: CStack,
    regs: Regs,
    stack: Stack,
    frames: *mut CallFrame,
    max: usize,
) -> (usize, Option<Regs>) {
    if mode == CStack::No || !(stack.low..stack.high).contains(&regs.sp) {
        return (0, None);
    }
    table::reading(|table| {
        // SAFETY: the caller's promise.
        table.map_or((0, None), |t| unsafe {
            walk(mode, t, regs, stack, frames, max)
        })
    })
}

/// # Safety
/// As [`native_frames`].
unsafe fn walk(
    mode: CStack,
    table: &Table,
    regs: Regs,
    stack: Stack,
    frames: *mut CallFrame,
    max: usize,
) -> (usize, Option<Regs>) {
    let mut r = regs;
    let mut n = 0;
    loop {
        if is_generated(r.pc) {
            return (n, Some(r));
        }
        if n >= max {
            return (n, None);
        }
        // A caller's pc is a return address, past its call: the call itself
        // (pc - 1) is what names the frame and says which rule applies.
        let at = if n == 0 { r.pc } else { r.pc.wrapping_sub(1) };
        let range = table.find(at);
        if range.is_none() && n > 0 {
            return (n, None); // not a return address: the walk went astray
        }
        let kind = range.map_or(FrameType::Native as u8, |r| r.kind);
        // SAFETY: `n < max`: a slot the caller made writable.
        unsafe {
            *frames.add(n) = CallFrame {
                bci: NATIVE_CODE_BCI,
                kind,
                method: at as jni_sys::jmethodID,
            }
        };
        n += 1;
        let rule = match (mode, range.and_then(|r| r.rows.as_deref())) {
            (CStack::Dwarf, Some(rows)) => cfi::lookup(rows, at),
            _ => None,
        };
        let next = match rule {
            Some(row) => by_cfi(row, r, &stack),
            None => by_fp(r, &stack),
        };
        match next.filter(|c| c.sp > r.sp) {
            Some(c) => r = c,
            None => return (n, None),
        }
    }
}

/// The caller by the frame-pointer chain: rbp points at the saved rbp, the
/// return address above it.
fn by_fp(r: Regs, stack: &Stack) -> Option<Regs> {
    if r.fp < r.sp {
        return None;
    }
    let fp = stack.word(r.fp)?;
    let pc = stack.word(r.fp.checked_add(8)?)?;
    Some(Regs {
        pc,
        sp: r.fp + 16,
        fp,
    })
}

/// The caller by a CFI row: the CFA from rsp or rbp, the return address
/// just below it, rbp where the row says it was saved (or unchanged).
fn by_cfi(row: &cfi::Row, r: Regs, stack: &Stack) -> Option<Regs> {
    let base = match row.cfa_reg {
        CFA_SP => r.sp,
        CFA_FP => r.fp,
        _ => return None,
    };
    let cfa = base.checked_add_signed(row.cfa_off as isize)?;
    let pc = stack.word(cfa.checked_sub(8)?)?;
    let fp = if row.fp_off != 0 {
        stack.word(cfa.checked_add_signed(row.fp_off as isize)?)?
    } else {
        r.fp
    };
    Some(Regs { pc, sp: cfa, fp })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake stack in a local array: three frame-pointer frames.
    #[test]
    fn fp_and_cfi_steps_read_only_inside_the_stack() {
        let mut words = [0usize; 16];
        let p = words.as_mut_ptr();
        let base = p as usize;
        let high = base + words.len() * 8;
        let stack = Stack { low: base, high };
        // Frame at word 2: saved rbp -> word 6, return 0x1234.
        // SAFETY: words 2 and 3 of the local array.
        unsafe {
            p.add(2).write(base + 6 * 8);
            p.add(3).write(0x1234);
        }
        let r = Regs {
            pc: 1,
            sp: base,
            fp: base + 2 * 8,
        };
        let c = by_fp(r, &stack).unwrap();
        assert_eq!((c.pc, c.sp, c.fp), (0x1234, base + 4 * 8, base + 6 * 8));
        // rbp outside the stack, below sp, or misaligned: no caller.
        for fp in [high, base.wrapping_sub(8), base + 3, 0] {
            assert!(by_fp(Regs { fp, ..r }, &stack).is_none(), "{fp:#x}");
        }
        // A CFI row: CFA = rsp + 32, rbp saved at CFA - 16.
        let row = cfi::Row {
            pc: 0,
            cfa_off: 32,
            fp_off: -16,
            cfa_reg: CFA_SP,
        };
        let c = by_cfi(&row, r, &stack).unwrap();
        assert_eq!((c.pc, c.sp, c.fp), (0x1234, base + 4 * 8, base + 6 * 8));
        let far = cfi::Row {
            cfa_off: 4096,
            ..row
        };
        assert!(by_cfi(&far, r, &stack).is_none());
    }
}
