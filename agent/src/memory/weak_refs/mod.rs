//! Tracking by JNI weak global reference, for the collectors that clear
//! such references only inside their pauses (serial, parallel, G1).
//!
//! Each tracked object gets a weak reference, which its allocating thread
//! appends, with the object's counter, to a log of its own (`log`): no
//! lock, no JVMTI. What happens around each GC:
//!
//! - GarbageCollectionStart (in the pause): the frees of every earlier GC
//!   are counted first (normally done already; otherwise the pause waits
//!   for the scan in progress, or scans itself). Then every counter's
//!   `max` takes what is alive. Objects die only in a collection, so the
//!   peak of the objects not yet collected is always reached just before
//!   one starts, and is taken there exactly.
//! - GarbageCollectionFinish (in the pause): wakes the `profrj memory`
//!   agent thread and returns.
//! - The agent thread then scans the logs (`scan`), outside the pause and
//!   while the program runs: a cleared reference is a freed object. It
//!   deletes those references too (JNI, which the pause forbids).
//!
//! A snapshot forces a GC and then counts its frees at once, so `count`
//! is exact. The price is the scan: every tracked object still alive is
//! looked at once per GC (one read of its reference's slot), on the agent
//! thread.

mod log;
mod scan;

pub use log::ThreadLogSlot;

use crate::vm::{Jni, WeakHandle};
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};

/// GCs finished.
static GCS: AtomicU64 = AtomicU64::new(0);
/// The GCs whose frees are counted; its lock is held while scanning.
static COUNTED_THROUGH: Mutex<u64> = Mutex::new(0);
/// Does the agent thread run (and so scan after each GC)?
static SCANNER: AtomicBool = AtomicBool::new(false);
/// Work for the agent thread, and its wake-up.
static WORK: Mutex<bool> = Mutex::new(false);
static WORK_READY: Condvar = Condvar::new();
/// Weak references of dead objects, for the agent thread to delete. (If
/// that thread is gone, they stay: a leak of one slot each, not a crash.)
/// A reference is here once, and in no record any more (`scan`).
static DEAD: Mutex<Vec<WeakHandle>> = Mutex::new(Vec::new());

/// GarbageCollectionStart: earlier GCs' frees counted, then `max` catches up.
pub fn gc_started() {
    count_frees(true);
    super::counters::note_peaks();
}

/// GarbageCollectionFinish: the scan is the agent thread's (or, without
/// one, done here).
pub fn gc_finished() {
    GCS.fetch_add(1, Release);
    if SCANNER.load(Acquire) {
        wake();
    } else {
        count_frees(true);
    }
}

/// Counts the frees of every GC finished so far, if not done yet; waits
/// for a scan in progress. Never blocks on the VM, so a GC event may call it.
pub fn count_frees(in_pause: bool) {
    let asked = crate::clock::now_ns();
    let mut through = COUNTED_THROUGH.lock();
    if in_pause {
        let waited = crate::clock::now_ns().saturating_sub(asked);
        COST.pause_wait_ns.fetch_add(waited, Relaxed);
    }
    let gcs = GCS.load(Acquire);
    if *through == gcs {
        return;
    }
    let start = crate::clock::now_ns();
    let (scanned, mut dead) = scan::scan_logs();
    *through = gcs;
    drop(through);
    COST.add(
        scanned,
        crate::clock::now_ns().saturating_sub(start),
        in_pause,
    );
    if !dead.is_empty() {
        DEAD.lock().append(&mut dead);
        wake();
    }
}

fn wake() {
    *WORK.lock() = true;
    WORK_READY.notify_one();
}

/// Body of the `profrj memory` agent thread: after each GC, counts its
/// frees and deletes the dead objects' weak references. Never returns.
pub fn run_agent_thread(jni: &Jni) {
    /// If the thread stops (a caught panic), the GC events scan themselves.
    struct Running;
    impl Drop for Running {
        fn drop(&mut self) {
            SCANNER.store(false, Release);
        }
    }
    SCANNER.store(true, Release);
    let _running = Running;
    loop {
        {
            let mut work = WORK.lock();
            while !*work {
                WORK_READY.wait(&mut work);
            }
            *work = false;
        }
        count_frees(false);
        let dead = std::mem::take(&mut *DEAD.lock());
        for h in dead {
            // SAFETY: `track_on` made it with `new`; the scan moved it from
            // its record (dropped) to DEAD, once, and took it out of DEAD just
            // now: this is its only copy, deleted once.
            unsafe { h.delete(jni) };
        }
    }
}

/// What the scans cost.
struct Cost {
    scans: AtomicU64,
    records: AtomicU64,
    ns: AtomicU64,
    longest_ns: AtomicU64,
    in_pause: AtomicU64,
    in_pause_ns: AtomicU64,
    /// Time GC pauses spent waiting for the agent thread's scan.
    pause_wait_ns: AtomicU64,
}

static COST: Cost = Cost {
    scans: AtomicU64::new(0),
    records: AtomicU64::new(0),
    ns: AtomicU64::new(0),
    longest_ns: AtomicU64::new(0),
    in_pause: AtomicU64::new(0),
    in_pause_ns: AtomicU64::new(0),
    pause_wait_ns: AtomicU64::new(0),
};

impl Cost {
    fn add(&self, records: usize, ns: u64, in_pause: bool) {
        self.scans.fetch_add(1, Relaxed);
        self.records.fetch_add(records as u64, Relaxed);
        self.ns.fetch_add(ns, Relaxed);
        self.longest_ns.fetch_max(ns, Relaxed);
        if in_pause {
            self.in_pause.fetch_add(1, Relaxed);
            self.in_pause_ns.fetch_add(ns, Relaxed);
        }
    }
}

/// One line on what the scans cost, for the end of a session.
pub fn cost_summary() -> Option<String> {
    let scans = COST.scans.load(Relaxed);
    if scans == 0 {
        return None;
    }
    let (records, ns) = (COST.records.load(Relaxed), COST.ns.load(Relaxed));
    let ms = |ns: u64| ns as f64 / 1e6;
    Some(format!(
        "memory: {scans} scans after {} GCs looked at {records} weak references in {:.1} ms \
         (longest {:.1} ms, {:.1} ns per reference); {} of them inside a GC pause, {:.1} ms; \
         GC pauses waited {:.1} ms for scans",
        GCS.load(Relaxed),
        ms(ns),
        ms(COST.longest_ns.load(Relaxed)),
        ns as f64 / records.max(1) as f64,
        COST.in_pause.load(Relaxed),
        ms(COST.in_pause_ns.load(Relaxed)),
        ms(COST.pause_wait_ns.load(Relaxed)),
    ))
}

#[cfg(test)]
mod tests {
    use super::log::LOGS;
    use super::*;
    use crate::memory::counters;
    use std::sync::atomic::AtomicUsize;

    /// Records whose object is not known dead.
    fn recorded() -> usize {
        let logs = LOGS.lock();
        let current = logs.threads.iter().map(|l| {
            // SAFETY: no scan runs here, so no segment is freed meanwhile.
            unsafe { &*l.current.load(Acquire) }
        });
        let segments = logs.full.iter().map(|s| &**s).chain(current);
        segments
            .flat_map(|s| s.live())
            .filter(|r| r.handle.load(Relaxed) != 0)
            .count()
    }

    /// Fake weak references: slots in plain memory, cleared by hand the way
    /// HotSpot's GC clears them in its pause. One test, as the GC count and
    /// the logs are the process's own.
    #[test]
    fn frees_are_counted_before_the_next_gc_takes_its_peak() {
        let slots: Vec<AtomicUsize> = (0..1200).map(|_| AtomicUsize::new(1)).collect();
        let handle =
            |i: usize| WeakHandle::from_bits(&slots[i] as *const AtomicUsize as usize + 1).unwrap();
        let c = counters::new_counter(-42, 7).unwrap();
        let mine = ThreadLogSlot::new();
        // Past the first segments, so full and current ones are both scanned.
        for i in 0..1000 {
            mine.record(handle(i), c.index());
            c.made_one();
        }
        assert_eq!(recorded(), 1000);

        // Without the agent thread, the GC's finish scans at once.
        gc_started();
        for s in slots[..1000].iter().step_by(3) {
            s.store(0, Relaxed); // 334 die
        }
        gc_finished();
        assert_eq!((c.alive(), recorded()), (666, 666));
        let dead = std::mem::take(&mut *DEAD.lock());
        assert_eq!(dead.len(), 334);
        assert!(dead.contains(&handle(999)));

        // With it, the finish only wakes it; if it has not scanned by the
        // next GC's start, that start counts the frees before taking the
        // peak: 666 + 200 made since, not 1000 + 200.
        SCANNER.store(true, Release);
        gc_started();
        for s in &slots[..1000] {
            s.store(0, Relaxed); // the other 666 die
        }
        gc_finished();
        assert_eq!(c.alive(), 666, "not counted before a scan");
        for i in 1000..1200 {
            mine.record(handle(i), c.index());
            c.made_one();
        }
        gc_started();
        assert_eq!((c.alive(), recorded()), (200, 200));
        gc_finished();
        count_frees(false); // the agent thread's turn: nothing died
        SCANNER.store(false, Release);
        let rows = counters::all();
        let row = rows.iter().find(|r| r.0 == -42).unwrap();
        assert_eq!((row.2, row.3), (200, 1000));
        assert_eq!(DEAD.lock().len(), 666);
    }
}
