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
//!
//! Rings are per OS thread ([`CarrierRing`], in its own record); a Java
//! thread's open calls, tickets and last exception ([`Caller`]) are a slot of
//! its record, which follows a virtual thread from carrier to carrier
//! (`per_thread`). A ring may so hold the events of several Java threads (a
//! carrier's, of the virtual threads it ran): each run of them follows a
//! [`Kind::Switch`] naming whose they are, and each virtual thread is a
//! thread of its own in the trace (named after its group and its
//! `Thread.threadId()`), its entries and exits balanced.

mod elements;
mod event;
mod hooks;
pub mod mode;
mod ring;
mod tptp;
mod writer;

use crate::per_thread::{self, Held, ThreadValue};
use crate::threads::ThreadId;
use crate::tsc;
use crate::vm::{Jni, Native};
use event::{Event, Kind};
use jni_sys::{jclass, jint, JNIEnv};
use parking_lot::{Condvar, Mutex};
use ring::Ring;
use std::cell::{Cell, UnsafeCell};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::{Arc, OnceLock};

/// The probe natives: (name, descriptor, function) for RegisterNatives.
pub fn natives() -> [Native; 5] {
    [
        ("traceEnter", "(I)V", enter as *mut _),
        ("traceExit", "(I)V", exit as *mut _),
        ("traceLeave", "(III)V", leave as *mut _),
        ("traceThrown", "(III)V", thrown as *mut _),
        ("traceCaught", "(III)V", caught as *mut _),
    ]
}

/// What `trace` keeps for the JVM's lifetime (its probes stay in the code
/// when a session stops): the host's state of this type. The probes reach
/// it through their thread's [`ThreadRing`]; what other modes publish, as
/// its listener (`hooks`).
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

/// An OS thread's ring, in its own record (a carrier's, not a mounted
/// virtual thread's).
struct CarrierRing(Arc<ThreadRing>);

/// The OS thread ended: its ring closes, for the writer to drain and
/// forget (its Java thread's last event is in: a record's values end in
/// the reverse of their making, and its [`Caller`] came after).
impl ThreadValue for CarrierRing {
    fn thread_ended(&self, _jni: Option<&Jni>) {
        self.0.ring.close();
    }
}

/// One Java thread's trace state, in its record: a platform thread's, or
/// a virtual thread's, which goes with it.
struct Caller {
    /// Its key in the rings and in [`Lifetime::callers`].
    key: u64,
    life: &'static Lifetime,
    /// The ring of the OS thread it runs on (a virtual thread's is set at
    /// each mount). Touched only by the thread whose record holds it.
    ring: UnsafeCell<Arc<ThreadRing>>,
    /// Touched only by the thread whose record holds it.
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

impl ThreadValue for Caller {
    /// The thread ends: its last event while recording (not recording, no
    /// event: a stopped trace's file is finished, and nothing may start
    /// another); the writer forgets it once that is written.
    fn thread_ended(&self, _jni: Option<&Jni>) {
        if self.life.recording() {
            // SAFETY: this is the caller's own thread (its record is
            // ending), on the OS thread whose ring it holds.
            let (own, tr) = unsafe { (&mut *self.own.get(), &**self.ring.get()) };
            let e = Event::new(Kind::ThreadEnd, 0, tsc::ticks(), 0, 0);
            record(self.life, tr, own, e);
        } else {
            self.life.callers.lock().remove(&self.key);
        }
    }

    /// A virtual thread was mounted: its events go to this carrier's ring.
    fn mounted(&self) {
        if let Some(ring) = this_ring(self.life) {
            // SAFETY: only the caller's own thread touches `ring`, and it
            // runs this (its mount), holding no reference to it now.
            unsafe { *self.ring.get() = ring };
        }
    }
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
    ) -> Result<(), crate::error::AgentError> {
        tsc::init();
        *self.template.lock() = path.to_owned();
        if self.writer.get().is_none() {
            let handle = writer::spawn(self, sources, path, agent_args)?;
            let _ = self.writer.set(handle);
        }
        self.drop_when_full.store(drop_when_full, Relaxed);
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

    /// Does a trace record now?
    #[inline(always)]
    fn recording(&self) -> bool {
        self.active.load(Relaxed)
    }

    /// A garbage collection starts or ends (JVMTI, in the pause: no JNI, no
    /// JVMTI; a short lock the writer holds only to swap the queue).
    fn gc(&self, started: bool) {
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

/// The calling thread's trace state, made on its first event while a
/// trace records.
fn first_event(env: *mut JNIEnv) -> Option<Held<Caller>> {
    let host = crate::host::get()?;
    let life = host.state::<Lifetime>();
    if !life.active.load(Relaxed) {
        return None;
    }
    // SAFETY: `env` is what the VM passed to the probe native (or callback)
    // that called this, on this thread: its JNIEnv.
    let jni = unsafe { Jni::from_raw(env) };
    let thread = host.current_thread(&jni);
    let name = per_thread::on_virtual_thread().then(|| virtual_name(host, &jni, thread));
    let ring = this_ring(life)?;
    let key = life.keys.fetch_add(1, Relaxed) + 1;
    life.callers.lock().insert(key, Named { thread, name });
    Some(Held::Own(Box::new(Caller {
        key,
        life,
        ring: UnsafeCell::new(ring),
        own: UnsafeCell::new(Own {
            stack: Vec::with_capacity(64),
            ticket: 0,
            exception: None,
            dropped: 0,
            key,
        }),
    })))
}

/// A virtual thread's name in the trace: its group's and its
/// `Thread.threadId()` (`[virtual threads] 31`), each virtual thread its
/// own thread there.
fn virtual_name(host: &crate::host::Host, jni: &Jni, group: Option<ThreadId>) -> String {
    let group = group
        .and_then(|g| host.threads.name(g))
        .unwrap_or_else(|| crate::threads::VIRTUAL_GROUP.to_owned());
    let id = host.jvmti.current_thread().ok().and_then(|t| {
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
fn this_ring(life: &'static Lifetime) -> Option<Arc<ThreadRing>> {
    per_thread::with_carrier(
        || {
            let tr = Arc::new(ThreadRing {
                ring: Ring::new(),
                last: Cell::new(0),
            });
            life.rings.lock().push(tr.clone());
            Some(Held::Own(Box::new(CarrierRing(tr))))
        },
        |c: &CarrierRing| c.0.clone(),
    )
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
    crate::vm::guard_hot("trace probe", (), || {
        per_thread::with(
            || first_event(env),
            |caller: &Caller| {
                if caller.life.active.load(Relaxed) {
                    // SAFETY: only the thread whose record holds the caller
                    // touches its `own` and `ring`; the ring is the OS
                    // thread's it runs on (set at its first event and at
                    // each mount), kept alive by the caller's Arc.
                    let (own, tr) = unsafe { (&mut *caller.own.get(), &**caller.ring.get()) };
                    work(caller.life, tr, own, t)
                }
            },
        );
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
