//! A method's code as instructions whose jump targets are labels, not
//! offsets: read from a `Code` attribute, and written back by laying out
//! offsets afresh (switch padding and branch offsets are computed at write
//! time). Nested attributes of `Code` are kept as read.

mod decode;
mod encode;
mod frames;
mod lengths;
pub mod stack;
mod types;

pub use decode::{decode_code, instruction_offsets};
pub use encode::{encode_code, encode_laid_out, layout, EncodeError, Layout};
pub use frames::{decode_frames, encode_frames, initial_locals, Frame, VType};
pub use types::{widened_frames, TypesLost};

use crate::opcodes::*;
use crate::Attribute;

/// A position in the code; bound to an instruction index by [`Code::labels`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Label(pub u32);

/// An instruction's operand bytes, stored inline (at most 5: `wide iinc`), so
/// decoding allocates nothing per instruction.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct Operands {
    len: u8,
    bytes: [u8; 5],
}

impl Operands {
    /// `None` if longer than any instruction's operands can be.
    pub fn new(b: &[u8]) -> Option<Self> {
        let mut bytes = [0; 5];
        bytes.get_mut(..b.len())?.copy_from_slice(b);
        Some(Self {
            len: b.len() as u8,
            bytes,
        })
    }
    /// The operand bytes, in class-file order (big-endian).
    pub fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len as usize]
    }
    /// How many operand bytes: the instruction's size less its opcode.
    pub fn len(&self) -> usize {
        self.len as usize
    }
    /// No operands (most instructions).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl std::fmt::Debug for Operands {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.as_slice().fmt(f)
    }
}

/// One instruction. Only what refers to other instructions is decoded (to
/// labels, so code can be inserted); everything else stays bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Insn {
    /// Any instruction without a jump target: opcode and operand bytes as read
    /// (for `wide`, the widened opcode and its operands).
    Plain {
        /// The opcode (`WIDE` for a widened one).
        op: u8,
        /// The operand bytes after the opcode.
        operands: Operands,
    },
    /// if*, goto, jsr (16-bit offset), goto_w, jsr_w (32-bit).
    Branch {
        /// As read; a 16-bit branch that no longer reaches is widened when
        /// encoded, not here.
        op: u8,
        /// Where it jumps.
        target: Label,
    },
    /// Boxed, like `LookupSwitch`: switches are rare, and unboxed they made
    /// every instruction 40 bytes instead of 16 (memory traffic dominated
    /// decoding).
    TableSwitch(Box<TableSwitch>),
    /// `lookupswitch`, boxed like `TableSwitch`.
    LookupSwitch(Box<LookupSwitch>),
}

/// A `tableswitch`: jump to `targets[key - low]`, else to `default`. The
/// padding and `high` are computed when encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSwitch {
    /// Where keys outside `low..low + targets.len()` go.
    pub default: Label,
    /// The key of `targets[0]`.
    pub low: i32,
    /// One target per key from `low` on.
    pub targets: Vec<Label>,
}

/// A `lookupswitch`: jump to the target paired with the key, else to
/// `default`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LookupSwitch {
    /// Where keys without a pair go.
    pub default: Label,
    /// (key, target), keys ascending as the JVM requires.
    pub pairs: Vec<(i32, Label)>,
}

/// An exception-table entry, with labels for its offsets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handler {
    /// First instruction covered.
    pub start: Label,
    /// First instruction past those covered.
    pub end: Label,
    /// Where the handler's code starts.
    pub handler: Label,
    /// CONSTANT_Class of the caught type; 0 catches everything (`finally`).
    pub catch_type: u16,
}

/// A decoded `Code` attribute.
#[derive(Debug, Clone)]
pub struct Code<'a> {
    /// Operand-stack slots the method needs at most.
    pub max_stack: u16,
    /// Local-variable slots, parameters (and `this`) included.
    pub max_locals: u16,
    /// The instructions, in order.
    pub insns: Vec<Insn>,
    /// Label id → index in `insns` it stands before (`insns.len()` = the end).
    pub labels: Vec<u32>,
    /// The exception table, in order: the first matching entry wins.
    pub handlers: Vec<Handler>,
    /// Nested attributes (LineNumberTable, StackMapTable…) as read: the
    /// editor remaps those holding offsets.
    pub attributes: Vec<Attribute<'a>>,
    /// Offset each instruction had when read (and the code length last), for
    /// mapping offset-based attributes; empty for code built from scratch.
    pub offsets: Vec<u32>,
}

impl Insn {
    /// An instruction without a jump target, e.g. `Insn::plain(ICONST_1, &[])`.
    pub fn plain(op: u8, operands: &[u8]) -> Self {
        Insn::Plain {
            op,
            operands: Operands::new(operands).expect("at most 5 operand bytes"),
        }
    }

    /// A load or store of local `slot`, `op` one of `ILOAD`…`ALOAD` or
    /// `ISTORE`…`ASTORE`: the one-byte form for slots 0–3, `wide` past 255.
    pub fn local(op: u8, slot: u16) -> Self {
        // The `_0` forms come four per type, in the order of the long forms.
        let short = match op {
            ILOAD..=ALOAD => ILOAD_0 + (op - ILOAD) * 4,
            _ => ISTORE_0 + (op - ISTORE) * 4,
        };
        match slot {
            0..=3 => Insn::plain(short + slot as u8, &[]),
            4..=255 => Insn::plain(op, &[slot as u8]),
            _ => {
                let [hi, lo] = slot.to_be_bytes();
                Insn::plain(WIDE, &[op, hi, lo])
            }
        }
    }

    /// Pushes an int: `iconst_*`, `bipush`, `sipush`, else `ldc_w` of a new
    /// constant.
    pub fn push_int(cp: &mut crate::ConstantPool<'_>, value: i32) -> Self {
        match value {
            -1..=5 => Insn::plain((ICONST_0 as i32 + value) as u8, &[]),
            -128..=127 => Insn::plain(BIPUSH, &[value as i8 as u8]),
            -32768..=32767 => Insn::plain(SIPUSH, &(value as i16).to_be_bytes()),
            _ => Insn::plain(LDC_W, &cp.add_integer(value).to_be_bytes()),
        }
    }
}

impl Code<'_> {
    /// The instruction that started at `offset` when read.
    pub fn index_at(&self, offset: u32) -> Option<u32> {
        self.offsets.binary_search(&offset).ok().map(|i| i as u32)
    }

    /// A new label bound before instruction `index`.
    pub fn label_at(&mut self, index: u32) -> Label {
        self.labels.push(index);
        Label(self.labels.len() as u32 - 1)
    }
}
