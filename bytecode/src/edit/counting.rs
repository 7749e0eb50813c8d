//! The code a [`CounterPlan`] asks for, as edits: `counters[k]++` before
//! each counted point and, when some stretch may throw, the `pos` local and
//! the exception counting (see `derive`).

use super::{CounterPlan, Edit, NewLocal};
use crate::code::{Insn, VType};
use crate::opcodes::*;
use crate::ConstantPool;

/// Adds the plan's counting code to `edit`. The caller's entry code (put
/// first) stores the counter array, `plan.slots` long, in local `array`,
/// and counts calls in slot 0 when the plan needs it; `pos`, when used, is
/// the local after it. With `base` (the int local right after `array`,
/// also stored by the entry code), counter `k` is `array[base + k]`: the
/// array holds several copies of the counters (stripes), the entry code
/// choosing one per call.
pub fn add_counting(
    edit: &mut Edit,
    cp: &mut ConstantPool<'_>,
    plan: &CounterPlan,
    array: NewLocal,
    base: Option<u16>,
) {
    let increment = |index: Insn| increment_at(array.slot, base, index);
    edit.new_locals.push(array);
    let mut next = array.slot + array.slots();
    if let Some(b) = base {
        debug_assert_eq!(b, next, "the stripe base follows the array");
        edit.new_locals.push(NewLocal {
            slot: b,
            vtype: VType::Integer,
        });
        next += 1;
    }
    edit.extra_stack = edit.extra_stack.max(6);
    // Edge counters: on the fall-through path only.
    let first_after = plan.counters.len() as i32 + 1;
    for (k, &ix) in plan.after.iter().enumerate() {
        let seq = edit.after.entry(ix).or_default();
        seq.extend(increment(Insn::push_int(cp, first_after + k as i32)));
    }
    let Some(exc) = &plan.exceptions else {
        for (k, &ix) in plan.counters.iter().enumerate() {
            let seq = edit.before.entry(ix).or_default();
            seq.extend(increment(Insn::push_int(cp, k as i32 + 1)));
        }
        return;
    };
    let pos = next;
    edit.new_locals.push(NewLocal {
        slot: pos,
        vtype: VType::Integer,
    });
    let store_pos = Insn::local(ISTORE, pos);
    let count_exception = increment(Insn::local(ILOAD, pos));
    edit.entry
        .extend([Insn::push_int(cp, exc.entry as i32), store_pos.clone()]);
    // Per instruction: the handler's exception count (with the `pos` of the
    // throw), the point's counter, then `pos` for what follows.
    for &h in &exc.handlers {
        let seq = edit.before.entry(h).or_default();
        seq.extend(count_exception.iter().cloned());
    }
    for (k, &ix) in plan.counters.iter().enumerate() {
        let seq = edit.before.entry(ix).or_default();
        seq.extend(increment(Insn::push_int(cp, k as i32 + 1)));
    }
    for &(ix, value) in &exc.sets {
        let value = Insn::push_int(cp, value as i32);
        edit.before
            .entry(ix)
            .or_default()
            .extend([value, store_pos.clone()]);
    }
    let mut handler = count_exception;
    handler.extend(edit.catch_all.take().unwrap_or_default());
    edit.catch_all = Some(handler);
}

/// `counters[index]++`, the array in local `array`: `aload; index; dup2;
/// laload; lconst_1; ladd; lastore` (stack-neutral, 4 slots deep).
pub fn increment(array: u16, index: Insn) -> Vec<Insn> {
    increment_at(array, None, index)
}

/// `counters[base + index]++` (`counters[index]++` without `base`), the
/// array in local `array`, the int `base` in its local.
pub fn increment_at(array: u16, base: Option<u16>, index: Insn) -> Vec<Insn> {
    let mut seq = vec![Insn::local(ALOAD, array)];
    if let Some(b) = base {
        seq.push(Insn::local(ILOAD, b));
        seq.push(index);
        seq.push(Insn::plain(IADD, &[]));
    } else {
        seq.push(index);
    }
    for op in [DUP2, LALOAD, LCONST_1, LADD, LASTORE] {
        seq.push(Insn::plain(op, &[]));
    }
    seq
}
