//! Operand-stack effects of instructions, and a small abstract interpreter
//! that follows where particular values go: `this` before the super()/this()
//! call of a constructor, and objects from `new` before and after their
//! constructor call. Every other value is just "a slot" (long and double take
//! two). That is all the editor needs to place probes in constructors and
//! after allocations; it is not a verifier.

use super::{Code, Insn};
use crate::ConstantPool;

/// What an abstract slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Value {
    Other,
    /// `this` in a constructor before the super()/this() call.
    UninitThis,
    /// The result of the `new` at this instruction index, not yet constructed.
    New(u32),
    /// The same object after its constructor call returned.
    Constructed(u32),
}

/// Operand stack and locals before an instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct State {
    pub stack: Vec<Value>,
    pub locals: Vec<Value>,
}

/// How an instruction changes the stack, in slots, for the plain cases.
enum Effect {
    /// Pop this many slots, push this many `Other` slots.
    Pops(usize, usize),
    /// Load local (index) of this many slots.
    Load(usize, usize),
    /// Store this many slots to local (index).
    Store(usize, usize),
    /// dup, dup_x1, …, swap: the stack shuffles of §6.5, by opcode.
    Shuffle(u8),
    /// An invoke: receiver (0 or 1) + argument slots popped, result pushed.
    Invoke {
        receiver: usize,
        args: usize,
        ret: usize,
        init: bool,
    },
    /// `new`: push a `New` value.
    New,
}

/// Slots taken by a field descriptor's type, or a method descriptor's
/// arguments and return value.
fn type_slots(d: &[u8]) -> usize {
    match d.first() {
        Some(b'J' | b'D') => 2,
        Some(b'V') | None => 0,
        _ => 1,
    }
}

pub(crate) fn method_slots(d: &[u8]) -> Option<(usize, usize)> {
    let close = d.iter().position(|&c| c == b')')?;
    let mut args = 0;
    let mut i = 1;
    while i < close {
        let start = i;
        while d.get(i) == Some(&b'[') {
            i += 1;
        }
        match *d.get(i)? {
            b'L' => i += d[i..].iter().position(|&c| c == b';')?,
            b'J' | b'D' if start == i => args += 1,
            _ => {}
        }
        args += 1;
        i += 1;
    }
    Some((args, type_slots(&d[close + 1..])))
}

fn local_index(operands: &[u8]) -> usize {
    operands.iter().fold(0, |a, &b| a << 8 | b as usize)
}

fn effect(insn: &Insn, cp: &ConstantPool<'_>) -> Option<Effect> {
    use Effect::*;
    let (op, operands) = match insn {
        Insn::Plain { op, operands } => (*op, operands.as_slice()),
        Insn::Branch { op, .. } => {
            return Some(match op {
                0x99..=0x9e | 0xc6 | 0xc7 => Pops(1, 0),
                0x9f..=0xa6 => Pops(2, 0),
                0xa7 | 0xc8 => Pops(0, 0),
                _ => return None, // jsr: not followed
            });
        }
        Insn::TableSwitch(_) | Insn::LookupSwitch(_) => return Some(Pops(1, 0)),
    };
    // `wide`: the widened opcode, with a two-byte local index (and, for
    // iinc, a two-byte constant, which `local_index` must not see).
    let (op, operands) = match (op, operands) {
        (0xc4, [inner, index @ ..]) => (*inner, index.get(..2)?),
        _ => (op, operands),
    };
    let member = |i: &[u8]| cp.member_name_and_descriptor(u16::from_be_bytes([i[0], i[1]]));
    Some(match op {
        0x00 => Pops(0, 0),
        0x01..=0x08 | 0x0b..=0x0d | 0x10..=0x13 => Pops(0, 1),
        0x09 | 0x0a | 0x0e | 0x0f | 0x14 => Pops(0, 2),
        0x15 | 0x17 | 0x19 => Load(local_index(operands), 1),
        0x16 | 0x18 => Load(local_index(operands), 2),
        0x1a..=0x1d => Load((op - 0x1a) as usize, 1),
        0x1e..=0x21 => Load((op - 0x1e) as usize, 2),
        0x22..=0x25 => Load((op - 0x22) as usize, 1),
        0x26..=0x29 => Load((op - 0x26) as usize, 2),
        0x2a..=0x2d => Load((op - 0x2a) as usize, 1),
        0x2e | 0x30 | 0x32..=0x35 => Pops(2, 1),
        0x2f | 0x31 => Pops(2, 2),
        0x36 | 0x38 | 0x3a => Store(local_index(operands), 1),
        0x37 | 0x39 => Store(local_index(operands), 2),
        0x3b..=0x3e => Store((op - 0x3b) as usize, 1),
        0x3f..=0x42 => Store((op - 0x3f) as usize, 2),
        0x43..=0x46 => Store((op - 0x43) as usize, 1),
        0x47..=0x4a => Store((op - 0x47) as usize, 2),
        0x4b..=0x4e => Store((op - 0x4b) as usize, 1),
        0x4f | 0x51 | 0x53..=0x56 => Pops(3, 0),
        0x50 | 0x52 => Pops(4, 0),
        0x57 => Pops(1, 0),
        0x58 => Pops(2, 0),
        0x59..=0x5f => Shuffle(op),
        // Arithmetic: int/float forms pop 2 push 1, long/double pop 4 push 2.
        0x60..=0x73 => {
            if op % 2 == 0 {
                Pops(2, 1)
            } else {
                Pops(4, 2)
            }
        }
        0x74 | 0x76 => Pops(1, 1),
        0x75 | 0x77 => Pops(2, 2),
        0x78 | 0x7a | 0x7c => Pops(2, 1),
        0x79 | 0x7b | 0x7d => Pops(3, 2),
        0x7e | 0x80 | 0x82 => Pops(2, 1),
        0x7f | 0x81 | 0x83 => Pops(4, 2),
        0x84 => Pops(0, 0),
        0x85 | 0x87 | 0x8c | 0x8d => Pops(1, 2),
        0x86 | 0x8b | 0x91..=0x93 => Pops(1, 1),
        0x88 | 0x89 | 0x8e | 0x90 => Pops(2, 1),
        0x8a | 0x8f => Pops(2, 2),
        0x94 | 0x97 | 0x98 => Pops(4, 1),
        0x95 | 0x96 => Pops(2, 1),
        0xa9 => Pops(0, 0),
        0xac | 0xae | 0xb0 => Pops(1, 0),
        0xad | 0xaf => Pops(2, 0),
        0xb1 => Pops(0, 0),
        0xb2 => Pops(0, type_slots(member(operands)?.1)),
        0xb3 => Pops(type_slots(member(operands)?.1), 0),
        0xb4 => Pops(1, type_slots(member(operands)?.1)),
        0xb5 => Pops(1 + type_slots(member(operands)?.1), 0),
        0xb6..=0xba => {
            let (name, desc) = member(operands)?;
            let (args, ret) = method_slots(desc)?;
            Invoke {
                receiver: usize::from(op != 0xb8 && op != 0xba),
                args,
                ret,
                init: op == 0xb7 && name == b"<init>",
            }
        }
        0xbb => New,
        0xbc | 0xbd | 0xbe | 0xc0 | 0xc1 => Pops(1, 1),
        0xbf | 0xc2 | 0xc3 => Pops(1, 0),
        0xc5 => Pops(*operands.get(2)? as usize, 1),
        _ => return None,
    })
}

/// Does control continue to the next instruction after `insn`?
pub fn falls_through(insn: &Insn) -> bool {
    match insn {
        Insn::Plain { op, .. } => !matches!(op, 0xa9 | 0xac..=0xb1 | 0xbf),
        Insn::Branch { op, .. } => !matches!(op, 0xa7 | 0xc8),
        _ => false,
    }
}

/// The state after instruction `index` (`insn`) runs from `state`, or `None`
/// if the instruction is one this interpreter does not follow (jsr, an
/// unresolvable constant, a stack underflow).
pub fn step(state: &State, index: u32, insn: &Insn, cp: &ConstantPool<'_>) -> Option<State> {
    let mut s = state.clone();
    let pop = |s: &mut State, n: usize| -> Option<Vec<Value>> {
        let at = s.stack.len().checked_sub(n)?;
        Some(s.stack.split_off(at))
    };
    match effect(insn, cp)? {
        Effect::Pops(p, q) => {
            pop(&mut s, p)?;
            s.stack.extend(std::iter::repeat_n(Value::Other, q));
        }
        Effect::Load(i, n) => {
            let v = if n == 1 {
                *s.locals.get(i)?
            } else {
                Value::Other
            };
            s.stack.extend(std::iter::repeat_n(v, n));
        }
        Effect::Store(i, n) => {
            let v = pop(&mut s, n)?;
            if s.locals.len() < i + n {
                s.locals.resize(i + n, Value::Other);
            }
            s.locals[i..i + n].copy_from_slice(&v);
        }
        Effect::Shuffle(op) => {
            let (take, order) = shuffle(op);
            let top = pop(&mut s, take)?;
            s.stack.extend(order.iter().map(|&k| top[k]));
        }
        Effect::Invoke {
            receiver,
            args,
            ret,
            init,
        } => {
            pop(&mut s, args)?;
            let r = pop(&mut s, receiver)?;
            if init {
                let done = match r.first()? {
                    Value::UninitThis => Value::Other,
                    Value::New(i) => Value::Constructed(*i),
                    _ => Value::Other,
                };
                let was = r[0];
                for v in s.stack.iter_mut().chain(s.locals.iter_mut()) {
                    if *v == was {
                        *v = done;
                    }
                }
            }
            s.stack.extend(std::iter::repeat_n(Value::Other, ret));
        }
        Effect::New => s.stack.push(Value::New(index)),
    }
    Some(s)
}

/// Instruction indices control can go to from `index` (fall-through and
/// jump targets; not exception handlers).
pub fn successors(code: &Code<'_>, index: usize) -> Vec<u32> {
    let insn = &code.insns[index];
    let mut out = Vec::new();
    if falls_through(insn) {
        out.push(index as u32 + 1);
    }
    let at = |l: &super::Label| code.labels[l.0 as usize];
    match insn {
        Insn::Branch { target, .. } => out.push(at(target)),
        Insn::TableSwitch(t) => out.extend(std::iter::once(&t.default).chain(&t.targets).map(at)),
        Insn::LookupSwitch(l) => out.extend(
            std::iter::once(&l.default)
                .chain(l.pairs.iter().map(|p| &p.1))
                .map(at),
        ),
        Insn::Plain { .. } => {}
    }
    out
}

/// dup, dup_x1, dup_x2, dup2, dup2_x1, dup2_x2, swap (§6.5): how many
/// top-of-stack slots they take, and the order they put them back in.
pub(crate) fn shuffle(op: u8) -> (usize, &'static [usize]) {
    match op {
        0x59 => (1, &[0, 0]),
        0x5a => (2, &[1, 0, 1]),
        0x5b => (3, &[2, 0, 1, 2]),
        0x5c => (2, &[0, 1, 0, 1]),
        0x5d => (3, &[1, 2, 0, 1, 2]),
        0x5e => (4, &[2, 3, 0, 1, 2, 3]),
        _ => (2, &[1, 0]),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descriptor_slots() {
        assert_eq!(method_slots(b"()V"), Some((0, 0)));
        assert_eq!(method_slots(b"(IJ[JLjava/lang/String;D)J"), Some((7, 2)));
        assert_eq!(method_slots(b"([[Ljava/lang/Object;Z)D"), Some((2, 2)));
        assert_eq!(method_slots(b"(I"), None);
    }
}
