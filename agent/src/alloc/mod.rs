//! `alloc` mode: which code allocates, by call path. HotSpot samples an
//! object about every `interval` bytes a thread allocates (JVMTI
//! SampledObjectAlloc, JDK 11+) and posts the event on the allocating
//! thread; the agent takes that thread's stack there and folds it, with the
//! allocated class as the top frame, into the thread's tree.
//!
//! Weights: HotSpot draws the distance to the next sample from an
//! exponential distribution whose mean is the interval, so sample points
//! fall on a thread's allocated bytes as a Poisson process and an object of
//! `s` bytes is sampled with probability `p = 1 - exp(-s / interval)`. Each
//! sample stands for `s / p` bytes and `1 / p` objects: unbiased estimates
//! of all the bytes and objects allocated (Go's heap profiles scale the
//! same way). A large object is sampled almost surely and weighs about its
//! own size; a small one stands for about `interval` bytes.
//!
//! `live`: each sampled object is also followed with a JNI weak reference;
//! a snapshot runs a GC and keeps only the samples whose object survived.
//! Not at VM exit: main has returned by then, so its locals' objects are
//! garbage, and a GC would report nothing the program held to its end.
//! There each sample carries the number of GCs that had started when it
//! was taken (its epoch), and the snapshot keeps what was alive at the last
//! GC the program ran: the samples taken before it started and not
//! cleared. What was made after it is left out (no GC saw it alive, and
//! none can tell any more), unless no GC ran at all: then every sample.

pub mod mode;
mod model;
mod recent;
mod stack_keys;
mod weights;

use crate::calltree::{NodeId, WeightTree};
use crate::events::{Allocation, Kind, Listener, ObjectSampled};
use crate::host::Host;
use crate::methods::{class_name, MethodNames, NameId};
use crate::per_thread::{self, Held, ThreadValue};
use crate::stack::Frames;
use crate::threads::{Identity, ThreadId};
use crate::vm::sys::JvmtiFrameInfo;
use crate::vm::{jthread, Jni, Jvmti};
use jni_sys::{jclass, jmethodID, jobject};
use parking_lot::{Mutex, RwLock};
use stack_keys::{Stacks, STACK_WORDS};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
pub use weights::{weigh, Alloc};

/// What `alloc` keeps for the JVM's lifetime (the host's state of this
/// type): where SampledObjectAlloc, which it listens to, finds the running
/// session's recorder.
#[derive(Default)]
pub struct Lifetime {
    current: RwLock<Option<Arc<Recorder>>>,
    /// Recorders made so far: each one's id, so that per-thread caches of
    /// one session's names are never read in the next.
    made: AtomicU64,
    /// GCs started since the first `alloc,live` or `trace` session enabled
    /// the agent's GC events (they stay enabled): `live`'s epochs.
    gcs: AtomicU32,
}

impl Lifetime {
    fn current(&self) -> Option<Arc<Recorder>> {
        self.current.read().clone()
    }

    pub(super) fn set(&self, r: Option<Arc<Recorder>>) {
        *self.current.write() = r;
    }

    fn next_id(&self) -> u64 {
        self.made.fetch_add(1, Relaxed) + 1
    }

    /// GarbageCollectionStart, in the pause: no JNI, no lock.
    pub fn gc_started(&self) {
        self.gcs.fetch_add(1, Relaxed);
    }

    /// GCs started so far (see [`Lifetime::gcs`]).
    pub(super) fn gcs(&self) -> u32 {
        self.gcs.load(Relaxed)
    }
}

/// Which samples a `live` snapshot keeps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LiveRule {
    /// The snapshot ran a GC: those whose object it kept.
    Gc,
    /// At VM exit: those alive at GC number `.0`, the last the program
    /// ran: taken before it started, and not cleared by VM death.
    LastGc(u32),
    /// At VM exit, no GC having run in the session: every sample.
    NoGc,
}

impl LiveRule {
    /// The value of `<alloc liveRule>`.
    pub(super) fn name(self) -> &'static str {
        use profrj_format::alloc::live_rule::*;
        match self {
            LiveRule::Gc => GC,
            LiveRule::LastGc(_) => LAST_GC,
            LiveRule::NoGc => NO_GC,
        }
    }
}

/// A sampled object followed for `live`.
struct Tracked {
    weak: WeakGlobal,
    thread: ThreadId,
    leaf: NodeId,
    w: Alloc,
    /// GCs started when it was sampled ([`Lifetime::gcs`]): GC number
    /// `epoch + 1` and later ones saw the object.
    epoch: u32,
}

/// One session's samples.
pub struct Recorder {
    /// Unique in this JVM ([`Lifetime::next_id`]).
    id: u64,
    interval: u32,
    live: bool,
    depth: usize,
    active: AtomicBool,
    /// Events whose stack or class could not be read.
    failed: AtomicU64,
    data: Mutex<Data>,
}

/// A JNI weak global reference (not tied to a thread, unlike a local one).
struct WeakGlobal(jobject);

// SAFETY: a weak global reference is valid on every thread until deleted;
// `Tracked` values are only used under the recorder's lock.
unsafe impl Send for WeakGlobal {}

#[derive(Default)]
struct Data {
    names: MethodNames,
    /// Names of allocated classes (top frames), told apart from methods.
    classes: HashSet<NameId>,
    trees: HashMap<ThreadId, WeightTree<Alloc>>,
    /// Each stack seen, (thread, class, frames) as [`Stacks`] keys, and the
    /// node it ended on: a stack seen before costs one look-up, not one
    /// per frame.
    stacks: Stacks,
    /// Words in `stacks`' keys, held under [`STACK_WORDS`].
    stack_words: usize,
    tracked: Vec<Tracked>,
    /// `tracked.len()` after the last pruning of dead references.
    kept: usize,
    /// The thread table's fold count when ended threads' trees last moved.
    folded_at: u64,
}

impl Data {
    /// Ended threads' trees into their groups' ([`crate::calltree::fold_ended`]),
    /// the samples `live` follows pointed at their new nodes, and the stack
    /// cache, whose keys name threads, dropped (it is a memo).
    fn fold_ended(&mut self, threads: &crate::threads::Threads) {
        let moved = crate::calltree::fold_ended(&mut self.trees, threads, &mut self.folded_at);
        if moved.is_empty() {
            return;
        }
        let by_thread: HashMap<ThreadId, (ThreadId, &[NodeId])> = moved
            .iter()
            .map(|(id, group, map)| (*id, (*group, map.as_slice())))
            .collect();
        for t in &mut self.tracked {
            if let Some(&(group, map)) = by_thread.get(&t.thread) {
                t.thread = group;
                t.leaf = map[t.leaf.0 as usize];
            }
        }
        self.stacks.clear();
        self.stack_words = 0;
    }
}

/// What the allocating thread keeps between events (in its record).
#[derive(Default)]
struct PerThread {
    /// Its frame buffer (stacks can be thousands deep).
    frames: Vec<JvmtiFrameInfo>,
    /// The stack as (jmethodID, native?), top frame first.
    stack: Vec<(jmethodID, bool)>,
    /// A stack's [`Stacks`] key, built here to look it up without allocating.
    key: Vec<usize>,
    recent: recent::Recent,
    /// The last (size, interval) weighed and its weight: a thread tends to
    /// allocate objects of a few sizes, and `weigh` costs an `exp`.
    last_weight: Option<(u64, u32, Alloc)>,
}

impl PerThread {
    fn weight(&mut self, size: u64, interval: u32) -> Alloc {
        match self.last_weight {
            Some((s, i, w)) if s == size && i == interval => w,
            _ => {
                let w = weigh(size, interval);
                self.last_weight = Some((size, interval, w));
                w
            }
        }
    }
}

/// The thread ends: its remembered references go.
impl ThreadValue for RefCell<PerThread> {
    fn thread_ended(&self, jni: Option<&Jni>) {
        if let (Some(jni), Ok(mut mine)) = (jni, self.try_borrow_mut()) {
            mine.recent.forget(jni);
        }
    }
}

impl Recorder {
    fn new(id: u64, interval: u32, live: bool, depth: u32) -> Self {
        Self {
            id,
            interval,
            live,
            depth: depth as usize,
            active: AtomicBool::new(false),
            failed: AtomicU64::new(0),
            data: Mutex::new(Data::default()),
        }
    }

    /// One SampledObjectAlloc event, on the allocating thread.
    fn sampled(
        &self,
        host: &Host,
        jni: &Jni,
        thread: jthread,
        object: jobject,
        class: jclass,
        size: u64,
    ) {
        if !self.active.load(Relaxed) {
            return;
        }
        // Per OS thread (a carrier's own, not a mounted virtual thread's):
        // a cache of recent classes, which a million virtual threads need
        // not each keep.
        per_thread::with_carrier(
            || Some(Held::Own(Box::default())),
            |mine: &RefCell<PerThread>| {
                let Ok(mut mine) = mine.try_borrow_mut() else {
                    return; // an event inside an event: not expected, never twice borrowed
                };
                self.sampled_on(host, jni, (thread, object, class, size), &mut mine)
            },
        );
    }

    fn sampled_on(
        &self,
        host: &Host,
        jni: &Jni,
        (thread, object, class, size): (jthread, jobject, jclass, u64),
        mine: &mut PerThread,
    ) {
        let jvmti = host.jvmti;
        let id = match mine.recent.thread(jni, thread) {
            Some(id) => id,
            None => match host.threads.identify(jvmti, jni, thread, 0) {
                Some(Identity::Java(id)) => {
                    mine.recent.remember_thread(jni, thread, id);
                    id
                }
                _ => return, // the agent's own threads
            },
        };
        let known_class = mine.recent.class(jni, self.id, class);
        let signature = match known_class {
            Some(_) => None,
            None => match jvmti.class_signature(class) {
                Ok(sig) => Some(sig),
                Err(_) => {
                    self.failed.fetch_add(1, Relaxed);
                    return;
                }
            },
        };
        if !self.walk(jvmti, mine) {
            self.failed.fetch_add(1, Relaxed);
            return;
        }
        let w = mine.weight(size, self.interval);
        let mut data = self.data.lock();
        let d = &mut *data;
        let class_name = match (known_class, signature) {
            (Some(name), _) => name,
            (None, sig) => {
                let name = d.names.intern(&class_name(&sig.unwrap_or_default()));
                d.classes.insert(name);
                mine.recent.remember_class(jni, self.id, class, name);
                name
            }
        };
        let key = &mut mine.key;
        key.clear();
        key.extend([id.0 as usize, class_name as usize]);
        key.extend(
            mine.stack
                .iter()
                .map(|&(m, native)| m as usize | usize::from(native)),
        );
        d.fold_ended(&host.threads);
        let tree = d.trees.entry(id).or_default();
        let leaf = match d.stacks.get(key.as_slice()) {
            Some(&leaf) => {
                tree.add_at(leaf, w);
                leaf
            }
            None => {
                let names = &mut d.names;
                let mut path: Vec<NameId> = mine
                    .stack
                    .iter()
                    .rev()
                    .map(|&(m, native)| names.frame_name(jvmti, jni, m, native))
                    .collect();
                path.push(class_name);
                let leaf = tree.add(path, w);
                if d.stack_words + key.len() <= STACK_WORDS {
                    d.stack_words += key.len();
                    d.stacks.insert(key.as_slice().into(), leaf);
                }
                leaf
            }
        };
        if host.events.heard(Kind::ObjectSampled) {
            let sampled = ObjectSampled {
                thread: id,
                frames: Frames::Jvmti(&mine.frames[..mine.stack.len()]),
                depth: self.depth as u32,
                class: d.names.get(class_name),
                size,
                weight: w.bytes as u64,
            };
            host.events.object_sampled(jni, &sampled);
        }
        if self.live {
            // Read after the allocation: a GC that starts later sees the object.
            let epoch = host.state::<Lifetime>().gcs();
            let weak = jni.new_weak_global_ref(object);
            if !weak.is_null() {
                d.tracked.push(Tracked {
                    weak: WeakGlobal(weak),
                    thread: id,
                    leaf,
                    w,
                    epoch,
                });
                if d.tracked.len() >= 2 * d.kept.max(4096) {
                    prune(jni, &mut d.tracked);
                    d.kept = d.tracked.len();
                }
            }
        }
    }

    /// The allocating thread's stack into `mine.stack` (JVMTI
    /// GetStackTrace; the event runs on that thread). AsyncGetCallTrace
    /// cannot replace it: from this event it fails whenever the allocation
    /// came from compiled code (docs/BENCHMARKS.md). False when there is none.
    fn walk(&self, jvmti: Jvmti, mine: &mut PerThread) -> bool {
        mine.stack.clear();
        let empty = JvmtiFrameInfo {
            method: std::ptr::null_mut(),
            location: 0,
        };
        mine.frames.resize(self.depth, empty);
        let Ok(frames) = jvmti.own_stack_trace(&mut mine.frames) else {
            return false;
        };
        mine.stack
            .extend(frames.iter().map(|f| (f.method, f.location == -1)));
        true
    }

    /// Drops the samples whose object a GC collected (their references
    /// cleared) from those followed for `live`.
    pub(super) fn prune(&self, jni: &Jni) {
        let mut data = self.data.lock();
        prune(jni, &mut data.tracked);
        data.kept = data.tracked.len();
    }

    /// The trees a snapshot writes: every sample, or for `live` the samples
    /// `rule` keeps. [`LiveRule::Gc`]: the caller ran a GC just before, and
    /// the samples it cleared go; at exit, the followed samples as last
    /// pruned ([`Recorder::prune`] at VM death, before any exit GC).
    fn capture(&self, jni: &Jni, rule: Option<LiveRule>) -> Captured {
        let mut data = self.data.lock();
        let d = &mut *data;
        let trees = if let Some(rule) = rule {
            if rule == LiveRule::Gc {
                prune(jni, &mut d.tracked);
                d.kept = d.tracked.len();
            }
            let mut live: HashMap<ThreadId, WeightTree<Alloc>> = HashMap::new();
            let kept = d.tracked.iter().filter(|t| match rule {
                LiveRule::LastGc(last) => t.epoch < last,
                LiveRule::Gc | LiveRule::NoGc => true,
            });
            for t in kept {
                if let Some(from) = d.trees.get(&t.thread) {
                    live.entry(t.thread)
                        .or_default()
                        .add_like(from, t.leaf, t.w);
                }
            }
            live
        } else {
            d.trees.clone()
        };
        Captured {
            trees,
            names: d.names.snapshot(),
            classes: d.classes.clone(),
            interval: self.interval,
            live_rule: rule,
        }
    }

    /// Every sample so far (with `live` too: no GC, nothing pruned).
    fn all(&self) -> Captured {
        let d = self.data.lock();
        Captured {
            trees: d.trees.clone(),
            names: d.names.snapshot(),
            classes: d.classes.clone(),
            interval: self.interval,
            // Not a section: no rule to write.
            live_rule: None,
        }
    }

    fn samples(&self) -> u64 {
        self.data
            .lock()
            .trees
            .values()
            .map(|t| t.totals().samples)
            .sum()
    }
}

/// Drops the followed objects the GC has collected, and their references.
fn prune(jni: &Jni, tracked: &mut Vec<Tracked>) {
    tracked.retain(|t| {
        let dead = jni.is_same_object(t.weak.0, std::ptr::null_mut());
        if dead {
            jni.delete_weak_global_ref(t.weak.0);
        }
        !dead
    });
}

/// What a snapshot of the `alloc` mode holds.
pub struct Captured {
    trees: HashMap<ThreadId, WeightTree<Alloc>>,
    names: Vec<Box<str>>,
    classes: HashSet<NameId>,
    interval: u32,
    /// `live`'s rule; `None` without `live`.
    live_rule: Option<LiveRule>,
}

/// SampledObjectAlloc, on the allocating thread; GarbageCollectionStart,
/// in the pause (`live`'s epochs: on for good once a `live` session starts,
/// as a stopped session's GCs still age its samples).
impl Listener for Lifetime {
    fn gc_start(&self) {
        self.gc_started()
    }

    fn sampled_object_alloc(&self, jni: &Jni, a: &Allocation) {
        let (Some(r), Some(host)) = (self.current(), crate::host::get()) else {
            return;
        };
        r.sampled(host, jni, a.thread, a.object, a.class, a.size);
    }
}
