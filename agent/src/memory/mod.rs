//! `memory` mode: objects alive per allocating thread and type, and the most
//! that were ever alive at once (ProfilerJ's memory view, HPROF's heap=sites).
//!
//! Instrumented code calls `Probe.alloc(object, type)` after each object's
//! constructor call, each array allocation and each reflective or cloning
//! call; objects native code makes come through the VMObjectAlloc event and
//! the agent's JNI interception (`vm_alloc`). Each tracked object counts on
//! its counter (thread × type, `counters`), and its death is seen one of
//! two ways (`tracker=`):
//!
//! - `weak_refs` (serial, parallel and G1 collectors): a JNI weak global
//!   reference per object, appended to a per-thread log; an agent thread
//!   scans the logs after each GC, and the next GC's start makes sure it
//!   did. Cheapest on the allocating thread (no lock, no JVMTI call), and
//!   `max` is exact at every GC.
//! - JVMTI tags (any collector): a tag naming the counter, and the
//!   ObjectFree event. The tag map is one hash table behind one lock, so
//!   each allocation costs 2–4× more, and the frees arrive after the GC
//!   (`max` may count garbage not yet reported).
//!
//! Both are weak storage the GC clears, so tracking keeps nothing alive.
//! A `java.lang.ref.WeakReference` per object was measured first and
//! dropped: each one survives a GC and is queued, and references held by
//! long-lived holders keep their referents alive through young GCs
//! (docs/BENCHMARKS.md).
//!
//! A snapshot forces a full GC first, and counts every free it found, so
//! `count` is exactly the objects still reachable.

mod counters;
mod mechanism;
pub mod mode;
mod section;
mod sites;
mod sites_section;
mod vm_alloc;
mod weak_refs;

pub use mechanism::Mechanism;
pub use section::write_section;
pub use sites_section::write_sites;
pub use vm_alloc::{jni_allocated, vm_allocated};

use crate::instrument::{probe_class, AllocPlace};
use crate::modes::Host;
use crate::vm::{Jni, Jvmti, JvmtiEvent, WeakHandle};
use jni_sys::{jclass, jint, jobject, JNIEnv};
use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// The natives of `profrj.runtime.Probe` this mode binds.
pub fn natives() -> [(&'static str, &'static str, *mut std::ffi::c_void); 3] {
    [
        (
            probe_class::ALLOC_METHOD.0,
            probe_class::ALLOC_METHOD.1,
            alloc as *mut _,
        ),
        (
            probe_class::ALLOC_AT_METHOD.0,
            probe_class::ALLOC_AT_METHOD.1,
            alloc_at as *mut _,
        ),
        ("typeId", "(Ljava/lang/Class;)I", type_of as *mut _),
    ]
}

/// What `memory` keeps for the JVM's lifetime: its probes stay in the code
/// and its objects stay tracked whatever sessions come and go. Owned by the
/// agent; the probes, the GC events and the agent thread reach it through
/// the FFI edge.
#[derive(Default)]
pub struct Lifetime {
    /// Does a running session want allocations tracked? (A stopped
    /// session's probes stay in the code; they count nothing until `resume`.)
    active: AtomicBool,
    sites: sites::Sites,
    /// How objects are followed to their death.
    pub tracking: mechanism::Tracking,
    counters: counters::Counters,
    weak: weak_refs::WeakRefs,
}

impl Lifetime {
    /// The id of a type named as Java writes it (`java.util.HashMap$Node`,
    /// `int[]`, `java.lang.String[][]`).
    pub fn type_id(&self, java_name: &str) -> u32 {
        self.sites.type_id(java_name)
    }

    /// An allocation site: its type's name and its place.
    pub fn site(&self, site: u32) -> Option<(String, Option<AllocPlace>)> {
        self.sites.site(site)
    }

    /// The name of a type by its id (`java.lang.String[]`).
    pub fn type_name(&self, ty: u32) -> String {
        self.sites.type_name(ty)
    }

    /// The id of an allocation site: what its probe passes.
    pub fn site_id(&self, place: AllocPlace, java_type: &str) -> u32 {
        let place = self.sites.place_id(place);
        self.sites.site_id(place, self.sites.type_id(java_type))
    }

    /// The id of a place whose objects' types are known when they are made.
    pub fn place_id(&self, place: AllocPlace) -> u32 {
        self.sites.place_id(place)
    }

    pub fn set_active(&self, on: bool) {
        self.active.store(on, Relaxed);
    }

    pub fn is_active(&self) -> bool {
        self.active.load(Relaxed)
    }

    /// The ObjectFree event of a tagged object.
    pub fn object_freed(&self, tag: i64) {
        self.counters.object_freed(tag)
    }

    /// GarbageCollectionStart (weak references).
    pub fn gc_started(&self) {
        self.weak.gc_started(&self.counters)
    }

    /// GarbageCollectionFinish (weak references).
    pub fn gc_finished(&self) {
        self.weak.gc_finished(&self.counters)
    }

    /// Body of the `profrj memory` agent thread.
    pub fn run_agent_thread(&self, jni: &Jni) {
        self.weak.run_agent_thread(jni, &self.counters)
    }

    pub fn cost_summary(&self) -> Option<String> {
        self.weak.cost_summary()
    }
}

/// What the memory mode keeps per thread, behind one thread-local (each
/// access to one costs a call in a shared library).
struct PerThread {
    counters: RefCell<counters::ThreadCounters>,
    log: weak_refs::ThreadLogSlot,
}

thread_local! {
    static PER_THREAD: PerThread = const {
        PerThread {
            counters: RefCell::new(counters::ThreadCounters::new()),
            log: weak_refs::ThreadLogSlot::new(),
        }
    };
}

/// Tracks `object` (a live reference) as one made at site `site` by the
/// calling thread.
pub fn track(a: &Host<'static>, jni: &Jni, object: jobject, site: u32) {
    PER_THREAD.with(|mine| {
        let Some(counters) = mine.counters.borrow_mut().get(a, jni, site) else {
            return;
        };
        track_on(a, jni, (object, site), counters, &mine.log)
    })
}

/// Tracks `object` as one of type `ty` made at place `place` (a site found
/// only now: reflection, clone, the VM, JNI).
fn track_at(a: &Host<'static>, jni: &Jni, object: jobject, place: u32, ty: u32) {
    let site = PER_THREAD.with(|mine| mine.counters.borrow_mut().site_of(a, place, ty));
    track(a, jni, object, site)
}

fn track_on(
    a: &Host<'static>,
    jni: &Jni,
    (object, site): (jobject, u32),
    counters: counters::SiteCounters,
    log: &weak_refs::ThreadLogSlot,
) {
    let life = a.memory;
    match life.tracking.mechanism() {
        Mechanism::WeakRefs => {
            if let Some(h) = WeakHandle::new(jni, object) {
                life.weak.record(log, h, counters.site.index());
                counters.site.made_one(); // the group sums its sites
                crate::trace::object_allocated(jni, site, h.to_bits() as u64);
            }
        }
        Mechanism::Tags => {
            let Ok(env) = life.tracking.made_env() else {
                return;
            };
            if env.set_tag(object, counters.site.tag()).is_ok() {
                counters.site.made_one_with_peak();
                counters.group.made_one_with_peak();
                crate::trace::object_allocated(jni, site, 0);
            }
        }
    }
}

/// Tracks an object the VM or native code made, of class signature `sig`.
pub fn track_vm_object(a: &Host<'static>, jni: &Jni, object: jobject, sig: &str) {
    let ty = a
        .memory
        .type_id(&crate::instrument::registry::java_type(sig).0);
    track_at(a, jni, object, sites::NO_PLACE, ty);
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

/// What a memory snapshot holds: per thread and type, and per thread and site.
pub struct Counts {
    pub rows: Vec<Row>,
    pub sites: Vec<SiteRow>,
}

/// Live counts now: a full GC, every free it found counted (weak
/// references: its scan; tags: every ObjectFree posted), then every
/// counter. Runs on the dumping thread.
impl Lifetime {
    pub fn live_counts(&self, jvmti: Jvmti) -> Result<Counts, String> {
        if self.tracking.gc_impossible_now() {
            // ZGC or Shenandoah would wait forever for their stopped threads.
            crate::log::warn("memory: no GC can run while this JVM exits (its collector works concurrently), so the last snapshot's counts include objects that died since the last GC");
        } else {
            jvmti
                .force_garbage_collection()
                .map_err(|e| format!("ForceGarbageCollection: {}", jvmti.error_name(e)))?;
        }
        if self.tracking.mechanism() == Mechanism::WeakRefs {
            self.weak.count_frees(false, &self.counters);
        } else {
            // Enabling ObjectFree (again) makes the VM post the events of the
            // objects the GC found dead before it returns (JvmtiTagMap's flush).
            jvmti
                .set_event_enabled(JvmtiEvent::OBJECT_FREE, true)
                .map_err(|e| format!("ObjectFree: {}", jvmti.error_name(e)))?;
        }
        let tables = self.sites.tables();
        let mut counts = Counts {
            rows: Vec::new(),
            sites: Vec::new(),
        };
        let sum_groups = self.tracking.mechanism() == Mechanism::WeakRefs;
        for t in self.counters.all(sum_groups) {
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

/// `Probe.alloc(Object, int)`.
extern "system" fn alloc(env: *mut JNIEnv, _class: jclass, object: jobject, site: jint) {
    let Some(a) = crate::agent::host() else {
        return;
    };
    if !a.memory.is_active() || object.is_null() {
        return;
    }
    crate::vm::guard("memory probe", (), || {
        // SAFETY: the VM calls this native (only RegisterNatives knows it)
        // with the calling thread's JNIEnv.
        track(&a, &unsafe { Jni::from_raw(env) }, object, site as u32)
    })
}

/// `Probe.allocAt(Object, int, int)`: an object whose type its place learnt
/// only when it ran (reflection, clone).
extern "system" fn alloc_at(
    env: *mut JNIEnv,
    _class: jclass,
    object: jobject,
    place: jint,
    ty: jint,
) {
    let Some(a) = crate::agent::host() else {
        return;
    };
    if !a.memory.is_active() || object.is_null() {
        return;
    }
    crate::vm::guard("memory probe", (), || {
        // SAFETY: the VM calls this native (only RegisterNatives knows it)
        // with the calling thread's JNIEnv.
        let jni = unsafe { Jni::from_raw(env) };
        track_at(&a, &jni, object, place as u32, ty as u32)
    })
}

/// `Probe.typeId(Class)`: the type id of a class (asked once per class).
extern "system" fn type_of(_env: *mut JNIEnv, _class: jclass, of: jclass) -> jint {
    crate::vm::guard("memory type id", 0, || {
        let Some(a) = crate::agent::host() else {
            return 0;
        };
        let sig = a.jvmti.class_signature(of).unwrap_or_default();
        a.memory
            .type_id(&crate::instrument::registry::java_type(&sig).0) as jint
    })
}
