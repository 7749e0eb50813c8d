//! `coverage` mode: how many times each source line ran, per method.
//!
//! Each instrumented method gets a `long[]` of counters the agent owns. At
//! entry the method fetches its array once into a local of its own — `ldc`
//! of a dynamic constant (bootstrap `Probe.counters`) where the class allows
//! it, which the JIT folds to a constant, else `Probe.cov(id)`, a few loads
//! once inlined — and counting is then plain bytecode, `counters[k]++`, as
//! JaCoCo's probes are (with counts instead of booleans). Arrays are
//! allocated on a method's first call, so classes that never run cost
//! nothing but their registration.
//!
//! Not every line entry point (`profrj_bytecode::edit::line_probes`) gets a
//! counter: `plan_counters` gives one only where the count does not follow
//! from others (a loop keeps one per iteration, straight code one per
//! call), and each point's count is kept here as a sum of counters
//! ([`MethodLines::counts`]). Slot 0 counts calls, unless the first line's
//! counter does. Where the code between counters may throw (array or field
//! access), exceptions there are counted too, by the handlers and a
//! catch-all, and subtracted. `derive=off` puts a counter at every point.
//!
//! Stripes: with `stripes=N` (N > 1; by default the CPU count, a power
//! of two, at most 16) a method's array holds N copies of its counters,
//! each `stride` longs ([`stride`]: the slots and 7 more, rounded up to
//! 8, so two copies never share a 64-byte cache line whatever the array's
//! alignment). The entry code picks a copy once per call, `base = (thread
//! id & (N-1)) * stride` (`Probe.thread()`, a field load once inlined), and
//! each increment counts `counters[base + k]`: threads with consecutive
//! ids, up to N of them, count on cache lines of their own instead of
//! moving one line between cores on every increment. A dump sums the
//! copies. Memory: N × stride × 8 bytes per method that ran (N = 2: at
//! least 256 bytes; N = 16: 2 KiB), against 8 × slots + 16 with one copy.
//! `getId()J` and `threadId()J` (the methods `Probe.thread` calls, and
//! their overrides) always count in copy 0.
//!
//! One thread, one copy: in classes that bootstrap (those with dynamic
//! constants) `base` comes from a call site (`Probe.stripe`) bound to a
//! constant 0 while one application thread runs, the JIT folding it (a
//! program that runs one thread pays what `stripes=1` pays). When a
//! second is alive at a ThreadStart, [`Lifetime::thread_started`] switches every
//! such site to the thread's copy (a `MutableCallSite`: the JIT recompiles
//! what folded the 0), on the new thread before it runs any Java code.
//! Application threads: every live Java thread but the agent's and the
//! JDK's own services, those in the system thread group or the innocuous
//! one (Reference Handler, Finalizer, Signal Dispatcher, Notification
//! Thread, Common-Cleaner …), which until the switch count in copy 0 with
//! the first thread where they run the application's code (a finalizer, a
//! cleaning action).
//!
//! Increments are not atomic: two threads running the same line at the
//! same instant on two cores can lose one increment (a counted line is
//! then low, never zero if it ran; a derived count inherits the losses of
//! the counters it comes from). Atomic increments would cost a locked
//! instruction per count.

pub mod mode;
mod model;

pub use crate::instrument::MethodLines;
use crate::instrument::{probe_class, stride, CoverageLayouts};
use crate::vm::{jthread, GlobalRef, JavaException, Jni, Jvmti};
use jni_sys::{jclass, jint, jobject, JNIEnv};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

/// Thread groups of the JDK's own service threads.
const SERVICE_GROUPS: [&str; 2] = ["system", "InnocuousThreadGroup"];

impl Lifetime {
    /// A Java thread not the agent's started (ThreadStart, on it, before
    /// it runs Java code): while the counters have stripes and every call
    /// counts in copy 0, a second application thread alive switches every
    /// `Probe.stripe` call site to copies by thread.
    pub fn thread_started(&self, jvmti: Jvmti, jni: &Jni, thread: jthread) {
        if self.one_thread.load(Ordering::Acquire) && !service_thread(jvmti, jni, thread) {
            switch_if_two(&self.one_thread, jvmti, jni);
        }
    }
}

/// Two application threads alive: `one_thread` cleared, and the call
/// sites switched (once).
fn switch_if_two(one_thread: &AtomicBool, jvmti: Jvmti, jni: &Jni) {
    let Ok(all) = jvmti.all_threads() else {
        return;
    };
    let mut application = 0;
    for t in all {
        let agent = jvmti
            .tag(t)
            .is_ok_and(|tag| tag == crate::vm::AGENT_THREAD_TAG);
        if !agent && !service_thread(jvmti, jni, t) {
            application += 1;
        }
        jni.delete_local_ref(t);
    }
    if application < 2 || !one_thread.swap(false, Ordering::AcqRel) {
        return;
    }
    let (name, sig) = probe_class::MANY_THREADS_METHOD;
    match jni.call_static_object(probe_class::CLASS, name, sig) {
        Ok(r) => jni.delete_local_ref(r),
        Err(e) => crate::log::warn(&format!(
            "coverage: a second thread started, and its counters could not be given copies of their own ({e}): threads may share one copy"
        )),
    }
}

/// Is `thread` one of the JDK's own services (its thread group one of
/// [`SERVICE_GROUPS`])? No if its group cannot be read (it ended). Asked of
/// JVMTI: no Java code runs in the ThreadStart that asks.
fn service_thread(jvmti: Jvmti, jni: &Jni, thread: jthread) -> bool {
    jvmti
        .thread_group_name(jni, thread)
        .ok()
        .flatten()
        .is_some_and(|n| SERVICE_GROUPS.contains(&n.as_str()))
}

/// Stripes when `stripes=` is not given: the CPU count rounded up to a
/// power of two, at most 16 (1 on one CPU: no padding at all).
pub fn default_stripes() -> u32 {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    cpus.next_power_of_two().min(16)
}

/// The natives of the probe class this mode needs, for RegisterNatives.
pub fn natives() -> [(&'static str, &'static str, *mut std::ffi::c_void); 1] {
    [(
        probe_class::COUNTERS_SLOW,
        probe_class::COUNTERS_METHOD.1,
        counters_slow as *mut _,
    )]
}

/// A class in scope, listed even if it never runs.
#[derive(Debug, Clone, Default)]
pub struct ClassLines {
    pub source: Option<String>,
    /// JaCoCo's class id of the bytes first loaded under this name.
    pub id: Option<u64>,
    /// Coverage ids of its methods, in class-file order.
    pub methods: Vec<u32>,
}

#[derive(Default)]
struct State {
    methods: Vec<MethodLines>,
    ids: HashMap<MethodLines, u32>,
    /// By internal name; a class loaded again (another loader, retransform)
    /// keeps its entry and gains the ids it did not have.
    classes: HashMap<String, ClassLines>,
    /// Each method's counters, a `long[]`, by id, once allocated.
    arrays: Vec<Option<GlobalRef>>,
    /// The `long[][]` last published in `Probe.COV`, and its length.
    published: Option<(GlobalRef, usize)>,
}

/// What a dump writes: classes by name, their methods and counts (`None`
/// for a method never called, so its array was never made).
pub struct Counts {
    pub classes: Vec<(String, ClassLines)>,
    pub methods: Vec<MethodLines>,
    pub counts: Vec<Option<Vec<i64>>>,
}

/// What `coverage` keeps for the JVM's lifetime: the counter layouts of
/// every instrumented method and their arrays, which the code keeps using
/// whatever sessions come and go (the host's state of this type; the
/// rewriter gets its layouts' ids from it, [`CoverageLayouts`]).
#[derive(Default)]
pub struct Lifetime {
    state: Mutex<State>,
    /// The stripes, fixed by the first coverage session.
    stripes: OnceLock<u32>,
    /// Stripes are on, and no second application thread was alive at a
    /// ThreadStart yet: the call sites of `Probe.stripe` still give copy 0.
    one_thread: AtomicBool,
}

impl Lifetime {
    /// The stripes of every counter array, fixed by the first call (the
    /// first coverage session's `stripes=`, else [`default_stripes`]). A
    /// later session asking for another number is told so.
    pub fn fix_stripes(&self, asked: Option<u32>) -> u32 {
        let n = *self.stripes.get_or_init(|| {
            let n = asked.unwrap_or_else(default_stripes);
            self.one_thread.store(n > 1, Ordering::Release);
            n
        });
        if asked.is_some_and(|a| a != n) {
            crate::log::error_once(
                "coverage stripes",
                &format!("coverage: stripes={n} kept (fixed by the first coverage session)"),
            );
        }
        n
    }
}

/// The rewriter's ids of counter layouts.
impl CoverageLayouts for Lifetime {
    /// The stripes fixed so far.
    fn stripes(&self) -> u32 {
        self.fix_stripes(None)
    }

    /// The id of a method's counter layout, which its code passes to
    /// `Probe.cov`: the same layout (a class retransformed, or loaded again by
    /// another loader) gets the same id and so the same counters.
    fn method_id(&self, m: MethodLines) -> u32 {
        let mut st = self.state.lock();
        if let Some(&id) = st.ids.get(&m) {
            return id;
        }
        let id = st.methods.len() as u32;
        st.methods.push(m.clone());
        st.ids.insert(m, id);
        id
    }

    /// Lists a class (internal name) with the ids of its instrumented methods,
    /// so it appears in the snapshot even if it never runs.
    /// The first bytes seen under a name give its id: a retransformed
    /// class comes back as the JVM rebuilt it (other bytes, the same
    /// class), and another loader's class of the same name shares the
    /// entry (and its counters, by layout) as it always has.
    fn add_class(&self, class: &str, source: Option<String>, id: u64, ids: &[u32]) {
        let mut st = self.state.lock();
        let entry = st.classes.entry(class.to_owned()).or_default();
        if entry.source.is_none() {
            entry.source = source;
        }
        entry.id.get_or_insert(id);
        for &id in ids {
            if !entry.methods.contains(&id) {
                entry.methods.push(id);
            }
        }
    }
}

impl Lifetime {
    /// Reads every counter array (on the dumping thread).
    pub fn counts(&self, jni: &Jni) -> Counts {
        let st = self.state.lock();
        let counts = st
            .methods
            .iter()
            .enumerate()
            .map(|(id, m)| {
                let array = (*st.arrays.get(id)?)?;
                let stripes = self.stripes() as usize;
                let stride = stride(m.slots, stripes as u32);
                let mut all = vec![0i64; stride * stripes];
                // SAFETY: `arrays` holds only long[]s (`array_for`), each
                // `stride * stripes` long.
                unsafe { jni.long_array_region(array.as_raw(), &mut all) }.ok()?;
                Some(sum_stripes(&all, m.slots, stride))
            })
            .collect();
        let mut classes: Vec<(String, ClassLines)> = st
            .classes
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        classes.sort_by(|a, b| a.0.cmp(&b.0));
        Counts {
            classes,
            methods: st.methods.clone(),
            counts,
        }
    }
}

/// Each counter summed over the copies: `all` holds copies `stride` apart,
/// each `slots` long.
fn sum_stripes(all: &[i64], slots: usize, stride: usize) -> Vec<i64> {
    let mut out = vec![0i64; slots];
    for copy in all.chunks(stride.max(1)) {
        for (o, c) in out.iter_mut().zip(copy) {
            *o = o.wrapping_add(*c);
        }
    }
    out
}

/// `Probe.covSlow(int)`: the counter array of method `id`, made on first
/// use and published in `Probe.COV` so later calls find it in Java.
///
/// # Safety
/// Only the VM calls this, as the native `Probe.covSlow(int)`: `env` is
/// the calling thread's JNIEnv and `probe` the probe class.
unsafe extern "system" fn counters_slow(env: *mut JNIEnv, probe: jclass, id: jint) -> jobject {
    // SAFETY: the JNIEnv the VM passed to this native, on this thread.
    let jni = unsafe { Jni::from_raw(env) };
    crate::vm::guard(
        "coverage counters",
        std::ptr::null_mut(),
        || match crate::host::get()
            .ok_or_else(|| JavaException("no agent".into()))
            .and_then(|h| array_for(h.state::<Lifetime>(), &jni, probe, id as u32))
        {
            Ok(a) => jni.new_local_ref(a.as_raw()),
            Err(e) => {
                crate::log::error_once(
                    "coverage counters",
                    &format!("coverage: cannot make a counter array: {}", e.0),
                );
                std::ptr::null_mut()
            }
        },
    )
}

fn array_for(
    life: &Lifetime,
    jni: &Jni,
    probe: jclass,
    id: u32,
) -> Result<GlobalRef, JavaException> {
    let mut guard = life.state.lock();
    let st = &mut *guard;
    let stripes = life.stripes();
    let len = match st.methods.get(id as usize) {
        Some(m) => stride(m.slots, stripes) * stripes as usize,
        None => return Err(JavaException(format!("unknown method id {id}"))),
    };
    if let Some(Some(a)) = st.arrays.get(id as usize) {
        return Ok(*a);
    }
    let local = jni.new_long_array(len)?;
    let global = jni.new_global_ref(local);
    jni.delete_local_ref(local);
    let global = global.ok_or_else(|| JavaException("no room for a global reference".into()))?;
    if st.arrays.len() <= id as usize {
        st.arrays.resize(id as usize + 1, None);
    }
    st.arrays[id as usize] = Some(global);
    publish(jni, probe, st, id as usize)?;
    Ok(global)
}

/// Makes `Probe.COV[id]` the array of `id`, growing `COV` (a new, larger
/// array holding every array made so far) when it is too short.
fn publish(jni: &Jni, probe: jclass, st: &mut State, id: usize) -> Result<(), JavaException> {
    let array = st.arrays[id].map_or(std::ptr::null_mut(), GlobalRef::as_raw);
    if let Some((published, capacity)) = st.published {
        if id < capacity {
            // SAFETY: `published` is an object array, a long[][] (made below).
            return unsafe { jni.set_object_array_element(published.as_raw(), id, array) };
        }
    }
    let capacity = (id + 1).max(st.published.map_or(0, |p| p.1) * 2).max(1024);
    let element = jni.find_class("[J")?;
    let items = st
        .arrays
        .iter()
        .enumerate()
        .filter_map(|(i, a)| Some((i, (*a)?.as_raw())));
    let table = jni.new_object_array(element, capacity, items);
    jni.delete_local_ref(element);
    let table = table?;
    let (name, sig) = probe_class::COUNTERS_FIELD;
    // SAFETY: `table` is an array of `[J` (new_object_array above), i.e. a
    // `long[][]`, the field's type `[[J` (probe_class::COUNTERS_FIELD).
    unsafe { jni.set_static_object_field(probe, name, sig, table) }?;
    let global = jni.new_global_ref(table);
    jni.delete_local_ref(table);
    let global = global.ok_or_else(|| JavaException("no room for a global reference".into()))?;
    // The table published before stays reachable from threads that read
    // it already; its global reference is dropped with the agent (never).
    st.published = Some((global, capacity));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_are_a_cache_line_apart_and_summed() {
        assert_eq!(stride(3, 1), 3);
        assert_eq!(stride(1, 2), 8);
        assert_eq!(stride(2, 2), 16);
        assert_eq!(stride(9, 4), 16);
        assert_eq!(stride(10, 4), 24);
        for slots in 1..40 {
            // At least 7 unused longs between two copies' counters.
            assert!(stride(slots, 2) >= slots + 7 && stride(slots, 2).is_multiple_of(8));
        }
        let mut all = vec![0i64; 16 * 2];
        all[..3].copy_from_slice(&[5, 1, 2]);
        all[16..19].copy_from_slice(&[7, 0, 40]);
        assert_eq!(sum_stripes(&all, 3, 16), vec![12, 1, 42]);
        assert_eq!(sum_stripes(&[4, 5], 2, 2), vec![4, 5]);
    }
}
