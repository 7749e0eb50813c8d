//! Tracking by JNI weak global reference, for the collectors that clear
//! such references only inside their pauses (serial, parallel, G1).
//!
//! Each tracked object gets a weak reference, which its allocating thread
//! appends, with the object's counter, to a log of its own (`log`): no
//! lock, no JVMTI. What happens around each GC:
//!
//! - GarbageCollectionStart (in the pause): the frees of every earlier GC
//!   are counted first (normally done already; otherwise the pause waits
//!   for the scan in progress, or scans itself), before this GC frees
//!   anything: so the figures at the last GC's end are exact there, and a
//!   full collection's peak the agent thread has not taken yet is taken
//!   (`counters::peaks`).
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

use super::counters::Counters;
use crate::events::{Events, Kind};
use crate::vm::{Jni, WeakHandle};
use log::Logs;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};

/// The weak-reference tracker's state for the JVM's lifetime (part of the
/// memory mode's lasting state).
#[derive(Default)]
pub struct WeakRefs {
    /// Every thread's log and the segments they filled.
    logs: Mutex<Logs>,
    /// GCs finished.
    gcs: AtomicU64,
    /// The GCs whose frees are counted; its lock is held while scanning.
    counted_through: Mutex<u64>,
    /// Does the agent thread run (and so scan after each GC)?
    scanner: AtomicBool,
    /// The VM is dead: the agent thread ends ([`WeakRefs::quit`]).
    quit: AtomicBool,
    /// Work for the agent thread, and its wake-up.
    work: Mutex<bool>,
    work_ready: Condvar,
    /// Weak references of dead objects, for the agent thread to delete. (If
    /// that thread is gone, they stay: a leak of one slot each, not a crash.)
    dead: Mutex<Vec<WeakHandle>>,
    cost: Cost,
    /// A heap dump's wish: every GC's end notes where the tracked objects
    /// are (the dump's own GC is one of them).
    capture_armed: AtomicBool,
    captured: Mutex<Captured>,
}

/// Addresses noted for a heap dump, and the file it writes: a GC's end
/// notes them again only while that file is still empty (HotSpot writes
/// the heap after its dump's own GC, in the same pause, so the last GC
/// that ends before anything is written is the one whose addresses the
/// file holds; a GC after the dump finds the file written and is ignored).
#[derive(Default)]
pub struct Captured {
    pub file: Option<std::ffi::CString>,
    pub addresses: crate::heap_dump::Addresses,
    /// GCs whose end noted them again.
    pub renoted: u64,
}

impl WeakRefs {
    /// Records a tracked object in the calling thread's log.
    pub fn record(&'static self, slot: &ThreadLogSlot, handle: WeakHandle, counter: usize) {
        slot.record(&self.logs, handle, counter)
    }

    /// GarbageCollectionFinish: the scan is the agent thread's (or, without
    /// one, done here).
    pub fn gc_finished(&self, counters: &Counters) {
        self.gcs.fetch_add(1, Release);
        if self.capture_armed.load(Acquire) {
            let mut c = self.captured.lock();
            if c.file.as_deref().is_some_and(file_is_empty) {
                c.addresses = scan::addresses(&self.logs);
                c.renoted += 1;
            }
        }
        if self.scanner.load(Acquire) {
            self.wake();
        } else {
            self.count_frees(true, counters);
        }
    }

    /// Counts the frees of every GC finished so far, if not done yet; waits
    /// for a scan in progress. Never blocks on the VM, so a GC event may call
    /// it. Answers the GCs finished whose frees are counted.
    pub fn count_frees(&self, in_pause: bool, counters: &Counters) -> u64 {
        let asked = crate::clock::now_ns();
        let mut through = self.counted_through.lock();
        if in_pause {
            let waited = crate::clock::now_ns().saturating_sub(asked);
            self.cost.pause_wait_ns.fetch_add(waited, Relaxed);
        }
        let gcs = self.gcs.load(Acquire);
        if *through == gcs {
            return gcs;
        }
        let start = crate::clock::now_ns();
        // SAFETY: scans run only here, under `counted_through`.
        let (scanned, mut dead) = unsafe { scan::scan_logs(&self.logs, counters) };
        *through = gcs;
        drop(through);
        self.cost.add(
            scanned,
            crate::clock::now_ns().saturating_sub(start),
            in_pause,
        );
        if !dead.is_empty() {
            self.dead.lock().append(&mut dead);
            self.wake();
        }
        gcs
    }

    /// Notes where the tracked objects are now, and again at the end of
    /// each GC while `file` (the heap dump's) is still empty.
    pub fn arm_capture(&self, file: std::ffi::CString) {
        *self.captured.lock() = Captured {
            file: Some(file),
            addresses: Default::default(),
            renoted: 0,
        };
        self.capture_armed.store(true, Release);
        // Read after arming, kept only if no GC's end noted them since (a
        // GC's own noting is later, so right; the lock is not held while
        // reading, or a GC's end would wait for it).
        let now = scan::addresses(&self.logs);
        let mut c = self.captured.lock();
        if c.renoted == 0 {
            c.addresses = now;
        }
    }

    /// Stops noting; what the last GC's end noted, sorted by address
    /// (here, not in the pause; a radix sort, linear).
    pub fn take_capture(&self) -> Captured {
        self.capture_armed.store(false, Release);
        let mut c = std::mem::take(&mut *self.captured.lock());
        c.addresses.sort();
        c
    }

    fn wake(&self) {
        *self.work.lock() = true;
        self.work_ready.notify_one();
    }

    /// VMDeath, after the last snapshot: the agent thread ends. HotSpot's
    /// exit waits up to 300 ms for every Java thread still in native code,
    /// and one waiting for work here is one.
    pub fn quit(&self) {
        self.quit.store(true, Release);
        self.wake();
    }

    /// Body of the `profrj memory` agent thread: after each GC, counts its
    /// frees, deletes the dead objects' weak references, then runs `also`
    /// (the stamps' census). Never returns.
    pub fn run_agent_thread(
        &self,
        jni: &Jni,
        counters: &Counters,
        events: &Events,
        also: impl Fn(),
    ) {
        /// If the thread stops (a caught panic), the GC events scan themselves.
        struct Running<'a>(&'a AtomicBool);
        impl Drop for Running<'_> {
            fn drop(&mut self) {
                self.0.store(false, Release);
            }
        }
        self.scanner.store(true, Release);
        let _running = Running(&self.scanner);
        loop {
            {
                let mut work = self.work.lock();
                while !*work {
                    self.work_ready.wait(&mut work);
                }
                *work = false;
            }
            if self.quit.load(Acquire) {
                return;
            }
            self.count_frees(false, counters);
            let dead = std::mem::take(&mut *self.dead.lock());
            // Said before the references go: a new object may get one again.
            if events.heard(Kind::ObjectsFreed) && !dead.is_empty() {
                let keys: Vec<u64> = dead.iter().map(|h| h.to_bits() as u64).collect();
                events.objects_freed(&keys);
            }
            for h in dead {
                // SAFETY: `track_on` made it with `new`; the scan moved it from
                // its record (dropped) to `dead`, once, and took it out of
                // `dead` just now: this is its only copy, deleted once.
                unsafe { h.delete(jni) };
            }
            also();
        }
    }

    /// One line on what the scans cost, for the end of a session.
    pub fn cost_summary(&self) -> Option<String> {
        let cost = &self.cost;
        let scans = cost.scans.load(Relaxed);
        let (records, ns) = (cost.records.load(Relaxed), cost.ns.load(Relaxed));
        if scans == 0 || records == 0 {
            return None; // nothing tracked this way (stamps, or tags)
        }
        let ms = |ns: u64| ns as f64 / 1e6;
        Some(format!(
            "memory: {scans} scans after {} GCs looked at {records} weak references in {:.1} ms \
             (longest {:.1} ms, {:.1} ns per reference); {} of them inside a GC pause, {:.1} ms; \
             GC pauses waited {:.1} ms for scans",
            self.gcs.load(Relaxed),
            ms(ns),
            ms(cost.longest_ns.load(Relaxed)),
            ns as f64 / records.max(1) as f64,
            cost.in_pause.load(Relaxed),
            ms(cost.in_pause_ns.load(Relaxed)),
            ms(cost.pause_wait_ns.load(Relaxed)),
        ))
    }
}

/// What the scans cost.
#[derive(Default)]
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

/// Is `path` absent or empty? (One stat, no allocation: called in a pause.)
fn file_is_empty(path: &std::ffi::CStr) -> bool {
    // SAFETY: an all-zero stat is a valid value to fill.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `path` is NUL-terminated, `st` a live stat written by the call.
    let r = unsafe { libc::stat(path.as_ptr(), &mut st) };
    r != 0 || st.st_size == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Records whose object is not known dead.
    fn recorded(w: &WeakRefs) -> usize {
        let logs = w.logs.lock();
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
        let w: &'static WeakRefs = Box::leak(Box::default());
        let counters = Counters::default();
        use crate::memory::counters::{Key, Kind};
        let group = counters.group(-42, 3).unwrap();
        let c = counters
            .new_counter(-42, Key::Site(7), Kind::Weak, Some(group))
            .unwrap();
        let mine = ThreadLogSlot::new();
        // A full collection's start and finish as `memory::Lifetime` handles them.
        let start = |w: &WeakRefs| {
            let weak_through = w.count_frees(true, &counters);
            counters.take_pending_peak(crate::memory::counters::Known { weak_through });
            counters.gc_started();
        };
        let finish = |w: &WeakRefs| {
            counters.gc_ended(true);
            w.gc_finished(&counters);
        };
        // Past the first segments, so full and current ones are both scanned.
        for i in 0..1000 {
            w.record(&mine, handle(i), c.index());
            c.made_one();
        }
        assert_eq!(recorded(w), 1000);

        // Without the agent thread, the GC's finish scans at once.
        start(w);
        for s in slots[..1000].iter().step_by(3) {
            s.store(0, Relaxed); // 334 die
        }
        finish(w);
        assert_eq!((c.alive(), recorded(w)), (666, 666));
        let dead = std::mem::take(&mut *w.dead.lock());
        assert_eq!(dead.len(), 334);
        assert!(dead.contains(&handle(999)));

        // With it, the finish only wakes it; if it has not scanned by the
        // next GC's start, that start counts the frees before taking the
        // last full collection's peak: 0 alive at its end, 200 made since
        // not counted (not 666 + 200).
        w.scanner.store(true, Release);
        start(w);
        for s in &slots[..1000] {
            s.store(0, Relaxed); // the other 666 die
        }
        finish(w);
        assert_eq!(c.alive(), 666, "not counted before a scan");
        for i in 1000..1200 {
            w.record(&mine, handle(i), c.index());
            c.made_one();
        }
        start(w);
        assert_eq!((c.alive(), recorded(w)), (200, 200));
        finish(w);
        w.count_frees(false, &counters); // the agent thread's turn: nothing died
        w.scanner.store(false, Release);
        let rows = counters.all(crate::memory::counters::Instant::Now);
        let row = rows.iter().find(|r| r.key == Key::Site(7)).unwrap();
        // The first collection's end: 666.
        assert_eq!((row.alive, row.max), (200, 666));
        assert_eq!(w.dead.lock().len(), 666);
    }

    /// An ended thread's log is freed by the next scan (it leaked before),
    /// its records kept: the memory left per ended thread is its live
    /// objects' records, not its log.
    #[test]
    fn an_ended_thread_s_log_is_freed_by_the_next_scan_and_its_records_stay() {
        let slots: &'static [AtomicUsize] =
            Box::leak((0..100).map(|_| AtomicUsize::new(1)).collect());
        let w: &'static WeakRefs = Box::leak(Box::default());
        let counters: &'static Counters = Box::leak(Box::default());
        use crate::memory::counters::{Key, Kind};
        let c = counters
            .new_counter(-7, Key::Site(1), Kind::Weak, None)
            .unwrap();
        let index = c.index();
        std::thread::spawn(move || {
            let mine = ThreadLogSlot::new();
            for s in slots {
                let h = WeakHandle::from_bits(s as *const AtomicUsize as usize + 1).unwrap();
                w.record(&mine, h, index);
            }
        })
        .join()
        .unwrap();
        assert_eq!(w.logs.lock().threads.len(), 0);
        assert_eq!(w.logs.lock().retired.len(), 1);
        assert_eq!(recorded(w), 100);
        w.gc_finished(counters); // no agent thread: the scan runs here
        assert_eq!(w.logs.lock().retired.len(), 0);
        assert_eq!(recorded(w), 100);
    }
}
