//! The per-thread logs of tracked objects: each thread appends (weak
//! reference, counter) records to a segment of its own, without a lock;
//! full segments go to a shared list the scan owns.

use crate::vm::WeakHandle;
use parking_lot::Mutex;
use std::cell::Cell;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering::*};

/// A thread's first log segment; each next one doubles, up to `LAST_SEGMENT`.
const FIRST_SEGMENT: usize = 64;
pub(super) const LAST_SEGMENT: usize = 16 * 1024;
/// Spare segments kept for reuse: 4 MB.
const SPARES: usize = 16;

/// One tracked object: its weak reference (0 once found dead) and counter.
#[derive(Default)]
pub(super) struct Record {
    pub handle: AtomicUsize,
    pub counter: AtomicU32,
}

/// Records in the order they were made. While a thread appends to it, only
/// that thread writes `len` (after the record) and the scan reads up to it.
pub(super) struct Segment {
    pub len: AtomicUsize,
    pub records: Box<[Record]>,
}

impl Segment {
    fn with_capacity(n: usize) -> Self {
        Self {
            len: AtomicUsize::new(0),
            records: (0..n).map(|_| Record::default()).collect(),
        }
    }

    pub fn live(&self) -> &[Record] {
        &self.records[..self.len.load(Acquire)]
    }
}

/// The segment a thread appends to. Replaced only by its thread, under
/// `LOGS`'s lock. Segments are freed only by the scan, and only those it
/// took from `full`, so one the scan reads as a thread's current segment
/// stays valid even if the thread hands it over meanwhile.
pub(super) struct ThreadLog {
    pub current: AtomicPtr<Segment>,
    /// Where it hands its last segment over when its thread ends.
    logs: &'static Mutex<Logs>,
}

// Boxed: a segment keeps its address when its thread hands it over, since
// the scan may still be reading it as that thread's current one.
#[allow(clippy::vec_box)]
#[derive(Default)]
pub(super) struct Logs {
    pub threads: Vec<&'static ThreadLog>,
    /// Segments their threads filled (or left at exit).
    pub full: Vec<Box<Segment>>,
    /// Largest-size segments the scan emptied, for threads to reuse (their
    /// pages are already mapped).
    pub spare: Vec<Box<Segment>>,
    /// Logs of ended threads, out of `threads`: freed by the next scan
    /// ([`Logs::free_retired`]), since the scan in progress may still read
    /// one it listed before its thread ended.
    pub(super) retired: Vec<&'static ThreadLog>,
}

impl Logs {
    /// Frees the logs of threads that ended before this call.
    ///
    /// # Safety
    /// Only at the start of a scan, under the logs' lock, with no other scan
    /// in progress (scans run one at a time, under `WeakRefs`'s
    /// `counted_through`): a retired log left `threads` before it was
    /// retired, so no scan that starts from here lists it, and every other
    /// reader of a log holds the lock while it reads.
    pub(super) unsafe fn free_retired(&mut self) {
        for log in self.retired.drain(..) {
            // SAFETY: made by Box::leak in `ThreadLogSlot::log`, retired once
            // by its slot's drop, and read by no one any more (the caller's
            // promise).
            drop(unsafe { Box::from_raw(log as *const ThreadLog as *mut ThreadLog) });
        }
    }

    /// Keeps an emptied segment for reuse if it is a large one.
    pub fn recycle(&mut self, seg: Box<Segment>) {
        if seg.records.len() == LAST_SEGMENT && self.spare.len() < SPARES {
            seg.len.store(0, Relaxed);
            self.spare.push(seg);
        }
    }
}

/// A thread's log, made on its first record (kept in the memory mode's
/// per-thread value, `memory::PerThread`). Dropped when the thread ends,
/// handing its last segment over and its log to the next scan to free.
pub struct ThreadLogSlot(Cell<Option<&'static ThreadLog>>);

impl ThreadLogSlot {
    pub const fn new() -> Self {
        Self(Cell::new(None))
    }

    fn log(&self, logs: &'static Mutex<Logs>) -> &'static ThreadLog {
        match self.0.get() {
            Some(log) => log,
            None => {
                let seg = Box::into_raw(Box::new(Segment::with_capacity(FIRST_SEGMENT)));
                let log: &'static ThreadLog = Box::leak(Box::new(ThreadLog {
                    current: AtomicPtr::new(seg),
                    logs,
                }));
                logs.lock().threads.push(log);
                self.0.set(Some(log));
                log
            }
        }
    }

    /// Records a tracked object (on its allocating thread, while the caller
    /// still holds the object, so no GC can clear the reference before the
    /// record is published).
    pub(super) fn record(&self, logs: &'static Mutex<Logs>, handle: WeakHandle, counter: usize) {
        let log = self.log(logs);
        // SAFETY: only this thread replaces its `current`, and a current
        // segment is never freed, so the pointer stays valid.
        let mut seg = unsafe { &*log.current.load(Relaxed) };
        let mut n = seg.len.load(Relaxed);
        if n == seg.records.len() {
            seg = next_segment(log, n);
            n = 0;
        }
        let r = &seg.records[n];
        r.handle.store(handle.to_bits(), Relaxed);
        r.counter.store(counter as u32, Relaxed);
        seg.len.store(n + 1, Release);
    }
}

impl Drop for ThreadLogSlot {
    fn drop(&mut self) {
        if let Some(log) = self.0.take() {
            let mut logs = log.logs.lock();
            logs.threads.retain(|l| !std::ptr::eq(*l, log));
            // SAFETY: this thread made the segment with Box::into_raw and, ending,
            // gives it up; no thread's `current` points to it any more.
            let seg = unsafe { Box::from_raw(log.current.load(Relaxed)) };
            logs.full.push(seg);
            // Not freed here: a scan in progress may have listed it.
            logs.retired.push(log);
        }
    }
}

/// Swaps a thread's full current segment (of `len` records) for an empty
/// one: a spare if the scan left one (spares are the largest size), else a
/// new one twice as large.
fn next_segment(log: &ThreadLog, len: usize) -> &'static Segment {
    let size = (len * 2).min(LAST_SEGMENT);
    let mut logs = log.logs.lock();
    let next = logs
        .spare
        .pop()
        .unwrap_or_else(|| Box::new(Segment::with_capacity(size)));
    let next = Box::into_raw(next);
    // SAFETY: the old segment came from Box::into_raw and, once swapped
    // under the lock, belongs to `full` alone.
    let old = unsafe { Box::from_raw(log.current.swap(next, Relaxed)) };
    logs.full.push(old);
    // SAFETY: just made current; segments are freed only by the scan, and
    // never while current.
    unsafe { &*next }
}
