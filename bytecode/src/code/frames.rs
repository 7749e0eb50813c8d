//! StackMapTable frames, expanded to full frames at instruction indices and
//! encoded back in the most compact form the JVM spec allows (§4.7.4).

use crate::read::Cursor;
use crate::ReadError;

// verification_type_info tags (§4.7.4).
const ITEM_TOP: u8 = 0;
const ITEM_INTEGER: u8 = 1;
const ITEM_FLOAT: u8 = 2;
const ITEM_DOUBLE: u8 = 3;
const ITEM_LONG: u8 = 4;
const ITEM_NULL: u8 = 5;
const ITEM_UNINITIALIZED_THIS: u8 = 6;
const ITEM_OBJECT: u8 = 7;
const ITEM_UNINITIALIZED: u8 = 8;

// stack_map_frame types (§4.7.4) that are a single value; the others are
// ranges whose value also holds an offset delta or a count of locals.
const SAME_LOCALS_1_STACK_ITEM_EXTENDED: u8 = 247;
const SAME_FRAME_EXTENDED: u8 = 251;
const FULL_FRAME: u8 = 255;

/// A verification type. `Uninitialized` names the `new` instruction by index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VType {
    /// Unusable: never set, or set differently on paths that meet here.
    Top,
    /// int, and the types the JVM computes as int: boolean, byte, char, short.
    Integer,
    /// float.
    Float,
    /// double (two slots).
    Double,
    /// long (two slots).
    Long,
    /// The `null` reference, assignable to every reference type.
    Null,
    /// `this` in a constructor before its super()/this() call.
    UninitializedThis,
    /// A reference to the CONSTANT_Class at this pool index.
    Object(u16),
    /// The result of the `new` at this instruction index, before its
    /// constructor call (written as the `new`'s offset).
    Uninitialized(u32),
}

/// The frame before instruction `at` (an index into `Code::insns`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The instruction the frame stands before.
    pub at: u32,
    /// Local variables from slot 0; a long or double is one entry for its
    /// two slots.
    pub locals: Vec<VType>,
    /// Operand stack, bottom first, longs and doubles one entry each.
    pub stack: Vec<VType>,
}

/// The implicit frame at method entry, from the descriptor (§4.10.1.6).
/// `class_of` gives the CONSTANT_Class index of an internal name (this
/// class's for `this`), appending one to the pool when needed. Names are the
/// class file's bytes (modified UTF-8), never decoded: a class named with
/// U+0000 or beyond the Basic Multilingual Plane keeps its name.
pub fn initial_locals(
    descriptor: &[u8],
    this_class: Option<&[u8]>,
    is_init: bool,
    class_of: &mut dyn FnMut(&[u8]) -> u16,
) -> Option<Vec<VType>> {
    let mut locals = Vec::with_capacity(8);
    if let Some(this) = this_class {
        locals.push(if is_init {
            VType::UninitializedThis
        } else {
            VType::Object(class_of(this))
        });
    }
    // Bytes, not chars: a malformed descriptor may hold any bytes at all.
    let params = descriptor.strip_prefix(b"(")?;
    let params = &params[..params.iter().position(|&c| c == b')')?];
    let mut rest = params;
    while let Some(&c) = rest.first() {
        let (t, len) = match c {
            b'Z' | b'B' | b'C' | b'S' | b'I' => (VType::Integer, 1),
            b'F' => (VType::Float, 1),
            b'J' => (VType::Long, 1),
            b'D' => (VType::Double, 1),
            b'L' => {
                let end = rest.iter().position(|&c| c == b';')?;
                (VType::Object(class_of(&rest[1..end])), end + 1)
            }
            b'[' => {
                let dims = rest.iter().position(|&c| c != b'[')?;
                let end = if rest[dims] == b'L' {
                    dims + rest[dims..].iter().position(|&c| c == b';')? + 1
                } else {
                    dims + 1
                };
                (VType::Object(class_of(&rest[..end])), end)
            }
            _ => return None,
        };
        locals.push(t);
        rest = &rest[len..];
    }
    Some(locals)
}

fn read_vtype(
    c: &mut Cursor<'_>,
    index_at: &dyn Fn(u32) -> Option<u32>,
) -> Result<VType, ReadError> {
    let at = c.pos();
    Ok(match c.u8("verification type")? {
        ITEM_TOP => VType::Top,
        ITEM_INTEGER => VType::Integer,
        ITEM_FLOAT => VType::Float,
        ITEM_DOUBLE => VType::Double,
        ITEM_LONG => VType::Long,
        ITEM_NULL => VType::Null,
        ITEM_UNINITIALIZED_THIS => VType::UninitializedThis,
        ITEM_OBJECT => VType::Object(c.u16("class index")?),
        ITEM_UNINITIALIZED => {
            let off = c.u16("new offset")? as u32;
            VType::Uninitialized(index_at(off).ok_or_else(|| {
                ReadError::new(at, format!("uninitialized({off}) is no instruction"))
            })?)
        }
        t => return Err(ReadError::new(at, format!("unknown verification type {t}"))),
    })
}

fn read_vtypes(
    c: &mut Cursor<'_>,
    n: usize,
    index_at: &dyn Fn(u32) -> Option<u32>,
) -> Result<Vec<VType>, ReadError> {
    let mut v = Vec::with_capacity(n.min(c.remaining()));
    for _ in 0..n {
        v.push(read_vtype(c, index_at)?);
    }
    Ok(v)
}

/// Decodes a StackMapTable body. `initial` is the entry frame's locals;
/// `index_at` maps a code offset to an instruction index.
pub fn decode_frames(
    body: &[u8],
    initial: &[VType],
    index_at: &dyn Fn(u32) -> Option<u32>,
) -> Result<Vec<Frame>, ReadError> {
    let mut c = Cursor::new(body);
    let n = c.u16("number_of_entries")?;
    let mut frames = Vec::with_capacity((n as usize).min(body.len()));
    let mut locals = initial.to_vec();
    let mut offset: i64 = -1;
    for _ in 0..n {
        let at = c.pos();
        let kind = c.u8("frame type")?;
        let (delta, stack) = match kind {
            // same_frame, same_locals_1_stack_item_frame: delta in the type.
            0..=63 => (kind as u16, vec![]),
            64..=127 => (kind as u16 - 64, read_vtypes(&mut c, 1, index_at)?),
            SAME_LOCALS_1_STACK_ITEM_EXTENDED => {
                let d = c.u16("offset_delta")?;
                (d, read_vtypes(&mut c, 1, index_at)?)
            }
            // chop_frame: 1 to 3 locals fewer.
            248..=250 => {
                let d = c.u16("offset_delta")?;
                let k = (SAME_FRAME_EXTENDED - kind) as usize;
                if k > locals.len() {
                    return Err(ReadError::new(
                        at,
                        "chop_frame removes more locals than there are",
                    ));
                }
                locals.truncate(locals.len() - k);
                (d, vec![])
            }
            SAME_FRAME_EXTENDED => (c.u16("offset_delta")?, vec![]),
            // append_frame: 1 to 3 locals more.
            252..=254 => {
                let d = c.u16("offset_delta")?;
                let k = (kind - SAME_FRAME_EXTENDED) as usize;
                locals.extend(read_vtypes(&mut c, k, index_at)?);
                (d, vec![])
            }
            FULL_FRAME => {
                let d = c.u16("offset_delta")?;
                let nl = c.u16("number_of_locals")? as usize;
                locals = read_vtypes(&mut c, nl, index_at)?;
                let ns = c.u16("number_of_stack_items")? as usize;
                (d, read_vtypes(&mut c, ns, index_at)?)
            }
            _ => return Err(ReadError::new(at, format!("reserved frame type {kind}"))),
        };
        offset += delta as i64 + 1;
        let index = index_at(offset as u32).ok_or_else(|| {
            ReadError::new(at, format!("frame at {offset}, not an instruction start"))
        })?;
        frames.push(Frame {
            at: index,
            locals: locals.clone(),
            stack,
        });
    }
    if c.remaining() != 0 {
        return Err(ReadError::new(c.pos(), "bytes after the last frame"));
    }
    Ok(frames)
}

fn write_vtype(out: &mut Vec<u8>, t: VType, offsets: &[usize]) {
    match t {
        VType::Top => out.push(ITEM_TOP),
        VType::Integer => out.push(ITEM_INTEGER),
        VType::Float => out.push(ITEM_FLOAT),
        VType::Double => out.push(ITEM_DOUBLE),
        VType::Long => out.push(ITEM_LONG),
        VType::Null => out.push(ITEM_NULL),
        VType::UninitializedThis => out.push(ITEM_UNINITIALIZED_THIS),
        VType::Object(i) => {
            out.push(ITEM_OBJECT);
            out.extend_from_slice(&i.to_be_bytes());
        }
        VType::Uninitialized(insn) => {
            out.push(ITEM_UNINITIALIZED);
            out.extend_from_slice(&(offsets[insn as usize] as u16).to_be_bytes());
        }
    }
}

/// Encodes frames (sorted by instruction) given the instruction offsets the
/// code was laid out at, each in its most compact form.
pub fn encode_frames(frames: &[Frame], initial: &[VType], offsets: &[usize]) -> Vec<u8> {
    // A compact frame takes a few bytes; sized once, not grown.
    let mut out = Vec::with_capacity(2 + frames.len() * 6);
    out.extend_from_slice(&(frames.len() as u16).to_be_bytes());
    let mut prev_locals = initial;
    let mut prev_offset: i64 = -1;
    for f in frames {
        let offset = offsets[f.at as usize] as i64;
        let delta = (offset - prev_offset - 1) as u16;
        prev_offset = offset;
        let same_locals = f.locals == prev_locals;
        let common = prev_locals
            .iter()
            .zip(&f.locals)
            .take_while(|(a, b)| a == b)
            .count();
        if same_locals && f.stack.is_empty() {
            if delta < 64 {
                out.push(delta as u8);
            } else {
                out.push(SAME_FRAME_EXTENDED);
                out.extend_from_slice(&delta.to_be_bytes());
            }
        } else if same_locals && f.stack.len() == 1 {
            if delta < 64 {
                out.push(64 + delta as u8);
            } else {
                out.push(SAME_LOCALS_1_STACK_ITEM_EXTENDED);
                out.extend_from_slice(&delta.to_be_bytes());
            }
            write_vtype(&mut out, f.stack[0], offsets);
        } else if f.stack.is_empty()
            && common == prev_locals.len()
            && (1..=3).contains(&(f.locals.len() - common))
        {
            out.push(SAME_FRAME_EXTENDED + (f.locals.len() - common) as u8);
            out.extend_from_slice(&delta.to_be_bytes());
            for &t in &f.locals[common..] {
                write_vtype(&mut out, t, offsets);
            }
        } else if f.stack.is_empty()
            && common == f.locals.len()
            && (1..=3).contains(&(prev_locals.len() - common))
        {
            out.push(SAME_FRAME_EXTENDED - (prev_locals.len() - common) as u8);
            out.extend_from_slice(&delta.to_be_bytes());
        } else {
            out.push(FULL_FRAME);
            out.extend_from_slice(&delta.to_be_bytes());
            out.extend_from_slice(&(f.locals.len() as u16).to_be_bytes());
            for &t in &f.locals {
                write_vtype(&mut out, t, offsets);
            }
            out.extend_from_slice(&(f.stack.len() as u16).to_be_bytes());
            for &t in &f.stack {
                write_vtype(&mut out, t, offsets);
            }
        }
        prev_locals = &f.locals;
    }
    out
}
