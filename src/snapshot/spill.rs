//! Call trees kept on disk: a snapshot read from a file writes each node of
//! its call sections to one unnamed scratch file as it is parsed (a few
//! bytes of varints per node), and the readers walk a thread's nodes back
//! in document order ([`Tree::walk`](super::Tree::walk)). The process then
//! holds the names and the threads, never the nodes: a snapshot of millions
//! of distinct stacks is read in a fixed budget (docs/READING.md, "Memory").
//!
//! Plain reads and writes, not a memory map: a mapped file's pages that a
//! walk touched would count in the reader's resident memory.

use super::{FrameCounts, Node, Values, MAX_VALUES, NONE};
use crate::error::CliError;
use profrj_otlp::wire::varint;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;
use std::sync::Arc;

/// Where the nodes are written while the snapshot is parsed.
pub struct SpillWriter {
    out: BufWriter<File>,
    pos: u64,
    rec: Vec<u8>,
}

impl SpillWriter {
    pub fn new() -> Result<SpillWriter, CliError> {
        // The directory goes when `scratch` is dropped; the unnamed file
        // stays open until the last tree reading it is.
        let mut scratch = crate::scratch::Scratch::new()?;
        let (_, f) = scratch.raw("call-trees")?;
        Ok(SpillWriter {
            out: BufWriter::with_capacity(1 << 20, f),
            pos: 0,
            rec: Vec::with_capacity(MAX_RECORD),
        })
    }

    /// The offset the next node is written at.
    pub fn pos(&self) -> u64 {
        self.pos
    }

    pub fn push(&mut self, n: &Node) -> io::Result<()> {
        self.rec.clear();
        encode(&mut self.rec, n);
        self.out.write_all(&self.rec)?;
        self.pos += self.rec.len() as u64;
        Ok(())
    }

    /// The file, for the trees to read.
    pub fn finish(self) -> io::Result<Arc<File>> {
        let f = self.out.into_inner().map_err(|e| e.into_error())?;
        Ok(Arc::new(f))
    }
}

/// The most bytes one record takes: six varints of up to 10 bytes, a flag
/// byte, a slot mask and [`MAX_VALUES`] varints, and the frame types: two
/// masks of two bytes, each with a varint per type.
const MAX_RECORD: usize = 6 * 10 + 2 + MAX_VALUES * 10 + 2 * (2 + TYPES * 10);

const TYPES: usize = profrj_format::frame_types::ALL.len();
/// The flag byte's bits.
const CLASS_FLAG: u8 = 1;
const TYPES_FLAG: u8 = 2;

/// name, signature + 1 (0: none), depth, line, flags (a class frame, has
/// frame types), a mask of the non-zero values, those values; with frame
/// types, per count (`through`, `own`) a two-byte mask and its non-zero
/// counts.
fn encode(rec: &mut Vec<u8>, n: &Node) {
    varint(rec, u64::from(n.name));
    varint(
        rec,
        if n.signature == NONE {
            0
        } else {
            u64::from(n.signature) + 1
        },
    );
    varint(rec, u64::from(n.depth));
    varint(rec, u64::from(n.line));
    let typed = n.types.any();
    rec.push(if n.class { CLASS_FLAG } else { 0 } | if typed { TYPES_FLAG } else { 0 });
    let mut mask = 0u8;
    for (i, &v) in n.v.0.iter().enumerate() {
        if v != 0 {
            mask |= 1 << i;
        }
    }
    rec.push(mask);
    for &v in n.v.0.iter().filter(|&&v| v != 0) {
        varint(rec, v);
    }
    if typed {
        for counts in [&n.types.through, &n.types.own] {
            let mask = counts
                .iter()
                .enumerate()
                .filter(|(_, &c)| c != 0)
                .fold(0u16, |m, (i, _)| m | 1 << i);
            rec.extend_from_slice(&mask.to_le_bytes());
            for &c in counts.iter().filter(|&&c| c != 0) {
                varint(rec, c);
            }
        }
    }
}

/// A thread's nodes in the file: bytes `start..end`.
#[derive(Clone, Debug)]
pub struct Spilled {
    pub file: Option<Arc<File>>,
    pub start: u64,
    pub end: u64,
}

/// Reads a thread's nodes back, in order, each with its parent's index
/// (found from the depths: the last node one level up).
pub struct SpillIter {
    file: Arc<File>,
    pos: u64,
    end: u64,
    buf: Vec<u8>,
    at: usize,
    len: usize,
    /// The index of the last node met at each depth (0: the thread).
    last_at: Vec<u32>,
    index: u32,
    failed: bool,
}

const CHUNK: usize = 1 << 16;

impl SpillIter {
    pub fn new(s: &Spilled) -> SpillIter {
        SpillIter {
            file: s
                .file
                .clone()
                .expect("a spilled tree is read after the parse"),
            pos: s.start,
            end: s.end,
            buf: vec![0; CHUNK + MAX_RECORD],
            at: 0,
            len: 0,
            last_at: vec![0],
            index: 0,
            failed: false,
        }
    }

    /// Keeps at least a whole record in the buffer while the file has one.
    fn fill(&mut self) -> io::Result<()> {
        if self.len - self.at >= MAX_RECORD || self.pos >= self.end {
            return Ok(());
        }
        self.buf.copy_within(self.at..self.len, 0);
        self.len -= self.at;
        self.at = 0;
        while self.len < MAX_RECORD && self.pos < self.end {
            let want = (self.buf.len() - self.len).min((self.end - self.pos) as usize);
            let n = self
                .file
                .read_at(&mut self.buf[self.len..self.len + want], self.pos)?;
            if n == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "the call trees' scratch file ended early",
                ));
            }
            self.len += n;
            self.pos += n as u64;
        }
        Ok(())
    }

    fn varint(&mut self) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        while self.at < self.len {
            let b = self.buf[self.at];
            self.at += 1;
            if shift < 64 {
                v |= u64::from(b & 0x7f) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                break;
            }
        }
        v
    }
}

impl Iterator for SpillIter {
    type Item = Node;

    fn next(&mut self) -> Option<Node> {
        if self.failed {
            return None;
        }
        if let Err(e) = self.fill() {
            // The file is ours and was just written: only a failing disk
            // gets here, and a reader must not go on with part of a tree
            // (nor write half an output as if whole): one message, exit 1,
            // as for any unreadable input. An output file is never renamed
            // into place then (its temporary file may be left behind: a
            // failing disk).
            self.failed = true;
            eprintln!("profrj: reading the call trees' scratch file: {e}");
            std::process::exit(1);
        }
        if self.at >= self.len {
            return None;
        }
        let name = self.varint() as u32;
        let signature = match self.varint() {
            0 => NONE,
            s => (s - 1) as u32,
        };
        let depth = self.varint() as u32;
        let line = self.varint() as u32;
        let flags = self.buf[self.at];
        let class = flags & CLASS_FLAG != 0;
        let mask = self.buf[self.at + 1];
        self.at += 2;
        let mut v = Values::default();
        for (i, slot) in v.0.iter_mut().enumerate() {
            if mask & (1 << i) != 0 {
                *slot = self.varint();
            }
        }
        let mut types = FrameCounts::default();
        if flags & TYPES_FLAG != 0 {
            for counts in [&mut types.through, &mut types.own] {
                let mask = u16::from_le_bytes([self.buf[self.at], self.buf[self.at + 1]]);
                self.at += 2;
                for (i, c) in counts.iter_mut().enumerate() {
                    if mask & (1 << i) != 0 {
                        *c = self.varint();
                    }
                }
            }
        }
        self.index += 1;
        let d = depth as usize;
        self.last_at.truncate(d);
        let parent = self.last_at.get(d - 1).copied().unwrap_or(0);
        self.last_at.push(self.index);
        Some(Node {
            name,
            signature,
            parent,
            depth,
            class,
            line,
            v,
            types,
        })
    }
}
