//! Operand-stack effects of instructions, and a small abstract interpreter
//! that follows where particular values go: `this` before the super()/this()
//! call of a constructor, and objects from `new` before and after their
//! constructor call. Every other value is just "a slot" (long and double take
//! two). That is all the editor needs to place probes in constructors and
//! after allocations; it is not a verifier.

use super::{Code, Insn};
use crate::opcodes::*;
use crate::ConstantPool;

/// What an abstract slot holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Value {
    /// Any value the interpreter does not track (long and double: two).
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
    /// Bottom first, one entry per slot.
    pub stack: Vec<Value>,
    /// From slot 0, one entry per slot.
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
            return Some(match *op {
                IFEQ..=IFLE | IFNULL | IFNONNULL => Pops(1, 0),
                IF_ICMPEQ..=IF_ACMPNE => Pops(2, 0),
                GOTO | GOTO_W => Pops(0, 0),
                _ => return None, // jsr: not followed
            });
        }
        Insn::TableSwitch(_) | Insn::LookupSwitch(_) => return Some(Pops(1, 0)),
    };
    // `wide`: the widened opcode, with a two-byte local index (and, for
    // iinc, a two-byte constant, which `local_index` must not see).
    let (op, operands) = match (op, operands) {
        (WIDE, [inner, index @ ..]) => (*inner, index.get(..2)?),
        _ => (op, operands),
    };
    let member = |i: &[u8]| cp.member_name_and_descriptor(u16::from_be_bytes([i[0], i[1]]));
    Some(match op {
        NOP => Pops(0, 0),
        ACONST_NULL..=ICONST_5 | FCONST_0..=FCONST_2 | BIPUSH..=LDC_W => Pops(0, 1),
        LCONST_0 | LCONST_1 | DCONST_0 | DCONST_1 | LDC2_W => Pops(0, 2),
        ILOAD | FLOAD | ALOAD => Load(local_index(operands), 1),
        LLOAD | DLOAD => Load(local_index(operands), 2),
        ILOAD_0..=ILOAD_3 => Load((op - ILOAD_0) as usize, 1),
        LLOAD_0..=LLOAD_3 => Load((op - LLOAD_0) as usize, 2),
        FLOAD_0..=FLOAD_3 => Load((op - FLOAD_0) as usize, 1),
        DLOAD_0..=DLOAD_3 => Load((op - DLOAD_0) as usize, 2),
        ALOAD_0..=ALOAD_3 => Load((op - ALOAD_0) as usize, 1),
        IALOAD | FALOAD | AALOAD..=SALOAD => Pops(2, 1),
        LALOAD | DALOAD => Pops(2, 2),
        ISTORE | FSTORE | ASTORE => Store(local_index(operands), 1),
        LSTORE | DSTORE => Store(local_index(operands), 2),
        ISTORE_0..=ISTORE_3 => Store((op - ISTORE_0) as usize, 1),
        LSTORE_0..=LSTORE_3 => Store((op - LSTORE_0) as usize, 2),
        FSTORE_0..=FSTORE_3 => Store((op - FSTORE_0) as usize, 1),
        DSTORE_0..=DSTORE_3 => Store((op - DSTORE_0) as usize, 2),
        ASTORE_0..=ASTORE_3 => Store((op - ASTORE_0) as usize, 1),
        IASTORE | FASTORE | AASTORE..=SASTORE => Pops(3, 0),
        LASTORE | DASTORE => Pops(4, 0),
        POP => Pops(1, 0),
        POP2 => Pops(2, 0),
        DUP..=SWAP => Shuffle(op),
        // Arithmetic cycles int, long, float, double (IADD is even): int
        // and float forms pop 2 push 1, long and double pop 4 push 2.
        IADD..=DREM => {
            if op % 2 == 0 {
                Pops(2, 1)
            } else {
                Pops(4, 2)
            }
        }
        INEG | FNEG => Pops(1, 1),
        LNEG | DNEG => Pops(2, 2),
        ISHL | ISHR | IUSHR => Pops(2, 1),
        LSHL | LSHR | LUSHR => Pops(3, 2),
        IAND | IOR | IXOR => Pops(2, 1),
        LAND | LOR | LXOR => Pops(4, 2),
        IINC => Pops(0, 0),
        I2L | I2D | F2L | F2D => Pops(1, 2),
        I2F | F2I | I2B..=I2S => Pops(1, 1),
        L2I | L2F | D2I | D2F => Pops(2, 1),
        L2D | D2L => Pops(2, 2),
        LCMP | DCMPL | DCMPG => Pops(4, 1),
        FCMPL | FCMPG => Pops(2, 1),
        RET => Pops(0, 0),
        IRETURN | FRETURN | ARETURN => Pops(1, 0),
        LRETURN | DRETURN => Pops(2, 0),
        RETURN => Pops(0, 0),
        GETSTATIC => Pops(0, type_slots(member(operands)?.1)),
        PUTSTATIC => Pops(type_slots(member(operands)?.1), 0),
        GETFIELD => Pops(1, type_slots(member(operands)?.1)),
        PUTFIELD => Pops(1 + type_slots(member(operands)?.1), 0),
        INVOKEVIRTUAL..=INVOKEDYNAMIC => {
            let (name, desc) = member(operands)?;
            let (args, ret) = method_slots(desc)?;
            Invoke {
                receiver: usize::from(op != INVOKESTATIC && op != INVOKEDYNAMIC),
                args,
                ret,
                init: op == INVOKESPECIAL && name == b"<init>",
            }
        }
        NEW => New,
        NEWARRAY | ANEWARRAY | ARRAYLENGTH | CHECKCAST | INSTANCEOF => Pops(1, 1),
        ATHROW | MONITORENTER | MONITOREXIT => Pops(1, 0),
        MULTIANEWARRAY => Pops(*operands.get(2)? as usize, 1),
        _ => return None,
    })
}

/// Does control continue to the next instruction after `insn`?
pub fn falls_through(insn: &Insn) -> bool {
    match insn {
        Insn::Plain { op, .. } => !matches!(*op, RET | IRETURN..=RETURN | ATHROW),
        Insn::Branch { op, .. } => !matches!(*op, GOTO | GOTO_W),
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
        DUP => (1, &[0, 0]),
        DUP_X1 => (2, &[1, 0, 1]),
        DUP_X2 => (3, &[2, 0, 1, 2]),
        DUP2 => (2, &[0, 1, 0, 1]),
        DUP2_X1 => (3, &[1, 2, 0, 1, 2]),
        DUP2_X2 => (4, &[2, 3, 0, 1, 2, 3]),
        _ => (2, &[1, 0]), // swap
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
