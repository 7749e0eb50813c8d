//! Verification types through straight-line code, for the frames an edit
//! creates. A conditional branch that no longer reaches is written as the
//! inverted condition jumping over a `goto_w`; the instruction after the
//! `goto_w` is then a branch target, and class files of version 50+ need a
//! StackMapTable frame there. As ASM does for the frames it inserts, that
//! frame is computed from the nearest frame before the conditional (or the
//! method's entry frame): the types of locals and stack are followed forward
//! instruction by instruction (no jump lands in between: a jump target has a
//! frame of its own), and the conditional's operands popped. The state so
//! computed is exactly the verifier's there, so the code after it checks as
//! it did before.

use super::stack::method_slots;
use super::{Code, Frame, Insn, VType};
use crate::opcodes::*;
use crate::tags::*;
use crate::ConstantPool;

/// A widened conditional (by instruction index) whose types cannot be
/// followed: after a `jsr`, or code the interpreter below does not know.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypesLost(pub usize);

impl std::fmt::Display for TypesLost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let i = self.0;
        write!(f, "the types at widened conditional {i} cannot be followed")
    }
}

impl std::error::Error for TypesLost {}

/// Frames to add for the conditional branches `widened` marks in `code`:
/// one before the instruction after each (unless `frames` has one there).
/// `frames` are the method's frames for `code` (sorted by instruction, any
/// new local of the edit in them), `initial` the entry frame's locals, and
/// `this_class` the class's CONSTANT_Class (what `uninitializedThis` becomes
/// after the super()/this() call). An error names a conditional whose types
/// cannot be followed (after a `jsr`, or code this does not understand).
pub fn widened_frames(
    code: &Code<'_>,
    widened: &[bool],
    frames: &[Frame],
    initial: &[VType],
    this_class: u16,
    cp: &mut ConstantPool<'_>,
) -> Result<Vec<Frame>, TypesLost> {
    let needs = |i: usize| widened[i] && is_conditional(&code.insns[i]);
    let Some(last) = (0..code.insns.len()).rev().find(|&i| needs(i)) else {
        return Ok(Vec::new());
    };
    let has_frame = |i: usize| frames.binary_search_by_key(&(i as u32), |f| f.at).is_ok();
    let mut out = Vec::new();
    let mut state = Some(State::from_frame(initial, &[]));
    let mut next_frame = frames.iter().peekable();
    for i in 0..=last {
        while next_frame.next_if(|f| (f.at as usize) < i).is_some() {}
        if let Some(f) = next_frame.next_if(|f| f.at as usize == i) {
            state = Some(State::from_frame(&f.locals, &f.stack));
        }
        let insn = &code.insns[i];
        let after = state
            .as_mut()
            .and_then(|s| s.step(i, insn, code, this_class, cp).map(|()| s.clone()));
        if needs(i) && !has_frame(i + 1) {
            let s = after.as_ref().ok_or(TypesLost(i))?;
            out.push(s.to_frame(i as u32 + 1));
        }
        state = after.filter(|_| falls_through(insn));
    }
    Ok(out)
}

fn is_conditional(insn: &Insn) -> bool {
    matches!(insn, Insn::Branch { op, .. } if crate::opcodes::is_conditional(*op))
}

/// Does control continue to the next instruction? (`jsr` counts as not: its
/// subroutine is not followed.)
fn falls_through(insn: &Insn) -> bool {
    match insn {
        Insn::Plain { op: WIDE, operands } => operands.as_slice().first() != Some(&RET),
        Insn::Plain { op, .. } => !matches!(*op, RET | IRETURN..=RETURN | ATHROW),
        Insn::Branch { op, .. } => !matches!(*op, GOTO | JSR | GOTO_W | JSR_W),
        Insn::TableSwitch(_) | Insn::LookupSwitch(_) => false,
    }
}

fn wide(t: VType) -> bool {
    matches!(t, VType::Long | VType::Double)
}

/// Locals and stack one slot per entry: a long or double is followed by a
/// `Top` for its second half (frames list it once).
#[derive(Debug, Clone)]
struct State {
    locals: Vec<VType>,
    stack: Vec<VType>,
}

fn to_slots(types: &[VType]) -> Vec<VType> {
    let mut v = Vec::with_capacity(types.len() + 2);
    for &t in types {
        v.push(t);
        if wide(t) {
            v.push(VType::Top);
        }
    }
    v
}

fn from_slots(slots: &[VType]) -> Vec<VType> {
    let mut v = Vec::with_capacity(slots.len());
    let mut j = 0;
    while j < slots.len() {
        v.push(slots[j]);
        j += if wide(slots[j]) { 2 } else { 1 };
    }
    v
}

impl State {
    fn from_frame(locals: &[VType], stack: &[VType]) -> Self {
        State {
            locals: to_slots(locals),
            stack: to_slots(stack),
        }
    }

    fn to_frame(&self, at: u32) -> Frame {
        let mut locals = from_slots(&self.locals);
        while locals.last() == Some(&VType::Top) {
            locals.pop();
        }
        Frame {
            at,
            locals,
            stack: from_slots(&self.stack),
        }
    }

    fn push(&mut self, t: VType) {
        self.stack.push(t);
        if wide(t) {
            self.stack.push(VType::Top);
        }
    }

    fn pop(&mut self, slots: usize) -> Option<Vec<VType>> {
        let at = self.stack.len().checked_sub(slots)?;
        Some(self.stack.split_off(at))
    }

    fn load(&mut self, i: usize) -> Option<()> {
        let t = *self.locals.get(i)?;
        self.push(t);
        Some(())
    }

    /// Stores `t` (popped: `slots` of them) into local `i`, invalidating a
    /// long or double whose half it overwrites.
    fn store(&mut self, i: usize, t: VType) -> Option<()> {
        let n = if wide(t) { 2 } else { 1 };
        self.pop(n)?;
        if self.locals.len() < i + n {
            self.locals.resize(i + n, VType::Top);
        }
        if i > 0 && wide(self.locals[i - 1]) {
            self.locals[i - 1] = VType::Top;
        }
        if wide(self.locals[i + n - 1]) {
            if let Some(next) = self.locals.get_mut(i + n) {
                *next = VType::Top;
            }
        }
        self.locals[i] = t;
        if n == 2 {
            self.locals[i + 1] = VType::Top;
        }
        Some(())
    }

    /// Runs instruction `index` of `code`; `None` if it cannot be followed.
    fn step(
        &mut self,
        index: usize,
        insn: &Insn,
        code: &Code<'_>,
        this_class: u16,
        cp: &mut ConstantPool<'_>,
    ) -> Option<()> {
        use VType::*;
        let (op, o) = match insn {
            Insn::Plain { op, operands } => (*op, operands.as_slice()),
            Insn::Branch { op, .. } => {
                let pops = match *op {
                    IFEQ..=IFLE | IFNULL | IFNONNULL => 1,
                    IF_ICMPEQ..=IF_ACMPNE => 2,
                    GOTO | GOTO_W => 0,
                    _ => return None, // jsr
                };
                return self.pop(pops).map(|_| ());
            }
            Insn::TableSwitch(_) | Insn::LookupSwitch(_) => return self.pop(1).map(|_| ()),
        };
        let u16_at = |k: usize| Some(u16::from_be_bytes([*o.get(k)?, *o.get(k + 1)?]));
        // `wide`: the inner opcode with a two-byte local index.
        let (op, local) = match op {
            WIDE => (*o.first()?, u16_at(1)? as usize),
            _ => (op, o.first().copied().unwrap_or(0) as usize),
        };
        // Pops (in slots) and what is pushed, for the simple cases.
        let simple: Option<(usize, Option<VType>)> = match op {
            NOP | IINC => Some((0, None)),
            ACONST_NULL => Some((0, Some(Null))),
            ICONST_M1..=ICONST_5 | BIPUSH | SIPUSH => Some((0, Some(Integer))),
            LCONST_0 | LCONST_1 => Some((0, Some(Long))),
            FCONST_0..=FCONST_2 => Some((0, Some(Float))),
            DCONST_0 | DCONST_1 => Some((0, Some(Double))),
            IALOAD | BALOAD..=SALOAD => Some((2, Some(Integer))),
            LALOAD => Some((2, Some(Long))),
            FALOAD => Some((2, Some(Float))),
            DALOAD => Some((2, Some(Double))),
            IASTORE | FASTORE | AASTORE..=SASTORE => Some((3, None)),
            LASTORE | DASTORE => Some((4, None)),
            POP => Some((1, None)),
            POP2 => Some((2, None)),
            // Arithmetic cycles int, long, float, double from IADD (≡ 0 mod 4).
            IADD..=DREM => Some(match op % 4 {
                0 => (2, Some(Integer)),
                1 => (4, Some(Long)),
                2 => (2, Some(Float)),
                _ => (4, Some(Double)),
            }),
            INEG => Some((1, Some(Integer))),
            LNEG => Some((2, Some(Long))),
            FNEG => Some((1, Some(Float))),
            DNEG => Some((2, Some(Double))),
            ISHL | ISHR | IUSHR | IAND | IOR | IXOR => Some((2, Some(Integer))),
            LSHL | LSHR | LUSHR => Some((3, Some(Long))),
            LAND | LOR | LXOR => Some((4, Some(Long))),
            I2L | F2L => Some((1, Some(Long))),
            I2F => Some((1, Some(Float))),
            I2D | F2D => Some((1, Some(Double))),
            L2I | D2I => Some((2, Some(Integer))),
            L2F | D2F => Some((2, Some(Float))),
            L2D => Some((2, Some(Double))),
            F2I | I2B..=I2S => Some((1, Some(Integer))),
            D2L => Some((2, Some(Long))),
            LCMP | DCMPL | DCMPG => Some((4, Some(Integer))),
            FCMPL | FCMPG => Some((2, Some(Integer))),
            IRETURN | FRETURN | ARETURN | ATHROW | MONITORENTER | MONITOREXIT => Some((1, None)),
            LRETURN | DRETURN => Some((2, None)),
            RETURN => Some((0, None)),
            ARRAYLENGTH | INSTANCEOF => Some((1, Some(Integer))),
            _ => None,
        };
        if let Some((pops, push)) = simple {
            self.pop(pops)?;
            if let Some(t) = push {
                self.push(t);
            }
            return Some(());
        }
        match op {
            LDC..=LDC2_W => {
                let i = if op == LDC {
                    *o.first()? as u16
                } else {
                    u16_at(0)?
                };
                let t = match cp.tag_any(i)? {
                    CONSTANT_INTEGER => Integer,
                    CONSTANT_FLOAT => Float,
                    CONSTANT_LONG => Long,
                    CONSTANT_DOUBLE => Double,
                    CONSTANT_STRING => Object(cp.class_index("java/lang/String")),
                    CONSTANT_CLASS => Object(cp.class_index("java/lang/Class")),
                    CONSTANT_METHOD_TYPE => Object(cp.class_index("java/lang/invoke/MethodType")),
                    CONSTANT_METHOD_HANDLE => {
                        Object(cp.class_index("java/lang/invoke/MethodHandle"))
                    }
                    CONSTANT_DYNAMIC => {
                        let d = cp.member_any(i)?.1.to_vec();
                        descriptor_type(&d, cp)??
                    }
                    _ => return None,
                };
                self.push(t);
            }
            ILOAD => self.push(Integer),
            LLOAD => self.push(Long),
            FLOAD => self.push(Float),
            DLOAD => self.push(Double),
            ALOAD => self.load(local)?,
            ILOAD_0..=ILOAD_3 => self.push(Integer),
            LLOAD_0..=LLOAD_3 => self.push(Long),
            FLOAD_0..=FLOAD_3 => self.push(Float),
            DLOAD_0..=DLOAD_3 => self.push(Double),
            ALOAD_0..=ALOAD_3 => self.load((op - ALOAD_0) as usize)?,
            AALOAD => {
                self.pop(1)?;
                let array = self.pop(1)?[0];
                let t = match array {
                    Null => Null,
                    Object(c) => {
                        let name = cp.class_name_any(c)?.strip_prefix(b"[")?.to_vec();
                        Object(class_of_descriptor(&name, cp)?)
                    }
                    _ => return None,
                };
                self.push(t);
            }
            ISTORE => self.store(local, Integer)?,
            LSTORE => self.store(local, Long)?,
            FSTORE => self.store(local, Float)?,
            DSTORE => self.store(local, Double)?,
            ASTORE => {
                let t = *self.stack.last()?;
                self.store(local, t)?
            }
            ISTORE_0..=ISTORE_3 => self.store((op - ISTORE_0) as usize, Integer)?,
            LSTORE_0..=LSTORE_3 => self.store((op - LSTORE_0) as usize, Long)?,
            FSTORE_0..=FSTORE_3 => self.store((op - FSTORE_0) as usize, Float)?,
            DSTORE_0..=DSTORE_3 => self.store((op - DSTORE_0) as usize, Double)?,
            ASTORE_0..=ASTORE_3 => {
                let t = *self.stack.last()?;
                self.store((op - ASTORE_0) as usize, t)?
            }
            DUP..=SWAP => {
                let (take, order) = super::stack::shuffle(op);
                let top = self.pop(take)?;
                self.stack.extend(order.iter().map(|&k| top[k]));
            }
            GETSTATIC..=PUTFIELD => {
                let d = cp.member_any(u16_at(0)?)?.1.to_vec();
                let t = descriptor_type(&d, cp)??;
                let slots = if wide(t) { 2 } else { 1 };
                match op {
                    GETSTATIC => self.push(t),
                    PUTSTATIC => drop(self.pop(slots)?),
                    GETFIELD => {
                        self.pop(1)?;
                        self.push(t)
                    }
                    _ => drop(self.pop(slots + 1)?),
                }
            }
            INVOKEVIRTUAL..=INVOKEDYNAMIC => {
                let (name, d) = cp.member_any(u16_at(0)?)?;
                let init = op == INVOKESPECIAL && name == b"<init>";
                let close = d.iter().position(|&c| c == b')')?;
                let (args, _) = method_slots(d)?;
                let ret = d[close + 1..].to_vec();
                self.pop(args)?;
                if op != INVOKESTATIC && op != INVOKEDYNAMIC {
                    let receiver = self.pop(1)?[0];
                    if init {
                        let done = match receiver {
                            UninitializedThis => Object(this_class),
                            Uninitialized(n) => match code.insns.get(n as usize)? {
                                Insn::Plain { op: NEW, operands } => {
                                    let o = operands.as_slice();
                                    Object(u16::from_be_bytes([*o.first()?, *o.get(1)?]))
                                }
                                _ => return None,
                            },
                            _ => return None,
                        };
                        for t in self.stack.iter_mut().chain(self.locals.iter_mut()) {
                            if *t == receiver {
                                *t = done;
                            }
                        }
                    }
                }
                if let Some(t) = descriptor_type(&ret, cp)? {
                    self.push(t);
                }
            }
            NEW => self.push(Uninitialized(index as u32)),
            NEWARRAY => {
                let name = array_type::descriptor(*o.first()?)?;
                self.pop(1)?;
                self.push(Object(cp.class_index(name)));
            }
            ANEWARRAY => {
                let element = cp.class_name_any(u16_at(0)?)?;
                let name = if element.first() == Some(&b'[') {
                    [b"[", element].concat()
                } else {
                    [b"[L", element, b";"].concat()
                };
                self.pop(1)?;
                let c = cp.class_index(&name);
                self.push(Object(c));
            }
            CHECKCAST => {
                self.pop(1)?;
                self.push(Object(u16_at(0)?));
            }
            MULTIANEWARRAY => {
                self.pop(*o.get(2)? as usize)?;
                self.push(Object(u16_at(0)?));
            }
            _ => return None, // ret, and opcodes no class may use
        }
        Some(())
    }
}

/// The verification type of a field descriptor or return type: `Some(None)`
/// for `V`, `None` if malformed.
fn descriptor_type(d: &[u8], cp: &mut ConstantPool<'_>) -> Option<Option<VType>> {
    Some(Some(match d.first()? {
        b'V' => return Some(None),
        b'Z' | b'B' | b'C' | b'S' | b'I' => VType::Integer,
        b'F' => VType::Float,
        b'J' => VType::Long,
        b'D' => VType::Double,
        b'L' | b'[' => VType::Object(class_of_descriptor(d, cp)?),
        _ => return None,
    }))
}

/// The CONSTANT_Class of a reference type's descriptor (`Ljava/lang/String;`
/// is `java/lang/String`, `[I` is `[I`).
fn class_of_descriptor(d: &[u8], cp: &mut ConstantPool<'_>) -> Option<u16> {
    let name = match d.first()? {
        b'L' => d.get(1..d.len().checked_sub(1)?)?,
        b'[' => d,
        _ => return None,
    };
    Some(cp.class_index(name))
}
