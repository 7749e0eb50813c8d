//! `lock` mode: where threads wait for each other. HotSpot posts JVMTI
//! MonitorContendedEnter on a thread about to block on a monitor another
//! thread owns, and MonitorContendedEntered on it once it got the monitor;
//! the agent notes the time at the first (a thread-local, no lock) and at
//! the second takes the thread's stack and folds it, with the monitor's
//! class as the top frame, into the thread's tree, weighed by one contended
//! acquisition and the nanoseconds waited. A monitor nobody else wants
//! never posts either event: uncontended `synchronized` costs nothing.
//!
//! `Object.wait` is waiting for a condition, not contention: it posts
//! MonitorWait/MonitorWaited, which the mode does not enable. A thread
//! notified in `Object.wait` must enter the monitor again, and HotSpot may
//! post MonitorContendedEnter/Entered for that re-entry; its top frame is
//! then `Object.wait` (`wait0` on JDK 21+), and the mode leaves those waits
//! out too (counted in `status` as re-entries after `Object.wait`).
//!
//! At every snapshot the mode also takes HPROF's MONITOR DUMP (`dump`).

mod dump;
pub mod mode;
mod model;
mod park;

use crate::calltree::{WeightTree, Weights};
use crate::events::{Kind, Listener, LockWait, LockWaited};
use crate::host::Host;
use crate::methods::{class_name, MethodNames, NameId};
use crate::per_thread::{self, Held, ThreadValue};
use crate::stack::Frames;
use crate::threads::ThreadId;
use crate::vm::sys::JvmtiFrameInfo;
use crate::vm::{jthread, Jni};
use jni_sys::jobject;
use parking_lot::{Mutex, RwLock};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, HashSet};
use std::ops::AddAssign;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// Contended acquisitions and the nanoseconds waited for them.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub struct Wait {
    pub count: u64,
    pub time: u64,
}

impl AddAssign for Wait {
    fn add_assign(&mut self, o: Wait) {
        self.count = self.count.saturating_add(o.count);
        self.time = self.time.saturating_add(o.time);
    }
}

impl Weights for Wait {
    fn heaviness(&self) -> u64 {
        self.time
    }
}

/// What `lock` keeps for the JVM's lifetime (the host's state of this
/// type): where the monitor events, which it listens to, and its park
/// probes find the running session's recorder.
#[derive(Default)]
pub struct Lifetime(RwLock<Option<Arc<Recorder>>>);

impl Lifetime {
    fn current(&self) -> Option<Arc<Recorder>> {
        self.0.read().clone()
    }

    pub(super) fn set(&self, r: Option<Arc<Recorder>>) {
        *self.0.write() = r;
    }
}

/// One session's waits.
pub struct Recorder {
    /// The shortest wait recorded, ns.
    threshold: u64,
    depth: usize,
    active: AtomicBool,
    /// Waits whose stack or monitor class could not be read.
    failed: AtomicU64,
    /// Waits shorter than the threshold.
    short: AtomicU64,
    /// Waits for a condition, left out: re-entries after `Object.wait` and
    /// `Condition.await`, `CountDownLatch.await`.
    rewaits: AtomicU64,
    /// Time the agent spent recording waits (stack, names, tree), ns.
    spent: AtomicU64,
    data: Mutex<Data>,
}

#[derive(Default)]
struct Data {
    names: MethodNames,
    /// Names of monitor classes (top frames), told apart from methods.
    classes: HashSet<NameId>,
    /// Frame names known to be `Object.wait` (true) or not (false).
    wait_frames: HashMap<NameId, bool>,
    trees: HashMap<ThreadId, WeightTree<Wait>>,
    /// The thread table's fold count when ended threads' trees last moved.
    folded_at: u64,
}

/// What a Java thread keeps for the lock mode (in its record, which a
/// virtual thread takes along: one that blocks unmounts, and its wait
/// ends on whichever carrier it resumes on).
#[derive(Default)]
struct PerThread {
    /// When this thread began to wait for a contended monitor (0: it is not).
    enter_ns: Cell<u64>,
    /// When this thread began to park for a lock (0: it is not parked).
    park_ns: Cell<u64>,
}

impl ThreadValue for PerThread {}

/// An OS thread's frame buffer for the stacks of waits (stacks can be
/// thousands deep): in its own record, so that a million virtual threads
/// do not each keep one.
#[derive(Default)]
struct FrameBuffer(RefCell<Vec<JvmtiFrameInfo>>);

impl ThreadValue for FrameBuffer {}

/// Runs `f` with the calling thread's lock state, made on first use.
fn on_thread<R>(f: impl FnOnce(&PerThread) -> R) -> Option<R> {
    per_thread::with(|| Some(Held::Own(Box::default())), f)
}

impl Recorder {
    fn new(threshold: u64, depth: u32) -> Self {
        Self {
            threshold,
            depth: depth as usize,
            active: AtomicBool::new(false),
            failed: AtomicU64::new(0),
            short: AtomicU64::new(0),
            rewaits: AtomicU64::new(0),
            spent: AtomicU64::new(0),
            data: Mutex::new(Data::default()),
        }
    }

    /// One wait of `waited` ns for `object`, on the thread that waited: a
    /// monitor's (MonitorContendedEntered) or, `parked`, a lock's (its
    /// synchronizer, from `LockSupport.park`), whose frames of the agent's
    /// probe and of `java.util.concurrent.locks` are left out.
    fn waited(
        &self,
        host: &Host,
        jni: &Jni,
        (thread, object): (jthread, jobject),
        waited: u64,
        parked: bool,
    ) {
        if waited < self.threshold {
            self.short.fetch_add(1, Relaxed);
            return;
        }
        let started = crate::clock::now_ns();
        self.record(host, jni, (thread, object), waited, parked);
        let spent = crate::clock::now_ns().saturating_sub(started);
        self.spent.fetch_add(spent, Relaxed);
    }

    fn record(
        &self,
        host: &Host,
        jni: &Jni,
        (thread, object): (jthread, jobject),
        waited: u64,
        parked: bool,
    ) {
        let jvmti = host.jvmti;
        let Some(id) = host.thread_id(jni, thread) else {
            return; // the agent's own threads
        };
        let class = jni.object_class(object);
        let signature = jvmti.class_signature(class);
        jni.delete_local_ref(class);
        let Ok(signature) = signature else {
            self.failed.fetch_add(1, Relaxed);
            return;
        };
        if parked && signature == COUNT_DOWN_LATCH {
            // Waiting for the count to reach zero: a condition, not a lock.
            self.rewaits.fetch_add(1, Relaxed);
            return;
        }
        per_thread::with_carrier(
            || Some(Held::Own(Box::default())),
            |mine: &FrameBuffer| {
                let Ok(mut buf) = mine.0.try_borrow_mut() else {
                    return;
                };
                let empty = JvmtiFrameInfo {
                    method: std::ptr::null_mut(),
                    location: 0,
                };
                buf.resize(self.depth, empty);
                let Ok(frames) = jvmti.stack_trace(thread, &mut buf) else {
                    self.failed.fetch_add(1, Relaxed);
                    return;
                };
                let mut data = self.data.lock();
                let d = &mut *data;
                let mut path: Vec<NameId> = Vec::with_capacity(frames.len() + 1);
                // Frames of the parking machinery left off the top.
                let mut machinery = 0;
                for f in frames {
                    let name = d.names.frame_name(jvmti, jni, f.method, f.location == -1);
                    if parked && path.is_empty() && is_lock_machinery(d.names.get(name)) {
                        if d.names.get(name).contains("$ConditionObject.await") {
                            // Getting the lock back after Condition.await.
                            self.rewaits.fetch_add(1, Relaxed);
                            return;
                        }
                        machinery += 1;
                        continue;
                    }
                    path.push(name);
                }
                path.reverse();
                if let Some(&top) = path.last().filter(|_| !parked) {
                    let names = &d.names;
                    let is_wait = *d
                        .wait_frames
                        .entry(top)
                        .or_insert_with(|| names.get(top).starts_with("java.lang.Object.wait"));
                    if is_wait {
                        self.rewaits.fetch_add(1, Relaxed);
                        return;
                    }
                }
                let class_name = d.names.intern(&class_name(&signature));
                d.classes.insert(class_name);
                if host.events.heard(Kind::LockWaited) {
                    let wait = LockWaited {
                        thread: id,
                        frames: Frames::Jvmti(&frames[machinery..]),
                        depth: self.depth as u32,
                        class: d.names.get(class_name),
                        object,
                        waited,
                        parked,
                    };
                    host.events.lock_waited(jni, &wait);
                }
                path.push(class_name);
                crate::calltree::fold_ended(&mut d.trees, &host.threads, &mut d.folded_at);
                d.trees.entry(id).or_default().add(
                    path,
                    Wait {
                        count: 1,
                        time: waited,
                    },
                );
            },
        );
    }

    /// The trees a snapshot writes.
    fn capture(&self) -> Captured {
        let d = self.data.lock();
        Captured {
            trees: d.trees.clone(),
            names: d.names.snapshot(),
            classes: d.classes.clone(),
            threshold: self.threshold,
            dump: None,
        }
    }

    fn totals(&self) -> Wait {
        let mut w = Wait::default();
        for t in self.data.lock().trees.values() {
            w += t.totals();
        }
        w
    }
}

/// The synchronizer of a CountDownLatch: parking on it is waiting for the
/// count to reach zero, not for a lock.
const COUNT_DOWN_LATCH: &str = "Ljava/util/concurrent/CountDownLatch$Sync;";

/// Frames a parked thread's stack starts with that are the parking
/// machinery, not the code that wanted the lock: the agent's probe,
/// `LockSupport`, the AQS and the locks of `java.util.concurrent.locks`.
fn is_lock_machinery(frame: &str) -> bool {
    frame.starts_with("profrj.runtime.") || frame.starts_with("java.util.concurrent.locks.")
}

/// What a snapshot of the `lock` mode holds.
pub struct Captured {
    trees: HashMap<ThreadId, WeightTree<Wait>>,
    names: Vec<Box<str>>,
    classes: HashSet<NameId>,
    threshold: u64,
    dump: Option<crate::model::MonitorDump>,
}

impl Listener for Lifetime {
    /// MonitorContendedEnter, on the thread about to block.
    fn monitor_contended_enter(&self, jni: &Jni, _thread: jthread, object: jobject) {
        let Some(host) = crate::host::get() else {
            return;
        };
        if self.current().is_some_and(|r| r.active.load(Relaxed)) {
            on_thread(|mine| mine.enter_ns.set(crate::clock::now_ns().max(1)));
            publish_wait(host, jni, object, false);
        }
    }

    /// MonitorContendedEntered, on the thread that waited and now owns
    /// `object`'s monitor.
    fn monitor_contended_entered(&self, jni: &Jni, thread: jthread, object: jobject) {
        let since = on_thread(|mine| mine.enter_ns.replace(0)).unwrap_or(0);
        if since == 0 {
            return; // the wait began before the session did
        }
        let waited = crate::clock::now_ns().saturating_sub(since);
        let Some(host) = crate::host::get() else {
            return;
        };
        if let Some(r) = self.current() {
            if r.active.load(Relaxed) {
                publish_wait(host, jni, object, true);
                r.waited(host, jni, (thread, object), waited, false);
            }
        }
    }
}

/// The kinds of events the lock mode listens to.
const KINDS: [Kind; 2] = [Kind::MonitorContendedEnter, Kind::MonitorContendedEntered];

/// Tells whoever listens ([`Kind::LockWait`]) that the thread is about to
/// wait for the lock of `object` (`entered`: it has it now), every wait
/// whatever the threshold; not for a CountDownLatch (a condition, not a
/// lock). The thread is about to block, or has just waited: a class name
/// costs little beside it.
fn publish_wait(host: &Host, jni: &Jni, object: jobject, entered: bool) {
    if !host.events.heard(Kind::LockWait) || object.is_null() {
        return;
    }
    let class = jni.object_class(object);
    let signature = host.jvmti.class_signature(class);
    jni.delete_local_ref(class);
    let Ok(signature) = signature else {
        return;
    };
    if signature == COUNT_DOWN_LATCH {
        return;
    }
    let wait = LockWait {
        object,
        signature: &signature,
        entered,
    };
    host.events.lock_wait(jni, &wait);
}
