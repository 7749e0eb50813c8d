use super::lengths::*;
use super::{Code, Handler, Insn, Label, LookupSwitch, Operands, TableSwitch};
use crate::opcodes::*;
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

    // Pass 1: instruction boundaries only (lengths, nothing built).
    let mut starts = Vec::with_capacity(len / 2 + 1);
    let mut pc = 0usize;
    while pc < len {
        starts.push(pc as u32);
        pc = next_start(code, pc).map_err(|(at, why)| ReadError::new(code_start + at, why))?;
    }
    // offset -> instruction index (NONE between instruction starts); len -> the end.
    let mut index_of = vec![NONE; len + 1];
    for (i, &o) in starts.iter().enumerate() {
        index_of[o as usize] = i as u32;
    }
    index_of[len] = starts.len() as u32;

    // Pass 2: each instruction decoded at its start, offsets becoming
    // labels; one label per distinct target offset.
    let mut labels = Vec::with_capacity(starts.len() / 4 + 4);
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
    let mut insns = Vec::with_capacity(starts.len());
    for (i, &at) in starts.iter().enumerate() {
        let at = at as usize;
        let rel = |d: i32| at as i64 + d as i64;
        let op = code[at];
        // Pass 1 checked every length, so the operands are all there.
        let insn = match op {
            _ if is_branch16(op) => Insn::Branch {
                op,
                target: label(rel(be16(code, at + 1).unwrap_or(0) as i32), at)?,
            },
            GOTO_W | JSR_W => Insn::Branch {
                op,
                target: label(rel(be32(code, at + 1).unwrap_or(0)), at)?,
            },
            TABLESWITCH => {
                let base = (at + 4) & !3;
                let low = be32(code, base + 4).unwrap_or(0);
                let high = be32(code, base + 8).unwrap_or(0);
                let n = (high as i64 - low as i64 + 1) as usize;
                Insn::TableSwitch(Box::new(TableSwitch {
                    default: label(rel(be32(code, base).unwrap_or(0)), at)?,
                    low,
                    targets: (0..n)
                        .map(|i| label(rel(be32(code, base + 12 + 4 * i).unwrap_or(0)), at))
                        .collect::<Result<_, _>>()?,
                }))
            }
            LOOKUPSWITCH => {
                let base = (at + 4) & !3;
                let n = be32(code, base + 4).unwrap_or(0) as usize;
                Insn::LookupSwitch(Box::new(LookupSwitch {
                    default: label(rel(be32(code, base).unwrap_or(0)), at)?,
                    pairs: (0..n)
                        .map(|i| {
                            let k = be32(code, base + 8 + 8 * i).unwrap_or(0);
                            Ok((
                                k,
                                label(rel(be32(code, base + 12 + 8 * i).unwrap_or(0)), at)?,
                            ))
                        })
                        .collect::<Result<_, _>>()?,
                }))
            }
            _ => {
                let end = starts.get(i + 1).map_or(len, |&e| e as usize);
                Insn::Plain {
                    op,
                    operands: Operands::new(&code[at + 1..end])
                        .ok_or_else(|| ReadError::new(code_start + at, "operands too long"))?,
                }
            }
        };
        insns.push(insn);
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
        offsets: {
            starts.push(len as u32);
            starts
        },
    })
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

/// Where the instruction at `pc` ends (the next one starts), checking that
/// all of it is inside the code and that the opcode is valid.
fn next_start(code: &[u8], pc: usize) -> Result<usize, (usize, String)> {
    let short = || (pc, "instruction runs past the end of the code".to_owned());
    let op = code[pc];
    if let Some(n) = fixed_len(op) {
        return if pc + n <= code.len() {
            Ok(pc + n)
        } else {
            Err(short())
        };
    }
    match op {
        WIDE => {
            let inner = *code.get(pc + 1).ok_or_else(short)?;
            let n = match inner {
                IINC => 6,
                ILOAD..=ALOAD | ISTORE..=ASTORE | RET => 4,
                _ => return Err((pc, format!("wide before opcode {inner:#04x}"))),
            };
            if pc + n <= code.len() {
                Ok(pc + n)
            } else {
                Err(short())
            }
        }
        TABLESWITCH | LOOKUPSWITCH => {
            let base = (pc + 4) & !3; // operands start 4-byte aligned
            be32(code, base).ok_or_else(short)?;
            let end = if op == TABLESWITCH {
                let low = be32(code, base + 4).ok_or_else(short)?;
                let high = be32(code, base + 8).ok_or_else(short)?;
                if high < low {
                    return Err((pc, format!("tableswitch high {high} < low {low}")));
                }
                let n = (high as i64 - low as i64 + 1) as usize;
                if n > (code.len() - base) / 4 {
                    return Err(short());
                }
                base + 12 + 4 * n
            } else {
                let n = be32(code, base + 4).ok_or_else(short)?;
                if n < 0 || n as usize > (code.len() - base) / 8 {
                    return Err((pc, format!("lookupswitch with {n} pairs")));
                }
                base + 8 + 8 * n as usize
            };
            if end <= code.len() {
                Ok(end)
            } else {
                Err(short())
            }
        }
        _ => Err((pc, format!("invalid opcode {op:#04x}"))),
    }
}

/// The offset of every instruction of a `Code` attribute's body, and the code
/// length last — `Code::offsets` without decoding anything else, for callers
/// that only map offsets (line numbers) to instruction indices.
pub fn instruction_offsets(body: &[u8]) -> Result<Vec<u32>, ReadError> {
    let mut c = Cursor::new(body);
    c.u16("max_stack")?;
    c.u16("max_locals")?;
    let len = c.u32("code_length")? as usize;
    let code_start = c.pos();
    let code = c.bytes(len, "code")?;
    if len == 0 || len > 65535 {
        return Err(ReadError::new(
            code_start - 4,
            format!("code_length {len} out of range"),
        ));
    }
    let mut starts = Vec::with_capacity(len / 2 + 1);
    let mut pc = 0usize;
    while pc < len {
        starts.push(pc as u32);
        pc = next_start(code, pc).map_err(|(at, why)| ReadError::new(code_start + at, why))?;
    }
    starts.push(len as u32);
    Ok(starts)
}
