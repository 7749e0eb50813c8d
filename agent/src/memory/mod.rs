//! `memory` mode: objects alive per allocating thread and type, and the most
//! that were ever alive at once (ProfilerJ's memory view, HPROF's heap=sites).
//!
//! Instrumented code calls `Probe.alloc(object, site)` after each object's
//! constructor call, `Probe.allocWeak` after each array allocation and
//! each object of a JDK class, and `Probe.allocAny` after each reflective or
//! cloning call; objects native code makes come through the VMObjectAlloc
//! event and the agent's JNI interception (`vm_alloc`). Each tracked object
//! counts on its counter (thread × site, `counters`).
//!
//! Objects of the classes the application defines once the mode has started
//! carry a stamp (`stamps`): the counter's number in a field of their own,
//! counted by a heap census, with nothing shared on the allocating path.
//! Every other object's death is seen one of two ways (`tracker=`):
//!
//! - `weak_refs` (serial, parallel and G1 collectors): a JNI weak global
//!   reference per object, appended to a per-thread log; an agent thread
//!   scans the logs after each GC, and the next GC's start makes sure it
//!   did. Cheaper than tags on the allocating thread (no lock of the
//!   agent's, no JVMTI call; but each reference comes from the JVM's one
//!   store behind one lock).
//! - JVMTI tags (any collector): a tag naming the counter, and the
//!   ObjectFree event. The tag map is one hash table behind one lock, so
//!   each allocation costs 2–4× more, and the frees arrive after the GC,
//!   when the VM posts them. Under ZGC and Shenandoah a snapshot counts
//!   them by a census from the roots (`tag_census`).
//!
//! `max` is taken only where what is alive is known exactly: the end of
//! each full collection (`vm::gc_counts` tells which GCs were), once the
//! agent thread has its figures, each snapshot, and under ZGC and
//! Shenandoah each census of the stamps (`counters::peaks`).
//!
//! Both are weak storage the GC clears, so tracking keeps nothing alive.
//! A `java.lang.ref.WeakReference` per object was measured first and
//! dropped: each one survives a GC and is queued, and references held by
//! long-lived holders keep their referents alive through young GCs
//! (docs/BENCHMARKS.md).
//!
//! A snapshot forces a full GC first, and counts every free it found, so
//! `count` is exactly the objects still reachable at its end.

mod counters;
mod mechanism;
pub mod mode;
mod model;
mod probes;
mod stamps;
mod tag_census;
mod vm_alloc;
mod weak_refs;

pub use mechanism::Mechanism;
pub use probes::natives;

use crate::events::{Events, Kind, Listener};
use crate::host::Host;
use crate::per_thread::{self, Held, ThreadValue};
use crate::threads::ThreadId;
use crate::vm::{Jni, Jvmti, JvmtiEvent, WeakHandle};
use jni_sys::jobject;
use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};

/// What `memory` keeps for the JVM's lifetime: its probes stay in the code
/// and its objects stay tracked whatever sessions come and go (the host's
/// state of this type). The probes reach it through their thread's
/// [`PerThread`]; the GC events and VM allocations as its [`Listener`].
#[derive(Default)]
pub struct Lifetime {
    /// Does a running session want allocations tracked? (A stopped
    /// session's probes stay in the code; they count nothing until `resume`.)
    active: AtomicBool,
    /// How objects without a stamp are followed to their death.
    pub tracking: mechanism::Tracking,
    counters: counters::Counters,
    weak: weak_refs::WeakRefs,
    stamps: stamps::Stamps,
    /// What the snapshots' censuses of the tags cost (ZGC, Shenandoah).
    tag_census: tag_census::Cost,
    /// The heap's count of full collections when the last GC finished (or
    /// the mode opened; `u32::MAX`: unknown), to tell at the next finish
    /// whether a full one ran. (JDK 11's Parallel collector counts its full
    /// collection before the JVMTI GarbageCollectionStart event, so the
    /// count at a GC's start cannot tell.)
    full_at_finish: AtomicU32,
}

impl Lifetime {
    /// Notes the heap's count of full collections now (the mode opens).
    pub fn note_full_collections(&self) {
        let full = crate::vm::gc_counts::now().map_or(u32::MAX, |c| c.full);
        self.full_at_finish.store(full, Relaxed);
    }

    pub fn set_active(&self, on: bool) {
        self.active.store(on, Relaxed);
    }

    pub fn is_active(&self) -> bool {
        self.active.load(Relaxed)
    }

    /// Body of the `profrj memory` agent thread: each GC's frees (weak
    /// references); after a full collection, its ObjectFree events (tags)
    /// and a census of the stamps if the budget allows, then its peak.
    pub fn run_agent_thread(&self, jni: &Jni, events: &Events) {
        self.weak.run_agent_thread(jni, &self.counters, events, || {
            let counters = &self.counters;
            if self.tracking.walks_see_only_reachable() {
                // ZGC, Shenandoah: a census is an instant of its own, from
                // the roots: a pass over the heap between a cycle's pauses
                // also follows the tags of objects that died since the last
                // cycle (JDK 11's ZGC counted MemoryTruth's three dead waves
                // of 400 at once, `max` 1,200).
                return self
                    .stamps
                    .after_gc(counters, stamps::census::Walk::FromRoots);
            }
            if !counters.peak_pending() {
                return;
            }
            // Through which GC the tags' frees are posted: those finished
            // before the flush.
            let finished = counters.gcs_finished();
            let tags_through = match self.tracking.mechanism() {
                Mechanism::Tags => self.tracking.made_env().ok().map(flush_object_frees),
                Mechanism::WeakRefs => None,
            };
            let tags_through = match tags_through {
                Some(Ok(())) => finished,
                _ => 0,
            };
            self.stamps.after_gc(counters, stamps::census::Walk::Heap);
            // Again after the census (a while): a GC that finished meanwhile
            // has its frees counted too.
            let weak_through = self.weak.count_frees(false, counters);
            counters.take_pending_peak(counters::Known {
                weak_through,
                tags_through,
            });
        })
    }

    pub fn cost_summary(&self, stamped_classes: usize) -> Option<String> {
        let lines: Vec<String> = [
            self.stamps.cost_summary(stamped_classes),
            self.weak.cost_summary(),
        ]
        .into_iter()
        .flatten()
        .collect();
        (!lines.is_empty()).then(|| lines.join("; "))
    }
}

/// What the VM tells the memory mode: each GC's start and finish (weak
/// references), the frees of tagged objects (tags), and objects the VM or
/// native code made.
impl Listener for Lifetime {
    /// The frees of every earlier GC are counted (weak references), and
    /// the last full collection's peak taken if the agent thread has not.
    fn gc_start(&self) {
        if self.tracking.mechanism() == Mechanism::WeakRefs {
            let weak_through = self.weak.count_frees(true, &self.counters);
            self.counters.take_pending_peak(counters::Known {
                weak_through,
                tags_through: 0,
            });
        }
        self.counters.gc_started()
    }

    /// Was it a full collection? Then the agent thread counts its frees
    /// and takes its peak (with a census of the stamps if one is due).
    fn gc_finish(&self) {
        let now = crate::vm::gc_counts::now().map_or(u32::MAX, |c| c.full);
        let before = self.full_at_finish.swap(now, Relaxed);
        let complete = before != u32::MAX
            && now != u32::MAX
            && now != before
            && !self.tracking.walks_see_only_reachable();
        self.counters.gc_ended(complete);
        self.weak.gc_finished(&self.counters)
    }

    /// After the last snapshot: the agent thread ends.
    fn vm_death(&self) {
        self.weak.quit()
    }

    fn object_free(&self, tag: i64) {
        self.counters.object_freed(tag)
    }

    fn vm_object_alloc(&self, jni: &Jni, a: &crate::events::Allocation) {
        if let Some(host) = crate::host::get() {
            vm_alloc::vm_allocated(host, self, jni, a.thread, a.object, a.class)
        }
    }

    fn jni_object_alloc(&self, jni: &Jni, object: jobject) {
        if let Some(host) = crate::host::get() {
            vm_alloc::jni_allocated(host, self, jni, object)
        }
    }
}

/// The kinds of events the memory mode listens to.
const KINDS: [Kind; 6] = [
    Kind::GcStart,
    Kind::GcFinish,
    Kind::ObjectFree,
    Kind::VmObjectAlloc,
    Kind::JniObjectAlloc,
    Kind::VmDeath,
];

/// What the memory mode keeps per OS thread (in its own record: a
/// carrier's, not a mounted virtual thread's).
struct PerThread {
    host: &'static Host,
    life: &'static Lifetime,
    /// The counters of each thread it counts for: the OS thread itself,
    /// and on a carrier each group of virtual threads it ran (an object
    /// counts for the virtual thread's group, on counters the carrier alone
    /// writes).
    counters: RefCell<Vec<counters::ThreadCounters>>,
    log: weak_refs::ThreadLogSlot,
}

/// A virtual thread's group, in its record (asked of the thread table once).
struct GroupOf(Option<ThreadId>);

impl ThreadValue for GroupOf {}

/// Runs `f` with the counters of the thread running now on this OS thread:
/// the mounted virtual thread's group's, or the OS thread's own. `None`
/// inside the tracking of another allocation (not expected).
fn with_counters<R>(
    mine: &PerThread,
    jni: &Jni,
    f: impl FnOnce(&mut counters::ThreadCounters) -> R,
) -> Option<R> {
    let group = match per_thread::on_virtual_thread() {
        true => per_thread::with(
            || Some(Held::Own(Box::new(GroupOf(mine.host.current_thread(jni))))),
            |g: &GroupOf| g.0,
        )
        .flatten(),
        false => None,
    };
    let mut all = mine.counters.try_borrow_mut().ok()?;
    let i = match all.iter().position(|c| c.group() == group) {
        Some(i) => i,
        None => {
            all.push(counters::ThreadCounters::new(group));
            all.len() - 1
        }
    };
    Some(f(&mut all[i]))
}

/// Its log hands its last segment over as it is dropped.
impl ThreadValue for PerThread {}

/// Runs `f` with the calling OS thread's memory state while memory records.
#[inline(always)]
fn on_thread(f: impl FnOnce(&PerThread)) {
    per_thread::with_carrier(
        || {
            let host = crate::host::get()?;
            let life = host.state::<Lifetime>();
            life.is_active().then(|| {
                Held::Own(Box::new(PerThread {
                    host,
                    life,
                    counters: RefCell::new(Vec::new()),
                    log: weak_refs::ThreadLogSlot::new(),
                }))
            })
        },
        |mine: &PerThread| {
            if mine.life.is_active() {
                f(mine)
            }
        },
    );
}

/// Tracks `object` (a live reference) as one made at site `site` by the
/// calling thread, with a weak reference or a tag.
fn track(mine: &PerThread, jni: &Jni, object: jobject, site: u32) {
    let kind = match mine.life.tracking.mechanism() {
        Mechanism::WeakRefs => counters::Kind::Weak,
        Mechanism::Tags => counters::Kind::Tag,
    };
    let found = with_counters(mine, jni, |c| {
        c.get(mine.host, &mine.life.counters, jni, (site, kind))
    });
    let Some(c) = found.flatten() else {
        return;
    };
    track_on(mine, jni, (object, site), c)
}

/// The site (place, type), found when a probe ran (reflection, clone);
/// cached in the thread's record while memory records.
fn site_at(host: &Host, place: u32, ty: u32) -> u32 {
    let mut site = None;
    on_thread(|mine| {
        // Sites are the same whichever thread asks: any counters' cache.
        if let Ok(mut all) = mine.counters.try_borrow_mut() {
            if all.is_empty() {
                all.push(counters::ThreadCounters::new(None));
            }
            site = Some(all[0].site_of(&mine.host.sites, place, ty));
        }
    });
    site.unwrap_or_else(|| host.sites.site_id(place, ty))
}

/// Tracks `object` as one of type `ty` made at place `place` (a site found
/// only now: reflection, clone, the VM, JNI).
fn track_at(mine: &PerThread, jni: &Jni, object: jobject, place: u32, ty: u32) {
    let Some(site) = with_counters(mine, jni, |c| c.site_of(&mine.host.sites, place, ty)) else {
        return;
    };
    track(mine, jni, object, site)
}

fn track_on(
    mine: &PerThread,
    jni: &Jni,
    (object, site): (jobject, u32),
    counters: counters::SiteCounters,
) {
    let life = mine.life;
    let events = &mine.host.events;
    match life.tracking.mechanism() {
        Mechanism::WeakRefs => {
            if let Some(h) = WeakHandle::new(jni, object) {
                life.weak.record(&mine.log, h, counters.site.index());
                counters.site.made_one(); // the group sums its sites
                events.object_tracked(jni, site, h.to_bits() as u64);
            }
        }
        Mechanism::Tags => {
            let Ok(env) = life.tracking.made_env() else {
                return;
            };
            if env.set_tag(object, counters.site.tag()).is_ok() {
                counters.site.made_one();
                counters.group.made_one_shared();
                events.object_tracked(jni, site, 0);
            }
        }
    }
}

/// Tracks an object the VM or native code made, of class signature `sig`.
fn track_vm_object(jni: &Jni, object: jobject, sig: &str) {
    on_thread(|mine| {
        let ty = mine.host.sites.type_of_signature(sig);
        track_at(mine, jni, object, crate::sites::NO_PLACE, ty);
    })
}

/// One row of the `<memory>` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The agent's thread id (`-1`: a thread it does not know).
    pub thread: i64,
    pub class: String,
    pub count: i64,
    pub max: i64,
}

/// One allocation site's counts in one thread (a `<sites>` class frame).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteRow {
    /// The agent's thread id (`-1`: a thread it does not know).
    pub thread: i64,
    /// The method and line as a frame (`pkg.Cls.m():12`).
    pub place: String,
    pub class: String,
    pub count: i64,
    pub max: i64,
    /// Objects the site ever made (while tracked).
    pub allocated: i64,
}

/// What a memory snapshot holds: per thread and type, and per thread and
/// site; and what the censuses cost.
pub struct Counts {
    pub rows: Vec<Row>,
    pub sites: Vec<SiteRow>,
    pub censuses: CensusCost,
}

/// What the heap censuses (of the stamps, and of the tags under ZGC or
/// Shenandoah) cost this JVM so far, each a pause of every Java thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CensusCost {
    /// The pause of the census this snapshot's counts come from (ns; the
    /// two summed where both ran).
    pub last_ns: u64,
    pub censuses: u64,
    pub total_ns: u64,
    pub longest_ns: u64,
    /// Full GCs (ZGC, Shenandoah: GCs) the budget left without one.
    pub skipped: u64,
}

/// Live counts now: a full GC, every free it found counted (weak
/// references: its scan; tags: every ObjectFree posted), then every
/// counter. Runs on the dumping thread.
impl Lifetime {
    pub fn live_counts(
        &self,
        jvmti: Jvmti,
        sites: &crate::sites::Sites,
        folded: &HashMap<crate::threads::ThreadId, crate::threads::ThreadId>,
    ) -> Result<Counts, crate::error::AgentError> {
        // `count`: the objects alive at the end of the snapshot's own GC;
        // under ZGC or Shenandoah, at the censuses after it.
        let instant = if self.tracking.walks_see_only_reachable() {
            counters::Instant::Census
        } else {
            counters::Instant::LastGcEnd
        };
        // A GC of the program's own between the snapshot's and the reading
        // (a young one, under churn: the census alone takes a while) would
        // mix two GCs' figures: the frees of one, what was made by the end
        // of the other. Then all again, at most three times.
        let mut tries = 0;
        let all = loop {
            // After the snapshot's GC (which may be several: Parallel
            // scavenges before its full GC), no other may start.
            let after_ours = self.one_reading(jvmti, instant)?;
            let all = self.counters.all(instant);
            tries += 1;
            let others = self.counters.gcs_started() != after_ours;
            if instant == counters::Instant::Census || !others || tries == 3 {
                break all;
            }
        };
        let tables = sites.tables();
        let mut counts = Counts {
            rows: Vec::new(),
            sites: Vec::new(),
            censuses: self.census_cost(instant),
        };
        for t in merged(all, folded) {
            let (thread, count, max) = (t.thread, t.alive, t.max);
            match t.key {
                counters::Key::Type(ty) => counts.rows.push(Row {
                    thread,
                    class: tables.type_name(ty),
                    count,
                    max,
                }),
                counters::Key::Site(site) => {
                    let Some(&(place, ty)) = tables.sites.get(site as usize) else {
                        continue;
                    };
                    counts.sites.push(SiteRow {
                        thread,
                        place: tables.place_frame(place),
                        class: tables.type_name(ty),
                        count,
                        max,
                        allocated: t.made,
                    })
                }
            }
        }
        Ok(counts)
    }
}

impl Lifetime {
    /// The snapshot's GC (none at an exit under ZGC or Shenandoah, where
    /// it would wait forever for the stopped threads), every free it found
    /// counted (weak references: its scan; tags: every ObjectFree posted),
    /// then the censuses (ZGC, Shenandoah: of the tags too); the GCs
    /// started by the end of the snapshot's.
    fn one_reading(
        &self,
        jvmti: Jvmti,
        instant: counters::Instant,
    ) -> Result<u64, crate::error::AgentError> {
        let gc = !self.tracking.gc_impossible_now();
        if gc {
            jvmti
                .force_garbage_collection()
                .map_err(|e| crate::error::AgentError::jvmti(jvmti, "ForceGarbageCollection", e))?;
        }
        let after_ours = self.counters.gcs_started();
        if self.tracking.mechanism() == Mechanism::WeakRefs {
            self.weak.count_frees(false, &self.counters);
        } else {
            flush_object_frees(jvmti)
                .map_err(|e| crate::error::AgentError::jvmti(jvmti, "ObjectFree", e))?;
        }
        if instant == counters::Instant::Census && self.tracking.mechanism() == Mechanism::Tags {
            tag_census::take(jvmti, &self.counters, &self.tag_census)
                .map_err(|e| crate::error::AgentError::Internal(format!("memory: {e}")))?;
        }
        // No GC before an exit under ZGC or Shenandoah: a pass over their
        // heap would still find what only a dead object's tag holds.
        let walk = match gc {
            false => stamps::census::Walk::FromRoots,
            true => stamps::census::Walk::Heap,
        };
        self.stamps
            .census_now(&self.counters, walk)
            .map_err(|e| crate::error::AgentError::Internal(format!("memory: {e}")))?;
        Ok(after_ours)
    }
}

impl Lifetime {
    /// What the censuses cost so far; the last one's (of the stamps, plus
    /// of the tags where `instant` counts them) as this snapshot's.
    fn census_cost(&self, instant: counters::Instant) -> CensusCost {
        let s = self.stamps.cost();
        let t = &self.tag_census;
        let tags = instant == counters::Instant::Census;
        CensusCost {
            last_ns: s.last_ns.load(Relaxed) + if tags { t.last_ns.load(Relaxed) } else { 0 },
            censuses: s.censuses.load(Relaxed) + t.censuses.load(Relaxed),
            total_ns: s.ns.load(Relaxed) + t.ns.load(Relaxed),
            longest_ns: s.longest_ns.load(Relaxed).max(t.longest_ns.load(Relaxed)),
            skipped: s.skipped.load(Relaxed),
        }
    }
}

/// Makes the VM post the ObjectFree events of the objects the GCs found
/// dead, before it returns: enabling the event (again) flushes them
/// (JvmtiTagMap's flush). `jvmti`: the environment of the memory tags.
fn flush_object_frees(jvmti: Jvmti) -> Result<(), crate::vm::sys::JvmtiError> {
    jvmti.set_event_enabled(JvmtiEvent::OBJECT_FREE, true)
}

/// The counters' figures, one per (thread, what): a thread may have two
/// counters for one site (a stamp counter per Java thread-local, one per
/// tracker), and an ended thread folded into a group (`folded`,
/// docs/THREADS.md) counts as its group, summed here; their `max` is the
/// larger one or the sum of their counts, a peak never above the true one
/// (the rule `fold_ended` applies to every section's peaks).
fn merged(
    all: Vec<counters::Tally>,
    folded: &HashMap<crate::threads::ThreadId, crate::threads::ThreadId>,
) -> Vec<counters::Tally> {
    let mut at: HashMap<(i64, counters::Key), usize> = HashMap::new();
    let mut out: Vec<counters::Tally> = Vec::new();
    for mut t in all {
        let id = u32::try_from(t.thread).ok().map(crate::threads::ThreadId);
        if let Some(group) = id.and_then(|id| folded.get(&id)) {
            t.thread = group.0 as i64;
        }
        match at.get(&(t.thread, t.key)) {
            Some(&i) => {
                let m = &mut out[i];
                m.alive += t.alive;
                m.made += t.made;
                m.max = m.max.max(t.max).max(m.alive);
            }
            None => {
                at.insert((t.thread, t.key), out.len());
                out.push(t);
            }
        }
    }
    out
}

/// A heap dump names the allocation site and thread of each object whose
/// stamp names a counter.
impl crate::heap_dump::Origins for Lifetime {
    fn counters(&self) -> Vec<Option<(i64, u32)>> {
        self.counters.origins()
    }

    fn has_addresses(&self) -> bool {
        // Only while the mode records do its GC listeners note anything.
        self.is_active() && self.tracking.mechanism() == Mechanism::WeakRefs
    }

    fn arm_addresses(&self, file: std::ffi::CString) {
        self.weak.arm_capture(file)
    }

    fn take_addresses(&self) -> (crate::heap_dump::Addresses, u64) {
        let c = self.weak.take_capture();
        (c.addresses, c.renoted)
    }

    fn dump_gc_is_seen(&self) -> bool {
        self.tracking.is_g1()
    }

    fn hold_heap_walks(&self, on: bool) {
        self.stamps.hold(on)
    }
}

#[cfg(test)]
mod tests {
    use super::counters::{Key, Tally};
    use super::merged;
    use crate::threads::ThreadId;
    use std::collections::HashMap;

    fn tally(thread: i64, alive: i64, max: i64, made: i64) -> Tally {
        Tally {
            thread,
            key: Key::Type(7),
            alive,
            max,
            made,
        }
    }

    /// Two ended threads folded into group 9 count as one row of the
    /// group: objects alive and made summed, the peak the higher one raised
    /// to what is alive; a live thread keeps its own.
    #[test]
    fn folded_threads_count_as_their_group() {
        let folded = HashMap::from([(ThreadId(1), ThreadId(9)), (ThreadId(2), ThreadId(9))]);
        let all = vec![tally(1, 3, 5, 10), tally(0, 1, 1, 1), tally(2, 4, 4, 6)];
        let out = merged(all, &folded);
        assert_eq!(out, vec![tally(9, 7, 7, 16), tally(0, 1, 1, 1)]);
    }
}
