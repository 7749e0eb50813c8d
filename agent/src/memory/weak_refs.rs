//! Tracking by JNI weak global reference, for the collectors that clear
//! such references inside a pause (serial, parallel, G1).
//!
//! Each tracked object gets a weak reference, which its allocating thread
//! appends, with the object's counter, to a log of its own: no lock, no
//! JVMTI. The GC events do the rest inside the pause, where the world is
//! stopped (threads running native code keep appending past the length
//! they published, which the scan never reads):
//!
//! - GarbageCollectionStart: every counter's `max` takes what is alive
//!   now. Objects die only in a collection, so the peak of the objects
//!   not yet collected is always reached just before one starts.
//! - GarbageCollectionFinish: every log is scanned for references the
//!   collection cleared. Their objects count as freed, the records go, and
//!   the references are handed to the `profrj memory` agent thread, which
//!   deletes them (that needs JNI, which the pause forbids).
//!
//! Both happen in the pause the objects died in, before the next one can
//! start, so `count` and `max` are exact at every GC, not only at a
//! snapshot. The price is the scan: every tracked object still alive is
//! looked at once per GC (one read of its reference's slot).

use crate::vm::{Jni, WeakHandle};
use parking_lot::{Condvar, Mutex};
use std::cell::Cell;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering::*};

/// A thread's first log segment; each next one doubles, up to `LAST_SEGMENT`.
const FIRST_SEGMENT: usize = 64;
const LAST_SEGMENT: usize = 16 * 1024;

/// One tracked object: its weak reference (0 once found dead) and counter.
#[derive(Default)]
struct Record {
    handle: AtomicUsize,
    counter: AtomicU32,
}

/// Records in the order they were made. While a thread appends to it, only
/// that thread writes `len` (after the record) and the scan reads up to it.
struct Segment {
    len: AtomicUsize,
    records: Box<[Record]>,
}

impl Segment {
    fn with_capacity(n: usize) -> Self {
        Self {
            len: AtomicUsize::new(0),
            records: (0..n).map(|_| Record::default()).collect(),
        }
    }

    fn live(&self) -> &[Record] {
        &self.records[..self.len.load(Acquire)]
    }
}

/// The segment a thread appends to. Replaced only by its thread, under
/// `LOGS`'s lock; never freed while it is some thread's current one.
struct ThreadLog {
    current: AtomicPtr<Segment>,
}

struct Logs {
    threads: Vec<&'static ThreadLog>,
    /// Segments their threads filled (or left at exit): the scan owns these.
    full: Vec<Segment>,
    /// Largest-size segments the scan emptied, for threads to reuse (their
    /// pages are already mapped).
    spare: Vec<Segment>,
}

/// Spare segments kept: 4 MB.
const SPARES: usize = 16;

static LOGS: Mutex<Logs> = Mutex::new(Logs {
    threads: Vec::new(),
    full: Vec::new(),
    spare: Vec::new(),
});

/// Weak references found cleared, for the agent thread to delete.
static DEAD: Mutex<Vec<usize>> = Mutex::new(Vec::new());
static DEAD_READY: Condvar = Condvar::new();

/// A thread's log, made on its first record (kept in the memory mode's
/// per-thread state, `super::PerThread`). Dropped when the thread ends,
/// handing its last segment to the scan.
pub struct ThreadLogSlot(Cell<Option<&'static ThreadLog>>);

impl ThreadLogSlot {
    pub const fn new() -> Self {
        Self(Cell::new(None))
    }

    fn log(&self) -> &'static ThreadLog {
        match self.0.get() {
            Some(log) => log,
            None => {
                let seg = Box::into_raw(Box::new(Segment::with_capacity(FIRST_SEGMENT)));
                let log: &'static ThreadLog = Box::leak(Box::new(ThreadLog {
                    current: AtomicPtr::new(seg),
                }));
                LOGS.lock().threads.push(log);
                self.0.set(Some(log));
                log
            }
        }
    }

    /// Records a tracked object (on its allocating thread, while the caller
    /// still holds the object, so no GC can clear the reference before the
    /// record is published).
    pub fn record(&self, handle: WeakHandle, counter: usize) {
        let log = self.log();
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
            let mut logs = LOGS.lock();
            logs.threads.retain(|l| !std::ptr::eq(*l, log));
            // SAFETY: this thread made the segment with Box::into_raw and, ending,
            // gives it up; no thread's `current` points to it any more.
            let seg = unsafe { Box::from_raw(log.current.load(Relaxed)) };
            logs.full.push(*seg);
        }
    }
}

/// Swaps a thread's full current segment (of `len` records) for an empty
/// one: a spare if the scan left one, else a new one twice as large.
fn next_segment(log: &ThreadLog, len: usize) -> &'static Segment {
    let size = (len * 2).min(LAST_SEGMENT);
    let mut logs = LOGS.lock();
    let next = match logs.spare.pop() {
        Some(spare) if spare.records.len() >= size => spare,
        _ => Segment::with_capacity(size),
    };
    let next = Box::into_raw(Box::new(next));
    // SAFETY: the old segment came from Box::into_raw and, once swapped
    // under the lock, belongs to `full` alone.
    let old = unsafe { Box::from_raw(log.current.swap(next, Relaxed)) };
    logs.full.push(*old);
    // SAFETY: just made current; current segments are never freed.
    unsafe { &*next }
}

/// GarbageCollectionStart: `max` catches up before this GC frees anything.
pub fn gc_started() {
    super::counters::note_peaks();
}

/// GarbageCollectionFinish: counts the objects this GC freed, drops their
/// records and queues their references for deletion.
pub fn gc_finished() {
    let mut dead = Vec::new();
    let mut frees = Frees::default();
    {
        let mut logs = LOGS.lock();
        let logs = &mut *logs;
        compact_full(&mut logs.full, &mut logs.spare, &mut frees, &mut dead);
        for log in &logs.threads {
            // SAFETY: a current segment is never freed (see `record`); its
            // thread may append past `len` meanwhile, which is not read here.
            let seg = unsafe { &*log.current.load(Acquire) };
            for r in seg.live() {
                if let Some(h) = cleared(r) {
                    frees.add(r.counter.load(Relaxed));
                    r.handle.store(0, Relaxed);
                    dead.push(h);
                }
            }
        }
    }
    frees.flush();
    if !dead.is_empty() {
        DEAD.lock().append(&mut dead);
        DEAD_READY.notify_one();
    }
}

/// The record's weak reference, if the GC cleared it.
fn cleared(r: &Record) -> Option<usize> {
    let h = WeakHandle::from_bits(r.handle.load(Relaxed))?;
    // SAFETY: called in a GC event (a safepoint), on a handle not deleted
    // yet: handles are deleted only after their record is dropped.
    unsafe { h.is_cleared() }.then_some(h.to_bits())
}

/// Drops the dead records of the full segments and packs the rest to the
/// front, freeing segments left empty.
fn compact_full(
    full: &mut Vec<Segment>,
    spare: &mut Vec<Segment>,
    frees: &mut Frees,
    dead: &mut Vec<usize>,
) {
    let (mut to_seg, mut to_pos) = (0, 0);
    for from_seg in 0..full.len() {
        for i in 0..full[from_seg].len.load(Relaxed) {
            let r = &full[from_seg].records[i];
            let h = r.handle.load(Relaxed);
            if h == 0 {
                continue;
            }
            let counter = r.counter.load(Relaxed);
            if let Some(h) = cleared(r) {
                frees.add(counter);
                dead.push(h);
                continue;
            }
            if to_pos == full[to_seg].records.len() {
                full[to_seg].len.store(to_pos, Relaxed);
                (to_seg, to_pos) = (to_seg + 1, 0);
            }
            let to = &full[to_seg].records[to_pos];
            to.handle.store(h, Relaxed);
            to.counter.store(counter, Relaxed);
            to_pos += 1;
        }
    }
    if let Some(last) = full.get(to_seg) {
        last.len.store(to_pos, Relaxed);
    }
    for emptied in full.drain(to_seg + usize::from(to_pos > 0)..) {
        if emptied.records.len() == LAST_SEGMENT && spare.len() < SPARES {
            emptied.len.store(0, Relaxed);
            spare.push(emptied);
        }
    }
}

/// Frees per counter, summed over runs of one counter (records of one
/// thread and type tend to sit together) before touching the counters.
#[derive(Default)]
struct Frees {
    run: Option<(u32, i64)>,
}

impl Frees {
    fn add(&mut self, counter: u32) {
        match &mut self.run {
            Some((c, n)) if *c == counter => *n += 1,
            _ => {
                self.flush();
                self.run = Some((counter, 1));
            }
        }
    }

    fn flush(&mut self) {
        if let Some((c, n)) = self.run.take() {
            super::counters::freed_by_index(c as usize, n);
        }
    }
}

/// Body of the `profrj memory` agent thread: deletes the weak references
/// of dead objects as GCs find them. Never returns.
pub fn delete_dead(jni: &Jni) {
    loop {
        let batch = {
            let mut dead = DEAD.lock();
            while dead.is_empty() {
                DEAD_READY.wait(&mut dead);
            }
            std::mem::take(&mut *dead)
        };
        for h in batch.into_iter().filter_map(WeakHandle::from_bits) {
            h.delete(jni);
        }
    }
}

/// Tracked objects still recorded (alive as of the last GC, or made since).
#[cfg(test)]
fn recorded() -> usize {
    let logs = LOGS.lock();
    let current = logs.threads.iter().map(|l| {
        // SAFETY: as in gc_finished.
        unsafe { &*l.current.load(Acquire) }
    });
    let segments = logs.full.iter().chain(current);
    segments
        .flat_map(|s| s.live())
        .filter(|r| r.handle.load(Relaxed) != 0)
        .count()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fake weak references: slots in plain memory, cleared by hand, the
    /// way HotSpot's GC clears them.
    #[test]
    fn the_scan_counts_cleared_references_and_keeps_the_rest() {
        let slots: Vec<AtomicUsize> = (0..1000).map(|_| AtomicUsize::new(1)).collect();
        let handle =
            |i: usize| WeakHandle::from_bits(&slots[i] as *const AtomicUsize as usize + 1).unwrap();
        let c = super::super::counters::new_counter(-42, 7).unwrap();
        // Past the first segments, so full and current ones are both scanned.
        let mine = ThreadLogSlot::new();
        for i in 0..1000 {
            mine.record(handle(i), c.index());
            c.made_one();
        }
        assert_eq!(recorded(), 1000);
        gc_started();
        for s in slots.iter().step_by(3) {
            s.store(0, Relaxed); // 334 die
        }
        gc_finished();
        assert_eq!(c.alive(), 666);
        assert_eq!(recorded(), 666);
        let dead = std::mem::take(&mut *DEAD.lock());
        assert_eq!(dead.len(), 334);
        assert!(dead.contains(&handle(999).to_bits()));
        // A second GC frees nothing new and finds the survivors intact.
        gc_started();
        gc_finished();
        assert_eq!((c.alive(), recorded()), (666, 666));
        for s in &slots {
            s.store(0, Relaxed);
        }
        gc_started();
        gc_finished();
        assert_eq!((c.alive(), recorded()), (0, 0));
        let rows = super::super::counters::all();
        let row = rows.iter().find(|r| r.0 == -42).unwrap();
        assert_eq!((row.2, row.3), (0, 1000));
        assert_eq!(DEAD.lock().len(), 666);
    }
}
