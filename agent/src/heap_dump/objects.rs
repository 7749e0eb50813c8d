//! What the pass does with each object and root of the heap dump, and what
//! it learns from them, kept per worker (the pass reads the segments on
//! several threads) and merged at the end: the object's counter (from its
//! stamp, or its address among the weakly followed ones) and the serial to
//! write over its trace serial; the counters met; the `tid` of each thread
//! object and the serial of each thread root.

use super::layout::{Offsets, Words};
use super::traces::TRACE_BASE;
use super::Known;
use profrj_hprof::{Item, RootKind};
use std::collections::HashMap;

/// What the pass found.
#[derive(Debug, Default)]
pub struct Counts {
    /// Instances and arrays.
    pub objects: u64,
    /// Of those, the ones given their allocation trace.
    pub traced: u64,
}

/// One worker's findings.
pub struct Objects<'k> {
    known: Option<&'k Known>,
    pub counts: Counts,
    /// Counters an object in the file points to, by index.
    used: Vec<bool>,
    /// Thread objects: their `tid`, and the serial of their thread root.
    tids: Words<i64>,
    roots: Words<u32>,
    /// Where the last address looked up was found.
    cursor: usize,
}

impl<'k> Objects<'k> {
    pub fn new(known: Option<&'k Known>) -> Self {
        Objects {
            known,
            counts: Counts::default(),
            used: vec![false; known.map_or(0, |k| k.origins.len())],
            tids: Words::default(),
            roots: Words::default(),
            cursor: 0,
        }
    }

    /// Takes in one heap-dump item (`file`: the dump's bytes; `offsets`:
    /// where the stamp and `tid` lie in an instance of a class); returns a
    /// serial to write and where, if any.
    pub fn item(
        &mut self,
        item: &Item,
        file: &[u8],
        offsets: impl FnOnce(u64) -> Offsets,
    ) -> Option<(usize, u32)> {
        match item {
            Item::Root(r) => {
                if let RootKind::ThreadObject { thread, .. } = r.kind {
                    self.roots.insert(r.id, thread);
                }
                None
            }
            Item::Instance(i) => {
                self.counts.objects += 1;
                let at = offsets(i.class_id);
                let field = |off: u32, n: usize| -> Option<&[u8]> {
                    if off as usize + n > i.data_len as usize {
                        return None;
                    }
                    let p = (i.data_offset + off as u64) as usize;
                    file.get(p..p + n)
                };
                if let Some(t) = at.tid.and_then(|o| field(o, 8)) {
                    self.tids
                        .insert(i.id, i64::from_be_bytes(t.try_into().ok()?));
                }
                let index = match at.stamp.and_then(|o| field(o, 4)) {
                    Some(s) => {
                        let stamp = i32::from_be_bytes(s.try_into().ok()?);
                        usize::try_from(stamp).ok()?.checked_sub(1)?
                    }
                    None => self.by_address(i.id)?,
                };
                self.traced(index, i.trace_offset)
            }
            Item::ObjArray(a) => {
                self.counts.objects += 1;
                let index = self.by_address(a.id)?;
                self.traced(index, a.trace_offset)
            }
            Item::PrimArray(a) => {
                self.counts.objects += 1;
                let index = self.by_address(a.id)?;
                self.traced(index, a.trace_offset)
            }
            _ => None,
        }
    }

    /// Adds another worker's findings.
    pub fn merge(&mut self, other: Objects) {
        self.counts.objects += other.counts.objects;
        self.counts.traced += other.counts.traced;
        for (u, o) in self.used.iter_mut().zip(other.used) {
            *u |= o;
        }
        self.tids.extend(other.tids);
        self.roots.extend(other.roots);
    }

    /// The counters met, by index.
    pub fn used(&self) -> Vec<usize> {
        (self.used.iter().enumerate())
            .filter_map(|(i, &u)| u.then_some(i))
            .collect()
    }

    /// The dump's thread serial of each live thread, by Java thread id.
    pub fn thread_serials(&self) -> HashMap<i64, u32> {
        (self.roots.iter())
            .filter_map(|(object, &serial)| Some((*self.tids.get(object)?, serial)))
            .collect()
    }

    /// The counter of the object at `address` among those followed by
    /// weak reference, if it is one.
    fn by_address(&mut self, address: u64) -> Option<usize> {
        let (found, cursor) = self.known?.addresses.find(self.cursor, address);
        self.cursor = cursor;
        found.map(|c| c as usize)
    }

    /// The serial to write at `trace_offset` for an object of counter
    /// `index`, if that counter is a site's.
    fn traced(&mut self, index: usize, trace_offset: u64) -> Option<(usize, u32)> {
        self.known?.origins.get(index)?.as_ref()?;
        *self.used.get_mut(index)? = true;
        self.counts.traced += 1;
        Some((trace_offset as usize, TRACE_BASE + index as u32))
    }
}
