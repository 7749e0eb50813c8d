//! The census: one JVMTI IterateThroughHeap over the objects of the classes
//! the stamps' environment tagged, reading each one's stamp (the field the
//! class's tag names) and counting it on the counter it names. A VM
//! operation: every Java thread stops while it walks the whole heap, so it
//! costs about 30 ns per object in the heap and 60 for a stamped one
//! (docs/BENCHMARKS.md). A snapshot always takes one; after GCs, the agent
//! thread takes one while censuses cost at most `census=` of the time.

use super::classes::stamp_index;
use crate::error::AgentError;
use crate::memory::counters::Counters;
use crate::vm::sys::{JvmtiHeapCallbacks, JVMTI_PRIMITIVE_TYPE_INT, JVMTI_VISIT_OBJECTS};
use crate::vm::Jvmti;
use jni_sys::{jint, jlong, jvalue};
use parking_lot::Mutex;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::Relaxed};

/// The census's state for the JVM's lifetime.
#[derive(Default)]
pub struct Census {
    /// One census at a time (the agent thread's and a snapshot's).
    run: Mutex<()>,
    /// What the censuses after GCs may still spend (`Budget`).
    budget: Mutex<Budget>,
    /// The share of the time censuses after GCs may take, in % (`census=`).
    percent: AtomicU8,
    pub cost: Cost,
}

/// The censuses after GCs (none a user asked for) spend a credit that
/// grows with the time at the `census=` share, up to one census's walk or
/// [`BURST`], whichever is more: over any window of a few seconds they take
/// at most that share, and a short run's few small censuses (a test's
/// `System.gc()` calls one after another) are not refused for the next's
/// sake. A census runs when the credit covers the last one's walk.
///
/// Two walks share the credit: the stamps' census and, under
/// `tracker=tags` on a pause collector, the tags' (`memory::tag_census`).
/// Each has its own estimate, its own last walk.
#[derive(Default)]
struct Budget {
    credit_ns: i64,
    /// When the credit was last brought up to date (0: never).
    updated: u64,
    /// Each walk's last one (the stamps': a snapshot's too), by
    /// [`Walker`]: its next one's estimate.
    estimate_ns: [u64; 2],
}

/// Which census a budget decision is for.
#[derive(Clone, Copy)]
pub enum Walker {
    Stamps = 0,
    Tags = 1,
}

/// The credit a budget starts with and may keep beyond one census.
const BURST: i64 = 100_000_000;

/// What the censuses cost.
#[derive(Default)]
pub struct Cost {
    pub censuses: AtomicU64,
    pub after_gcs: AtomicU64,
    /// GCs after which the budget left no census.
    pub skipped: AtomicU64,
    pub stamped: AtomicU64,
    pub ns: AtomicU64,
    pub longest_ns: AtomicU64,
    /// The last census's pause.
    pub last_ns: AtomicU64,
    /// Stamps naming no counter (none should).
    pub odd: AtomicU64,
}

/// What one pass collects, on the VM thread (the callback's data).
struct Pass<'a> {
    counters: &'a Counters,
    /// Stamped objects found, by counter.
    alive: Vec<u32>,
    /// Each counter's `made` at the census's moment and at the last GC's
    /// end, and the GCs started then (`None` inside a collector's cycle):
    /// read at the first callback, when every Java thread has stopped.
    made: Vec<(i64, i64)>,
    moment: Option<Option<u64>>,
    /// When the walk began (the first callback): the time before it was
    /// spent waiting for the VM thread and the safepoint, not walking.
    walk_start: u64,
    stamped: u64,
    odd: u64,
}

/// The value of a field a primitive-field callback reports, if it is the
/// stamp of its object's class (the index that class's tag names).
///
/// # Safety
/// `info` is null or the callback's live `jvmtiHeapReferenceInfo`, whose
/// first member, for a field, is the field's index.
unsafe fn stamp_in(
    info: *const jint,
    class_tag: jlong,
    value: jvalue,
    value_type: jint,
) -> Option<i32> {
    if value_type != JVMTI_PRIMITIVE_TYPE_INT || info.is_null() {
        return None;
    }
    // SAFETY: non-null, live, its first member the index (the caller's promise).
    let index = unsafe { *info };
    if stamp_index(class_tag) != Some(index) {
        return None;
    }
    // SAFETY: the field is an int (`value_type`), so `i` holds it.
    Some(unsafe { value.i })
}

/// The primitive-field callback: runs on the VM thread inside the
/// operation; reads `data` (a `Pass`) and the counters' atomics, takes no
/// lock, calls nothing back, and cannot panic (no indexing, no unwrap).
///
/// # Safety
/// Only IterateThroughHeap or FollowReferences calls it, with `data` the `Pass` that `take`
/// passed and `info` a live `jvmtiHeapReferenceInfo` whose first member is
/// the field's index.
unsafe extern "C" fn on_field(
    _kind: jint,
    info: *const jint,
    class_tag: jlong,
    _tag: *mut jlong,
    value: jvalue,
    value_type: jint,
    data: *mut c_void,
) -> jint {
    // SAFETY: `data` is the `Pass` `take` passed, borrowed by no one else
    // while the operation runs (the caller's promise).
    let pass = unsafe { &mut *(data as *mut Pass<'_>) };
    if pass.moment.is_none() {
        pass.walk_start = crate::clock::now_ns();
        pass.moment = Some(pass.counters.census_moment(&mut pass.made));
        pass.alive.resize(pass.made.len(), 0);
    }
    // SAFETY: the callback's own `info` (the caller's promise).
    let Some(stamp) = (unsafe { stamp_in(info, class_tag, value, value_type) }) else {
        return 0;
    };
    if stamp <= 0 {
        return 0; // made before stamping, or while the mode was off
    }
    match pass.alive.get_mut(stamp as usize - 1) {
        Some(n) => {
            *n += 1;
            pass.stamped += 1;
        }
        None => pass.odd += 1,
    }
    0
}

/// The reference callback of a census from the roots: every object is
/// visited (its stamp is read by [`on_field`]). Touches nothing.
///
/// # Safety
/// Only FollowReferences calls it (no argument is read).
unsafe extern "C" fn follow_all(
    _kind: jint,
    _info: *const c_void,
    _class_tag: jlong,
    _referrer_class_tag: jlong,
    _size: jlong,
    _tag: *mut jlong,
    _referrer_tag: *mut jlong,
    _length: jint,
    _data: *mut c_void,
) -> jint {
    JVMTI_VISIT_OBJECTS
}

/// Where a census finds the stamped objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Walk {
    /// One pass over the heap (IterateThroughHeap, the stamped classes'
    /// objects only): the pause collectors' every object, dead or not;
    /// ZGC's and Shenandoah's reachable ones, as their collector marks them
    /// for it, which counts an object a weak root (a JVMTI tag of a dead
    /// object its last GC did not clear yet) still holds, and what it holds.
    Heap,
    /// From the roots (FollowReferences): what is reachable now, exactly;
    /// slower (every object's fields are reported). For a JVM that exits
    /// under ZGC or Shenandoah, where no GC can clear those weak roots first.
    FromRoots,
}

impl Census {
    /// The share of the time censuses after GCs may take, in % (1 to 100).
    pub fn set_budget(&self, percent: u8) {
        self.percent.store(percent.clamp(1, 100), Relaxed);
    }

    /// Is a census by `walker` after this GC within the budget? Counts a
    /// refusal.
    pub fn due(&self, walker: Walker) -> bool {
        let share = f64::from(self.percent.load(Relaxed).max(1)) / 100.0;
        let now = crate::clock::now_ns();
        let mut b = self.budget.lock();
        if b.updated == 0 {
            b.credit_ns = BURST;
        } else {
            let earned = (now.saturating_sub(b.updated) as f64 * share) as i64;
            let cap = BURST.max(b.estimate_ns.iter().sum::<u64>() as i64);
            b.credit_ns = b.credit_ns.saturating_add(earned).min(cap);
        }
        b.updated = now;
        let due = b.credit_ns >= b.estimate_ns[walker as usize] as i64;
        drop(b);
        if !due {
            self.cost.skipped.fetch_add(1, Relaxed);
        }
        due
    }

    /// A census by `walker` took `took_ns`: its next one's estimate, and
    /// spent from the credit if it followed a GC (a snapshot's is asked
    /// for, not budgeted).
    pub fn spent(&self, walker: Walker, took_ns: u64, after_gc: bool) {
        let mut b = self.budget.lock();
        b.estimate_ns[walker as usize] = took_ns;
        if after_gc {
            b.credit_ns = b.credit_ns.saturating_sub(took_ns as i64);
        }
    }

    /// Takes a census with `env` (the environment that tagged the stamped
    /// classes) and records it in `counters`. `after_gc`: the agent
    /// thread's, not a snapshot's.
    pub fn take(
        &self,
        env: Jvmti,
        counters: &Counters,
        after_gc: bool,
        walk: Walk,
    ) -> Result<(), AgentError> {
        let _one = self.run.lock();
        // A pass over the heap right after another, no GC between: the same
        // figures (a pass from the roots is never skipped: it is asked for
        // where a pass over the heap would count too much).
        if walk == Walk::Heap && counters.census_fresh() {
            return Ok(());
        }
        // No counter given back between the walk and its record: one it
        // finds empty was marked before the walk (`counters::retire`).
        let _walk = counters.walk_guard();
        let before = counters.gcs_started();
        let mut pass = Pass {
            counters,
            alive: Vec::new(),
            made: Vec::new(),
            moment: None,
            walk_start: 0,
            stamped: 0,
            odd: 0,
        };
        // Room for the counters made by then, so the first callback does not
        // allocate in the common case.
        pass.made.reserve(counters.len() + 1024);
        pass.alive.reserve(counters.len() + 1024);
        let callbacks = JvmtiHeapCallbacks {
            heap_reference_callback: (walk == Walk::FromRoots).then_some(follow_all as _),
            primitive_field_callback: Some(on_field),
            ..JvmtiHeapCallbacks::none()
        };
        let start = crate::clock::now_ns();
        let data = &mut pass as *mut Pass as *const c_void;
        // SAFETY: `on_field` is written for the primitive-field slot, with a
        // `Pass` as its data, `follow_all` for the reference slot; `pass`
        // outlives the call and nothing else touches it meanwhile.
        let r = unsafe {
            match walk {
                Walk::Heap => env.iterate_classes_tagged(&callbacks, None, data),
                Walk::FromRoots => env.follow_references(&callbacks, data),
            }
        };
        // What the program lost: the walk, while its threads stood still
        // (the whole call where no object was visited).
        let took = crate::clock::now_ns().saturating_sub(pass.walk_start.max(start));
        r.map_err(|e| {
            AgentError::Unsupported(format!("the heap census failed: {}", env.error_name(e)))
        })?;
        // No callback: no stamped object at all. Their `made` now (what was
        // made after the walk counts as made before it, dead: a lower bound),
        // and the GC count from before (a GC in between makes it stale).
        let at = match pass.moment {
            Some(at) => at,
            None => counters.census_moment(&mut pass.made).map(|_| before),
        };
        counters.census_taken(&pass.alive, &pass.made, at);
        self.spent(Walker::Stamps, took, after_gc);
        let c = &self.cost;
        c.censuses.fetch_add(1, Relaxed);
        c.after_gcs.fetch_add(u64::from(after_gc), Relaxed);
        c.stamped.fetch_add(pass.stamped, Relaxed);
        c.odd.fetch_add(pass.odd, Relaxed);
        c.ns.fetch_add(took, Relaxed);
        c.longest_ns.fetch_max(took, Relaxed);
        c.last_ns.store(took, Relaxed);
        Ok(())
    }
}

/// The census check (`profrj.runtime.StampCheck`): a pass over the
/// instances of `class` alone, answering the stamp values found where the
/// class's tag says the stamp is.
pub fn stamps_of(env: Jvmti, class: jni_sys::jclass) -> Result<Vec<i32>, AgentError> {
    /// # Safety
    /// As `on_field`, with a `Vec<i32>` as `data`.
    unsafe extern "C" fn collect(
        _kind: jint,
        info: *const jint,
        class_tag: jlong,
        _tag: *mut jlong,
        value: jvalue,
        value_type: jint,
        data: *mut c_void,
    ) -> jint {
        // SAFETY: the callback's own `info` (the caller's promise).
        if let Some(stamp) = unsafe { stamp_in(info, class_tag, value, value_type) } {
            // SAFETY: `data` is the Vec `stamps_of` passed.
            unsafe { (*(data as *mut Vec<i32>)).push(stamp) };
        }
        0
    }
    let mut found: Vec<i32> = Vec::with_capacity(16);
    let callbacks = JvmtiHeapCallbacks {
        primitive_field_callback: Some(collect),
        ..JvmtiHeapCallbacks::none()
    };
    // SAFETY: `collect` is written for the primitive-field slot with a
    // `Vec<i32>` as its data (capacity for the check's few objects: pushing
    // past it allocates, which the VM thread may); `found` outlives the call.
    unsafe {
        env.iterate_classes_tagged(
            &callbacks,
            Some(class),
            &mut found as *mut Vec<i32> as *const c_void,
        )
    }
    .map_err(|e| {
        AgentError::Unsupported(format!("the heap census failed: {}", env.error_name(e)))
    })?;
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::{Census, Walker, BURST};

    /// Each walk's estimate is its own last one: the tags' censuses do not
    /// add up into the stamps' estimate or into their own (before, every
    /// tag census added its time to one estimate, so under `stamps=off`
    /// each came due more rarely than the last), and both spend one credit.
    #[test]
    fn each_walk_keeps_its_own_estimate_and_both_spend_the_credit() {
        let c = Census::default();
        c.set_budget(100);
        assert!(c.due(Walker::Tags), "the first census: the burst");
        for _ in 0..5 {
            c.spent(Walker::Tags, 30_000_000, true);
        }
        c.spent(Walker::Stamps, 10_000_000, false); // a snapshot's: not spent
        let b = c.budget.lock();
        assert_eq!(b.estimate_ns, [10_000_000, 30_000_000]);
        assert_eq!(b.credit_ns, BURST - 5 * 30_000_000);
    }
}
