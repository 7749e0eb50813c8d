//! The handler's copy of where native code lies: each loaded object's code
//! ranges, sorted, with the frame type its frames get and (`cstack=dwarf`)
//! its CFI rows. Published by the sampler thread when objects come or go;
//! read by the handler without a lock. As the code map's copy
//! (`crate::code_map`): a replaced copy is freed only once no handler is
//! reading (a count of readers, checked after the swap).

use super::cfi::Row;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};
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

static PUBLISHED: AtomicPtr<Table> = AtomicPtr::new(std::ptr::null_mut());
/// Handlers inside [`reading`] now.
static READERS: AtomicUsize = AtomicUsize::new(0);
/// Copies replaced, freed once no handler reads (kept whole: a handler may
/// hold the box's address).
#[allow(clippy::vec_box)]
static RETIRED: Mutex<Vec<Box<Table>>> = Mutex::new(Vec::new());

/// Publishes `ranges` for the handler (sampler thread).
pub fn publish(mut ranges: Vec<Range>) {
    ranges.sort_by_key(|r| r.start);
    let new = Box::into_raw(Box::new(Table {
        ranges: ranges.into_boxed_slice(),
    }));
    let old = PUBLISHED.swap(new, Ordering::SeqCst);
    if !old.is_null() {
        // SAFETY: every pointer in PUBLISHED came from Box::into_raw above,
        // and the swap took this one out: no later `reading` loads it.
        RETIRED.lock().push(unsafe { Box::from_raw(old) });
    }
    reclaim();
}

/// Frees replaced copies if no handler is reading now (sampler thread).
pub fn reclaim() {
    let mut retired = RETIRED.lock();
    if !retired.is_empty() && READERS.load(Ordering::SeqCst) == 0 {
        retired.clear();
    }
}

/// Runs `f` over the published copy (None before the first publish).
/// Async-signal-safe: atomics only; the copy stays allocated meanwhile.
pub fn reading<R>(f: impl FnOnce(Option<&Table>) -> R) -> R {
    READERS.fetch_add(1, Ordering::SeqCst);
    let p = PUBLISHED.load(Ordering::SeqCst);
    // SAFETY: a published copy stays allocated while READERS counts this
    // reader (`reclaim` frees only swapped-out copies, and only when it sees
    // no reader after the swap).
    let out = f((!p.is_null()).then(|| unsafe { &*p }));
    READERS.fetch_sub(1, Ordering::SeqCst);
    out
}
