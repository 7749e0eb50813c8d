//! The rules for runtime and other stubs: frameless at their first
//! instruction and their `ret`, a frame-pointer frame once past `enter`, and
//! a runtime stub stopped in the VM left through the frame its first
//! instructions build.

use super::frame::{begins_with_enter, Callers, Memory, Regs, PUSH_RBP, RET};
use super::links::{ret_at, via_fp};
use crate::code_map::Blob;

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
pub(super) fn stub(top: Regs, blob: &Blob, mem: &impl Memory) -> Callers {
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
