//! One counter per (allocating thread, allocation site), and one per
//! (allocating thread, type), the site counters' group: objects tracked,
//! objects seen dead, and the most ever alive at once. A counter is found by
//! index without a lock: a weak-reference record holds the site counter's
//! index, a JVMTI tag holds `MEMORY_TAG | index` (the agent's other tags, on
//! threads, are small or negative numbers, never with that bit).
//!
//! Groups. With weak references an allocation adds to its site's counter
//! alone (the cost per allocation stays one counter), and a group's figures
//! are its sites' sums: its `max` is taken from that sum at each GC start,
//! where weak references take every peak. With tags, whose frees arrive
//! on their own, an allocation and its free count on both, and the group's
//! `max` follows at once. Either way a group's `max` is the peak of the sum,
//! not the sum of its sites' peaks, as the `<memory>` rows always were.
//!
//! Counters live in chunks that never move; each thread keeps its own
//! site → counters cache, so the allocation path takes no lock either once
//! a thread has met a site.

use crate::host::Host;
use crate::sites::Sites;
use crate::vm::Jni;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{
    AtomicI64, AtomicUsize, Ordering::Acquire, Ordering::Relaxed, Ordering::Release,
};
use std::sync::OnceLock;

const MEMORY_TAG: i64 = 1 << 62;
const CHUNK: usize = 4096;
const CHUNKS: usize = 1024;
/// A counter without a group (a group itself).
const NO_GROUP: usize = usize::MAX;

/// What a counter counts, besides its thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    /// Every object of a type (a `<memory>` row).
    Type(u32),
    /// The objects of one allocation site (a `<sites>` class frame).
    Site(u32),
}

/// One per cache line: each is written by its own thread at every allocation,
/// and two threads' counters sharing a line would slow both.
#[repr(align(64))]
pub struct Counter {
    /// Objects tracked; written only by the allocating thread.
    made: AtomicI64,
    /// Objects seen dead (ObjectFree, or the weak-reference scan).
    freed: AtomicI64,
    /// The most alive at once, as far as brought up to date.
    max: AtomicI64,
    index: usize,
    /// Index of the group counter (thread × type) a site counter adds to.
    group: AtomicUsize,
}

impl Default for Counter {
    fn default() -> Self {
        Counter {
            made: AtomicI64::new(0),
            freed: AtomicI64::new(0),
            max: AtomicI64::new(0),
            index: 0,
            group: AtomicUsize::new(NO_GROUP),
        }
    }
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
/// lasting state).
pub struct Counters {
    table: Box<[OnceLock<Box<[Counter]>>]>,
    /// (thread, what) of each counter made so far, by index.
    owners: Mutex<Vec<(i64, Key)>>,
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

    /// A new counter of `thread` for `key`, adding to `group`'s if any.
    pub(super) fn new_counter(
        &self,
        thread: i64,
        key: Key,
        group: Option<&Counter>,
    ) -> Option<&Counter> {
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
        owners.push((thread, key));
        let counter = chunk.get(index % CHUNK)?;
        if let Some(g) = group {
            counter.group.store(g.index, Release);
        }
        Some(counter)
    }

    /// A counter's group, if it has one.
    fn group_of(&self, c: &Counter) -> Option<&Counter> {
        match c.group.load(Acquire) {
            NO_GROUP => None,
            g => self.counter(g),
        }
    }
}

/// The counters one object counts on: its site's and that site's group.
#[derive(Clone, Copy)]
pub struct SiteCounters {
    pub site: &'static Counter,
    pub group: &'static Counter,
}

/// A thread's agent id and its counters by site and by type (kept in the
/// memory mode's per-thread value, `super::PerThread`).
#[derive(Default)]
pub struct ThreadCounters {
    thread: Option<i64>,
    by_site: Vec<Option<SiteCounters>>,
    by_type: Vec<Option<&'static Counter>>,
    /// Sites found when the probe ran: (place, type) → site id.
    found: Option<HashMap<(u32, u32), u32>>,
}

impl ThreadCounters {
    pub const fn new() -> Self {
        Self {
            thread: None,
            by_site: Vec::new(),
            by_type: Vec::new(),
            found: None,
        }
    }

    /// The calling thread's counters for site `site`, made on first use.
    pub fn get(
        &mut self,
        host: &Host,
        counters: &'static Counters,
        jni: &Jni,
        site: u32,
    ) -> Option<SiteCounters> {
        if let Some(&Some(c)) = self.by_site.get(site as usize) {
            return Some(c);
        }
        let thread = self.thread(host, jni)?;
        let ty = host.sites.type_of(site)?;
        let group = match self.by_type.get(ty as usize) {
            Some(&Some(g)) => g,
            _ => {
                let g = counters.new_counter(thread, Key::Type(ty), None)?;
                put(&mut self.by_type, ty, g);
                g
            }
        };
        let c = SiteCounters {
            site: counters.new_counter(thread, Key::Site(site), Some(group))?,
            group,
        };
        put(&mut self.by_site, site, c);
        Some(c)
    }

    /// The id of the site (place, type), for probes that know the type only
    /// when they run; cached per thread.
    pub fn site_of(&mut self, sites: &Sites, place: u32, ty: u32) -> u32 {
        let found = self.found.get_or_insert_with(HashMap::new);
        *found
            .entry((place, ty))
            .or_insert_with(|| sites.site_id(place, ty))
    }

    fn thread(&mut self, host: &Host, jni: &Jni) -> Option<i64> {
        if let Some(t) = self.thread {
            return Some(t);
        }
        let id = host.current_thread(jni)?.0 as i64;
        self.thread = Some(id);
        Some(id)
    }
}

/// `v[i] = Some(x)`, growing `v` as needed.
fn put<T: Copy>(v: &mut Vec<Option<T>>, i: u32, x: T) {
    if v.len() <= i as usize {
        v.resize(i as usize + 1, None);
    }
    v[i as usize] = Some(x);
}

pub fn is_memory_tag(tag: i64) -> bool {
    tag & MEMORY_TAG != 0 && tag > 0
}

impl Counters {
    /// The ObjectFree event of a tagged object: its site's and its group's.
    pub fn object_freed(&self, tag: i64) {
        if !is_memory_tag(tag) {
            return;
        }
        if let Some(c) = self.counter((tag & !MEMORY_TAG) as usize) {
            c.freed(1);
            if let Some(g) = self.group_of(c) {
                g.freed(1);
            }
        }
    }

    /// `n` objects of counter `index` were found dead (weak references:
    /// the site's alone, its group sums its sites).
    pub fn freed_by_index(&self, index: usize, n: i64) {
        if let Some(c) = self.counter(index) {
            c.freed(n);
        }
    }

    /// Every counter's `max` catches up with what is alive now, and each
    /// group's with its sites' sum (weak references). Runs at the start of
    /// each GC (a safepoint: no lock is held across a VM call, so the one
    /// taken here is always released soon).
    pub fn note_peaks(&self) {
        let made = self.owners.lock().len();
        // Indexed by counter (a group's index is below `made`): one flat
        // allocation in the pause, no hashing per counter.
        let mut sums: Vec<Option<i64>> = vec![None; made];
        for c in (0..made).filter_map(|i| self.counter(i)) {
            c.note_peak();
            if let Some(sum) = self.group_of(c).and_then(|g| sums.get_mut(g.index)) {
                *sum.get_or_insert(0) += c.alive();
            }
        }
        for (g, alive) in sums.into_iter().enumerate() {
            if let (Some(alive), Some(g)) = (alive, self.counter(g)) {
                g.max.fetch_max(alive, Relaxed);
            }
        }
    }

    /// Every counter's figures. `sum_groups`: a group's are its sites' sums
    /// (weak references), not its own counts (tags).
    pub fn all(&self, sum_groups: bool) -> Vec<Tally> {
        let owners = self.owners.lock().clone();
        // Per group: its sites' (alive, made).
        let mut sums: HashMap<usize, (i64, i64)> = HashMap::new();
        if sum_groups {
            for c in (0..owners.len()).filter_map(|i| self.counter(i)) {
                if let Some(g) = self.group_of(c) {
                    let e = sums.entry(g.index).or_default();
                    e.0 += c.alive();
                    e.1 += c.made.load(Relaxed);
                }
            }
        }
        owners
            .into_iter()
            .enumerate()
            .filter_map(|(i, (thread, key))| {
                let c = self.counter(i)?;
                let (alive, made) = match key {
                    Key::Type(_) if sum_groups => sums.get(&i).copied().unwrap_or((0, 0)),
                    _ => (c.alive(), c.made.load(Relaxed)),
                };
                let max = c.max.load(Relaxed).max(alive);
                Some(Tally {
                    thread,
                    key,
                    alive,
                    max,
                    made,
                })
            })
            .collect()
    }
}

/// One counter's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub thread: i64,
    pub key: Key,
    /// Objects alive (not seen dead).
    pub alive: i64,
    /// The most alive at once.
    pub max: i64,
    /// Objects ever tracked.
    pub made: i64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_name_their_counters_and_frees_come_back() {
        let counters = Counters::default();
        let a = counters.new_counter(7, Key::Type(3), None).unwrap();
        let b = counters.new_counter(7, Key::Type(4), None).unwrap();
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
        let rows = counters.all(false);
        let row = rows
            .iter()
            .find(|r| r.thread == 7 && r.key == Key::Type(3))
            .unwrap();
        assert_eq!((row.alive, row.max, row.made), (3, 3, 4));
        assert_eq!(counters.counter(b.index).unwrap().alive(), 0);
    }

    /// Weak references: `max` moves only when a GC starts (and at a
    /// snapshot), from what was alive before that GC's frees.
    #[test]
    fn peaks_are_taken_before_each_gc_frees() {
        let counters = Counters::default();
        let c = counters.new_counter(9, Key::Type(1), None).unwrap();
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
        let rows = counters.all(false);
        let row = rows
            .iter()
            .find(|r| r.thread == 9 && r.key == Key::Type(1))
            .unwrap();
        assert_eq!((row.alive, row.max), (2, 5));
    }

    /// Two sites of one type, weak references: each object counts on its
    /// site; the group is their sum, its `max` the peak of the sum at each
    /// GC start, not the sum of the sites' peaks.
    #[test]
    fn groups_sum_their_sites() {
        let counters = Counters::default();
        let group = counters.new_counter(3, Key::Type(0), None).unwrap();
        let a = counters.new_counter(3, Key::Site(10), Some(group)).unwrap();
        let b = counters.new_counter(3, Key::Site(11), Some(group)).unwrap();
        let make = |c: &Counter, n| {
            for _ in 0..n {
                c.made_one();
            }
        };
        make(a, 4);
        counters.note_peaks(); // a 4, group 4
        counters.freed_by_index(a.index(), 4);
        make(b, 3);
        counters.note_peaks(); // b 3, group 3
        counters.freed_by_index(b.index(), 1);
        let rows = counters.all(true);
        let get = |k| {
            rows.iter()
                .find(|r| r.key == k)
                .map(|r| (r.alive, r.max, r.made))
                .unwrap()
        };
        assert_eq!(get(Key::Site(10)), (0, 4, 4));
        assert_eq!(get(Key::Site(11)), (2, 3, 3));
        assert_eq!(get(Key::Type(0)), (2, 4, 7), "max: not 4 + 3");
    }

    /// Tags: an object counts on its site and its group, and its free
    /// (by the site's tag) reaches both.
    #[test]
    fn a_tags_free_reaches_the_group() {
        let counters = Counters::default();
        let group = counters.new_counter(3, Key::Type(0), None).unwrap();
        let a = counters.new_counter(3, Key::Site(10), Some(group)).unwrap();
        for _ in 0..2 {
            a.made_one_with_peak();
            group.made_one_with_peak();
        }
        counters.object_freed(a.tag());
        let rows = counters.all(false);
        let get = |k| {
            rows.iter()
                .find(|r| r.key == k)
                .map(|r| (r.alive, r.max))
                .unwrap()
        };
        assert_eq!((get(Key::Site(10)), get(Key::Type(0))), ((1, 2), (1, 2)));
    }
}
