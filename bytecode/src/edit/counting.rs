//! The code a [`CounterPlan`] asks for, as edits: `counters[k]++` before
//! each counted point and, when some stretch may throw, the `pos` local and
//! the exception counting (see `derive`).

use super::{CounterPlan, Edit, NewLocal};
use crate::code::{Insn, VType};
use crate::ConstantPool;

/// Adds the plan's counting code to `edit`. The caller's entry code (put
/// first) stores the counter array, `plan.slots` long, in local `array`,
/// and counts calls in slot 0 when the plan needs it; `pos`, when used, is
/// the local after it.
pub fn add_counting(
    edit: &mut Edit,
    cp: &mut ConstantPool<'_>,
    plan: &CounterPlan,
    array: NewLocal,
) {
    let load = local(0x19, 0x2a, array.slot); // aload
    let increment = |index: Insn| {
        let mut seq = vec![load.clone(), index];
        for op in [0x5c, 0x2f, 0x0a, 0x61, 0x50] {
            seq.push(Insn::plain(op, &[])); // dup2; laload; lconst_1; ladd; lastore
        }
        seq
    };
    edit.new_locals.push(array);
    edit.extra_stack = edit.extra_stack.max(6);
    let Some(exc) = &plan.exceptions else {
        for (k, &ix) in plan.counters.iter().enumerate() {
            let seq = edit.before.entry(ix).or_default();
            seq.extend(increment(push(cp, k as u32 + 1)));
        }
        return;
    };
    let pos = array.slot + array.slots();
    edit.new_locals.push(NewLocal {
        slot: pos,
        vtype: VType::Integer,
    });
    let store_pos = local(0x36, 0x3b, pos); // istore
    let count_exception = increment(local(0x15, 0x1a, pos)); // iload
    edit.entry.extend([push(cp, exc.entry), store_pos.clone()]);
    // Per instruction: the handler's exception count (with the `pos` of the
    // throw), the point's counter, then `pos` for what follows.
    for &h in &exc.handlers {
        let seq = edit.before.entry(h).or_default();
        seq.extend(count_exception.iter().cloned());
    }
    for (k, &ix) in plan.counters.iter().enumerate() {
        let seq = edit.before.entry(ix).or_default();
        seq.extend(increment(push(cp, k as u32 + 1)));
    }
    for &(ix, value) in &exc.sets {
        let value = push(cp, value);
        edit.before
            .entry(ix)
            .or_default()
            .extend([value, store_pos.clone()]);
    }
    let mut handler = count_exception;
    handler.extend(edit.catch_all.take().unwrap_or_default());
    edit.catch_all = Some(handler);
}

/// `iconst`, `bipush`, `sipush` or `ldc_w` of an int.
fn push(cp: &mut ConstantPool<'_>, v: u32) -> Insn {
    match v {
        0..=5 => Insn::plain(0x03 + v as u8, &[]),
        6..=127 => Insn::plain(0x10, &[v as u8]),
        128..=32767 => Insn::plain(0x11, &(v as u16).to_be_bytes()),
        _ => Insn::plain(0x13, &cp.add_integer(v as i32).to_be_bytes()),
    }
}

/// A local load or store: `op_0` + slot for slots 0-3, else `op` (`wide`
/// past 255).
fn local(op: u8, op_0: u8, slot: u16) -> Insn {
    match slot {
        0..=3 => Insn::plain(op_0 + slot as u8, &[]),
        4..=255 => Insn::plain(op, &[slot as u8]),
        _ => {
            let [hi, lo] = slot.to_be_bytes();
            Insn::plain(0xc4, &[op, hi, lo])
        }
    }
}
