//! `profrj convert HEAP.hprof[.gz] --to hprof`: a binary heap dump
//! (HotSpot's `jcmd GC.heap_dump`, `-XX:+HeapDumpOnOutOfMemoryError`,
//! `HotSpotDiagnosticMXBean.dumpHeap`; `JAVA PROFILE 1.0.2`, plain or
//! gzipped, told by its magic) as HPROF's text, java.hprof.txt: the
//! header, the dump's `TRACE`s, then `--heap dump` (the default) the
//! `HEAP DUMP` block (ROOT, CLS, OBJ, ARR entries), `--heap sites` the
//! `SITES` table (live bytes and objects per trace and class), `all` both.
//!
//! Two passes over the file, each a stream (`input.rs`, on the
//! `profrj_hprof` scanner): the first (`tables.rs`) keeps the symbols,
//! classes, frames and traces wherever they are in the file (profrj's
//! agent appends its TRACEs after HEAP_DUMP_END) and counts the objects;
//! the second (`text.rs`, `entries.rs`, `sites.rs`) writes the text as it
//! walks. Memory is bounded by the symbols, classes, frames and traces,
//! never by the objects, and the output is never held. The first pass
//! reads the whole file, so a cut or malformed dump fails before anything
//! is written, with the byte offset the parser stopped at.

mod entries;
mod input;
mod sites;
mod tables;
mod text;

use crate::error::CliError;
use crate::output::stream;
use crate::snapshot::MAX_FRAMES;
use input::Walk;
use std::path::Path;

pub use input::sniff;
pub use tables::java_name;

/// `--heap`: which blocks of HPROF's `heap=` option.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, clap::ValueEnum)]
pub enum Heap {
    /// The HEAP DUMP block: every root, class, instance and array.
    #[default]
    Dump,
    /// The SITES block: live bytes and objects per trace and class.
    Sites,
    /// Both.
    All,
}

/// Converts the dump at `path` (`gzip` as [`sniff`] said), keeping at most
/// `depth` frames per TRACE (all, up to 2,048, by default).
pub fn convert(
    path: &Path,
    gzip: bool,
    heap: Heap,
    depth: Option<usize>,
    out: Option<&Path>,
) -> Result<(), CliError> {
    let depth = depth.unwrap_or(MAX_FRAMES).min(MAX_FRAMES);
    let tables = tables::Tables::read(&mut Walk::open(path, gzip)?, depth)?;
    let mut walk = Walk::open(path, gzip)?;
    let opts = text::Options {
        dump: heap != Heap::Sites,
        sites: heap != Heap::Dump,
        heap: match heap {
            Heap::Dump => "dump",
            Heap::Sites => "sites",
            Heap::All => "all",
        },
    };
    let mut failed = None;
    let written = stream(out, |w| match text::write(&mut walk, &tables, &opts, w) {
        Ok(()) => Ok(()),
        Err(Fail::Io(e)) => Err(e),
        Err(Fail::Cli(e)) => {
            failed = Some(e);
            Err(std::io::Error::other(
                "the heap dump changed between passes",
            ))
        }
    });
    match failed {
        Some(e) => Err(e),
        None => written,
    }
}

#[cfg(test)]
mod tests;

/// Why the text stopped: the output failed, or the dump did.
pub enum Fail {
    Io(std::io::Error),
    Cli(CliError),
}

impl From<std::io::Error> for Fail {
    fn from(e: std::io::Error) -> Fail {
        Fail::Io(e)
    }
}

impl From<CliError> for Fail {
    fn from(e: CliError) -> Fail {
        Fail::Cli(e)
    }
}
