//! Constructors: where `this` becomes initialized. A catch-all handler may
//! cover the code before the super()/this() call only with a frame that still
//! holds `uninitializedThis` (and must end in `athrow`), and the code after it
//! only with one that does not, so the editor needs the call's position.

use super::EditError;
use crate::code::stack::{step, successors, State, Value};
use crate::code::{Code, Insn};
use crate::opcodes::INVOKESPECIAL;
use crate::ConstantPool;
use std::collections::HashMap;

/// Where an instruction of a constructor runs relative to the super()/this()
/// call on `this`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Before it: `this` is `uninitializedThis` (in local 0 throughout).
    Before,
    /// The call itself (there may be several, on different paths).
    Call,
    /// After it, or never reached.
    After,
}

/// Classifies every instruction of a constructor. Refused: code the
/// interpreter does not follow before the call, paths that disagree about
/// where `this` is, or `this` moved out of local 0 — no Java compiler emits
/// them.
pub fn parts(code: &Code<'_>, cp: &ConstantPool<'_>) -> Result<Vec<Part>, EditError> {
    let refuse = |why: &str| Err(EditError::Constructor(why.to_owned()));
    let mut locals = vec![Value::Other; code.max_locals.max(1) as usize];
    locals[0] = Value::UninitThis;
    let mut seen: HashMap<u32, State> = HashMap::new();
    let mut work = vec![(
        0u32,
        State {
            stack: vec![],
            locals,
        },
    )];
    let mut calls = Vec::new();
    while let Some((i, s)) = work.pop() {
        // Paths meet: values other than `this` merge to "some value" (e.g.
        // `this(x != null ? new File(x) : null)`); where `this` is must agree.
        let s = match seen.get(&i) {
            None => s,
            Some(old) => match merge(old, &s) {
                Some(m) if m == *old => continue,
                Some(m) => m,
                None => return refuse("paths before super() disagree on where `this` is"),
            },
        };
        let Some(insn) = code.insns.get(i as usize) else {
            return refuse("code before super() runs off the end");
        };
        if s.locals.first() != Some(&Value::UninitThis) {
            return refuse("local 0 is overwritten before super()");
        }
        let Some(next) = step(&s, i, insn, cp) else {
            return refuse("an instruction before super() cannot be followed (jsr?)");
        };
        seen.insert(i, s.clone());
        let init_this = matches!(
            insn,
            Insn::Plain {
                op: INVOKESPECIAL,
                ..
            }
        ) && !next.stack.contains(&Value::UninitThis)
            && !next.locals.contains(&Value::UninitThis);
        if init_this {
            calls.push(i);
            continue;
        }
        for h in &code.handlers {
            let (start, end) = (
                code.labels[h.start.0 as usize],
                code.labels[h.end.0 as usize],
            );
            if (start..end).contains(&i) {
                let at = code.labels[h.handler.0 as usize];
                let stack = vec![Value::Other];
                work.push((
                    at,
                    State {
                        stack,
                        locals: s.locals.clone(),
                    },
                ));
            }
        }
        for j in successors(code, i as usize) {
            work.push((j, next.clone()));
        }
    }
    if calls.is_empty() {
        return refuse("no super()/this() call found");
    }
    let mut parts = vec![Part::After; code.insns.len()];
    for &i in seen.keys() {
        parts[i as usize] = Part::Before;
    }
    for &i in &calls {
        parts[i as usize] = Part::Call;
    }
    Ok(parts)
}

/// Two states at a join: equal stack depths and `this` in the same places;
/// any other difference becomes `Other`.
fn merge(a: &State, b: &State) -> Option<State> {
    if a.stack.len() != b.stack.len() || a.locals.len() != b.locals.len() {
        return None;
    }
    let join = |x: &[Value], y: &[Value]| -> Option<Vec<Value>> {
        x.iter()
            .zip(y)
            .map(|(&p, &q)| match (p, q) {
                _ if p == q => Some(p),
                (Value::UninitThis, _) | (_, Value::UninitThis) => None,
                _ => Some(Value::Other),
            })
            .collect()
    };
    Some(State {
        stack: join(&a.stack, &b.stack)?,
        locals: join(&a.locals, &b.locals)?,
    })
}

/// The ranges of the edited code (new instruction indices, end exclusive) the
/// catch-all covers, each flagged `true` when it lies before the super() call.
/// Old instruction `i` is now at `at[i]`, preceded by the code inserted for it
/// from `target[i]` and followed by the code inserted after it up to
/// `target[i + 1]`; the entry code (before `target[0]`) is not covered.
///
/// No handler covers a super() call itself: HotSpot checks such a handler
/// against the frame before the call (`uninitializedThis`) and the one after
/// it (initialized, yet still flagged uninitialized), and no frame accepts
/// both. An exception thrown by the super constructor therefore leaves
/// without the exit sequence; the caller's probes have to allow for that.
pub fn covered(parts: Option<&[Part]>, target: &[u32], at: &[u32]) -> Vec<(u32, u32, bool)> {
    let n = at.len() - 1;
    let Some(parts) = parts else {
        return vec![(target[0], at[n], false)];
    };
    let mut out: Vec<(u32, u32, bool)> = Vec::new();
    let mut add = |start: u32, end: u32, before: bool| {
        if start >= end {
            return;
        }
        match out.last_mut() {
            Some(last) if last.1 == start && last.2 == before => last.1 = end,
            _ => out.push((start, end, before)),
        }
    };
    for (i, part) in parts.iter().enumerate() {
        let before = *part != Part::After;
        add(target[i], at[i], before);
        if *part != Part::Call {
            add(at[i], at[i] + 1, before);
        }
        // Code inserted after instruction i (up to the code inserted before
        // i+1) runs in the state i leaves: after the call once it is made.
        add(at[i] + 1, target[i + 1], *part == Part::Before);
    }
    out
}
