//! The scan: which tracked objects did the GCs since the last scan free?
//! It reads every record's weak reference slot, counts the cleared ones as
//! frees of their counters, drops those records and packs the rest.

use super::log::{Logs, Record, Segment};
use crate::heap_dump::Addresses;
use crate::memory::counters::Counters;
use crate::vm::WeakHandle;
use parking_lot::Mutex;
use std::sync::atomic::Ordering::*;

/// How far ahead the scan asks for slots (they lie in no order in memory).
const PREFETCH: usize = 16;

/// Scans every log; answers the records looked at and the dead objects'
/// weak references (for deletion).
///
/// Must finish before another GC can clear references: it runs in a GC
/// event, or under the lock the next GC's start waits on. One scan at a
/// time (`WeakRefs::count_frees` holds `counted_through`): it frees the
/// logs of threads that ended before it started. Threads keep
/// appending meanwhile; what they add was made after the last GC, so the
/// scan may look at it or not.
///
/// # Safety
/// No other `scan_logs` runs meanwhile (the caller holds
/// `counted_through`).
pub(super) unsafe fn scan_logs(
    logs: &Mutex<Logs>,
    counters: &Counters,
) -> (usize, Vec<WeakHandle>) {
    let mut found = Found {
        frees: Frees {
            run: None,
            counters,
        },
        dead: Vec::new(),
    };
    let mut emptied = Vec::new();
    let (mut full, threads) = {
        let mut logs = logs.lock();
        // SAFETY: the start of a scan, under the lock; no other scan runs
        // (this function's promise).
        unsafe { logs.free_retired() };
        (std::mem::take(&mut logs.full), logs.threads.clone())
    };
    let mut scanned = compact(&mut full, &mut emptied, &mut found);
    for log in &threads {
        // SAFETY: segments are freed only by the scan, and only those taken
        // from `full`. A current segment its thread hands over meanwhile goes
        // to `full`, untouched until the pass below.
        let seg = unsafe { &*log.current.load(Acquire) };
        let live = seg.live();
        scanned += live.len();
        for (i, r) in live.iter().enumerate() {
            prefetch(live, i);
            if found.is_dead(r) {
                r.handle.store(0, Relaxed);
            }
        }
    }
    // Segments handed over during the scan: their records from before the
    // hand-over may have been missed as some thread's current segment.
    let mut logs = logs.lock();
    let mut late = std::mem::take(&mut logs.full);
    scanned += compact(&mut late, &mut emptied, &mut found);
    full.append(&mut late);
    logs.full = full;
    for seg in emptied {
        logs.recycle(seg);
    }
    drop(logs);
    found.frees.flush();
    (scanned, found.dead)
}

fn prefetch(records: &[Record], i: usize) {
    if let Some(h) = records
        .get(i + PREFETCH)
        .and_then(|r| WeakHandle::from_bits(r.handle.load(Relaxed)))
    {
        h.prefetch();
    }
}

/// What a scan found: frees per counter, and the dead objects' references.
struct Found<'a> {
    frees: Frees<'a>,
    dead: Vec<WeakHandle>,
}

impl Found<'_> {
    /// Did a GC clear the record's reference? If so, its object counts as
    /// freed and the reference goes for deletion (the caller drops the record).
    fn is_dead(&mut self, r: &Record) -> bool {
        let Some(h) = WeakHandle::from_bits(r.handle.load(Relaxed)) else {
            return false;
        };
        // SAFETY: records hold only handles `new` made (`memory::track_on`),
        // on HotSpot (the weak-reference mechanism is chosen only there,
        // after `self_test`); a handle is deleted only after its record is
        // dropped (`DEAD`), and `scan_logs` runs where no GC can clear
        // references under it.
        if !unsafe { h.is_cleared() } {
            return false;
        }
        self.frees.add(r.counter.load(Relaxed));
        self.dead.push(h);
        true
    }
}

/// Drops the dead records of segments the scan owns and packs the rest to
/// the front; segments left empty go to `emptied`. Answers how many
/// records it looked at.
#[allow(clippy::vec_box)] // see log::Logs
fn compact(
    segs: &mut Vec<Box<Segment>>,
    emptied: &mut Vec<Box<Segment>>,
    found: &mut Found<'_>,
) -> usize {
    let (mut to_seg, mut to_pos) = (0, 0);
    let mut scanned = 0;
    for from_seg in 0..segs.len() {
        let records = &segs[from_seg].records[..segs[from_seg].len.load(Relaxed)];
        scanned += records.len();
        for (i, r) in records.iter().enumerate() {
            prefetch(records, i);
            let h = r.handle.load(Relaxed);
            if h == 0 || found.is_dead(r) {
                continue;
            }
            let counter = r.counter.load(Relaxed);
            if to_pos == segs[to_seg].records.len() {
                segs[to_seg].len.store(to_pos, Relaxed);
                (to_seg, to_pos) = (to_seg + 1, 0);
            }
            let to = &segs[to_seg].records[to_pos];
            to.handle.store(h, Relaxed);
            to.counter.store(counter, Relaxed);
            to_pos += 1;
        }
    }
    if let Some(last) = segs.get(to_seg) {
        last.len.store(to_pos, Relaxed);
    }
    emptied.extend(segs.drain(to_seg + usize::from(to_pos > 0)..));
    scanned
}

/// Frees per counter, summed over runs of one counter (records of one
/// thread and type tend to sit together) before touching the counters.
struct Frees<'a> {
    run: Option<(u32, i64)>,
    counters: &'a Counters,
}

impl Frees<'_> {
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
            self.counters.freed_by_index(c as usize, n);
        }
    }
}

/// Where every tracked object still alive is, with its counter, in no
/// order (the caller sorts, outside the pause): read in a pause after the
/// GC's work (a heap dump's own GC), so the addresses are the ids HotSpot's
/// dumper then writes.
pub(super) fn addresses(logs: &Mutex<Logs>) -> Addresses {
    let logs = logs.lock();
    let mut out = Addresses::default();
    let mut take = |records: &[Record]| {
        for (i, r) in records.iter().enumerate() {
            prefetch(records, i);
            let Some(h) = WeakHandle::from_bits(r.handle.load(Relaxed)) else {
                continue;
            };
            // SAFETY: as in `Found::is_dead` (records hold handles `new`
            // made, deleted only after their record is dropped); the caller
            // reads in a pause, where no GC moves or clears the referent.
            let at = unsafe { h.referent_address() };
            if at != 0 {
                out.push(at as u64, r.counter.load(Relaxed));
            }
        }
    };
    for seg in &logs.full {
        take(seg.live());
    }
    for log in &logs.threads {
        // SAFETY: as in `scan_logs`: a current segment stays valid while the
        // logs' lock is held (hand-overs take it).
        take(unsafe { &*log.current.load(Acquire) }.live());
    }
    drop(logs);
    out
}
