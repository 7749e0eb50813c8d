//! The handler's copy of where native code lies: each loaded object's code
//! ranges, sorted, with the frame type its frames get and (`cstack=dwarf`)
//! its CFI rows. Published by the sampler thread when objects come or go;
//! read by the handler without a lock ([`Published`], as the code map's).

use super::cfi::Row;
use crate::published::Published;
use std::sync::Arc;

/// One object's code range.
pub struct Range {
    pub start: usize,
    pub end: usize,
    /// `FrameType as u8` of its frames (vm for libjvm, native otherwise).
    pub kind: u8,
    /// Its CFI rows (`cstack=dwarf`), shared by the object's ranges.
    pub rows: Option<Arc<[Row]>>,
}

/// A published copy: ranges disjoint and sorted by start.
pub struct Table {
    ranges: Box<[Range]>,
}

impl Table {
    /// The range holding `pc`. Async-signal-safe: a binary search.
    pub fn find(&self, pc: usize) -> Option<&Range> {
        let i = self.ranges.partition_point(|r| r.start <= pc);
        i.checked_sub(1)
            .and_then(|i| self.ranges.get(i))
            .filter(|r| pc < r.end)
    }
}

static PUBLISHED: Published<Table> = Published::new();

/// Publishes `ranges` for the handler (sampler thread).
pub fn publish(mut ranges: Vec<Range>) {
    ranges.sort_by_key(|r| r.start);
    PUBLISHED.publish(Table {
        ranges: ranges.into_boxed_slice(),
    });
}

/// Frees replaced copies if no handler is reading now (sampler thread).
pub fn reclaim() {
    PUBLISHED.reclaim();
}

/// Runs `f` over the published copy (None before the first publish).
/// Async-signal-safe: atomics only; the copy stays allocated meanwhile.
pub fn reading<R>(f: impl FnOnce(Option<&Table>) -> R) -> R {
    PUBLISHED.reading(f)
}
