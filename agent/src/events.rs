//! The one interface between the VM's events and the modes, and between
//! modes: a mode implements [`Listener`] for the kinds of events it wants
//! and subscribes its lasting state (a `&'static`) to them; the FFI edge
//! hands every JVMTI event to [`Events`], which calls the listeners of its
//! kind; a mode that has something others may want (an object tracked, a
//! lock waited for) publishes it here, and never names who listens.
//!
//! JVMTI events are enabled while some listener wants them ([`Events::want`]):
//! a mode that only listens (trace to GC events, say) does not turn on what
//! another mode pays for (alloc's sampled allocations).
//!
//! Dispatch takes no lock: each kind's listeners are an append-only array
//! (a mode subscribes once per JVM, when it first opens), so publishing an
//! event nobody listens to costs one load.

use crate::stack::Frames;
use crate::threads::ThreadId;
use crate::vm::{jthread, Jni, Jvmti, JvmtiEvent};
use jni_sys::{jclass, jobject};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use std::sync::OnceLock;

/// The kinds of events.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum Kind {
    /// JVMTI GarbageCollectionStart/Finish (in the pause: no JNI, no JVMTI).
    GcStart,
    GcFinish,
    /// JVMTI SampledObjectAlloc, on the allocating thread.
    SampledObjectAlloc,
    /// JVMTI VMObjectAlloc: an object the VM made for Java code.
    VmObjectAlloc,
    /// An object native code made with JNI (the intercepted JNI table).
    JniObjectAlloc,
    /// JVMTI MonitorContendedEnter/Entered, on the waiting thread.
    MonitorContendedEnter,
    MonitorContendedEntered,
    /// JVMTI ObjectFree of an object tagged in an environment of a mode's
    /// own ([`crate::host::Host::new_environment`]).
    ObjectFree,
    /// A mode tracked a new object (`memory`).
    ObjectTracked,
    /// Objects a mode tracked died (`memory`, after a GC).
    ObjectsFreed,
    /// A thread waits for, or got, a contended monitor or lock (`lock`).
    LockWait,
    /// Samples folded into a mode's trees, with their stack (`sampling`).
    Sampled,
    /// A sampled allocation folded into a mode's trees, with its stack and
    /// class (`alloc`).
    ObjectSampled,
    /// A wait for a contended monitor or lock that ended, as folded into a
    /// mode's trees (`lock`).
    LockWaited,
    /// A Java thread starts, on itself, once the thread table has it (its
    /// id and OS id): before it runs any Java code. Its JVMTI event is
    /// always on (the thread table's).
    ThreadStart,
    /// The VM dies: after the session's last snapshot, whatever the
    /// session's state (or with no session), the last event a listener hears.
    VmDeath,
}

const KINDS: usize = Kind::VmDeath as usize + 1;
const MAX_LISTENERS: usize = 8;

/// An allocation a JVMTI event reports: all local references of the
/// calling thread.
pub struct Allocation {
    pub thread: jthread,
    pub object: jobject,
    pub class: jclass,
    pub size: u64,
}

/// A wait for a contended monitor or a `java.util.concurrent` lock.
pub struct LockWait<'a> {
    /// The monitor's object or the lock's synchronizer (a local reference).
    pub object: jobject,
    /// Its class's signature (`Ljava/lang/Object;`).
    pub signature: &'a str,
    /// The thread got it (else it is about to wait).
    pub entered: bool,
}

/// Where samples were taken.
pub enum SampledStack<'a> {
    /// A walked stack (deeper than `depth`: truncated), its names read
    /// with `jni`.
    Walked {
        jni: &'a Jni,
        frames: Frames<'a>,
        depth: u32,
    },
    /// A one-frame synthetic stack (`[GC_active]`, …: a walk that failed).
    Synthetic(&'static str),
    /// The thread's last stack again (it has not run since).
    Again,
}

/// Samples of one thread, as a sampler folds them.
pub struct Samples<'a> {
    pub thread: ThreadId,
    pub stack: SampledStack<'a>,
    /// The thread's JVMTI state when sampled.
    pub state: i32,
    /// How many samples, and how many of them found the thread running.
    pub count: u64,
    pub hits: u64,
}

/// A sampled allocation, as `alloc` folds it.
pub struct ObjectSampled<'a> {
    pub thread: ThreadId,
    /// The allocating stack (deeper than `depth`: truncated).
    pub frames: Frames<'a>,
    pub depth: u32,
    /// The object's class, as Java writes it.
    pub class: &'a str,
    /// The object's size, and the bytes it stands for.
    pub size: u64,
    pub weight: u64,
}

/// A wait that ended, as `lock` folds it.
pub struct LockWaited<'a> {
    pub thread: ThreadId,
    /// The waiting stack, the lock machinery's frames left off the top
    /// (deeper than `depth`: truncated).
    pub frames: Frames<'a>,
    pub depth: u32,
    /// The lock's class, as Java writes it, and its object (a local reference).
    pub class: &'a str,
    pub object: jobject,
    /// ns waited.
    pub waited: u64,
    /// A `java.util.concurrent` lock (else a monitor).
    pub parked: bool,
}

/// What a mode may hear. Each method is one [`Kind`]; a mode overrides the
/// ones it subscribes to. Events arrive on the thread that posts them (the
/// VM's, or the publishing mode's), inside the panic guard.
pub trait Listener: Send + Sync {
    fn gc_start(&self) {}
    fn gc_finish(&self) {}
    fn sampled_object_alloc(&self, _jni: &Jni, _a: &Allocation) {}
    fn vm_object_alloc(&self, _jni: &Jni, _a: &Allocation) {}
    fn jni_object_alloc(&self, _jni: &Jni, _object: jobject) {}
    fn monitor_contended_enter(&self, _jni: &Jni, _thread: jthread, _object: jobject) {}
    fn monitor_contended_entered(&self, _jni: &Jni, _thread: jthread, _object: jobject) {}
    fn object_free(&self, _tag: i64) {}
    /// `site`: the object's allocation site ([`crate::sites`]); `key`: what
    /// tells it apart until it dies (its weak reference), 0 if nothing does.
    fn object_tracked(&self, _jni: &Jni, _site: u32, _key: u64) {}
    /// The keys of objects given to [`Listener::object_tracked`] that died.
    fn objects_freed(&self, _keys: &[u64]) {}
    fn lock_wait(&self, _jni: &Jni, _wait: &LockWait<'_>) {}
    fn sampled(&self, _samples: &Samples<'_>) {}
    fn object_sampled(&self, _jni: &Jni, _object: &ObjectSampled<'_>) {}
    fn lock_waited(&self, _jni: &Jni, _wait: &LockWaited<'_>) {}
    fn thread_start(&self, _id: ThreadId, _tid: i32) {}
    fn vm_death(&self) {}
}

/// One listener of one kind, and whether it wants the kind's JVMTI event on.
struct Subscriber {
    listener: &'static dyn Listener,
    wants: AtomicBool,
}

/// The listeners of one kind.
struct List {
    subscribers: [OnceLock<Subscriber>; MAX_LISTENERS],
    len: AtomicUsize,
}

impl Default for List {
    fn default() -> Self {
        Self {
            subscribers: std::array::from_fn(|_| OnceLock::new()),
            len: AtomicUsize::new(0),
        }
    }
}

impl List {
    #[inline(always)]
    fn each(&self, mut f: impl FnMut(&'static dyn Listener)) {
        let n = self.len.load(Acquire);
        for s in &self.subscribers[..n] {
            if let Some(s) = s.get() {
                f(s.listener);
            }
        }
    }

    fn find(&self, listener: &dyn Listener) -> Option<&Subscriber> {
        let n = self.len.load(Acquire);
        self.subscribers[..n]
            .iter()
            .filter_map(OnceLock::get)
            .find(|s| same(s.listener, listener))
    }
}

fn same(a: &dyn Listener, b: &dyn Listener) -> bool {
    std::ptr::addr_eq(a as *const dyn Listener, b as *const dyn Listener)
}

/// Every kind's listeners.
pub struct Events {
    lists: [List; KINDS],
    /// Serialises subscribing and turning JVMTI events on and off.
    changing: Mutex<()>,
    /// Set while some mode tracks every allocation (publishes every object
    /// it tracks): a sampled allocation then tells a listener nothing new.
    every_object_tracked: AtomicBool,
}

impl Default for Events {
    fn default() -> Self {
        Self {
            lists: std::array::from_fn(|_| List::default()),
            changing: Mutex::new(()),
            every_object_tracked: AtomicBool::new(false),
        }
    }
}

/// The JVMTI events behind a kind (none for the modes' own events).
pub fn jvmti_events(kind: Kind) -> &'static [JvmtiEvent] {
    match kind {
        Kind::GcStart => &[JvmtiEvent::GARBAGE_COLLECTION_START],
        Kind::GcFinish => &[JvmtiEvent::GARBAGE_COLLECTION_FINISH],
        Kind::SampledObjectAlloc => &[JvmtiEvent::SAMPLED_OBJECT_ALLOC],
        Kind::VmObjectAlloc => &[JvmtiEvent::VM_OBJECT_ALLOC],
        Kind::MonitorContendedEnter => &[JvmtiEvent::MONITOR_CONTENDED_ENTER],
        Kind::MonitorContendedEntered => &[JvmtiEvent::MONITOR_CONTENDED_ENTERED],
        Kind::ObjectFree => &[JvmtiEvent::OBJECT_FREE],
        Kind::JniObjectAlloc
        | Kind::ObjectTracked
        | Kind::ObjectsFreed
        | Kind::LockWait
        | Kind::Sampled
        | Kind::ObjectSampled
        | Kind::LockWaited
        | Kind::ThreadStart
        | Kind::VmDeath => &[],
    }
}

impl Events {
    /// Subscribes `listener` to `kinds` (once per JVM; again is a no-op).
    pub fn subscribe(&self, listener: &'static dyn Listener, kinds: &[Kind]) {
        let _changing = self.changing.lock();
        for &kind in kinds {
            let list = &self.lists[kind as usize];
            if list.find(listener).is_some() {
                continue;
            }
            let n = list.len.load(Relaxed);
            let Some(slot) = list.subscribers.get(n) else {
                crate::log::error_once(
                    "listeners",
                    "internal error: too many listeners of one event kind",
                );
                continue;
            };
            let _ = slot.set(Subscriber {
                listener,
                wants: AtomicBool::new(false),
            });
            list.len.store(n + 1, Release);
        }
    }

    /// Says whether `listener` wants `kind`'s JVMTI event on in `jvmti`: it
    /// is on while any of the kind's listeners wants it. The listener must
    /// be subscribed to `kind`.
    pub fn want(
        &self,
        jvmti: Jvmti,
        listener: &'static dyn Listener,
        kind: Kind,
        on: bool,
    ) -> Result<(), crate::error::AgentError> {
        let _changing = self.changing.lock();
        let list = &self.lists[kind as usize];
        let Some(me) = list.find(listener) else {
            return Err(crate::error::AgentError::Internal(format!(
                "{kind:?} wanted by a listener not subscribed to it"
            )));
        };
        me.wants.store(on, Relaxed);
        let any = (0..list.len.load(Acquire))
            .filter_map(|i| list.subscribers[i].get())
            .any(|s| s.wants.load(Relaxed));
        for &event in jvmti_events(kind) {
            let result = jvmti.set_event_enabled(event, any);
            if on {
                result.map_err(|e| {
                    crate::error::AgentError::jvmti(jvmti, "SetEventNotificationMode", e)
                })?;
            }
        }
        Ok(())
    }

    /// Does anyone listen to `kind`? (For a publisher that must do work to
    /// publish.)
    #[inline(always)]
    pub fn heard(&self, kind: Kind) -> bool {
        self.lists[kind as usize].len.load(Relaxed) > 0
    }

    /// Some mode publishes every object it tracks (see the field).
    pub fn set_every_object_tracked(&self, on: bool) {
        self.every_object_tracked.store(on, Relaxed);
    }

    pub fn every_object_tracked(&self) -> bool {
        self.every_object_tracked.load(Relaxed)
    }

    #[inline(always)]
    fn each(&self, kind: Kind, f: impl FnMut(&'static dyn Listener)) {
        self.lists[kind as usize].each(f)
    }

    pub fn gc_start(&self) {
        self.each(Kind::GcStart, |l| l.gc_start())
    }

    pub fn gc_finish(&self) {
        self.each(Kind::GcFinish, |l| l.gc_finish())
    }

    pub fn sampled_object_alloc(&self, jni: &Jni, a: &Allocation) {
        self.each(Kind::SampledObjectAlloc, |l| l.sampled_object_alloc(jni, a))
    }

    pub fn vm_object_alloc(&self, jni: &Jni, a: &Allocation) {
        self.each(Kind::VmObjectAlloc, |l| l.vm_object_alloc(jni, a))
    }

    pub fn jni_object_alloc(&self, jni: &Jni, object: jobject) {
        self.each(Kind::JniObjectAlloc, |l| l.jni_object_alloc(jni, object))
    }

    pub fn monitor_contended_enter(&self, jni: &Jni, thread: jthread, object: jobject) {
        self.each(Kind::MonitorContendedEnter, |l| {
            l.monitor_contended_enter(jni, thread, object)
        })
    }

    pub fn monitor_contended_entered(&self, jni: &Jni, thread: jthread, object: jobject) {
        self.each(Kind::MonitorContendedEntered, |l| {
            l.monitor_contended_entered(jni, thread, object)
        })
    }

    pub fn object_free(&self, tag: i64) {
        self.each(Kind::ObjectFree, |l| l.object_free(tag))
    }

    #[inline(always)]
    pub fn object_tracked(&self, jni: &Jni, site: u32, key: u64) {
        self.each(Kind::ObjectTracked, |l| l.object_tracked(jni, site, key))
    }

    pub fn objects_freed(&self, keys: &[u64]) {
        self.each(Kind::ObjectsFreed, |l| l.objects_freed(keys))
    }

    pub fn lock_wait(&self, jni: &Jni, wait: &LockWait<'_>) {
        self.each(Kind::LockWait, |l| l.lock_wait(jni, wait))
    }

    #[inline(always)]
    pub fn sampled(&self, samples: &Samples<'_>) {
        self.each(Kind::Sampled, |l| l.sampled(samples))
    }

    pub fn object_sampled(&self, jni: &Jni, object: &ObjectSampled<'_>) {
        self.each(Kind::ObjectSampled, |l| l.object_sampled(jni, object))
    }

    pub fn lock_waited(&self, jni: &Jni, wait: &LockWaited<'_>) {
        self.each(Kind::LockWaited, |l| l.lock_waited(jni, wait))
    }

    pub fn thread_start(&self, id: ThreadId, tid: i32) {
        self.each(Kind::ThreadStart, |l| l.thread_start(id, tid))
    }

    pub fn vm_death(&self) {
        self.each(Kind::VmDeath, |l| l.vm_death())
    }
}
