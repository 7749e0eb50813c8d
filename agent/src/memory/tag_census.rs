//! A census of the tagged objects (arrays and the JDK's objects under ZGC
//! or Shenandoah, or `tracker=tags`), for every snapshot that follows
//! objects with tags, and after the full GCs of a pause collector.
//!
//! Under a pause collector the ObjectFree events would tell the frees of
//! each GC, but only once the VM has posted them all, and the one way to
//! make it post them now (enabling the event again, a flush) can hang
//! HotSpot 17.0.6+, 21 and 25 (JDK-8256811: one flusher waits for the
//! other without a safepoint check; docs/MEMORY.md). A census needs no
//! flush: it counts what is reachable at its own moment, whatever frees
//! are still to be posted (those the walk finds are posted on the calling
//! thread, outside the flushes' protocol).
//!
//! Such a cycle keeps everything made while it runs, dead or not, and a
//! pass over its heap starts from the weak roots too, among them the tags
//! of objects that died since their last cycle. So neither the ObjectFree
//! events nor a pass over the heap tell what is alive at the snapshot's GC:
//! under churn the first counted 8% too many (LiveChurn, JDK 17) and what
//! was made before the GC less what it freed 5% too few (up to 47% on JDK
//! 25's generational ZGC, whose cycles are longer). This counts the tagged
//! objects reachable from the strong roots (JVMTI FollowReferences, every
//! Java thread stopped): exactly what is alive at its moment.
//!
//! An object may be reached by several references; it counts once: the
//! first reference to it writes this census's number into its tag (the
//! epoch bits, which [`super::counters::memory_index`] leaves out), and a
//! tag already holding it is not counted again.

use super::counters::{self, Counters};
use crate::error::AgentError;
use crate::vm::sys::{JvmtiHeapCallbacks, JVMTI_VISIT_OBJECTS};
use crate::vm::Jvmti;
use jni_sys::{jint, jlong};
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// What the censuses of the tags cost (`<sites>`' attributes).
#[derive(Default)]
pub struct Cost {
    pub censuses: AtomicU64,
    pub ns: AtomicU64,
    pub longest_ns: AtomicU64,
    pub last_ns: AtomicU64,
}

/// What one pass collects, on the VM thread (the callback's data).
struct Pass<'a> {
    counters: &'a Counters,
    epoch: u16,
    /// Tagged objects found alive, by counter.
    alive: Vec<u32>,
    /// Each counter's `made` at the census's moment (the first callback,
    /// every Java thread stopped) and at the last GC's end.
    made: Vec<(i64, i64)>,
    started: bool,
}

/// Counts the tagged objects reachable now, with `env` (the environment of
/// the memory tags), and records them in `counters`; answers the time it
/// took.
pub fn take(env: Jvmti, counters: &Counters, cost: &Cost) -> Result<u64, AgentError> {
    // No counter given back between the walk and its record.
    let _walk = counters.walk_guard();
    let mut pass = Pass {
        counters,
        epoch: counters.next_tag_epoch(),
        alive: Vec::new(),
        made: Vec::new(),
        started: false,
    };
    pass.made.reserve(counters.len() + 1024);
    pass.alive.reserve(counters.len() + 1024);
    let callbacks = JvmtiHeapCallbacks {
        heap_reference_callback: Some(on_reference),
        ..JvmtiHeapCallbacks::none()
    };
    let data = &mut pass as *mut Pass as *const c_void;
    let start = crate::clock::now_ns();
    // SAFETY: `on_reference` is written for the reference slot with a `Pass`
    // as its data; `pass` outlives the call and nothing else touches it.
    let r = unsafe { env.follow_references(&callbacks, data) };
    // The whole call: the walk, and the wait for every thread to stop.
    let took = crate::clock::now_ns().saturating_sub(start);
    r.map_err(|e| {
        AgentError::Unsupported(format!("the census of tags failed: {}", env.error_name(e)))
    })?;
    cost.censuses.fetch_add(1, Relaxed);
    cost.ns.fetch_add(took, Relaxed);
    cost.longest_ns.fetch_max(took, Relaxed);
    cost.last_ns.store(took, Relaxed);
    if !pass.started {
        // Nothing reachable at all: each counter's `made` now.
        counters.census_moment(&mut pass.made);
    }
    counters.tags_counted(&pass.alive, &pass.made);
    Ok(took)
}

/// The reference callback: counts the referenced object once if it carries
/// a memory tag, and goes on into every object. Runs on the VM thread
/// inside the operation; takes no lock, calls nothing back, cannot panic.
///
/// # Safety
/// Only FollowReferences calls it, with `data` the `Pass` that `take`
/// passed and `tag` the referenced object's live tag slot.
unsafe extern "C" fn on_reference(
    _kind: jint,
    _info: *const c_void,
    _class_tag: jlong,
    _referrer_class_tag: jlong,
    _size: jlong,
    tag: *mut jlong,
    _referrer_tag: *mut jlong,
    _length: jint,
    data: *mut c_void,
) -> jint {
    // SAFETY: `data` is the `Pass` `take` passed, borrowed by no one else
    // while the operation runs (the caller's promise).
    let pass = unsafe { &mut *(data as *mut Pass<'_>) };
    if !pass.started {
        pass.started = true;
        pass.counters.census_moment(&mut pass.made);
        pass.alive.resize(pass.made.len(), 0);
    }
    if tag.is_null() {
        return JVMTI_VISIT_OBJECTS;
    }
    // SAFETY: the referenced object's tag slot, live for the callback.
    let t = unsafe { *tag };
    if counters::is_memory_tag(t) && counters::tag_epoch(t) != pass.epoch {
        if let Some(n) = pass.alive.get_mut(counters::memory_index(t)) {
            *n += 1;
        }
        // SAFETY: as above; the VM stores the new tag after the callback.
        unsafe { *tag = counters::with_epoch(t, pass.epoch) };
    }
    JVMTI_VISIT_OBJECTS
}
