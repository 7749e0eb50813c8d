use super::opcodes::*;
use super::{Code, Handler, Insn, Label, Operands};
use crate::read::{read_attributes, Cursor};
use crate::ReadError;
const NONE: u32 = u32::MAX;

/// Decodes a `Code` attribute's body. Offsets in errors are within that body.
pub fn decode_code(body: &[u8]) -> Result<Code<'_>, ReadError> {
    let mut c = Cursor::new(body);
    let max_stack = c.u16("max_stack")?;
    let max_locals = c.u16("max_locals")?;
    let len = c.u32("code_length")? as usize;
    let code_start = c.pos();
    let code = c.bytes(len, "code")?;
    if len == 0 || len > 65535 {
        return Err(ReadError::new(
            code_start - 4,
            format!("code_length {len} out of range"),
        ));
    }

    // Pass 1: instruction boundaries, and the raw target offsets of jumps.
    let mut starts = Vec::new();
    let mut raw = Vec::new();
    let mut pc = 0usize;
    while pc < len {
        starts.push(pc);
        let (insn, next) =
            decode_one(code, pc).map_err(|(at, why)| ReadError::new(code_start + at, why))?;
        raw.push(insn);
        pc = next;
    }
    // offset -> instruction index (NONE between instruction starts); len -> the end.
    let mut index_of = vec![NONE; len + 1];
    for (i, &o) in starts.iter().enumerate() {
        index_of[o] = i as u32;
    }
    index_of[len] = starts.len() as u32;

    // Pass 2: offsets become labels; one label per distinct target offset.
    let mut labels = Vec::new();
    let mut label_of = vec![NONE; len + 1];
    let mut label = |offset: i64, at: usize| -> Result<Label, ReadError> {
        let o = usize::try_from(offset)
            .ok()
            .filter(|&o| o <= len && index_of[o] != NONE)
            .ok_or_else(|| {
                ReadError::new(
                    code_start + at,
                    format!("jump to {offset}, not an instruction start"),
                )
            })?;
        if label_of[o] == NONE {
            labels.push(index_of[o]);
            label_of[o] = labels.len() as u32 - 1;
        }
        Ok(Label(label_of[o]))
    };
    let mut insns = Vec::with_capacity(raw.len());
    for (i, r) in raw.into_iter().enumerate() {
        let at = starts[i];
        let rel = |d: i32| at as i64 + d as i64;
        insns.push(match r {
            RawInsn::Plain { op, operands } => Insn::Plain { op, operands },
            RawInsn::Branch { op, delta } => Insn::Branch {
                op,
                target: label(rel(delta), at)?,
            },
            RawInsn::Table {
                default,
                low,
                deltas,
            } => Insn::TableSwitch {
                default: label(rel(default), at)?,
                low,
                targets: deltas
                    .into_iter()
                    .map(|d| label(rel(d), at))
                    .collect::<Result<_, _>>()?,
            },
            RawInsn::Lookup { default, pairs } => Insn::LookupSwitch {
                default: label(rel(default), at)?,
                pairs: pairs
                    .into_iter()
                    .map(|(k, d)| Ok((k, label(rel(d), at)?)))
                    .collect::<Result<_, _>>()?,
            },
        });
    }

    let n = c.u16("exception_table_length")?;
    let mut handlers = Vec::with_capacity((n as usize).min(c.remaining() / 8));
    for _ in 0..n {
        let at = c.pos();
        let (s, e, h) = (c.u16("start_pc")?, c.u16("end_pc")?, c.u16("handler_pc")?);
        let catch_type = c.u16("catch_type")?;
        handlers.push(Handler {
            start: label(s as i64, at - code_start)?,
            end: label(e as i64, at - code_start)?,
            handler: label(h as i64, at - code_start)?,
            catch_type,
        });
    }
    let attributes = read_attributes(&mut c)?;
    if c.remaining() != 0 {
        return Err(ReadError::new(
            c.pos(),
            "bytes after the Code attribute's attributes",
        ));
    }
    Ok(Code {
        max_stack,
        max_locals,
        insns,
        labels,
        handlers,
        attributes,
        offsets: starts
            .iter()
            .map(|&o| o as u32)
            .chain([len as u32])
            .collect(),
    })
}

enum RawInsn {
    Plain {
        op: u8,
        operands: Operands,
    },
    Branch {
        op: u8,
        delta: i32,
    },
    Table {
        default: i32,
        low: i32,
        deltas: Vec<i32>,
    },
    Lookup {
        default: i32,
        pairs: Vec<(i32, i32)>,
    },
}

fn be16(b: &[u8], at: usize) -> Option<i16> {
    Some(i16::from_be_bytes([*b.get(at)?, *b.get(at + 1)?]))
}

fn be32(b: &[u8], at: usize) -> Option<i32> {
    Some(i32::from_be_bytes([
        *b.get(at)?,
        *b.get(at + 1)?,
        *b.get(at + 2)?,
        *b.get(at + 3)?,
    ]))
}

/// One instruction at `pc`: it and where the next one starts.
fn decode_one(code: &[u8], pc: usize) -> Result<(RawInsn, usize), (usize, String)> {
    let short = || (pc, "instruction runs past the end of the code".to_owned());
    let op = code[pc];
    if let Some(n) = fixed_len(op) {
        let operands = code.get(pc + 1..pc + n).ok_or_else(short)?;
        let insn = if is_branch16(op) {
            RawInsn::Branch {
                op,
                delta: be16(code, pc + 1).ok_or_else(short)? as i32,
            }
        } else if op == GOTO_W || op == JSR_W {
            RawInsn::Branch {
                op,
                delta: be32(code, pc + 1).ok_or_else(short)?,
            }
        } else {
            RawInsn::Plain {
                op,
                operands: Operands::new(operands).ok_or_else(short)?,
            }
        };
        return Ok((insn, pc + n));
    }
    match op {
        WIDE => {
            let inner = *code.get(pc + 1).ok_or_else(short)?;
            let n = match inner {
                IINC => 6,
                0x15..=0x19 | 0x36..=0x3a | 0xa9 => 4,
                _ => return Err((pc, format!("wide before opcode {inner:#04x}"))),
            };
            let operands =
                Operands::new(code.get(pc + 1..pc + n).ok_or_else(short)?).ok_or_else(short)?;
            Ok((RawInsn::Plain { op, operands }, pc + n))
        }
        TABLESWITCH | LOOKUPSWITCH => {
            let base = (pc + 4) & !3; // operands start 4-byte aligned
            let default = be32(code, base).ok_or_else(short)?;
            if op == TABLESWITCH {
                let low = be32(code, base + 4).ok_or_else(short)?;
                let high = be32(code, base + 8).ok_or_else(short)?;
                if high < low {
                    return Err((pc, format!("tableswitch high {high} < low {low}")));
                }
                let n = (high as i64 - low as i64 + 1) as usize;
                if n > (code.len() - base) / 4 {
                    return Err(short());
                }
                let deltas = (0..n)
                    .map(|i| be32(code, base + 12 + 4 * i).ok_or_else(short))
                    .collect::<Result<_, _>>()?;
                Ok((
                    RawInsn::Table {
                        default,
                        low,
                        deltas,
                    },
                    base + 12 + 4 * n,
                ))
            } else {
                let n = be32(code, base + 4).ok_or_else(short)?;
                if n < 0 || n as usize > (code.len() - base) / 8 {
                    return Err((pc, format!("lookupswitch with {n} pairs")));
                }
                let pairs = (0..n as usize)
                    .map(|i| {
                        Ok((
                            be32(code, base + 8 + 8 * i).ok_or_else(short)?,
                            be32(code, base + 12 + 8 * i).ok_or_else(short)?,
                        ))
                    })
                    .collect::<Result<_, _>>()?;
                Ok((
                    RawInsn::Lookup { default, pairs },
                    base + 8 + 8 * n as usize,
                ))
            }
        }
        _ => Err((pc, format!("invalid opcode {op:#04x}"))),
    }
}
