//! `coverage`'s probes: the method's counters fetched at entry (a dynamic
//! constant where the class allows one), the copy (stripe) this thread
//! counts in, and the plan's counting code.

use super::refs::Refs;
use profrj_bytecode::code::{Insn, VType};
use profrj_bytecode::edit::{add_counting, increment, CounterPlan, Edit, NewLocal};
use profrj_bytecode::opcodes::*;
use profrj_bytecode::ConstantPool;

/// Which copy of a method's counters a call uses: `Probe.thread() & mask`
/// (`None`: the first).
#[derive(Clone, Copy)]
pub(super) struct Stripe {
    pub(super) mask: i32,
}

/// At entry `long[] c = Probe.cov(id)[stripe];` into local `slot` (with
/// one stripe and a dynamic constant, the constant is that `long[]`;
/// `stripe` is `Probe.thread() & mask`, or 0), then `c[0]++` if
/// `count_calls`; then the plan's counting code (`add_counting`). Each
/// copy is an array of its own, so every increment indexes its array with
/// a constant, as with one copy.
pub(super) fn add_coverage(
    edit: &mut Edit,
    cp: &mut ConstantPool<'_>,
    refs: &Refs,
    (id, slot, stripe): (u32, u16, Option<Stripe>),
    plan: &CounterPlan,
    count_calls: bool,
) {
    let (mut entry, every_stripe) = match refs.counters_bootstrap {
        // ldc_w of the dynamic constant `c<id>`: a constant once resolved.
        Some(bsm) => {
            let ty = if refs.striped { "[[J" } else { "[J" };
            let constant = cp.add_dynamic(bsm, &format!("c{id}"), ty);
            (
                vec![Insn::plain(LDC_W, &constant.to_be_bytes())],
                refs.striped,
            )
        }
        None => {
            let mut seq = vec![Insn::push_int(cp, id as i32)];
            seq.push(Insn::plain(INVOKESTATIC, &refs.counters.to_be_bytes())); // cov
            (seq, true)
        }
    };
    if every_stripe {
        match stripe {
            Some(s) => {
                entry.push(Insn::plain(INVOKESTATIC, &refs.thread.to_be_bytes()));
                entry.push(Insn::push_int(cp, s.mask));
                entry.push(Insn::plain(IAND, &[]));
            }
            None => entry.push(Insn::plain(ICONST_0, &[])),
        }
        entry.push(Insn::plain(AALOAD, &[]));
    }
    entry.push(Insn::local(ASTORE, slot));
    if count_calls {
        // counters[0]++
        entry.extend(increment(slot, Insn::plain(ICONST_0, &[])));
    }
    // Coverage first: the counters count the call even if a later probe throws.
    edit.entry.splice(0..0, entry);
    let array = NewLocal {
        slot,
        vtype: VType::Object(refs.long_array),
    };
    add_counting(edit, cp, plan, array);
}
