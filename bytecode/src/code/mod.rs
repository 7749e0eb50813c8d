//! A method's code as instructions whose jump targets are labels, not
//! offsets: read from a `Code` attribute, and written back by laying out
//! offsets afresh (switch padding and branch offsets are computed at write
//! time). Nested attributes of `Code` are kept as read.

mod decode;
mod encode;
mod frames;
mod opcodes;

pub use decode::decode_code;
pub use encode::{encode_code, EncodeError};
pub use frames::{decode_frames, encode_frames, initial_locals, Frame, VType};

use crate::Attribute;

/// A position in the code; bound to an instruction index by [`Code::labels`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Label(pub u32);

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Insn {
    /// Any instruction without a jump target: opcode and operand bytes as read
    /// (for `wide`, the widened opcode and its operands).
    Plain { op: u8, operands: Vec<u8> },
    /// if*, goto, jsr (16-bit offset), goto_w, jsr_w (32-bit).
    Branch { op: u8, target: Label },
    TableSwitch {
        default: Label,
        low: i32,
        targets: Vec<Label>,
    },
    LookupSwitch {
        default: Label,
        pairs: Vec<(i32, Label)>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handler {
    pub start: Label,
    pub end: Label,
    pub handler: Label,
    pub catch_type: u16,
}

#[derive(Debug, Clone)]
pub struct Code<'a> {
    pub max_stack: u16,
    pub max_locals: u16,
    pub insns: Vec<Insn>,
    /// Label id → index in `insns` it stands before (`insns.len()` = the end).
    pub labels: Vec<u32>,
    pub handlers: Vec<Handler>,
    pub attributes: Vec<Attribute<'a>>,
    /// Offset each instruction had when read (and the code length last), for
    /// mapping offset-based attributes; empty for code built from scratch.
    pub offsets: Vec<u32>,
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
