use super::lengths::*;
use super::{Code, Insn, Label};
use crate::opcodes::*;
use std::fmt;

/// Why code cannot be encoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EncodeError {
    /// The method would exceed the JVM's 65,535-byte limit on code.
    TooLong(usize),
    /// A label bound to no position.
    UnboundLabel(u32),
    /// A layout made for other instructions.
    LayoutMismatch,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLong(n) => write!(f, "code would be {n} bytes, over the 65535-byte limit"),
            Self::UnboundLabel(l) => write!(f, "label {l} is bound to no instruction"),
            Self::LayoutMismatch => f.write_str("layout made for other instructions"),
        }
    }
}

impl std::error::Error for EncodeError {}

/// The opposite condition of a conditional branch (for widening).
fn invert(op: u8) -> u8 {
    match op {
        // The JVMS pairs each condition with its opposite: ifeq/ifne, …
        IFEQ..=IF_ACMPNE => ((op - IFEQ) ^ 1) + IFEQ,
        IFNULL => IFNONNULL,
        IFNONNULL => IFNULL,
        _ => op,
    }
}

/// Bytes an instruction takes at `offset`; `widened` for a 16-bit branch that
/// no longer reaches.
fn size(insn: &Insn, offset: usize, widened: bool) -> usize {
    match insn {
        Insn::Plain { operands, .. } => 1 + operands.len(),
        Insn::Branch { op, .. } if *op == GOTO_W || *op == JSR_W => 5,
        Insn::Branch { op, .. } if widened => {
            if *op == GOTO || *op == JSR {
                5 // goto/jsr → goto_w/jsr_w
            } else {
                8 // if!cond +8; goto_w target
            }
        }
        Insn::Branch { .. } => 3,
        Insn::TableSwitch(t) => 1 + pad(offset) + 12 + 4 * t.targets.len(),
        Insn::LookupSwitch(l) => 1 + pad(offset) + 8 + 8 * l.pairs.len(),
    }
}

fn pad(offset: usize) -> usize {
    3 - (offset % 4)
}

/// Where every instruction goes: its offset (and the end's, last), and which
/// 16-bit branches had to be widened. Attributes do not change it, so an
/// editor can lay out once, remap its tables, then encode with it.
#[derive(Debug, Clone)]
pub struct Layout {
    /// Offset of each instruction, then the code length.
    pub offsets: Vec<usize>,
    /// Per instruction: a 16-bit branch written as its 32-bit form (or an
    /// inverted condition over a `goto_w`).
    pub widened: Vec<bool>,
}

impl Layout {
    /// Was a conditional branch (not goto/jsr) widened into an inverted
    /// condition around a `goto_w`? That creates a branch target which needs
    /// a StackMapTable frame.
    pub fn widened_conditional(&self, code: &Code<'_>) -> bool {
        code.insns
            .iter()
            .zip(&self.widened)
            .any(|(insn, &w)| w && matches!(insn, Insn::Branch { op, .. } if is_conditional(*op)))
    }
}

/// Lays out `code`: offsets of every instruction (and of the end), widening
/// 16-bit branches until all reach. Sizes only grow, so this ends.
pub fn layout(code: &Code<'_>) -> Result<Layout, EncodeError> {
    let mut widened = vec![false; code.insns.len()];
    loop {
        let mut offsets = Vec::with_capacity(code.insns.len() + 1);
        let mut pc = 0;
        for (i, insn) in code.insns.iter().enumerate() {
            offsets.push(pc);
            pc += size(insn, pc, widened[i]);
        }
        offsets.push(pc);
        if pc > 65535 {
            return Err(EncodeError::TooLong(pc));
        }
        let mut changed = false;
        for (i, insn) in code.insns.iter().enumerate() {
            if let Insn::Branch { op, target } = insn {
                if is_branch16(*op) && !widened[i] {
                    let delta = label_offset(code, &offsets, *target)? as i64 - offsets[i] as i64;
                    if i16::try_from(delta).is_err() {
                        widened[i] = true;
                        changed = true;
                    }
                }
            }
        }
        if !changed {
            return Ok(Layout { offsets, widened });
        }
    }
}

fn label_offset(code: &Code<'_>, offsets: &[usize], l: Label) -> Result<usize, EncodeError> {
    let idx = *code
        .labels
        .get(l.0 as usize)
        .ok_or(EncodeError::UnboundLabel(l.0))? as usize;
    offsets
        .get(idx)
        .copied()
        .ok_or(EncodeError::UnboundLabel(l.0))
}

/// Encodes a `Code` attribute body. Also returns the offset of each
/// instruction, so offset-based attributes can be remapped by the caller.
pub fn encode_code(code: &Code<'_>) -> Result<(Vec<u8>, Vec<usize>), EncodeError> {
    let layout = layout(code)?;
    let body = encode_laid_out(code, &layout)?;
    Ok((body, layout.offsets))
}

/// Encodes a `Code` attribute body with a layout [`layout`] made for the same
/// instructions (attributes may have changed since).
pub fn encode_laid_out(code: &Code<'_>, layout: &Layout) -> Result<Vec<u8>, EncodeError> {
    let (offsets, widened) = (&layout.offsets, &layout.widened);
    if offsets.len() != code.insns.len() + 1 || widened.len() != code.insns.len() {
        return Err(EncodeError::LayoutMismatch);
    }
    let len = *offsets.last().unwrap_or(&0);
    let attrs: usize = code.attributes.iter().map(|a| 6 + a.data.len()).sum();
    let mut out = Vec::with_capacity(12 + len + 8 * code.handlers.len() + attrs);
    out.extend_from_slice(&code.max_stack.to_be_bytes());
    out.extend_from_slice(&code.max_locals.to_be_bytes());
    out.extend_from_slice(&(len as u32).to_be_bytes());
    let start = out.len();
    let at = |l: Label| label_offset(code, offsets, l);
    for (i, insn) in code.insns.iter().enumerate() {
        let pc = offsets[i];
        debug_assert_eq!(out.len() - start, pc);
        let rel = |l: Label| -> Result<i32, EncodeError> { Ok((at(l)? as i64 - pc as i64) as i32) };
        match insn {
            Insn::Plain { op, operands } => {
                out.push(*op);
                out.extend_from_slice(operands.as_slice());
            }
            Insn::Branch { op, target } if *op == GOTO_W || *op == JSR_W => {
                out.push(*op);
                out.extend_from_slice(&rel(*target)?.to_be_bytes());
            }
            Insn::Branch { op, target } if widened[i] => {
                if *op == GOTO || *op == JSR {
                    out.push(if *op == GOTO { GOTO_W } else { JSR_W });
                    out.extend_from_slice(&rel(*target)?.to_be_bytes());
                } else {
                    out.push(invert(*op));
                    out.extend_from_slice(&8i16.to_be_bytes());
                    out.push(GOTO_W);
                    let delta = at(*target)? as i64 - (pc as i64 + 3);
                    out.extend_from_slice(&(delta as i32).to_be_bytes());
                }
            }
            Insn::Branch { op, target } => {
                out.push(*op);
                out.extend_from_slice(&(rel(*target)? as i16).to_be_bytes());
            }
            Insn::TableSwitch(t) => {
                let super::TableSwitch {
                    default,
                    low,
                    targets,
                } = &**t;
                out.push(TABLESWITCH);
                out.resize(out.len() + pad(pc), 0);
                out.extend_from_slice(&rel(*default)?.to_be_bytes());
                out.extend_from_slice(&low.to_be_bytes());
                out.extend_from_slice(&(low + targets.len() as i32 - 1).to_be_bytes());
                for t in targets {
                    out.extend_from_slice(&rel(*t)?.to_be_bytes());
                }
            }
            Insn::LookupSwitch(l) => {
                let super::LookupSwitch { default, pairs } = &**l;
                out.push(LOOKUPSWITCH);
                out.resize(out.len() + pad(pc), 0);
                out.extend_from_slice(&rel(*default)?.to_be_bytes());
                out.extend_from_slice(&(pairs.len() as u32).to_be_bytes());
                for (k, t) in pairs {
                    out.extend_from_slice(&k.to_be_bytes());
                    out.extend_from_slice(&rel(*t)?.to_be_bytes());
                }
            }
        }
    }
    out.extend_from_slice(&(code.handlers.len() as u16).to_be_bytes());
    for h in &code.handlers {
        for l in [h.start, h.end, h.handler] {
            out.extend_from_slice(&(at(l)? as u16).to_be_bytes());
        }
        out.extend_from_slice(&h.catch_type.to_be_bytes());
    }
    out.extend_from_slice(&(code.attributes.len() as u16).to_be_bytes());
    for a in &code.attributes {
        out.extend_from_slice(&a.name_index.to_be_bytes());
        out.extend_from_slice(&(a.data.len() as u32).to_be_bytes());
        out.extend_from_slice(&a.data);
    }
    Ok(out)
}
