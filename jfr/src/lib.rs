//! JDK Flight Recorder files, format 2.x: what profrj's agent and its
//! `convert --to jfr` write, and what `report`, `flame` and `convert` read
//! (profrj's recordings, the JDK's and async-profiler's).
//!
//! A file is one or more chunks. A chunk is a 68-byte header (magic `FLR\0`,
//! version, the chunk's size, the offsets of its last checkpoint and of its
//! metadata event, its start in nanoseconds and ticks, ticks per second),
//! then events, each its size (a varint that counts itself), its type id
//! and its fields. Two events are special: the metadata event (type 0)
//! declares every type and its fields, and checkpoint events (type 1) hold
//! the constant pools (threads, classes, methods, stack traces, symbols)
//! that other events refer to by key.
//!
//! - [`encode`] / `decode`: varints and strings, written and read (a read
//!   fails with an [`Error`] of its kind and byte offset).
//! - `metadata`: the metadata event, written and read.
//! - [`names`]: type names as the JVM and as Java write them.
//! - [`schema`]: the types profrj writes and their events.
//! - [`writer`]: a chunk written as it goes, its header patched at the end.
//! - [`reader`]: a streaming reader that trusts no size or count.
#![deny(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod decode;
pub mod encode;
mod metadata;
pub mod names;
pub mod reader;
pub mod schema;
pub mod writer;

pub use decode::{Error, JString};
pub use writer::{ChunkWriter, Start, MAGIC};

/// Does `head` (a file's first bytes) start a JFR file?
pub fn is_jfr(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}
