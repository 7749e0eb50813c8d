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

use crate::per_thread::{self, Held, ThreadValue};
use crate::threads::ThreadId;
use crate::tsc;
use crate::vm::{Jni, Native};
use event::{Event, Kind};
use jni_sys::{jclass, jint, JNIEnv};
use parking_lot::{Condvar, Mutex};
use ring::Ring;
use std::cell::UnsafeCell;
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
    /// Every thread's ring, until the writer has drained a closed one.
    rings: Mutex<Vec<Arc<ThreadRing>>>,
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

/// One thread's ring and what only the thread itself touches (held by the
/// thread's record, and by the lifetime's list until the writer drained it).
pub struct ThreadRing {
    pub thread: Option<ThreadId>,
    pub ring: Ring,
    life: &'static Lifetime,
    own: UnsafeCell<Own>,
}

// SAFETY: `own` is only accessed by the ring's thread (through its record);
// the writer reads only `thread` and `ring`, built for that.
unsafe impl Sync for ThreadRing {}
// SAFETY: as above.
unsafe impl Send for ThreadRing {}

struct Own {
    /// Open traced calls: (method, ticket).
    stack: Vec<(u32, u64)>,
    /// The last call number handed out.
    ticket: u64,
    /// Identity hash of the exception last seen on this thread.
    exception: Option<i32>,
    /// Events dropped since the last one recorded.
    dropped: u64,
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

/// The ring's thread ended (JVMTI ThreadEnd, on that thread): its last
/// event while recording, and its ring closed for the writer to drain and
/// forget. (Not recording, no event: a stopped trace's file is finished,
/// and nothing may start another.)
impl ThreadValue for ThreadRing {
    fn thread_ended(&self, _jni: Option<&Jni>) {
        if self.life.recording() {
            // SAFETY: this is the ring's own thread (its record is ending).
            let own = unsafe { &mut *self.own.get() };
            let e = Event::new(Kind::ThreadEnd, 0, tsc::ticks(), 0, 0);
            record(self.life, self, own, e);
        }
        self.ring.close();
    }
}

/// The calling thread's ring, made on its first event while a trace records.
fn first_event(env: *mut JNIEnv) -> Option<Held<ThreadRing>> {
    let host = crate::host::get()?;
    let life = host.state::<Lifetime>();
    if !life.active.load(Relaxed) {
        return None;
    }
    // SAFETY: `env` is what the VM passed to the probe native (or callback)
    // that called this, on this thread: its JNIEnv.
    let jni = unsafe { Jni::from_raw(env) };
    let tr = Arc::new(ThreadRing {
        thread: host.current_thread(&jni),
        ring: Ring::new(),
        life,
        own: UnsafeCell::new(Own {
            stack: Vec::with_capacity(64),
            ticket: 0,
            exception: None,
            dropped: 0,
        }),
    });
    life.rings.lock().push(tr.clone());
    Some(Held::Shared(tr))
}

/// Puts `e` into the thread's ring; a full ring waits or drops (see the
/// module's comment).
#[inline(always)]
fn record(life: &Lifetime, tr: &ThreadRing, own: &mut Own, e: Event) {
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
        Err(e) => full(life, tr, own, e),
    }
}

#[cold]
#[inline(never)]
fn full(life: &Lifetime, tr: &ThreadRing, own: &mut Own, e: Event) {
    life.waits.fetch_add(1, Relaxed);
    life.wake_writer();
    let mut e = e;
    let mut spins = 0u32;
    while !life.drop_when_full.load(Relaxed) && !life.failed.load(Relaxed) {
        match tr.ring.push(e) {
            Ok(()) => return,
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
    own.dropped += 1;
    life.lost.fetch_add(1, Relaxed);
}

/// A probe's work on the calling thread's ring, given the time read first;
/// nothing when no trace records.
#[inline(always)]
fn on_thread(env: *mut JNIEnv, work: impl FnOnce(&Lifetime, &ThreadRing, &mut Own, u64)) {
    let t = tsc::ticks();
    crate::vm::guard_hot("trace probe", (), || {
        per_thread::with(
            || first_event(env),
            |tr: &ThreadRing| {
                if tr.life.active.load(Relaxed) {
                    // SAFETY: only this thread touches its `own`.
                    let own = unsafe { &mut *tr.own.get() };
                    work(tr.life, tr, own, t)
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
