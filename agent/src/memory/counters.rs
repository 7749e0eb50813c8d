//! One counter per (allocating thread, allocation site), and one per
//! (allocating thread, type), the site counters' group: objects tracked,
//! objects seen dead, and the most ever alive at once. A counter is found by
//! index without a lock: a weak-reference record holds the site counter's
//! index, a JVMTI tag holds `MEMORY_TAG | index` (the agent's other tags, on
//! threads, are small or negative numbers, never with that bit), a stamp
//! holds index + 1.
//!
//! Three kinds of site counter, by how their objects' deaths are known:
//! - weak references: frees counted by the scan after each GC;
//! - tags: frees counted by ObjectFree, one by one;
//! - stamps: no frees at all; what is alive comes from the last heap census
//!   plus what was made since (`peaks`).
//!
//! Groups. An allocation adds to its site's counter alone (the cost per
//! allocation stays one counter), and a group's figures are its sites' sums,
//! its `max` taken from that sum at each instant where all of it is known
//! (`peaks`). Tags' sites are the exception: their frees arrive on their
//! own, so an allocation and its free count on the group too (its "direct"
//! counts). Either way a group's `max` is the peak of the sum, not the sum
//! of its sites' peaks, as the `<memory>` rows always were.
//!
//! Counters live in chunks that never move (the Java side of stamps writes
//! `made` through a direct buffer over each chunk); each thread keeps its
//! own site → counters cache, so the allocation path takes no lock once a
//! thread has met a site.

#[cfg(test)]
mod instant_tests;
#[cfg(test)]
mod peak_tests;
mod peaks;
mod retire;
#[cfg(test)]
mod retire_tests;
#[cfg(test)]
mod test_support;

pub use peaks::{Instant, Known, Tally};
pub use retire::CounterUse;

use crate::host::Host;
use crate::sites::Sites;
use crate::threads::ThreadId;
use crate::vm::Jni;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering::*};
use std::sync::OnceLock;

const MEMORY_TAG: i64 = 1 << 62;
/// Counters per chunk, and the chunks there can be (4M counters).
pub const CHUNK: usize = 4096;
const CHUNKS: usize = 1024;
/// A counter without a group (a group itself).
const NO_GROUP: u32 = u32::MAX;

/// What a counter counts, besides its thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    /// Every object of a type (a `<memory>` row).
    Type(u32),
    /// The objects of one allocation site (a `<sites>` class frame).
    Site(u32),
}

/// How a counter's objects are followed to their death.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// A group: the sum of its sites (and of its tags' objects).
    Group = 0,
    Weak = 1,
    Tag = 2,
    Stamp = 3,
}

impl Kind {
    fn from_u8(k: u8) -> Self {
        match k {
            1 => Kind::Weak,
            2 => Kind::Tag,
            3 => Kind::Stamp,
            _ => Kind::Group,
        }
    }
}

/// One per cache line: each is written by its own thread at every allocation,
/// and two threads' counters sharing a line would slow both. `made` first:
/// `profrj.runtime.Stamps` writes it at the counter's start (64 bytes each).
#[repr(C, align(64))]
pub struct Counter {
    /// Objects tracked; written only by the allocating thread (for stamps,
    /// from Java through a direct buffer).
    made: AtomicI64,
    /// Objects seen dead (ObjectFree, or the weak-reference scan).
    freed: AtomicI64,
    /// The most alive at once, as far as brought up to date.
    max: AtomicI64,
    /// Stamps: alive at the end of the GC before the last census and made
    /// by then (`peaks`); every counter: made by the end of the last GC.
    census_alive: AtomicI64,
    census_made: AtomicI64,
    gc_end_made: AtomicI64,
    /// Index of the group counter (thread × type) a site counter adds to.
    group: AtomicU32,
    index: u32,
    kind: AtomicU8,
    /// In use, or its thread folded and the counter on its way to being
    /// given back (`retire`).
    state: AtomicU8,
}

const _: () = assert!(std::mem::size_of::<Counter>() == 64);
const _: () = assert!(std::mem::offset_of!(Counter, made) == 0);

impl Counter {
    fn new(index: usize) -> Self {
        Counter {
            made: AtomicI64::new(0),
            freed: AtomicI64::new(0),
            max: AtomicI64::new(0),
            census_alive: AtomicI64::new(0),
            census_made: AtomicI64::new(0),
            gc_end_made: AtomicI64::new(0),
            group: AtomicU32::new(NO_GROUP),
            index: index as u32,
            kind: AtomicU8::new(Kind::Group as u8),
            state: AtomicU8::new(retire::LIVE),
        }
    }

    pub fn index(&self) -> usize {
        self.index as usize
    }

    pub fn tag(&self) -> i64 {
        MEMORY_TAG | self.index as i64
    }

    pub fn kind(&self) -> Kind {
        Kind::from_u8(self.kind.load(Acquire))
    }

    /// One more object, on its allocating thread (the only one that adds
    /// to `made`, so a plain load and store do).
    pub fn made_one(&self) -> i64 {
        let n = self.made.load(Relaxed) + 1;
        self.made.store(n, Relaxed);
        n
    }

    /// One more object, by an atomic add: for a group's own count (tags),
    /// whose type's counter of a group of virtual threads is shared by the
    /// carriers that ran them.
    pub fn made_one_shared(&self) {
        self.made.fetch_add(1, Relaxed);
    }

    pub fn freed(&self, n: i64) {
        self.freed.fetch_add(n, Relaxed);
    }

    /// Made and not seen dead: a weak or tag counter's objects alive, or a
    /// group's objects counted on it directly (its tags' sites).
    pub fn alive(&self) -> i64 {
        let freed = self.freed.load(Relaxed);
        self.made.load(Relaxed) - freed
    }

    fn made(&self) -> i64 {
        self.made.load(Relaxed)
    }

    /// Made by the end of the last GC and not seen dead: a weak, tag or
    /// group counter's objects alive at that GC's end, once its frees are
    /// counted (the weak references' scan, the ObjectFree events).
    fn alive_at_gc_end(&self) -> i64 {
        (self.gc_end_made.load(Relaxed) - self.freed.load(Relaxed)).max(0)
    }
}

/// Every counter made in this JVM, by index (part of the memory mode's
/// Every counter made in this JVM, by index (part of the memory mode's
/// lasting state), and where the stamps' last census stands against the GCs.
pub struct Counters {
    table: Box<[OnceLock<Box<[Counter]>>]>,
    /// (thread, what) of each counter made so far, by index; and the
    /// counters of ended threads given back (`retire`).
    owners: Mutex<retire::Owners>,
    /// Counters made: those below are ready to read without the lock.
    len: AtomicUsize,
    /// Each (thread, type)'s group counter.
    groups: Mutex<HashMap<(i64, u32), u32>>,
    /// GCs started and finished, and the number that had started at the
    /// last census (`u64::MAX` while one is being recorded, or when it ran
    /// inside a concurrent collector's cycle).
    gc_starts: AtomicU64,
    gc_finishes: AtomicU64,
    census_at: AtomicU64,
    /// The last full collection, while its peak is still to be taken.
    peak_pending: Mutex<Option<peaks::Pending>>,
    /// The last census of the tags' number (never 0: a new tag's).
    tag_epoch: std::sync::atomic::AtomicU16,
    /// Has a census been recorded (the snapshot's figures come from it)?
    census_recorded: std::sync::atomic::AtomicBool,
    /// Does a heap walk see only reachable objects (ZGC, Shenandoah)? Then
    /// a census counts what is alive at its own moment.
    walks_reachable_only: std::sync::atomic::AtomicBool,
    /// Held while a census is recorded and while a GC start reads one.
    census_lock: Mutex<()>,
    /// Held by a census from its walk to its record, and while counters
    /// are given back: a census that sees a counter given back (or marked
    /// to be) saw it so from before its walk.
    walks: Mutex<()>,
    /// The thread table's folds when counters were last looked at, and how
    /// many counters of folded threads are still to be given back.
    folds_seen: AtomicU64,
    waiting: AtomicUsize,
    given_back: AtomicU64,
    /// Set while a heap dump reads its objects' counters: none given back.
    give_back_held: std::sync::atomic::AtomicBool,
}

impl Default for Counters {
    fn default() -> Self {
        Self {
            table: (0..CHUNKS).map(|_| OnceLock::new()).collect(),
            owners: Mutex::new(retire::Owners::default()),
            len: AtomicUsize::new(0),
            groups: Mutex::new(HashMap::new()),
            gc_starts: AtomicU64::new(0),
            gc_finishes: AtomicU64::new(0),
            census_at: AtomicU64::new(u64::MAX),
            peak_pending: Mutex::new(None),
            census_recorded: std::sync::atomic::AtomicBool::new(false),
            tag_epoch: std::sync::atomic::AtomicU16::new(0),
            walks_reachable_only: std::sync::atomic::AtomicBool::new(false),
            census_lock: Mutex::new(()),
            walks: Mutex::new(()),
            folds_seen: AtomicU64::new(0),
            waiting: AtomicUsize::new(0),
            given_back: AtomicU64::new(0),
            give_back_held: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

impl Counters {
    fn counter(&self, index: usize) -> Option<&Counter> {
        let chunk = self.table.get(index / CHUNK)?.get()?;
        chunk.get(index % CHUNK)
    }

    /// The counters of chunk `n` as bytes (for a direct buffer the Java side
    /// writes `made` through), if the chunk exists.
    pub fn chunk_bytes(&self, n: usize) -> Option<(*mut u8, usize)> {
        let chunk = self.table.get(n)?.get()?;
        Some((
            chunk.as_ptr() as *mut u8,
            std::mem::size_of_val::<[Counter]>(chunk),
        ))
    }

    /// A new counter of `thread` for `key`, adding to `group`'s if any.
    pub(super) fn new_counter(
        &self,
        thread: i64,
        key: Key,
        kind: Kind,
        group: Option<&Counter>,
    ) -> Option<&Counter> {
        let mut owners = self.owners.lock();
        if let Some(counter) = self.reuse(&mut owners, thread, key, kind, group) {
            return Some(counter);
        }
        let index = owners.of.len();
        let chunk = self.table.get(index / CHUNK)?.get_or_init(|| {
            (0..CHUNK)
                .map(|i| Counter::new(index / CHUNK * CHUNK + i))
                .collect()
        });
        let counter = chunk.get(index % CHUNK)?;
        counter.kind.store(kind as u8, Release);
        if let Some(g) = group {
            counter.group.store(g.index, Release);
        }
        owners.of.push((thread, key));
        self.len.store(owners.of.len(), Release);
        Some(counter)
    }

    /// The group counter of (thread, type), made on first use.
    pub(super) fn group(&self, thread: i64, ty: u32) -> Option<&Counter> {
        let mut groups = self.groups.lock();
        if let Some(&g) = groups.get(&(thread, ty)) {
            return self.counter(g as usize);
        }
        let g = self.new_counter(thread, Key::Type(ty), Kind::Group, None)?;
        groups.insert((thread, ty), g.index);
        Some(g)
    }

    /// A counter's group, if it has one.
    fn group_of(&self, c: &Counter) -> Option<&Counter> {
        match c.group.load(Acquire) {
            NO_GROUP => None,
            g => self.counter(g as usize),
        }
    }

    /// A number for a new census of the tags: never 0 (what a new tag
    /// holds), and never the last one's.
    pub fn next_tag_epoch(&self) -> u16 {
        let next = |e: u16| Some(e.checked_add(1).unwrap_or(1));
        let last = self.tag_epoch.fetch_update(AcqRel, Acquire, next);
        last.map_or(1, |e| e.checked_add(1).unwrap_or(1))
    }

    /// Set once the collector is known ([`super::mechanism::Tracking`]).
    pub fn set_walks_see_only_reachable(&self, yes: bool) {
        self.walks_reachable_only.store(yes, Release);
    }

    /// How many counters there are.
    pub fn len(&self) -> usize {
        self.len.load(Acquire)
    }

    /// GCs started so far.
    pub fn gcs_started(&self) -> u64 {
        self.gc_starts.load(Acquire)
    }

    /// Counters made so far, readable without a lock.
    fn made_so_far(&self) -> impl Iterator<Item = &Counter> {
        (0..self.len.load(Acquire)).filter_map(|i| self.counter(i))
    }
}

/// The counters one object counts on: its site's and that site's group.
#[derive(Clone, Copy)]
pub struct SiteCounters {
    pub site: &'static Counter,
    pub group: &'static Counter,
}

/// A thread's agent id and its counters by site (kept in the memory mode's
/// per-thread value, `super::PerThread`), for the weak references and tags:
/// the OS thread's own, or a group of virtual threads' on one carrier (its
/// site counters that carrier's alone, its groups shared by the carriers).
#[derive(Default)]
pub struct ThreadCounters {
    /// The group of virtual threads counted (`None`: the OS thread itself).
    group: Option<ThreadId>,
    thread: Option<i64>,
    by_site: Vec<Option<SiteCounters>>,
    /// Sites found when the probe ran: (place, type) → site id.
    found: Option<HashMap<(u32, u32), u32>>,
}

impl ThreadCounters {
    /// The counters of `group`'s virtual threads, or of the OS thread.
    pub fn new(group: Option<ThreadId>) -> Self {
        Self {
            group,
            thread: group.map(|g| g.0 as i64),
            by_site: Vec::new(),
            found: None,
        }
    }

    /// The group of virtual threads counted (`None`: the OS thread itself).
    pub fn group(&self) -> Option<ThreadId> {
        self.group
    }

    /// The calling thread's counters for site `site`, of kind `kind` (weak
    /// references or tags), made on first use.
    pub fn get(
        &mut self,
        host: &Host,
        counters: &'static Counters,
        jni: &Jni,
        (site, kind): (u32, Kind),
    ) -> Option<SiteCounters> {
        if let Some(&Some(c)) = self.by_site.get(site as usize) {
            return Some(c);
        }
        let thread = self.thread(host, jni)?;
        let c = site_counter(&host.sites, counters, thread, site, kind)?;
        if self.by_site.len() <= site as usize {
            self.by_site.resize(site as usize + 1, None);
        }
        self.by_site[site as usize] = Some(c);
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

/// A new counter of kind `kind` for `site` on `thread`, in its group.
pub fn site_counter(
    sites: &Sites,
    counters: &'static Counters,
    thread: i64,
    site: u32,
    kind: Kind,
) -> Option<SiteCounters> {
    let ty = sites.type_of(site)?;
    let group = counters.group(thread, ty)?;
    let site = counters.new_counter(thread, Key::Site(site), kind, Some(group))?;
    Some(SiteCounters { site, group })
}

pub fn is_memory_tag(tag: i64) -> bool {
    tag & MEMORY_TAG != 0 && tag > 0
}

/// Where a census of the tags notes that it counted an object
/// (`memory::tag_census`): 16 bits above the counter's index (22 bits).
const EPOCH_SHIFT: u32 = 40;
const EPOCH_MASK: i64 = 0xffff << EPOCH_SHIFT;

/// The counter a memory tag names.
pub fn memory_index(tag: i64) -> usize {
    (tag & !MEMORY_TAG & !EPOCH_MASK) as usize
}

/// The census of the tags that last counted this object (0: none).
pub fn tag_epoch(tag: i64) -> u16 {
    ((tag & EPOCH_MASK) >> EPOCH_SHIFT) as u16
}

/// `tag` as counted by census `epoch`.
pub fn with_epoch(tag: i64, epoch: u16) -> i64 {
    (tag & !EPOCH_MASK) | (i64::from(epoch) << EPOCH_SHIFT)
}

impl Counters {
    /// The ObjectFree event of a tagged object: its site's and its group's.
    pub fn object_freed(&self, tag: i64) {
        if !is_memory_tag(tag) {
            return;
        }
        if let Some(c) = self.counter(memory_index(tag)) {
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
}

impl Counters {
    /// Each counter's (thread, site) by index, `None` for a type's group:
    /// who made the objects whose stamp names it (a heap dump's traces).
    pub fn origins(&self) -> Vec<Option<(i64, u32)>> {
        let owners = self.owners.lock();
        (owners.of.iter().enumerate())
            .map(|(i, &(thread, key))| match key {
                _ if self.counter(i).is_none_or(|c| c.state() == retire::FREE) => None,
                Key::Site(site) => Some((thread, site)),
                Key::Type(_) => None,
            })
            .collect()
    }
}
