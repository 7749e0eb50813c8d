//! One counter per (allocating thread, type): objects tracked, objects seen
//! dead, and the most ever alive at once. A counter is found by index
//! without a lock: a weak-reference record holds the index, a JVMTI tag
//! holds `MEMORY_TAG | index` (the agent's other tags, on threads, are
//! small or negative numbers, never with that bit).
//!
//! Counters live in chunks that never move; each thread keeps its own
//! type → index cache, so the allocation path takes no lock either once a
//! thread has met a type.

use crate::modes::Host;
use crate::vm::Jni;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicI64, Ordering::Relaxed};
use std::sync::OnceLock;

const MEMORY_TAG: i64 = 1 << 62;
const CHUNK: usize = 4096;
const CHUNKS: usize = 1024;

/// One per cache line: each is written by its own thread at every allocation,
/// and two threads' counters sharing a line would slow both.
#[derive(Default)]
#[repr(align(64))]
pub struct Counter {
    /// Objects tracked; written only by the allocating thread.
    made: AtomicI64,
    /// Objects seen dead (ObjectFree, or the weak-reference scan).
    freed: AtomicI64,
    /// The most alive at once, as far as brought up to date.
    max: AtomicI64,
    index: usize,
}

impl Counter {
    pub fn index(&self) -> usize {
        self.index
    }

    pub fn tag(&self) -> i64 {
        MEMORY_TAG | self.index as i64
    }

    /// One more object, on its allocating thread (the only one that adds
    /// to `made`, so a plain load and store do).
    pub fn made_one(&self) -> i64 {
        let n = self.made.load(Relaxed) + 1;
        self.made.store(n, Relaxed);
        n
    }

    /// One more object, and `max` follows at once: for tags, whose frees
    /// arrive on their own (ObjectFree).
    pub fn made_one_with_peak(&self) {
        let n = self.made_one();
        self.max.fetch_max(n - self.freed.load(Relaxed), Relaxed);
    }

    pub fn freed(&self, n: i64) {
        self.freed.fetch_add(n, Relaxed);
    }

    /// Alive now: made and not seen dead.
    pub fn alive(&self) -> i64 {
        let freed = self.freed.load(Relaxed);
        self.made.load(Relaxed) - freed
    }

    /// `max` catches up with what is alive now (before a GC can free any).
    pub fn note_peak(&self) {
        self.max.fetch_max(self.alive(), Relaxed);
    }
}

/// Every counter made in this JVM, by index (part of the memory mode's
/// lifetime state, which the agent owns).
pub struct Counters {
    table: Box<[OnceLock<Box<[Counter]>>]>,
    /// (thread, type) of each counter made so far, by index.
    owners: Mutex<Vec<(i64, u32)>>,
}

impl Default for Counters {
    fn default() -> Self {
        Self {
            table: (0..CHUNKS).map(|_| OnceLock::new()).collect(),
            owners: Mutex::new(Vec::new()),
        }
    }
}

impl Counters {
    fn counter(&self, index: usize) -> Option<&Counter> {
        let chunk = self.table.get(index / CHUNK)?.get()?;
        chunk.get(index % CHUNK)
    }

    pub(super) fn new_counter(&self, thread: i64, ty: u32) -> Option<&Counter> {
        let mut owners = self.owners.lock();
        let index = owners.len();
        let chunk = self.table.get(index / CHUNK)?.get_or_init(|| {
            (0..CHUNK)
                .map(|i| Counter {
                    index: index / CHUNK * CHUNK + i,
                    ..Counter::default()
                })
                .collect()
        });
        owners.push((thread, ty));
        chunk.get(index % CHUNK)
    }
}

/// A thread's agent id and its counters by type (kept in the memory
/// mode's per-thread state, `super::PerThread`).
#[derive(Default)]
pub struct ThreadCounters {
    thread: Option<i64>,
    by_type: Vec<Option<&'static Counter>>,
}

impl ThreadCounters {
    pub const fn new() -> Self {
        Self {
            thread: None,
            by_type: Vec::new(),
        }
    }

    /// The calling thread's counter for type `ty`, made on first use.
    pub fn get(&mut self, a: &Host<'static>, jni: &Jni, ty: u32) -> Option<&'static Counter> {
        if let Some(&Some(c)) = self.by_type.get(ty as usize) {
            return Some(c);
        }
        let thread = match self.thread {
            Some(t) => t,
            None => {
                let t = a.jvmti.current_thread().ok()?;
                let id = a.threads.identify(a.jvmti, jni, t, 0);
                jni.delete_local_ref(t);
                let id = match id? {
                    crate::threads::Identity::Java(id) => id.0 as i64,
                    crate::threads::Identity::Agent => return None,
                };
                self.thread = Some(id);
                id
            }
        };
        let counter = a.memory.counters.new_counter(thread, ty)?;
        if self.by_type.len() <= ty as usize {
            self.by_type.resize(ty as usize + 1, None);
        }
        self.by_type[ty as usize] = Some(counter);
        Some(counter)
    }
}

pub fn is_memory_tag(tag: i64) -> bool {
    tag & MEMORY_TAG != 0 && tag > 0
}

impl Counters {
    /// The ObjectFree event of a tagged object.
    pub fn object_freed(&self, tag: i64) {
        if is_memory_tag(tag) {
            if let Some(c) = self.counter((tag & !MEMORY_TAG) as usize) {
                c.freed(1);
            }
        }
    }

    /// `n` objects of counter `index` were found dead.
    pub fn freed_by_index(&self, index: usize, n: i64) {
        if let Some(c) = self.counter(index) {
            c.freed(n);
        }
    }

    /// Every counter's `max` catches up with what is alive now. Runs at the
    /// start of each GC (a safepoint: no lock is held across a VM call, so the
    /// one taken here is always released soon).
    pub fn note_peaks(&self) {
        let made = self.owners.lock().len();
        for c in (0..made).filter_map(|i| self.counter(i)) {
            c.note_peak();
        }
    }

    /// (thread, type, alive, max) of every counter.
    pub fn all(&self) -> Vec<(i64, u32, i64, i64)> {
        let owners = self.owners.lock().clone();
        owners
            .into_iter()
            .enumerate()
            .filter_map(|(i, (thread, ty))| {
                let c = self.counter(i)?;
                let alive = c.alive();
                Some((thread, ty, alive, c.max.load(Relaxed).max(alive)))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_their_counters_and_frees_come_back() {
        let counters = Counters::default();
        let a = counters.new_counter(7, 3).unwrap();
        let b = counters.new_counter(7, 4).unwrap();
        assert!(is_memory_tag(a.tag()) && is_memory_tag(b.tag()));
        assert!(
            !is_memory_tag(5) && !is_memory_tag(-1),
            "thread tags are not ours"
        );
        for _ in 0..3 {
            a.made_one_with_peak();
        }
        counters.object_freed(a.tag());
        a.made_one_with_peak();
        counters.object_freed(5); // a thread's tag: ignored
        let rows = counters.all();
        let row = rows.iter().find(|r| r.0 == 7 && r.1 == 3).unwrap();
        assert_eq!((row.2, row.3), (3, 3));
        assert_eq!(counters.counter(b.index).unwrap().alive(), 0);
    }

    /// Weak references: `max` moves only when a GC starts (and at a
    /// snapshot), from what was alive before that GC's frees.
    #[test]
    fn peaks_are_taken_before_each_gc_frees() {
        let counters = Counters::default();
        let c = counters.new_counter(9, 1).unwrap();
        for _ in 0..5 {
            c.made_one();
        }
        counters.note_peaks(); // GC 1 starts: 5 alive
        counters.freed_by_index(c.index(), 5); // GC 1 found all 5 dead
        for _ in 0..3 {
            c.made_one();
        }
        counters.note_peaks(); // GC 2 starts: 3 alive
        counters.freed_by_index(c.index(), 1);
        let rows = counters.all();
        let row = rows.iter().find(|r| r.0 == 9 && r.1 == 1).unwrap();
        assert_eq!((row.2, row.3), (2, 5));
    }
}
