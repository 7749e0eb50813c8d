//! A streaming reader of JFR files (the JDK's, async-profiler's, profrj's):
//! chunk by chunk, it reads the header, the metadata and the constant pools
//! (which a chunk keeps at its end), then walks the events in order and hands
//! the ones profrj knows to the caller, one at a time; nothing else is kept.
//!
//! Nothing in the file is trusted: every size, offset and count is checked
//! against the bytes that are really there before it is used, arrays and
//! strings cannot claim more elements than their event has bytes, nesting is
//! bounded, and a checkpoint chain that loops is refused. Memory is the
//! constant pools of one chunk (as compact records, each made from the
//! bytes that describe it) plus one event.
//!
//! The parts, each apart by what it reads:
//! - this file: the file's chunks, each chunk's header, and the metadata and
//!   checkpoint events, which are read whole (up to `MAX_SPECIAL_EVENT`);
//! - `pools`: the checkpoint chain and the constants kept from it;
//! - `chunk`: what a chunk's pools hold, as the caller looks it up;
//! - `events`: the events walked in order, the known ones made records;
//! - `value`: one value of any declared type, as the metadata describes it.
//!
//! Every limit on what is read into memory is in this file, so they can be
//! reviewed together.

mod chunk;
mod events;
mod pools;
mod value;

pub use crate::names::java_type_name;
pub use chunk::{Chunk, Frame, Method, Stack, Thread};
pub use events::{Kind, Record};

use crate::decode::{Cursor, Error, ErrorKind, Result};
use crate::metadata::{self, Types, METADATA_TYPE};
use crate::writer::{HEADER_SIZE, MAGIC};
use events::read_events;
use pools::{read_pools, FrameLayout};
use std::io::{Read, Seek, SeekFrom};

/// The largest metadata or checkpoint event read into memory, and the
/// largest ordinary event (real ones are a few hundred bytes; a checkpoint
/// of a long recording can be tens of megabytes).
const MAX_SPECIAL_EVENT: u64 = 1 << 30;
const MAX_EVENT: u64 = 64 << 20;
/// Deepest nesting of inline struct values.
const MAX_VALUE_NESTING: usize = 16;

/// What a whole file held.
#[derive(Default, Debug, Clone, Copy)]
pub struct Summary {
    /// Chunks read.
    pub chunks: usize,
    /// Events of every type, known or not.
    pub events: u64,
    /// Events profrj knows and handed on.
    pub known: u64,
}

/// Reads every chunk of `input`, handing each known event to `sink`.
pub fn read<R: Read + Seek>(
    input: &mut R,
    mut sink: impl FnMut(&Chunk, &Record) -> std::result::Result<(), String>,
) -> Result<Summary> {
    let len = input.seek(SeekFrom::End(0)).map_err(io(0))?;
    let mut at = 0u64;
    let mut summary = Summary::default();
    while at < len {
        let mut chunk = Chunk {
            index: summary.chunks,
            ..Default::default()
        };
        let end = read_chunk(input, at, len, &mut chunk, &mut summary, &mut sink)?;
        summary.chunks += 1;
        at = end;
    }
    if summary.chunks == 0 {
        return fail(Error::malformed, 0, "an empty file, not a JFR recording");
    }
    Ok(summary)
}

/// An I/O error of a read that started at `offset`.
fn io(offset: u64) -> impl Fn(std::io::Error) -> Error {
    move |source| Error::Io { offset, source }
}

/// An error of `kind` at `offset`.
fn fail<T>(kind: ErrorKind, offset: u64, message: impl Into<String>) -> Result<T> {
    Err(kind(offset, message.into()))
}

/// The header of the chunk at `at`, its pools into `chunk`, then its
/// events; returns where the next chunk starts.
fn read_chunk<R: Read + Seek>(
    input: &mut R,
    at: u64,
    len: u64,
    chunk: &mut Chunk,
    summary: &mut Summary,
    sink: &mut impl FnMut(&Chunk, &Record) -> std::result::Result<(), String>,
) -> Result<u64> {
    if len - at < HEADER_SIZE {
        return fail(
            Error::truncated,
            at,
            "a chunk header cut short: the file ends inside it",
        );
    }
    let mut h = [0u8; HEADER_SIZE as usize];
    input.seek(SeekFrom::Start(at)).map_err(io(at))?;
    input.read_exact(&mut h).map_err(io(at))?;
    if &h[..4] != MAGIC {
        return fail(Error::malformed, at, "no FLR magic: not a JFR chunk");
    }
    let major = u16::from_be_bytes([h[4], h[5]]);
    let minor = u16::from_be_bytes([h[6], h[7]]);
    if major != 2 {
        return fail(
            Error::unsupported,
            at + 4,
            format!(
                "JFR format {major}.{minor}: only 2.x (JDK 11 and later, async-profiler) is read"
            ),
        );
    }
    let field = |i: usize| u64::from_be_bytes(h[8 + 8 * i..16 + 8 * i].try_into().expect("8"));
    let (size, cp, meta) = (field(0), field(1), field(2));
    chunk.start_nanos = field(3);
    chunk.duration_nanos = field(4);
    chunk.start_ticks = field(5);
    chunk.ticks_per_second = field(6);
    if meta == 0 || h[64] != 0 {
        return fail(
            Error::unsupported,
            at,
            "an unfinished chunk (its recording was still being written, or was cut by a crash)",
        );
    }
    if size < HEADER_SIZE || size > len - at {
        return fail(
            Error::truncated,
            at + 8,
            format!(
                "the chunk claims {size} bytes, the file has {} from here: truncated",
                len - at
            ),
        );
    }
    for (what, off) in [("metadata", meta), ("constant pool", cp)] {
        if off < HEADER_SIZE || off >= size {
            return fail(
                Error::malformed,
                at + 16,
                format!("{what} offset {off} outside the chunk's {size} bytes"),
            );
        }
    }
    let end = at + size;
    let types = read_metadata(input, at + meta, end)?;
    let layout = FrameLayout::of(&types);
    read_pools(input, (at, at + cp, end), &types, layout, chunk)?;
    read_events(input, at + HEADER_SIZE, end, &types, chunk, summary, sink)?;
    Ok(end)
}

/// Reads the special event at `at` (size, type) into memory: its bytes
/// after the type id, and its file offset.
fn read_special<R: Read + Seek>(
    input: &mut R,
    at: u64,
    end: u64,
    want: u64,
) -> Result<(Vec<u8>, u64)> {
    input.seek(SeekFrom::Start(at)).map_err(io(at))?;
    let mut head = [0u8; 18];
    let n = (end - at).min(18) as usize;
    input.read_exact(&mut head[..n]).map_err(io(at))?;
    let mut c = Cursor::at(&head[..n], at);
    let size = c.varint()?;
    let ty = c.varint()?;
    if ty != want {
        return fail(
            Error::malformed,
            at,
            format!("expected an event of type {want} here, found type {ty}"),
        );
    }
    if size > end - at || (size as usize) < c.position() {
        return fail(
            Error::malformed,
            at,
            format!("an event of {size} bytes does not fit its chunk"),
        );
    }
    if size > MAX_SPECIAL_EVENT {
        return fail(
            Error::over_limit,
            at,
            format!("a metadata or checkpoint event of {size} bytes"),
        );
    }
    let body_at = at + c.position() as u64;
    let mut body = vec![0u8; size as usize - c.position()];
    input.seek(SeekFrom::Start(body_at)).map_err(io(body_at))?;
    input.read_exact(&mut body).map_err(io(body_at))?;
    Ok((body, body_at))
}

fn read_metadata<R: Read + Seek>(input: &mut R, at: u64, end: u64) -> Result<Types> {
    let (body, body_at) = read_special(input, at, end, METADATA_TYPE)?;
    let mut c = Cursor::at(&body, body_at);
    let root = metadata::read_root(&mut c)?;
    metadata::types(&root, at)
}

#[cfg(test)]
mod tests;
