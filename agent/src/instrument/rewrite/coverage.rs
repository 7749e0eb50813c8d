//! `coverage`'s probes: the method's counter array fetched at entry (a
//! dynamic constant where the class allows one), the stripe this thread
//! counts in, and the plan's counting code.

use super::refs::Refs;
use profrj_bytecode::code::{Insn, VType};
use profrj_bytecode::edit::{add_counting, increment_at, CounterPlan, Edit, NewLocal};
use profrj_bytecode::opcodes::*;
use profrj_bytecode::ConstantPool;

/// Which copy of a method's counters a call uses: `(Probe.thread() &
/// mask) * stride`.
#[derive(Clone, Copy)]
pub(super) struct Stripe {
    pub(super) mask: i32,
    pub(super) stride: i32,
}

/// At entry `long[] c = Probe.cov(id);` into local `slot` (and with
/// `stripe`, `int base = (Probe.thread() & mask) * stride;` into the next,
/// through `Probe.stripe`'s call site where the class bootstraps),
/// then `c[base + 0]++` if `count_calls`; then the plan's counting code
/// (`add_counting`).
pub(super) fn add_coverage(
    edit: &mut Edit,
    cp: &mut ConstantPool<'_>,
    refs: &Refs,
    (id, slot, stripe): (u32, u16, Option<Stripe>),
    plan: &CounterPlan,
    count_calls: bool,
) {
    let mut entry = match refs.counters_bootstrap {
        // ldc_w of the dynamic constant `c<id>`: a constant once resolved.
        Some(bsm) => {
            let constant = cp.add_dynamic(bsm, &format!("c{id}"), "[J");
            vec![Insn::plain(LDC_W, &constant.to_be_bytes())]
        }
        None => {
            let mut seq = vec![Insn::push_int(cp, id as i32)];
            seq.push(Insn::plain(INVOKESTATIC, &refs.counters.to_be_bytes())); // cov
            seq
        }
    };
    entry.push(Insn::local(ASTORE, slot));
    let base = stripe.map(|s| {
        let base = slot + 1;
        match refs.stripe_bootstrap {
            // A call site bound to a constant 0 until a second application
            // thread starts (a MutableCallSite: the JIT folds it, and
            // recompiles at the switch), then to the line below.
            Some(bsm) => {
                let name = format!("s{}_{}", s.mask, s.stride);
                let site = cp.add_invoke_dynamic(bsm, &name, "()I");
                let [hi, lo] = site.to_be_bytes();
                entry.push(Insn::plain(INVOKEDYNAMIC, &[hi, lo, 0, 0]));
            }
            None => {
                entry.push(Insn::plain(INVOKESTATIC, &refs.thread.to_be_bytes()));
                entry.push(Insn::push_int(cp, s.mask));
                entry.push(Insn::plain(IAND, &[]));
                entry.push(Insn::push_int(cp, s.stride));
                entry.push(Insn::plain(IMUL, &[]));
            }
        }
        entry.push(Insn::local(ISTORE, base));
        base
    });
    if count_calls {
        // counters[base + 0]++
        entry.extend(increment_at(slot, base, Insn::plain(ICONST_0, &[])));
    }
    // Coverage first: the counters count the call even if a later probe throws.
    edit.entry.splice(0..0, entry);
    let array = NewLocal {
        slot,
        vtype: VType::Object(refs.long_array),
    };
    add_counting(edit, cp, plan, array, base);
}
