//! `jfr[=PATH]`: the running modes' events, as they happen, in a JDK Flight
//! Recorder file (the format is `profrj-jfr`'s): `sampling`'s samples as
//! `jdk.ExecutionSample` (the thread ran) or `profiler.WallClockSample`
//! (it did not: `event=wall` only), `alloc`'s as `jdk.ObjectAllocationSample`,
//! `lock`'s waits as `jdk.JavaMonitorEnter` / `jdk.ThreadPark`, with
//! `jdk.JVMInformation`, `jdk.OSInformation`, `jdk.CPUInformation` and
//! `jdk.ActiveRecording` in every file.
//!
//! The recording is a listener of the events the modes publish where they
//! fold them into their own trees (`Kind::Sampled`, `ObjectSampled`,
//! `LockWaited`; [`hooks`]): it names no mode, and no mode names it. The
//! stack is interned in the recording's tables ([`tables`])
//! and a fixed-size event queued, under one lock, the mode's own lock
//! already being taken per event. The writer thread ([`writer`]) drains the
//! queue every 10 ms into the current file's chunk. A dump ends the file
//! (constant pools, metadata, header) and renames it into place; the next
//! events go to the next file. A file that cannot be written stops the
//! recording, never the program.

mod hooks;
mod info;
pub mod mode;
mod tables;
mod writer;

use crate::error::AgentError;
use crate::host::Host;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};
use std::sync::OnceLock;
use tables::Tables;

/// The most events queued for the writer; past it (the writer cannot keep
/// up, or is stuck on the disk) events are dropped and counted.
const MAX_QUEUED: usize = 1 << 20;
/// One hand-over in this many (a power of two) has its cost measured, and so many of the
/// last measurements are kept.
const TIME_EVERY: u64 = 16;
const TIMED_KEPT: usize = 4096;

/// What an event is (the writer turns each into its JFR event).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Kind {
    /// `a` samples of a running thread.
    Execution,
    /// `a` samples of a thread not running.
    Wall,
    /// An object of `b` bytes sampled, standing for `a` bytes.
    Allocation,
    /// A contended monitor entered after `a` ns; `b` its identity hash.
    Monitor,
    /// A park for a lock of `a` ns; `b` its identity hash.
    Park,
}

/// One event, in the agent's ids: thread id + 1, stack id (0: none),
/// class index (0: none).
#[derive(Clone, Copy, Debug)]
struct Event {
    kind: Kind,
    /// A `profrj_jfr::schema::thread_state` key.
    state: u8,
    thread: u32,
    /// CLOCK_MONOTONIC ns (the recording's ticks).
    time: u64,
    stack: u32,
    class: u32,
    a: u64,
    b: u64,
}

/// A dump's or the VM's end's request to the writer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum Request {
    #[default]
    None,
    /// End the current file; the next events start the next one.
    Rotate,
    /// End the current file and stop.
    Close,
}

#[derive(Default)]
struct Shared {
    tables: Tables,
    queue: Vec<Event>,
    /// Each thread's last stack (a sample counted again without a walk).
    last_stack: std::collections::HashMap<u32, u32>,
}

/// What a recording keeps for the JVM's lifetime: its tables, the queue
/// and the writer (the host's state of this type), subscribed to the
/// modes' events when `jfr` first opens.
#[derive(Default)]
pub struct Lifetime {
    /// The host, from the first start (its JVMTI names the frames).
    host: OnceLock<&'static Host>,
    active: AtomicBool,
    /// Writing failed, or the writer is gone: nothing more is queued.
    failed: AtomicBool,
    shared: Mutex<Shared>,
    dropped: AtomicU64,
    /// Hand-overs from the modes; of those timed (one in
    /// [`TIME_EVERY`]), how many and the thread CPU they took, ns.
    hooked: AtomicU64,
    /// The last [`TIMED_KEPT`] measured hand-overs, ns (their median is
    /// reported: a preempted hand-over on a loaded machine is an outlier).
    timed: Mutex<Vec<u32>>,
    writer: OnceLock<crate::writer_stats::Handle>,
    /// The files' path template: the latest session's.
    template: Mutex<String>,
    request: Mutex<Request>,
    answered: Condvar,
    /// What the information events say, read when the recording starts.
    info: OnceLock<info::Info>,
}

impl Lifetime {
    /// Starts (or resumes) recording into files named by `path` (see
    /// [`writer::file_path`]); the writer starts with the first session.
    pub fn start(&'static self, host: &'static Host, path: &str) -> Result<(), AgentError> {
        *self.template.lock() = path.to_owned();
        crate::tsc::init();
        let _ = self.info.set(info::Info::read(host.jvmti));
        let _ = self.host.set(host);
        if self.writer.get().is_none() {
            let handle = writer::spawn(self, &host.threads, path)?;
            let _ = self.writer.set(handle);
        }
        self.active.store(true, Release);
        Ok(())
    }

    /// The host while a recording runs (`None`: the events are not recorded).
    #[inline(always)]
    fn recording(&self) -> Option<&'static Host> {
        if !self.active.load(Relaxed) || self.failed.load(Relaxed) {
            return None;
        }
        self.host.get().copied()
    }

    pub fn stop(&self) {
        self.active.store(false, Release);
    }

    /// Queues `e` (under the lock the caller holds).
    fn push(&self, shared: &mut Shared, e: Event) {
        if shared.queue.len() >= MAX_QUEUED {
            self.dropped.fetch_add(1, Relaxed);
            return;
        }
        shared.queue.push(e);
    }

    /// Asks the writer to end the current file (`last`: and stop) and waits
    /// until it has (at most 60 s).
    pub fn finish_file(&self, last: bool) {
        let Some(w) = self.writer.get() else {
            return;
        };
        if self.failed.load(Acquire) {
            return;
        }
        let mut r = self.request.lock();
        *r = if last {
            Request::Close
        } else {
            Request::Rotate
        };
        w.wake();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while *r != Request::None {
            if self.answered.wait_until(&mut r, deadline).timed_out() {
                crate::log::error_once(
                    "jfr file",
                    "jfr: the writer did not finish the recording within 60 s",
                );
                return;
            }
        }
    }

    /// Counts a hand-over; one in [`TIME_EVERY`] gets its time measured
    /// (`Some` start, in TSC ticks: two reads cost ~20 ns).
    fn hand_over(&self) -> Option<u64> {
        let n = self.hooked.fetch_add(1, Relaxed);
        (n & (TIME_EVERY - 1) == 0).then(crate::tsc::ticks)
    }

    fn handed_over(&self, started: Option<u64>) {
        let Some(t) = started else {
            return;
        };
        let ns = crate::tsc::ticks_to_ns(crate::tsc::ticks().saturating_sub(t));
        let mut timed = self.timed.lock();
        let n = self.hooked.load(Relaxed) / TIME_EVERY;
        let ns = ns.min(u32::MAX as u64) as u32;
        if timed.len() < TIMED_KEPT {
            timed.push(ns);
        } else {
            timed[n as usize % TIMED_KEPT] = ns;
        }
    }

    /// The median measured hand-over, ns.
    fn median_hand_over(&self) -> u32 {
        let mut t = self.timed.lock().clone();
        t.sort_unstable();
        t.get(t.len() / 2).copied().unwrap_or(0)
    }

    pub fn summary(&self) -> String {
        let w = self.writer.get();
        let (unstored, stacks, methods) = {
            let t = &self.shared.lock().tables;
            (t.unstored, t.stacks.len(), t.methods.len())
        };
        let events = w.map_or(0, |w| w.events());
        let hooked = self.hooked.load(Relaxed);
        format!(
            "jfr: {events} events so far, {} file(s) complete ({} KB); {hooked} hand-overs from the modes, \
             {} ns each (median); writer CPU {} ms ({} ns per event); {stacks} stacks and {methods} methods interned; \
             {} events dropped, {} stacks past the table's limit",
            w.map_or(0, |w| w.files()),
            w.map_or(0, |w| w.bytes()) / 1000,
            self.median_hand_over(),
            w.map_or(0, |w| w.cpu_ns()) / 1_000_000,
            w.map_or(0, |w| w.cpu_ns()) / events.max(1),
            self.dropped.load(Relaxed),
            unstored
        )
    }
}
