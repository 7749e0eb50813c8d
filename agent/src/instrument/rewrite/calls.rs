//! The probes around a call, at entry, before returns and on the way out
//! of an exception: `profile`'s, `trace`'s (and its throws and catches), and
//! `lock`'s around `LockSupport`'s parking methods.

use super::refs::Refs;
use profrj_bytecode::code::{Code, Insn};
use profrj_bytecode::edit::Edit;
use profrj_bytecode::opcodes::*;
use profrj_bytecode::ConstantPool;

/// `Probe.enter(id)` at entry, `exit(id)` before returns, `unwind(id)` on
/// the way out of an exception.
pub(super) fn add_profile(edit: &mut Edit, cp: &mut ConstantPool<'_>, refs: &Refs, id: u32) {
    let push = vec![Insn::push_int(cp, id as i32)];
    let call = |r: u16| {
        let mut seq = push.clone();
        seq.push(Insn::plain(INVOKESTATIC, &r.to_be_bytes()));
        seq
    };
    edit.entry.extend(call(refs.enter));
    edit.before_returns.extend(call(refs.exit));
    edit.catch_all = Some(call(refs.unwind));
    edit.extra_stack = edit.extra_stack.max(1);
}

/// `Probe.traceEnter(id)` at entry, `traceExit(id)` before returns,
/// `traceUnwind(exception, id)` in the catch-all handler, `traceThrow` before
/// each `athrow` and `traceCatch` at the start of each of the method's own
/// handlers (the exception is on the stack at all three: `dup` it).
pub(super) fn add_trace(
    edit: &mut Edit,
    code: &Code,
    cp: &mut ConstantPool<'_>,
    refs: &Refs,
    id: u32,
) {
    let [enter, exit, unwind, throw, catch] = refs.trace;
    let id = Insn::push_int(cp, id as i32);
    let call = |r: u16| vec![id.clone(), Insn::plain(INVOKESTATIC, &r.to_be_bytes())];
    let with_exception = |r: u16| {
        let mut seq = vec![Insn::plain(DUP, &[])];
        seq.extend(call(r));
        seq
    };
    edit.entry.extend(call(enter));
    edit.before_returns.extend(call(exit));
    let mut handler = edit.catch_all.take().unwrap_or_default();
    handler.extend(with_exception(unwind));
    edit.catch_all = Some(handler);
    for (i, insn) in code.insns.iter().enumerate() {
        if matches!(insn, Insn::Plain { op: ATHROW, .. }) {
            edit.before
                .entry(i as u32)
                .or_default()
                .extend(with_exception(throw));
        }
    }
    let mut starts: Vec<u32> = code
        .handlers
        .iter()
        .map(|h| code.labels[h.handler.0 as usize])
        .collect();
    starts.sort_unstable();
    starts.dedup();
    for h in starts {
        // First at the handler's start: before any other mode's code there.
        let seq = edit.before.entry(h).or_default();
        let mut probe = with_exception(catch);
        probe.append(seq);
        *seq = probe;
    }
    edit.extra_stack = edit.extra_stack.max(2);
}

/// `Probe.parkEnter(blocker)` at entry, `parkExit(blocker)` before returns
/// (the blocker is the static method's first argument, local 0).
pub(super) fn add_park(edit: &mut Edit, refs: &Refs) {
    let call = |r: u16| {
        vec![
            Insn::local(ALOAD, 0),
            Insn::plain(INVOKESTATIC, &r.to_be_bytes()),
        ]
    };
    edit.entry.extend(call(refs.park_enter));
    edit.before_returns.extend(call(refs.park_exit));
    edit.extra_stack = edit.extra_stack.max(1);
}
