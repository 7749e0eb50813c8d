//! `memory`'s probes: each allocation site reports its object, and the
//! calls that make objects out of the sites' sight (reflection, `clone()`)
//! report theirs.

use super::refs::Refs;
use crate::error::AgentError;
use crate::instrument::{makers, registry, stamp, AllocPlace};
use crate::sites::Sites;
use profrj_bytecode::code::{Code, Insn};
use profrj_bytecode::edit::{line_at, line_table, sites_in, AllocWhere, Edit};
use profrj_bytecode::opcodes::*;
use profrj_bytecode::ConstantPool;
use profrj_format::names::decode_modified_utf8;

/// `Probe.alloc(object, site)` after each allocation site: the constructor
/// call of each `new`, and each array instruction (`Probe.allocWeak` for
/// arrays and the JDK's classes, which are never stamped). A site whose object is
/// on top of the stack gets `dup`, one kept only in a local `aload`; the
/// rare object found nowhere (a `new` without `dup`, unused) is not tracked.
/// A site is the method, the source line of its `new` (or array
/// instruction) and the type.
pub(super) fn add_memory(
    edit: &mut Edit,
    (code, (class, method, descriptor), source): (
        &Code<'_>,
        (&String, &String, &String),
        Option<&str>,
    ),
    cp: &mut ConstantPool<'_>,
    major_version: u16,
    (refs, numbers): (&Refs, &Sites),
) -> Result<(), AgentError> {
    let sites = sites_in(code, cp).map_err(|e| AgentError::Class(e.to_string()))?;
    let lines = line_table(code, cp);
    let place = |ix: u32| AllocPlace {
        class: class.clone(),
        method: method.clone(),
        descriptor: descriptor.clone(),
        line: line_at(&lines, ix),
        source: source.map(str::to_owned),
    };
    for site in sites {
        let load = match site.at {
            AllocWhere::Top => Insn::plain(DUP, &[]),
            AllocWhere::Local(n) => Insn::local(ALOAD, n),
            AllocWhere::Stack(_) | AllocWhere::Gone => continue,
        };
        let Some(name) = site.type_utf8(cp) else {
            continue;
        };
        let name = decode_modified_utf8(&name);
        let id = numbers.alloc_site(place(site.new_at), &registry::java_type_name(&name));
        let probe = if stamp::may_be_stamped(&name) {
            refs.alloc
        } else {
            refs.alloc_weak
        };
        let seq = edit.after.entry(site.after).or_default();
        seq.push(load);
        seq.push(Insn::push_int(cp, id as i32));
        seq.push(Insn::plain(INVOKESTATIC, &probe.to_be_bytes()));
    }
    let place_id = |ix: u32| numbers.place_id(place(ix));
    add_hidden_makers(edit, code, cp, major_version >= 49, refs, &place_id);
    // Two copies of a clone, its receiver and the place id.
    edit.extra_stack = edit.extra_stack.max(3);
    Ok(())
}

/// Calls that make objects out of sight of the allocation sites:
/// reflection (`memory::makers`), and `clone()`. The compiled `Object.clone`
/// reports nothing either, so the call site reports its result with where
/// the call was resolved from; the runtime counts it when that reaches
/// `Object.clone` (see `Memory.cloned`). A virtual call keeps a copy of its
/// receiver (`dup` before, `dup_x1; swap` after). Each probe also passes
/// the id of its place (`place_id` of the call's index).
fn add_hidden_makers(
    edit: &mut Edit,
    code: &Code<'_>,
    cp: &mut ConstantPool<'_>,
    ldc_class: bool,
    refs: &Refs,
    place_id: &dyn Fn(u32) -> u32,
) {
    for (i, insn) in code.insns.iter().enumerate() {
        let Insn::Plain { op, operands } = insn else {
            continue;
        };
        if !matches!(*op, INVOKEVIRTUAL..=INVOKEINTERFACE) {
            continue; // not an invoke (invokedynamic makes no object of its own)
        }
        let o = operands.as_slice();
        let member = u16::from_be_bytes([o[0], o[1]]);
        let Some((name, desc)) = cp.member_name_and_descriptor(member) else {
            continue;
        };
        let owner = cp.member_class(member).and_then(|c| cp.class_utf8(c));
        let maker = owner.is_some_and(|o| makers::is_maker(o, name, desc));
        let i = i as u32;
        if maker {
            let place = Insn::push_int(cp, place_id(i) as i32);
            let seq = edit.after.entry(i).or_default();
            seq.push(Insn::plain(DUP, &[]));
            seq.push(place);
            seq.push(Insn::plain(INVOKESTATIC, &refs.alloc_any.to_be_bytes()));
            continue;
        }
        if *op == INVOKESTATIC
            || name != b"clone"
            || !(desc.starts_with(b"()L") || desc.starts_with(b"()["))
        {
            continue;
        }
        if *op == INVOKESPECIAL {
            let Some(owner) = cp.member_class(member).filter(|_| ldc_class) else {
                continue;
            };
            let place = Insn::push_int(cp, place_id(i) as i32);
            let seq = edit.after.entry(i).or_default();
            seq.push(Insn::plain(DUP, &[]));
            seq.push(Insn::plain(LDC_W, &owner.to_be_bytes())); // ldc_w Class
            seq.push(place);
            seq.push(Insn::plain(INVOKESTATIC, &refs.cloned_from.to_be_bytes()));
        } else {
            let place = Insn::push_int(cp, place_id(i) as i32);
            edit.before
                .entry(i)
                .or_default()
                .push(Insn::plain(DUP, &[]));
            let seq = edit.after.entry(i).or_default();
            seq.push(Insn::plain(DUP_X1, &[]));
            seq.push(Insn::plain(SWAP, &[]));
            seq.push(place);
            seq.push(Insn::plain(INVOKESTATIC, &refs.cloned.to_be_bytes()));
        }
    }
}
