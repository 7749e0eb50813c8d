//! The flame page's trees: the threads of one name merged into one tree, in
//! a fixed budget. A name of one thread is numbered as its tree is walked;
//! for a name of several, each node with a weight of its own becomes a record
//! keyed by its thread name's group and its path (frame ids, big endian, so
//! that byte order is path order: a node before its callees, callees in the
//! order of their frames' ids) and sorted externally (`crate::sort`), nodes
//! of one path in two threads summed. The sorted records are the merged
//! tree in preorder; a node's callee count is known when the walk leaves
//! it, so each node is written to a scratch file of fixed-size records at
//! its preorder place when it is left, and the page reads them back in
//! order. Held: the frames, the groups, the sorter's buffer and the current
//! path, never a tree.
//!
//! A section with frame types carries each node's `frameTypes` counts too
//! (summed as its weight is: a node of one path in two threads has both's
//! samples), in the sorter's records and after the weight in the scratch
//! file's; a section without has records as before.

use crate::snapshot::type_counts::add;
use crate::snapshot::{CallSection, Metric, NO_LINE};

/// Frame types per node (`profrj_format::frame_types::ALL`).
const TYPES: usize = profrj_format::frame_types::ALL.len();
use crate::sort::Sorter;
use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// A frame: a name, whether it is a class frame, and its source line (the
/// agent's `lines`; [`NO_LINE`] for none): one method on two lines is two
/// frames, drawn `name:line` as collapsed stacks write them.
pub type Frame = (u32, bool, u32);

/// Bytes the sorter holds.
const SORT_BUDGET: usize = 64 << 20;
/// A node's record: frame id, callees, own weight; then, in a section with
/// frame types, [`TYPES`] counts.
const RECORD: usize = 16;
/// A typed node's record.
const TYPED_RECORD: usize = RECORD + 8 * TYPES;
/// Records left before they are written out.
const BATCH: usize = 1 << 16;

/// Records of `record` bytes in a batch: as many bytes as [`BATCH`] plain
/// records take, so typed records do not hold more memory.
fn batch(record: usize) -> usize {
    BATCH * RECORD / record
}

/// The threads of one name.
pub struct Group {
    pub name: String,
    /// A group of virtual threads: how many joined it.
    pub virtual_threads: Option<u64>,
    /// A group of ended threads the agent folded: how many.
    pub ended_threads: Option<u64>,
    /// A thread of the JVM itself (`jvmThread`): what it does.
    pub jvm_thread: Option<crate::snapshot::JvmThread>,
    /// The weight of the whole group.
    pub total: u64,
    /// Nodes right below the thread.
    pub roots: u32,
    /// Its nodes' records: the first's index and how many.
    start: u64,
    count: u64,
}

pub struct Merged {
    pub groups: Vec<Group>,
    pub frames: Vec<Frame>,
    /// The nodes carry frame types.
    pub typed: bool,
    file: File,
}

/// An open node of the walk over the sorted records.
struct Open {
    frame: u32,
    own: u64,
    kids: u32,
    index: u64,
    /// `frameTypes` counts (a typed section's).
    types: [u64; TYPES],
}

/// Records of left nodes, written at their places in batches.
struct Out {
    file: File,
    /// Bytes per record: [`RECORD`] or [`TYPED_RECORD`].
    record: usize,
    /// Each left node's place and its record's offset in `bytes`.
    left: Vec<(u64, usize)>,
    bytes: Vec<u8>,
}

impl Out {
    fn leave(&mut self, o: &Open) -> io::Result<()> {
        self.left.push((o.index, self.bytes.len()));
        self.bytes.extend_from_slice(&o.frame.to_le_bytes());
        self.bytes.extend_from_slice(&o.kids.to_le_bytes());
        self.bytes.extend_from_slice(&o.own.to_le_bytes());
        if self.record == TYPED_RECORD {
            for c in o.types {
                self.bytes.extend_from_slice(&c.to_le_bytes());
            }
        }
        if self.left.len() >= batch(self.record) {
            self.flush()?;
        }
        Ok(())
    }

    /// Writes the batch, each run of consecutive places at once (a subtree
    /// is left whole, so its nodes' places are consecutive).
    fn flush(&mut self) -> io::Result<()> {
        self.left.sort_unstable_by_key(|l| l.0);
        let size = self.record;
        let mut buf = Vec::with_capacity(self.left.len() * size);
        let mut i = 0;
        while i < self.left.len() {
            let first = self.left[i].0;
            buf.clear();
            while i < self.left.len() && self.left[i].0 == first + (buf.len() / size) as u64 {
                let at = self.left[i].1;
                buf.extend_from_slice(&self.bytes[at..at + size]);
                i += 1;
            }
            self.file.write_all_at(&buf, first * size as u64)?;
        }
        self.left.clear();
        self.bytes.clear();
        Ok(())
    }
}

/// The merged trees being numbered: the current path, each node given its
/// preorder place when the first weight below it (or its own) is met, so
/// that subtrees without weight take no place.
struct Builder {
    out: Out,
    /// The next preorder place.
    index: u64,
    path: Vec<Open>,
    /// The path's first `numbered` nodes have their places.
    numbered: usize,
}

impl Builder {
    /// Leaves the path's nodes below its first `len`, writing those numbered.
    fn leave_to(&mut self, len: usize) -> io::Result<()> {
        while self.path.len() > len {
            let o = self.path.pop().expect("longer");
            if self.path.len() < self.numbered {
                self.out.leave(&o)?;
            }
        }
        self.numbered = self.numbered.min(self.path.len());
        Ok(())
    }

    fn enter(&mut self, frame: u32) {
        self.path.push(Open {
            frame,
            own: 0,
            kids: 0,
            index: 0,
            types: [0; TYPES],
        });
    }

    /// Adds frame types to the last node.
    fn add_types(&mut self, types: &[u64; TYPES]) {
        add(&mut self.path.last_mut().expect("a node").types, types);
    }

    /// The last node has a weight: it and its ancestors not yet numbered
    /// get their places, each counted as its parent's callee.
    fn weigh(&mut self, g: &mut Group, own: u64) {
        for k in self.numbered..self.path.len() {
            match k {
                0 => g.roots += 1,
                _ => self.path[k - 1].kids += 1,
            }
            self.path[k].index = self.index;
            self.index += 1;
        }
        self.numbered = self.path.len();
        let last = self.path.last_mut().expect("a node");
        last.own = last.own.saturating_add(own);
        g.total = g.total.saturating_add(own);
    }
}

/// Threads of one name merged, groups in the order their first thread
/// appears. A name of one thread needs no merging: its tree is numbered as
/// it is walked (a thread's siblings are distinct frames). Names of several
/// threads go through the sorter, keyed by their paths.
pub fn merge(sec: &CallSection, metric: Metric) -> io::Result<Merged> {
    let mut groups: Vec<Group> = Vec::new();
    let mut by_name: HashMap<&str, u32> = HashMap::new();
    let mut threads_of: Vec<u32> = Vec::new();
    let mut frames: Vec<Frame> = Vec::new();
    let mut frame_ids: HashMap<Frame, u32> = HashMap::new();
    let typed = sec.typed;
    // A record's numbers: the own weight, then a typed section's counts.
    let width = if typed { 1 + TYPES } else { 1 };
    let mut sorter =
        Sorter::new(width, crate::sort::budget(SORT_BUDGET)).map_err(io::Error::from)?;
    let mut values: Vec<u64> = Vec::with_capacity(width);
    let mut key: Vec<u8> = Vec::new();
    let mut scratch = crate::scratch::Scratch::new().map_err(io::Error::from)?;
    let (_, file) = scratch.raw("flame-nodes").map_err(io::Error::from)?;
    let mut b = Builder {
        out: Out {
            file,
            record: if typed { TYPED_RECORD } else { RECORD },
            left: Vec::new(),
            bytes: Vec::new(),
        },
        index: 0,
        path: Vec::new(),
        numbered: 0,
    };
    for t in &sec.threads {
        let g = *by_name.entry(t.name.as_str()).or_insert_with(|| {
            groups.push(Group {
                name: t.name.clone(),
                virtual_threads: None,
                ended_threads: None,
                jvm_thread: t.jvm_thread,
                total: 0,
                roots: 0,
                start: 0,
                count: 0,
            });
            threads_of.push(0);
            groups.len() as u32 - 1
        });
        threads_of[g as usize] += 1;
    }
    for t in &sec.threads {
        let g = by_name[t.name.as_str()];
        let group = &mut groups[g as usize];
        if let Some(n) = t.virtual_threads {
            group.virtual_threads = Some(group.virtual_threads.unwrap_or(0).saturating_add(n));
        }
        if let Some(n) = t.ended_threads {
            group.ended_threads = Some(group.ended_threads.unwrap_or(0).saturating_add(n));
        }
        let alone = threads_of[g as usize] == 1;
        group.start = b.index;
        // The key of the walk's path: the group, then a frame id per level.
        key.clear();
        key.extend_from_slice(&g.to_be_bytes());
        for n in t.tree.walk() {
            let types = n.types.through;
            let frame = (n.name, n.class, n.line);
            let next = frames.len() as u32;
            let id = *frame_ids.entry(frame).or_insert_with(|| {
                frames.push(frame);
                next
            });
            let own = metric.own(&n.v);
            if alone {
                b.leave_to(n.depth as usize - 1)?;
                b.enter(id);
                b.add_types(&types);
                if own > 0 {
                    b.weigh(group, own);
                }
                continue;
            }
            key.truncate(4 * n.depth as usize);
            key.extend_from_slice(&id.to_be_bytes());
            // A node without a weight of its own is drawn only if a callee
            // has one: its callees' keys bring it back (with its types, if
            // it has any, from a record of its own).
            if own > 0 || types.iter().any(|&c| c > 0) {
                values.clear();
                values.push(own);
                if typed {
                    values.extend_from_slice(&types);
                }
                sorter.push(&key, &values)?;
            }
        }
        if alone {
            b.leave_to(0)?;
            group.count = b.index - group.start;
        }
    }
    drop(frame_ids);
    let mut sorted = sorter.finish()?;
    let mut group: Option<u32> = None;
    while let Some((k, v)) = sorted.next_record()? {
        let g = u32::from_be_bytes(k[..4].try_into().expect("a group"));
        let ids: Vec<u32> = k[4..]
            .chunks_exact(4)
            .map(|c| u32::from_be_bytes(c.try_into().expect("4 bytes")))
            .collect();
        if group != Some(g) {
            b.leave_to(0)?;
            if let Some(prev) = group {
                let p = &mut groups[prev as usize];
                p.count = b.index - p.start;
            }
            groups[g as usize].start = b.index;
            group = Some(g);
        }
        // Leave what is not on this record's path; enter its other levels.
        let common = b
            .path
            .iter()
            .zip(&ids)
            .take_while(|(o, &id)| o.frame == id)
            .count();
        b.leave_to(common)?;
        for &id in &ids[common..] {
            b.enter(id);
        }
        if let Ok(types) = v[1..].try_into() {
            b.add_types(types);
        }
        if v[0] > 0 {
            b.weigh(&mut groups[g as usize], v[0]);
        }
    }
    b.leave_to(0)?;
    if let Some(prev) = group {
        let p = &mut groups[prev as usize];
        p.count = b.index - p.start;
    }
    b.out.flush()?;
    Ok(Merged {
        groups,
        frames,
        typed,
        file: b.out.file,
    })
}

impl Merged {
    /// A group's nodes in preorder: (frame, own weight, callees, frame
    /// types: zeros in a section without).
    pub fn nodes(&self, g: &Group) -> NodeIter<'_> {
        NodeIter {
            file: &self.file,
            record: if self.typed { TYPED_RECORD } else { RECORD },
            next: g.start,
            end: g.start + g.count,
            buf: Vec::new(),
            at: 0,
        }
    }

    pub fn frame(&self, id: u32) -> Frame {
        self.frames[id as usize]
    }
}

/// A merged node: frame, own weight, callees, frame types.
pub type MergedNode = (u32, u64, u32, [u64; TYPES]);

pub struct NodeIter<'a> {
    file: &'a File,
    record: usize,
    next: u64,
    end: u64,
    buf: Vec<u8>,
    at: usize,
}

impl NodeIter<'_> {
    pub fn next_node(&mut self) -> io::Result<Option<MergedNode>> {
        if self.at == self.buf.len() {
            if self.next == self.end {
                return Ok(None);
            }
            let n = (self.end - self.next).min(batch(self.record) as u64);
            self.buf.resize(n as usize * self.record, 0);
            self.file
                .read_exact_at(&mut self.buf, self.next * self.record as u64)?;
            self.next += n;
            self.at = 0;
        }
        let r = &self.buf[self.at..self.at + self.record];
        self.at += self.record;
        let frame = u32::from_le_bytes(r[..4].try_into().expect("4"));
        let kids = u32::from_le_bytes(r[4..8].try_into().expect("4"));
        let own = u64::from_le_bytes(r[8..16].try_into().expect("8"));
        let mut types = [0u64; TYPES];
        for (t, c) in types.iter_mut().zip(r[RECORD..].chunks_exact(8)) {
            *t = u64::from_le_bytes(c.try_into().expect("8"));
        }
        Ok(Some((frame, own, kids, types)))
    }
}

/// A frame's name as the page shows it: `name:line` with a line.
pub fn frame_text(names: &crate::snapshot::Names, f: Frame) -> String {
    match f.2 {
        NO_LINE => names.get(f.0).to_owned(),
        line => format!("{}:{line}", names.get(f.0)),
    }
}
