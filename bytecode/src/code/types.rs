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
use crate::ConstantPool;

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
) -> Result<Vec<Frame>, String> {
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
            let s = after.as_ref().ok_or_else(|| {
                format!("the types at widened conditional {i} cannot be followed")
            })?;
            out.push(s.to_frame(i as u32 + 1));
        }
        state = after.filter(|_| falls_through(insn));
    }
    Ok(out)
}

fn is_conditional(insn: &Insn) -> bool {
    matches!(
        insn,
        Insn::Branch {
            op: 0x99..=0xa6 | 0xc6 | 0xc7,
            ..
        }
    )
}

/// Does control continue to the next instruction? (`jsr` counts as not: its
/// subroutine is not followed.)
fn falls_through(insn: &Insn) -> bool {
    match insn {
        Insn::Plain { op: 0xc4, operands } => operands.as_slice().first() != Some(&0xa9),
        Insn::Plain { op, .. } => !matches!(op, 0xa9 | 0xac..=0xb1 | 0xbf),
        Insn::Branch { op, .. } => !matches!(op, 0xa7 | 0xa8 | 0xc8 | 0xc9),
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
                let pops = match op {
                    0x99..=0x9e | 0xc6 | 0xc7 => 1,
                    0x9f..=0xa6 => 2,
                    0xa7 | 0xc8 => 0,
                    _ => return None, // jsr
                };
                return self.pop(pops).map(|_| ());
            }
            Insn::TableSwitch(_) | Insn::LookupSwitch(_) => return self.pop(1).map(|_| ()),
        };
        let u16_at = |k: usize| Some(u16::from_be_bytes([*o.get(k)?, *o.get(k + 1)?]));
        // `wide`: the inner opcode with a two-byte local index.
        let (op, local) = match op {
            0xc4 => (*o.first()?, u16_at(1)? as usize),
            _ => (op, o.first().copied().unwrap_or(0) as usize),
        };
        // Pops (in slots) and what is pushed, for the simple cases.
        let simple: Option<(usize, Option<VType>)> = match op {
            0x00 | 0x84 => Some((0, None)),
            0x01 => Some((0, Some(Null))),
            0x02..=0x08 | 0x10 | 0x11 => Some((0, Some(Integer))),
            0x09 | 0x0a => Some((0, Some(Long))),
            0x0b..=0x0d => Some((0, Some(Float))),
            0x0e | 0x0f => Some((0, Some(Double))),
            0x2e | 0x33..=0x35 => Some((2, Some(Integer))),
            0x2f => Some((2, Some(Long))),
            0x30 => Some((2, Some(Float))),
            0x31 => Some((2, Some(Double))),
            0x4f | 0x51 | 0x53..=0x56 => Some((3, None)),
            0x50 | 0x52 => Some((4, None)),
            0x57 => Some((1, None)),
            0x58 => Some((2, None)),
            0x60..=0x73 => Some(match op % 4 {
                0 => (2, Some(Integer)),
                1 => (4, Some(Long)),
                2 => (2, Some(Float)),
                _ => (4, Some(Double)),
            }),
            0x74 => Some((1, Some(Integer))),
            0x75 => Some((2, Some(Long))),
            0x76 => Some((1, Some(Float))),
            0x77 => Some((2, Some(Double))),
            0x78 | 0x7a | 0x7c | 0x7e | 0x80 | 0x82 => Some((2, Some(Integer))),
            0x79 | 0x7b | 0x7d => Some((3, Some(Long))),
            0x7f | 0x81 | 0x83 => Some((4, Some(Long))),
            0x85 | 0x8c => Some((1, Some(Long))),
            0x86 => Some((1, Some(Float))),
            0x87 | 0x8d => Some((1, Some(Double))),
            0x88 | 0x8e => Some((2, Some(Integer))),
            0x89 | 0x90 => Some((2, Some(Float))),
            0x8a => Some((2, Some(Double))),
            0x8b | 0x91..=0x93 => Some((1, Some(Integer))),
            0x8f => Some((2, Some(Long))),
            0x94 | 0x97 | 0x98 => Some((4, Some(Integer))),
            0x95 | 0x96 => Some((2, Some(Integer))),
            0xac | 0xae | 0xb0 | 0xbf | 0xc2 | 0xc3 => Some((1, None)),
            0xad | 0xaf => Some((2, None)),
            0xb1 => Some((0, None)),
            0xbe | 0xc1 => Some((1, Some(Integer))),
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
            0x12..=0x14 => {
                let i = if op == 0x12 {
                    *o.first()? as u16
                } else {
                    u16_at(0)?
                };
                let t = match cp.tag_any(i)? {
                    3 => Integer,
                    4 => Float,
                    5 => Long,
                    6 => Double,
                    8 => Object(cp.class_index("java/lang/String")),
                    7 => Object(cp.class_index("java/lang/Class")),
                    16 => Object(cp.class_index("java/lang/invoke/MethodType")),
                    15 => Object(cp.class_index("java/lang/invoke/MethodHandle")),
                    17 => {
                        let d = cp.member_any(i)?.1.to_vec();
                        descriptor_type(&d, cp)??
                    }
                    _ => return None,
                };
                self.push(t);
            }
            0x15 => self.push(Integer),
            0x16 => self.push(Long),
            0x17 => self.push(Float),
            0x18 => self.push(Double),
            0x19 => self.load(local)?,
            0x1a..=0x1d => self.push(Integer),
            0x1e..=0x21 => self.push(Long),
            0x22..=0x25 => self.push(Float),
            0x26..=0x29 => self.push(Double),
            0x2a..=0x2d => self.load((op - 0x2a) as usize)?,
            0x32 => {
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
            0x36 => self.store(local, Integer)?,
            0x37 => self.store(local, Long)?,
            0x38 => self.store(local, Float)?,
            0x39 => self.store(local, Double)?,
            0x3a => {
                let t = *self.stack.last()?;
                self.store(local, t)?
            }
            0x3b..=0x3e => self.store((op - 0x3b) as usize, Integer)?,
            0x3f..=0x42 => self.store((op - 0x3f) as usize, Long)?,
            0x43..=0x46 => self.store((op - 0x43) as usize, Float)?,
            0x47..=0x4a => self.store((op - 0x47) as usize, Double)?,
            0x4b..=0x4e => {
                let t = *self.stack.last()?;
                self.store((op - 0x4b) as usize, t)?
            }
            0x59..=0x5f => {
                let (take, order) = super::stack::shuffle(op);
                let top = self.pop(take)?;
                self.stack.extend(order.iter().map(|&k| top[k]));
            }
            0xb2..=0xb5 => {
                let d = cp.member_any(u16_at(0)?)?.1.to_vec();
                let t = descriptor_type(&d, cp)??;
                let slots = if wide(t) { 2 } else { 1 };
                match op {
                    0xb2 => self.push(t),
                    0xb3 => drop(self.pop(slots)?),
                    0xb4 => {
                        self.pop(1)?;
                        self.push(t)
                    }
                    _ => drop(self.pop(slots + 1)?),
                }
            }
            0xb6..=0xba => {
                let (name, d) = cp.member_any(u16_at(0)?)?;
                let init = op == 0xb7 && name == b"<init>";
                let close = d.iter().position(|&c| c == b')')?;
                let (args, _) = method_slots(d)?;
                let ret = d[close + 1..].to_vec();
                self.pop(args)?;
                if op != 0xb8 && op != 0xba {
                    let receiver = self.pop(1)?[0];
                    if init {
                        let done = match receiver {
                            UninitializedThis => Object(this_class),
                            Uninitialized(n) => match code.insns.get(n as usize)? {
                                Insn::Plain { op: 0xbb, operands } => {
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
            0xbb => self.push(Uninitialized(index as u32)),
            0xbc => {
                let name = match *o.first()? {
                    4 => "[Z",
                    5 => "[C",
                    6 => "[F",
                    7 => "[D",
                    8 => "[B",
                    9 => "[S",
                    10 => "[I",
                    11 => "[J",
                    _ => return None,
                };
                self.pop(1)?;
                self.push(Object(cp.class_index(name)));
            }
            0xbd => {
                let element = cp.class_name_any(u16_at(0)?)?;
                let name = if element.first() == Some(&b'[') {
                    [b"[", element].concat()
                } else {
                    [b"[L", element, b";"].concat()
                };
                self.pop(1)?;
                let c = cp.class_index(std::str::from_utf8(&name).ok()?);
                self.push(Object(c));
            }
            0xc0 => {
                self.pop(1)?;
                self.push(Object(u16_at(0)?));
            }
            0xc5 => {
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
    Some(cp.class_index(std::str::from_utf8(name).ok()?))
}
