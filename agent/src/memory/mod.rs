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
//!   when the VM posts them (never made to post them now: that can hang
//!   HotSpot, `tag_census`). A snapshot counts them by a census from the
//!   roots (`tag_census`), on every collector.
//!
//! `max` is taken only where what is alive is known exactly: the end of
//! each full collection (`vm::gc_counts` tells which GCs were), once the
//! agent thread has its figures, each snapshot, under ZGC and Shenandoah
//! each census of the stamps, and under tags on a pause collector each
//! census of the tags after a full GC (`counters::peaks`).
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
mod reading;
mod stamps;
mod tag_census;
mod vm_alloc;
mod weak_refs;

pub use counters::CounterUse;
pub use mechanism::Mechanism;
pub use probes::natives;
pub use reading::{CensusCost, Counts, Row, SiteRow};

use crate::events::{Events, Kind, Listener};
use crate::host::Host;
use crate::per_thread::{self, Held, ThreadValue};
use crate::threads::ThreadId;
use crate::vm::{Jni, WeakHandle};
use jni_sys::jobject;
use std::cell::RefCell;
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
            self.after_gc();
            self.give_back_ended_threads();
        })
    }

    /// Gives back the counters of ended threads folded into groups, once
    /// none of their objects is alive (`counters::retire`).
    fn give_back_ended_threads(&self) {
        let Some(host) = crate::host::get() else {
            return;
        };
        let threads = &host.threads;
        self.counters.give_back_folded(threads.folds(), |ids| {
            (threads.folded_into_each(ids).into_iter())
                .map(|g| g.map(|g| i64::from(g.0)))
                .collect()
        });
    }

    /// After a GC's frees were counted, on the agent thread: the censuses
    /// due and the pending peak.
    fn after_gc(&self) {
        {
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
            // The tags' frees are posted by the Service Thread in its own
            // time, and making it post them now can hang the JVM
            // (`tag_census`): their figure at this GC's end is not known.
            // A census of the tags from the roots, budget allowing, is an
            // instant of `max` of its own instead.
            self.stamps.after_gc(counters, stamps::census::Walk::Heap);
            if self.tracking.mechanism() == Mechanism::Tags {
                self.tags_census_after_gc();
            }
            // Again after the census (a while): a GC that finished meanwhile
            // has its frees counted too.
            let weak_through = self.weak.count_frees(false, counters);
            counters.take_pending_peak(counters::Known { weak_through });
        }
    }

    /// After a full GC of a pause collector under `tracker=tags`: a census
    /// of the tags if the `census=` budget allows, its counts an instant of
    /// `max` (as a census of the stamps is under ZGC).
    fn tags_census_after_gc(&self) {
        let Ok(env) = self.tracking.made_env() else {
            return;
        };
        if !self.stamps.tag_census_due() {
            return;
        }
        match tag_census::take(env, &self.counters, &self.tag_census) {
            Ok(took) => {
                self.stamps.tag_census_spent(took);
                self.counters.raise_to_tag_census();
            }
            Err(e) => crate::log::error_once("memory census", &format!("memory: {e}")),
        }
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
            self.counters
                .take_pending_peak(counters::Known { weak_through });
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
        self.stamps.hold(on);
        // A counter given back and taken by another thread between the
        // dump and the reading of the origins would name the wrong thread.
        self.counters.hold_give_back(on);
    }
}
