//! `trace` mode: every call, return, throw and catch in scope as it
//! happens, written as a TPTP trace-event XML document (the "execution
//! details" mode of TPTP's Java profiler), rather than aggregated trees.
//!
//! The rewriter puts `Probe.traceEnter/traceExit` at entry and before
//! returns, `traceUnwind` in a catch-all handler (an exception leaving the
//! method), `traceThrow` before each `athrow` and `traceCatch` at the start
//! of each exception handler. Each probe appends a 32-byte event to its
//! thread's ring ([`ring`]): no lock, no system call, no allocation once the
//! ring exists. The writer thread ([`writer`]) drains every ring, merges the
//! threads' events in time order and writes the elements, defining each id
//! (thread, class, method, object) before its first use.
//!
//! A full ring: with `overflow=wait` (the default) the thread waits for the
//! writer (a trace with holes cannot pair entries with exits, and a trace is
//! asked for knowing it slows the program); with `overflow=drop` the events
//! are dropped and counted, and the trace says how many (an XML comment at
//! the point of the gap, and the exit summary).

mod elements;
mod event;
mod hooks;
pub mod mode;
mod ring;
mod tptp;
mod writer;

use crate::threads::ThreadId;
use crate::tsc;
use crate::vm::Jni;
use crate::vthreads::record::Slot;
use event::{Event, Kind};
use jni_sys::{jclass, jint, JNIEnv};
use parking_lot::{Condvar, Mutex};
use ring::Ring;
use std::cell::{Cell, UnsafeCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering::*};
use std::sync::{Arc, OnceLock};

pub use hooks::{monitor, object_allocated, object_sampled, objects_freed, on};

/// The probe natives: (name, descriptor, function) for RegisterNatives.
pub fn natives() -> [(&'static str, &'static str, *mut std::ffi::c_void); 5] {
    [
        ("traceEnter", "(I)V", enter as *mut _),
        ("traceExit", "(I)V", exit as *mut _),
        ("traceLeave", "(III)V", leave as *mut _),
        ("traceThrown", "(III)V", thrown as *mut _),
        ("traceCaught", "(III)V", caught as *mut _),
    ]
}

/// What `trace` keeps for the JVM's lifetime (its probes stay in the code
/// when a session stops). Owned by the agent.
#[derive(Default)]
pub struct Lifetime {
    /// Recording on/off.
    active: AtomicBool,
    /// `overflow=drop`: a full ring drops events instead of waiting.
    drop_when_full: AtomicBool,
    /// The writer failed (it cannot write): threads drop instead of waiting.
    failed: AtomicBool,
    /// Rings made since the writer last took them (it keeps them until a
    /// closed one is drained).
    rings: Mutex<Vec<Arc<ThreadRing>>>,
    /// Each Java thread with events, by its key ([`Caller::key`]): what the
    /// writer names it; dropped once its end is written.
    callers: Mutex<HashMap<u64, Named>>,
    /// The last key handed out.
    keys: AtomicU64,
    /// Events of no Java thread (garbage collections).
    vm_events: Mutex<Vec<Event>>,
    /// Events dropped (`overflow=drop`, or after a write failure).
    lost: AtomicU64,
    /// Times a thread found its ring full.
    waits: AtomicU64,
    writer: OnceLock<crate::writer_stats::Handle>,
    /// The trace files' path template: the latest session's.
    template: Mutex<String>,
    /// A dump's or the VM's end's request to the writer, and its answer.
    request: Mutex<writer::Request>,
    answered: Condvar,
}

/// The trace lifetime, for the probes (set at the first start).
static LIFE: AtomicPtr<Lifetime> = AtomicPtr::new(std::ptr::null_mut());

/// One OS thread's ring: the events of the Java threads that ran on it (a
/// carrier's holds those of the virtual threads it ran, each run of them
/// after a [`Kind::Switch`] naming whose they are).
pub struct ThreadRing {
    pub ring: Ring,
    /// The key of the Java thread whose events the ring holds last.
    last: Cell<u64>,
}

// SAFETY: `last` is only accessed by the ring's OS thread (the producer);
// the writer reads only `ring`, built for that.
unsafe impl Sync for ThreadRing {}
// SAFETY: as above.
unsafe impl Send for ThreadRing {}

/// One Java thread's trace state (the `trace` slot of its record): a
/// platform thread's, or a virtual thread's, which goes with it.
struct Caller {
    /// Its key in the rings and in [`Lifetime::callers`].
    key: u64,
    /// The ring of the OS thread it runs on (a virtual thread's is set at
    /// each mount).
    ring: Cell<*const ThreadRing>,
    own: UnsafeCell<Own>,
}

/// What the writer names a Java thread by.
pub(super) struct Named {
    /// Its id (a virtual thread's group's): a platform thread's name is
    /// read from the thread registry when defined.
    pub(super) thread: Option<ThreadId>,
    /// A virtual thread's own name in the trace: its group's and its
    /// `Thread.threadId()`.
    pub(super) name: Option<String>,
}

struct Own {
    /// Open traced calls: (method, ticket).
    stack: Vec<(u32, u64)>,
    /// The last call number handed out.
    ticket: u64,
    /// Identity hash of the exception last seen on this thread.
    exception: Option<i32>,
    /// Events dropped since the last one recorded.
    dropped: u64,
    /// The caller's key (as [`Caller::key`], for `record`).
    key: u64,
}

thread_local! {
    /// This OS thread's ring (null before its first event).
    static RING: Cell<*const ThreadRing> = const { Cell::new(std::ptr::null()) };
}

impl Lifetime {
    /// Starts (or resumes) recording; the writer thread starts with the
    /// first session and writes to files named by `path` (see
    /// [`writer::file_path`]).
    pub fn start(
        &'static self,
        sources: writer::Sources,
        path: &str,
        drop_when_full: bool,
        agent_args: &str,
    ) -> Result<(), String> {
        tsc::init();
        *self.template.lock() = path.to_owned();
        if self.writer.get().is_none() {
            let handle = writer::spawn(self, sources, path, agent_args)?;
            let _ = self.writer.set(handle);
        }
        self.drop_when_full.store(drop_when_full, Relaxed);
        LIFE.store(self as *const Lifetime as *mut Lifetime, Release);
        self.active.store(true, Release);
        Ok(())
    }

    /// Stops recording and ends the current file with every event recorded
    /// so far: a stopped trace leaves no document open (the snapshot that
    /// follows a stop may fail before it reaches the trace, and the VM may
    /// end while stopped).
    pub fn stop(&self) {
        self.active.store(false, Release);
        self.finish_file(false);
    }

    /// A garbage collection starts or ends (JVMTI, in the pause: no JNI, no
    /// JVMTI; a short lock the writer holds only to swap the queue).
    pub fn gc(&self, started: bool) {
        if !self.active.load(Relaxed) {
            return;
        }
        let kind = if started {
            Kind::GcStart
        } else {
            Kind::GcFinish
        };
        self.vm_events
            .lock()
            .push(Event::new(kind, 0, tsc::ticks(), 0, 0));
    }

    fn wake_writer(&self) {
        if let Some(w) = self.writer.get() {
            w.wake();
        }
    }

    /// Asks the writer to end the current file (a dump: the next events
    /// go to the next file; `last`: the VM ends) and waits until it has.
    pub fn finish_file(&self, last: bool) {
        let Some(w) = self.writer.get() else {
            return;
        };
        if self.failed.load(Acquire) {
            return; // the writer is gone (or could not write)
        }
        let mut r = self.request.lock();
        *r = if last {
            writer::Request::Close
        } else {
            writer::Request::Rotate
        };
        w.wake();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while *r != writer::Request::None {
            if self.answered.wait_until(&mut r, deadline).timed_out() {
                crate::log::error_once(
                    "trace file",
                    "trace: the writer did not finish the trace file within 60 s",
                );
                return;
            }
        }
    }

    pub fn summary(&self) -> String {
        let w = self.writer.get();
        format!(
            "trace: {} events so far, {} file(s) complete ({} MB); threads waited for the writer {} times; {} events dropped",
            w.map_or(0, |w| w.events()),
            w.map_or(0, |w| w.files()),
            w.map_or(0, |w| w.bytes()) / 1_000_000,
            self.waits.load(Relaxed),
            self.lost.load(Relaxed)
        )
    }
}

/// The calling OS thread ended (JVMTI ThreadEnd, after its record's end):
/// its ring closes, for the writer to drain and forget.
pub fn thread_ended() {
    let p = RING.with(|c| c.replace(std::ptr::null()));
    // SAFETY: set by `this_ring` from an Arc the writer keeps until it sees
    // the ring closed (below) and drained.
    if let Some(tr) = unsafe { p.as_ref() } {
        tr.ring.close();
    }
}

/// What the thread records do with a Java thread's trace state.
pub const RECORD_HOOKS: crate::vthreads::record::Hooks = crate::vthreads::record::Hooks {
    mounted: Some(mounted),
    unmounting: None,
    ended: end_caller,
};

/// A virtual thread with trace state was mounted: its events go to this
/// carrier's ring.
fn mounted(p: *const ()) {
    // SAFETY: the record's trace slot holds a Caller of `first_event`'s.
    let caller = unsafe { &*p.cast::<Caller>() };
    if let Some(life) = life() {
        caller.ring.set(this_ring(life));
    }
}

/// The thread ended: its last event while recording (not recording, no
/// event: a stopped trace's file is finished, and nothing may start
/// another), then its state goes.
///
/// # Safety
/// `p` is a trace slot's value (a Box of `first_event`'s), ended once.
unsafe fn end_caller(p: *const ()) {
    // SAFETY: the caller's promise.
    let mut caller = unsafe { Box::from_raw(p.cast::<Caller>().cast_mut()) };
    match recording() {
        Some(life) => {
            // SAFETY: set at the thread's first event or its last mount, on
            // this OS thread, whose ring lives while it runs.
            let tr = unsafe { &*caller.ring.get() };
            let own = caller.own.get_mut();
            record(
                life,
                tr,
                own,
                Event::new(Kind::ThreadEnd, 0, tsc::ticks(), 0, 0),
            );
        }
        None => {
            if let Some(life) = life() {
                life.callers.lock().remove(&caller.key);
            }
        }
    }
}

#[inline(always)]
fn life() -> Option<&'static Lifetime> {
    // SAFETY: set from the agent's `&'static Lifetime` (never dropped).
    unsafe { LIFE.load(Relaxed).as_ref() }
}

/// The trace lifetime while recording.
#[inline(always)]
fn recording() -> Option<&'static Lifetime> {
    life().filter(|l| l.active.load(Relaxed))
}

/// The calling thread's trace state, made on its first event.
#[inline(always)]
fn current(life: &'static Lifetime, env: *mut JNIEnv) -> Option<&'static Caller> {
    let record = crate::vthreads::record::current()?;
    let p = record.get(Slot::Trace).cast::<Caller>();
    if !p.is_null() {
        // SAFETY: a Box the record owns until its thread ends (`end_caller`),
        // after which no event of that thread is recorded.
        return Some(unsafe { &*p });
    }
    first_event(life, env, record)
}

#[cold]
#[inline(never)]
fn first_event(
    life: &'static Lifetime,
    env: *mut JNIEnv,
    record: &'static crate::vthreads::record::Record,
) -> Option<&'static Caller> {
    // SAFETY: `env` is what the VM passed to the probe native (or callback)
    // that called this, on this thread: its JNIEnv.
    let jni = unsafe { Jni::from_raw(env) };
    let thread = record.identity(&jni);
    let name = record.is_virtual().then(|| virtual_name(&jni, thread));
    let key = life.keys.fetch_add(1, Relaxed) + 1;
    life.callers.lock().insert(key, Named { thread, name });
    let caller = Box::new(Caller {
        key,
        ring: Cell::new(this_ring(life)),
        own: UnsafeCell::new(Own {
            stack: Vec::with_capacity(64),
            ticket: 0,
            exception: None,
            dropped: 0,
            key,
        }),
    });
    let p = Box::into_raw(caller);
    record.set(Slot::Trace, p.cast_const().cast());
    // SAFETY: the record owns it until its thread ends.
    Some(unsafe { &*p })
}

/// A virtual thread's name in the trace: its group's and its
/// `Thread.threadId()` (`[virtual threads] 31`), each virtual thread its
/// own thread there.
fn virtual_name(jni: &Jni, group: Option<ThreadId>) -> String {
    let host = crate::agent::host();
    let group = group
        .and_then(|g| host.and_then(|h| h.threads.name(g)))
        .unwrap_or_else(|| crate::threads::VIRTUAL_GROUP.to_owned());
    let id = host
        .and_then(|h| h.jvmti.current_thread().ok())
        .and_then(|t| {
            let id = jni.java_thread_id(t);
            jni.delete_local_ref(t);
            id
        });
    match id {
        Some(id) => format!("{group} {id}"),
        None => group,
    }
}

/// The calling OS thread's ring, made on its first use.
fn this_ring(life: &'static Lifetime) -> *const ThreadRing {
    let p = RING.with(Cell::get);
    if !p.is_null() {
        return p;
    }
    let tr = Arc::new(ThreadRing {
        ring: Ring::new(),
        last: Cell::new(0),
    });
    let p = Arc::as_ptr(&tr);
    life.rings.lock().push(tr);
    RING.with(|c| c.set(p));
    p
}

/// Puts `e` into the thread's ring; a full ring waits or drops (see the
/// module's comment).
#[inline(always)]
fn record(life: &Lifetime, tr: &ThreadRing, own: &mut Own, e: Event) {
    if tr.last.get() != own.key && !switch(life, tr, own.key, e.time) {
        own.dropped += 1;
        life.lost.fetch_add(1, Relaxed);
        return;
    }
    if own.dropped > 0
        && tr
            .ring
            .push(Event::new(Kind::Lost, 0, e.time, own.dropped, 0))
            .is_ok()
    {
        own.dropped = 0;
    }
    if own.dropped > 0 {
        own.dropped += 1;
        life.lost.fetch_add(1, Relaxed);
        return;
    }
    match tr.ring.push(e) {
        Ok(()) => {
            if tr.ring.pending() == ring::SLOTS as u64 / 2 {
                life.wake_writer();
            }
        }
        Err(e) => {
            if !full(life, tr, e) {
                own.dropped += 1;
                life.lost.fetch_add(1, Relaxed);
            }
        }
    }
}

/// The ring's next events are those of the Java thread `key`: a
/// [`Kind::Switch`] says so (a thread's first event, and a virtual
/// thread's after another thread ran on the carrier). False if it was
/// dropped (the ring full, `overflow=drop`): so is the event, and the next
/// one tries again.
#[cold]
#[inline(never)]
fn switch(life: &Lifetime, tr: &ThreadRing, key: u64, time: u64) -> bool {
    let e = Event::new(Kind::Switch, 0, time, key, 0);
    let pushed = tr.ring.push(e).is_ok() || full(life, tr, e);
    if pushed {
        tr.last.set(key);
    }
    pushed
}

/// `e` met a full ring: waits for the writer (`overflow=wait`), unless the
/// trace drops (`overflow=drop`, or it cannot write). True once pushed.
#[cold]
#[inline(never)]
fn full(life: &Lifetime, tr: &ThreadRing, e: Event) -> bool {
    life.waits.fetch_add(1, Relaxed);
    life.wake_writer();
    let mut e = e;
    let mut spins = 0u32;
    while !life.drop_when_full.load(Relaxed) && !life.failed.load(Relaxed) {
        match tr.ring.push(e) {
            Ok(()) => return true,
            Err(back) => e = back,
        }
        spins += 1;
        if spins < 64 {
            std::hint::spin_loop();
        } else {
            life.wake_writer();
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
    false
}

/// A probe's work on the calling thread's ring, given the time read first;
/// nothing when no trace records.
#[inline(always)]
fn on_thread(env: *mut JNIEnv, work: impl FnOnce(&Lifetime, &ThreadRing, &mut Own, u64)) {
    let t = tsc::ticks();
    let Some(life) = recording() else {
        return;
    };
    crate::vm::guard_hot("trace probe", (), || {
        let Some(caller) = current(life, env) else {
            return;
        };
        // SAFETY: only the thread whose record holds the caller touches its
        // `own`; its ring is the OS thread's it runs on (set at its first
        // event and at each mount), alive while that OS thread runs.
        let (own, tr) = unsafe { (&mut *caller.own.get(), &*caller.ring.get()) };
        work(life, tr, own, t)
    })
}

extern "system" fn enter(env: *mut JNIEnv, _class: jclass, method: jint) {
    on_thread(env, |life, tr, own, t| {
        own.ticket += 1;
        own.stack.push((method as u32, own.ticket));
        let depth = own.stack.len() as u32;
        let e = Event::new(Kind::Entry, method as u32, t, own.ticket, depth);
        record(life, tr, own, e);
    })
}

extern "system" fn exit(env: *mut JNIEnv, _class: jclass, method: jint) {
    on_thread(env, |life, tr, own, t| {
        close_to(life, tr, own, method as u32, t)
    })
}

/// Exits `method`'s open call and any above it (calls whose exit was
/// missed: an exception from a super() call, or entered before a resume). An
/// exit with no open call of its own (entered while stopped) is ignored.
fn close_to(life: &Lifetime, tr: &ThreadRing, own: &mut Own, method: u32, t: u64) {
    if let Some(i) = own.stack.iter().rposition(|f| f.0 == method) {
        close_above(life, tr, own, i, t);
    }
}

/// Exits the open calls above the first `keep`, innermost first.
fn close_above(life: &Lifetime, tr: &ThreadRing, own: &mut Own, keep: usize, t: u64) {
    while own.stack.len() > keep {
        let (m, ticket) = own.stack.pop().unwrap_or_default();
        let d = own.stack.len() as u32 + 1;
        record(life, tr, own, Event::new(Kind::Exit, m, t, ticket, d));
    }
}

/// The open call of `method` nearest the top: (ticket, depth), or 0/0.
fn open_call(own: &Own, method: u32) -> (u64, u32) {
    match own.stack.iter().rposition(|f| f.0 == method) {
        Some(i) => (own.stack[i].1, i as u32 + 1),
        None => (0, 0),
    }
}

/// An exception event: `new` if the thread has not seen this object (by
/// identity hash) as its last exception.
fn exception(
    life: &Lifetime,
    tr: &ThreadRing,
    own: &mut Own,
    kind: Kind,
    at: (u32, i32, i32),
    t: u64,
) {
    let (method, ty, hash) = at;
    let (ticket, depth) = open_call(own, method);
    let fresh = own.exception != Some(hash);
    own.exception = Some(hash);
    let kind = match kind {
        Kind::Throw if fresh => Kind::ThrowNew,
        Kind::Catch if fresh => {
            // Raised by the VM or by code out of scope, and caught here: its
            // throw is first seen here.
            let mut e = Event::new(Kind::ThrowNew, method, t, ticket, depth);
            e.extra = ty as u32;
            record(life, tr, own, e);
            Kind::Catch
        }
        k => k,
    };
    let mut e = Event::new(kind, method, t, ticket, depth);
    e.extra = ty as u32;
    record(life, tr, own, e);
}

/// `Probe.traceUnwind`: an exception of type `ty` (hash `hash`) leaves `method`.
extern "system" fn leave(env: *mut JNIEnv, _class: jclass, method: jint, ty: jint, hash: jint) {
    on_thread(env, |life, tr, own, t| {
        if own.exception != Some(hash) {
            // Raised by the VM or by code out of scope: first seen leaving here.
            exception(life, tr, own, Kind::Throw, (method as u32, ty, hash), t);
        }
        close_to(life, tr, own, method as u32, t);
    })
}

/// `Probe.traceThrow`: `method` throws an exception (`athrow`).
extern "system" fn thrown(env: *mut JNIEnv, _class: jclass, method: jint, ty: jint, hash: jint) {
    on_thread(env, |life, tr, own, t| {
        exception(life, tr, own, Kind::Throw, (method as u32, ty, hash), t)
    })
}

/// `Probe.traceCatch`: a handler of `method` catches an exception.
extern "system" fn caught(env: *mut JNIEnv, _class: jclass, method: jint, ty: jint, hash: jint) {
    on_thread(env, |life, tr, own, t| {
        // Calls above the catching one were left by the exception (their
        // unwind probes ran, unless out of scope or missed).
        if let Some(i) = own.stack.iter().rposition(|f| f.0 == method as u32) {
            close_above(life, tr, own, i + 1, t);
        }
        exception(life, tr, own, Kind::Catch, (method as u32, ty, hash), t);
    })
}
