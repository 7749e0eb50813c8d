//! TRACE ids and their frames, in a fixed budget. The blocks number traces
//! as their rows name them ([`Numbering::id`]), each with the node standing
//! for it (a representative: its section, thread and index); the nodes are
//! sorted by place (`crate::sort`), each section's trees walked once more,
//! and each trace's frames spelled from the walk's path when it reaches its
//! node, appended to a scratch file; the TRACEs are then written in the
//! order of their ids from a second sort of (id, where its text is).

use super::{frame, wanted, Ctx, EMPTY_TRACE};
use crate::error::CliError;
use crate::snapshot::CallKind;
use crate::sort::{Merged, Sorter};
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;

/// Bytes each sorter of the HPROF blocks holds.
pub const SORT_BUDGET: usize = 32 << 20;

/// A node standing for a trace: its thread (from 1) and index in the
/// thread's tree; 0 for none (the empty trace).
pub fn rep(thread: usize, node: u32) -> u64 {
    (thread as u64 + 1) << 32 | u64::from(node)
}

/// The ids given, and the nodes whose paths spell them.
pub struct Numbering {
    next: u64,
    /// (section, representative) → id.
    reps: Sorter,
}

impl Numbering {
    pub fn new() -> Result<Numbering, CliError> {
        Ok(Numbering {
            next: EMPTY_TRACE + 1,
            reps: Sorter::new(1, crate::sort::budget(SORT_BUDGET))?,
        })
    }

    /// The next id, for the trace `rep` of `kind` stands for (the empty
    /// trace without one).
    pub fn id(&mut self, kind: CallKind, rep: u64) -> io::Result<u64> {
        if rep == 0 {
            return Ok(EMPTY_TRACE);
        }
        let id = self.next;
        self.next += 1;
        // The id in the key too: two rows may share a representative (two
        // classes allocated by one method), and records of a key are summed.
        let mut key = [0u8; 17];
        key[0] = kind as u8;
        key[1..9].copy_from_slice(&rep.to_be_bytes());
        key[9..].copy_from_slice(&id.to_be_bytes());
        self.reps.push(&key, &[id])?;
        Ok(id)
    }
}

/// The TRACEs spelled: their text in a scratch file, and (id, offset,
/// length) sorted by id.
pub struct Spelled {
    text: File,
    order: std::cell::RefCell<Option<Merged>>,
}

impl Spelled {
    /// Writes the TRACEs in the order of their ids (once).
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let Some(mut order) = self.order.borrow_mut().take() else {
            return Ok(());
        };
        let mut buf = Vec::new();
        while let Some((_, v)) = order.next_record()? {
            buf.resize(v[1] as usize, 0);
            self.text.read_exact_at(&mut buf, v[0])?;
            out.write_all(&buf)?;
        }
        Ok(())
    }
}

/// Spells every numbered trace: one walk per section its nodes are in.
pub fn spell(ctx: &Ctx, numbering: Numbering) -> io::Result<Spelled> {
    let mut reps = numbering.reps.finish()?;
    let mut scratch = crate::scratch::Scratch::new().map_err(std::io::Error::from)?;
    let (_, file) = scratch.raw("traces").map_err(std::io::Error::from)?;
    let mut text = BufWriter::with_capacity(1 << 16, file);
    let mut written = 0u64;
    let mut order =
        Sorter::new(2, crate::sort::budget(SORT_BUDGET)).map_err(std::io::Error::from)?;
    let mut next = reps.next_record()?.map(|(k, v)| (k.to_vec(), v[0]));
    let mut entry = String::new();
    for kind in CallKind::ALL {
        let Some(sec) = ctx.snap.calls(kind) else {
            continue;
        };
        for (t, thread) in sec.threads.iter().enumerate() {
            let wanted_here = |n: &Option<(Vec<u8>, u64)>| {
                n.as_ref()
                    .is_some_and(|(k, _)| k[0] == kind as u8 && rep_of(k) >> 32 == t as u64 + 1)
            };
            if !wanted(ctx, &thread.name) || !wanted_here(&next) {
                continue;
            }
            // The walk's path: (name, line) per level.
            let mut path: Vec<(u32, u32)> = Vec::new();
            for (i, n) in thread.tree.walk().enumerate() {
                path.truncate(n.depth as usize - 1);
                path.push((n.name, n.line));
                let here = super::traces::rep(t, i as u32 + 1);
                while let Some((k, id)) = next
                    .as_ref()
                    .filter(|(k, _)| k[0] == kind as u8 && rep_of(k) == here)
                {
                    let id = *id;
                    let _ = k;
                    entry.clear();
                    entry.push_str(&format!("TRACE {id}:\n"));
                    for &(name, line) in path.iter().rev().take(ctx.depth) {
                        entry.push('\t');
                        entry.push_str(&frame(ctx, ctx.snap.names.get(name), line));
                        entry.push('\n');
                    }
                    text.write_all(entry.as_bytes())?;
                    order.push(&id.to_be_bytes(), &[written, entry.len() as u64])?;
                    written += entry.len() as u64;
                    next = reps.next_record()?.map(|(k, v)| (k.to_vec(), v[0]));
                }
                if !wanted_here(&next) {
                    break;
                }
            }
        }
    }
    let text = text.into_inner().map_err(|e| e.into_error())?;
    Ok(Spelled {
        text,
        order: std::cell::RefCell::new(Some(order.finish()?)),
    })
}

fn rep_of(key: &[u8]) -> u64 {
    u64::from_be_bytes(key[1..9].try_into().expect("a section and a node"))
}
