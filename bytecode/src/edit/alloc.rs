//! Allocation sites: every point where a new object or array first exists as
//! a usable (fully constructed) value, for the `memory` mode's probes.
//!
//! Arrays are usable right after `newarray`, `anewarray` or `multianewarray`,
//! on top of the stack. An object is usable only after the `invokespecial
//! <init>` that constructs it: before, the verifier forbids passing it
//! anywhere. Which `new` an `<init>` call constructs, and where the reference
//! is afterwards, comes from the abstract interpreter of `code::stack`, run
//! to a fixed point over every path (exception handlers included). The
//! super()/this() call of a constructor constructs `this`, not a new object,
//! and is no site.

use super::EditError;
use crate::code::stack::{method_slots, step, successors, State, Value};
use crate::code::{decode_code, Code, Insn};
use crate::opcodes::*;
use crate::{ClassFile, ConstantPool};

/// What an allocation site creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocKind {
    /// `new` + its constructor.
    Object {
        /// The CONSTANT_Class index of the `new`.
        class: u16,
    },
    /// `newarray`.
    PrimitiveArray {
        /// The element type code (`array_type::T_INT`, …).
        atype: u8,
    },
    /// `anewarray`.
    ObjectArray {
        /// The CONSTANT_Class index of the element type.
        element: u16,
    },
    /// `multianewarray`.
    MultiArray {
        /// The CONSTANT_Class index of the array type itself (e.g. `[[I`).
        class: u16,
        /// How many dimensions are allocated (the rest stay null).
        dims: u8,
    },
}

/// Where the new reference is right after the site's instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AllocWhere {
    /// On top of the operand stack: `dup; invokestatic probe(Object)` works.
    Top,
    /// Deeper in the operand stack: this many slots above it.
    Stack(u16),
    /// Only in this local variable (e.g. `new; astore; aload; invokespecial`).
    Local(u16),
    /// Nowhere: the constructor call consumed the only reference (a `new`
    /// without `dup`, as some compilers emit for `new X();` statements).
    Gone,
}

/// One allocation site.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AllocSite {
    /// Index (in the code as read) of the instruction to insert after: the
    /// `<init>` call, or the array instruction. Use it as a key of `Edit::after`.
    pub after: u32,
    /// For an object, the index of its `new` instruction; for an array, `after`.
    pub new_at: u32,
    /// What is allocated.
    pub kind: AllocKind,
    /// Where the new reference is after `after`.
    pub at: AllocWhere,
}

impl AllocSite {
    /// The allocated type's internal name, as the class file's bytes
    /// (modified UTF-8): `java/lang/String`, `[I`, `[Ljava/lang/String;`,
    /// `[[J`. `None` if the pool entry is not a class.
    pub fn type_utf8(&self, cp: &ConstantPool<'_>) -> Option<Vec<u8>> {
        Some(match self.kind {
            AllocKind::Object { class } | AllocKind::MultiArray { class, .. } => {
                cp.class_utf8(class)?.to_vec()
            }
            AllocKind::PrimitiveArray { atype } => array_type::descriptor(atype)?.into(),
            AllocKind::ObjectArray { element } => {
                let e = cp.class_utf8(element)?;
                if e.starts_with(b"[") {
                    [b"[", e].concat()
                } else {
                    [b"[L", e, b";"].concat()
                }
            }
        })
    }
}

/// Every allocation site of method `method_index`, in code order. Errors (with
/// the reason) for a method without code, code that does not decode, or code
/// the interpreter cannot follow (stack underflow, unresolvable constant,
/// paths that disagree on the stack depth): malformed input, in practice.
pub fn allocation_sites(
    class: &ClassFile<'_>,
    method_index: usize,
) -> Result<Vec<AllocSite>, EditError> {
    let cp = &class.constant_pool;
    if method_index >= class.methods.len() {
        return Err(EditError::NoSuchMethod);
    }
    let attr = class.method_code(method_index).ok_or(EditError::NoCode)?;
    let code = decode_code(&attr.data).map_err(|e| EditError::Malformed(e.to_string()))?;
    sites_in(&code, cp)
}

fn u16_at(operands: &[u8]) -> Option<u16> {
    Some(u16::from_be_bytes([*operands.first()?, *operands.get(1)?]))
}

/// The allocation sites of decoded code (see [`allocation_sites`]).
pub fn sites_in(code: &Code<'_>, cp: &ConstantPool<'_>) -> Result<Vec<AllocSite>, EditError> {
    let states = flow(code, cp)?;
    let mut sites = Vec::new();
    let bad = |i: usize, why: &str| EditError::Malformed(format!("instruction {i}: {why}"));
    for (i, insn) in code.insns.iter().enumerate() {
        let (Some(state), Insn::Plain { op, operands }) = (&states[i], insn) else {
            continue; // unreachable, or not an allocation
        };
        let ops = operands.as_slice();
        let kind = match *op {
            NEWARRAY => AllocKind::PrimitiveArray {
                atype: *ops.first().ok_or_else(|| bad(i, "newarray without type"))?,
            },
            ANEWARRAY => AllocKind::ObjectArray {
                element: u16_at(ops).ok_or_else(|| bad(i, "short anewarray"))?,
            },
            MULTIANEWARRAY => AllocKind::MultiArray {
                class: u16_at(ops).ok_or_else(|| bad(i, "short multianewarray"))?,
                dims: *ops.get(2).ok_or_else(|| bad(i, "short multianewarray"))?,
            },
            INVOKESPECIAL => {
                let Some(site) = constructed(code, cp, state, i, ops)? else {
                    continue;
                };
                sites.push(site);
                continue;
            }
            _ => continue,
        };
        let at = i as u32;
        sites.push(AllocSite {
            after: at,
            new_at: at,
            kind,
            at: AllocWhere::Top,
        });
    }
    Ok(sites)
}

/// The site an `invokespecial` at `i` completes, if it is the `<init>` call
/// of an object from `new`.
fn constructed(
    code: &Code<'_>,
    cp: &ConstantPool<'_>,
    state: &State,
    i: usize,
    ops: &[u8],
) -> Result<Option<AllocSite>, EditError> {
    let bad = |why: &str| EditError::Malformed(format!("instruction {i}: {why}"));
    let (name, desc) = u16_at(ops)
        .and_then(|m| cp.member_name_and_descriptor(m))
        .ok_or_else(|| bad("invokespecial of no method"))?;
    if name != b"<init>" {
        return Ok(None);
    }
    let (args, _) = method_slots(desc).ok_or_else(|| bad("bad method descriptor"))?;
    let receiver = state
        .stack
        .len()
        .checked_sub(args + 1)
        .map(|r| state.stack[r])
        .ok_or_else(|| bad("stack underflow"))?;
    let Value::New(k) = receiver else {
        return Ok(None); // super()/this() on `this`
    };
    let class = match code.insns.get(k as usize) {
        Some(Insn::Plain { op: NEW, operands }) => u16_at(operands.as_slice()),
        _ => None,
    }
    .ok_or_else(|| bad("constructs no `new`"))?;
    let after = step(state, i as u32, &code.insns[i], cp)
        .ok_or_else(|| EditError::Unfollowable(format!("instruction {i}: cannot step")))?;
    let done = Value::Constructed(k);
    let at = if let Some(d) = after.stack.iter().rev().position(|&v| v == done) {
        if d == 0 {
            AllocWhere::Top
        } else {
            AllocWhere::Stack(d as u16)
        }
    } else if let Some(l) = after.locals.iter().position(|&v| v == done) {
        AllocWhere::Local(l as u16)
    } else {
        AllocWhere::Gone
    };
    Ok(Some(AllocSite {
        after: i as u32,
        new_at: k,
        kind: AllocKind::Object { class },
        at,
    }))
}

/// The state before every reachable instruction (`None`: unreachable), as a
/// fixed point over all paths. Values on which paths disagree become `Other`,
/// so `New(k)`/`Constructed(k)` in a state hold on every path.
fn flow(code: &Code<'_>, cp: &ConstantPool<'_>) -> Result<Vec<Option<State>>, EditError> {
    let n = code.insns.len();
    let mut states: Vec<Option<State>> = vec![None; n];
    let start = State {
        stack: vec![],
        locals: vec![Value::Other; code.max_locals as usize],
    };
    let mut work = vec![(0u32, start)];
    // Handler ranges as instruction indices, resolved once.
    let handlers: Vec<(u32, u32, u32)> = code
        .handlers
        .iter()
        .map(|h| {
            let l = |x: crate::code::Label| code.labels.get(x.0 as usize).copied();
            Some((l(h.start)?, l(h.end)?, l(h.handler)?))
        })
        .collect::<Option<_>>()
        .ok_or_else(|| EditError::Malformed("exception handler with an unbound label".into()))?;
    while let Some((i, s)) = work.pop() {
        let Some(insn) = code.insns.get(i as usize) else {
            return Err(EditError::Malformed(
                "control runs off the end of the code".into(),
            ));
        };
        if s.stack.len() > code.max_stack as usize {
            return Err(EditError::Malformed(format!(
                "instruction {i}: stack over max_stack"
            )));
        }
        let s = match &states[i as usize] {
            None => s,
            Some(old) => {
                let m = merge(old, &s).ok_or_else(|| {
                    EditError::Malformed(format!(
                        "instruction {i}: paths disagree on the stack depth"
                    ))
                })?;
                if m == *old {
                    continue;
                }
                m
            }
        };
        states[i as usize] = Some(s.clone());
        let next = match insn {
            // jsr: the subroutine starts with the return address pushed; what
            // it does to locals is not tracked, so after it returns nothing is
            // known about values from before (sound: only claims are lost).
            Insn::Branch {
                op: JSR | JSR_W,
                target,
            } => {
                let t = *code.labels.get(target.0 as usize).unwrap_or(&u32::MAX);
                let mut into = s.clone();
                into.stack.push(Value::Other);
                work.push((t, into));
                let mut back = s.clone();
                for v in back.stack.iter_mut().chain(back.locals.iter_mut()) {
                    *v = Value::Other;
                }
                work.push((i + 1, back));
                None
            }
            _ => Some(step(&s, i, insn, cp).ok_or_else(|| {
                EditError::Unfollowable(format!(
                    "allocation sites: instruction {i} ({insn:?}) cannot be followed \
                         (stack {} deep)",
                    s.stack.len()
                ))
            })?),
        };
        for &(start, end, at) in &handlers {
            if (start..end).contains(&i) {
                // The handler may see the locals from before or after i.
                let mut locals = s.locals.clone();
                if let Some(next) = &next {
                    join_into(&mut locals, &next.locals);
                }
                work.push((
                    at,
                    State {
                        stack: vec![Value::Other],
                        locals,
                    },
                ));
            }
        }
        let Some(next) = next else { continue };
        for j in successors(code, i as usize) {
            work.push((j, next.clone()));
        }
    }
    Ok(states)
}

fn join_into(a: &mut Vec<Value>, b: &[Value]) {
    if a.len() < b.len() {
        a.resize(b.len(), Value::Other);
    }
    for (i, x) in a.iter_mut().enumerate() {
        if b.get(i) != Some(x) {
            *x = Value::Other;
        }
    }
}

/// Two states at a join: the stack depths must agree; differing values
/// become `Other`.
fn merge(a: &State, b: &State) -> Option<State> {
    if a.stack.len() != b.stack.len() {
        return None;
    }
    let mut m = a.clone();
    join_into(&mut m.stack, &b.stack);
    join_into(&mut m.locals, &b.locals);
    Some(m)
}
