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
//! Rings are per OS thread ([`CarrierRing`](thread_state::CarrierRing),
//! in its own record); a Java thread's open calls, tickets and last
//! exception ([`Caller`](thread_state::Caller)) are a slot of its record,
//! which follows a virtual thread from carrier to carrier (`per_thread`). A
//! ring may so hold the events of several Java threads (a carrier's, of the
//! virtual threads it ran): each run of them follows a [`Kind::Switch`]
//! naming whose they are, and each virtual thread is a thread of its own in
//! the trace (named after its group and its `Thread.threadId()`), its
//! entries and exits balanced.
//!
//! The files: `thread_state.rs` what is kept per thread and how a probe
//! reaches it, `probes.rs` the natives, `record.rs` how an event goes into
//! a ring, `ring.rs` the ring, `event.rs` an event, `hooks.rs` what the
//! other modes publish, `writer.rs` (`elements.rs`, `tptp.rs`) the
//! document, `mode.rs` the registration.

mod elements;
mod event;
mod hooks;
pub mod mode;
mod probes;
mod record;
mod ring;
mod thread_state;
mod tptp;
mod writer;

use crate::threads::ThreadId;
use crate::tsc;
use event::{Event, Kind};
use parking_lot::{Condvar, Mutex};
pub use probes::natives;
use ring::Ring;
use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::{Arc, OnceLock};

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
    /// Each Java thread with events, by its key
    /// ([`Caller::key`](thread_state::Caller::key)): what the writer names
    /// it; dropped once its end is written.
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

/// What the writer names a Java thread by.
pub(super) struct Named {
    /// Its id (a virtual thread's group's): a platform thread's name is
    /// read from the thread registry when defined.
    pub(super) thread: Option<ThreadId>,
    /// A virtual thread's own name in the trace: its group's and its
    /// `Thread.threadId()`.
    pub(super) name: Option<String>,
}

/// A Java thread's own trace state, in its [`Caller`](thread_state::Caller)
/// (here, not in `thread_state.rs`: both the probes and `record` write it,
/// and `thread_state.rs` calls `record`).
struct Own {
    /// Open traced calls: (method, ticket).
    stack: Vec<(u32, u64)>,
    /// The last call number handed out.
    ticket: u64,
    /// Identity hash of the exception last seen on this thread.
    exception: Option<i32>,
    /// Events dropped since the last one recorded.
    dropped: u64,
    /// The caller's key (as [`Caller::key`](thread_state::Caller::key),
    /// for `record`).
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
