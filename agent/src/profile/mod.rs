//! `profile` mode: exact call counts and times per call path, per thread.
//! Injected code calls `Probe.enter(id)` at method entry, `Probe.exit(id)`
//! before every return and `Probe.unwind(id)` when an exception leaves the
//! method. Each thread keeps a shadow stack of open calls (TPTP's
//! CTicketStack) and its own call tree (`tree`), so the probes take no lock
//! and, after warm-up, allocate nothing.
//!
//! Each probe reads the clock once, at its start. Times exclude the agent's
//! own probe time, reported as overhead: the part of each probe after its
//! clock read is measured on one call in [`MEASURE_EVERY`] (a second read
//! at the probe's end), and each exit takes the thread's running mean off
//! its call, once for its own entry and a pair for every call entered
//! since (before: each call's probe time was carried up frame by frame). A
//! call's total is never below the sum of its callees' totals, so the tree
//! stays consistent however the estimate errs, and times only grow from
//! dump to dump. CPU time is the time less what the thread's CPU clock,
//! read at most once per millisecond, found off a CPU while the call was
//! open (`CpuDrift`), so the usual exit reads one clock and does three
//! sums.
//!
//! Virtual threads (JDK 21+): a Java thread's open calls
//! ([`Caller`](thread_state::Caller)) are a slot of its record, which
//! follows a virtual thread from carrier to carrier (`per_thread`); the
//! trees stay per OS thread, a carrier keeping one per group of virtual
//! threads it ran ([`CarrierTrees`](thread_state::CarrierTrees), in its own
//! record), so the probes never share a tree between threads. At a mount
//! the virtual thread's open calls move onto this carrier's tree (the same
//! paths: a call counts where it began, its times where it ends), the time
//! it was unmounted is off-CPU time for its open calls, and a dump adds a
//! group's trees up.
//!
//! The files: `thread_state.rs` what the probes keep per thread (open
//! calls, trees, stats), `probes.rs` the natives and how a call closes,
//! `cost.rs` the probes' own cost, `tree.rs` the lock-free tree,
//! `reported.rs` a thread's nodes as a dump reports them (a group's trees
//! added up, the probes' own time from the counts), `model.rs` what a dump
//! hands a snapshot, `mode.rs` the registration.

use crate::tsc as clock;
mod cost;
pub mod mode;
mod model;
mod probes;
mod reported;
mod thread_state;
mod tree;

use crate::threads::ThreadId;
use parking_lot::Mutex;
pub use probes::{natives, natives_sampled};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use thread_state::Stats;
use tree::Tree;

/// What `profile` keeps for the JVM's lifetime (its probes stay in the
/// code when a session stops; a resume goes on with the same trees): the
/// host's state of this type. The probes reach it through their thread's
/// [`ThreadProfile`].
#[derive(Default)]
pub struct Lifetime {
    /// Recording on/off (a stopped session leaves its data as it was).
    active: AtomicBool,
    /// Every thread that ran a probe, ended ones included.
    threads: Mutex<Vec<Arc<ThreadProfile>>>,
    /// `timing=sampled`, fixed by the first start.
    sampled: OnceLock<bool>,
}

/// With `timing=sampled`, one call in this many (per thread, on average:
/// see `next_countdown`) is timed, and measures its probes' cost.
pub const SAMPLE_EVERY: u32 = 32;

/// With every call timed, one call in this many measures its probes' cost
/// (two more clock reads and a detour: ~1 ns per call when it was one in
/// 32; the mean settles within a few thousand calls either way).
pub const MEASURE_EVERY: u32 = 128;

impl Lifetime {
    /// Starts recording; the first start fixes `timing` (`sampled`) for
    /// the JVM. `rebind` binds the sampled probes when that one is chosen.
    pub fn start(&'static self, sampled: bool, rebind: impl FnOnce()) {
        let mut chosen = false;
        let fixed = *self.sampled.get_or_init(|| {
            chosen = true;
            clock::init();
            sampled
        });
        if chosen && fixed {
            rebind();
        }
        if fixed != sampled {
            crate::log::error_once(
                "profile timing",
                "profile: timing= kept as the first profile session set it",
            );
        }
        self.active.store(true, Relaxed);
    }

    pub fn stop(&self) {
        self.active.store(false, Relaxed);
    }

    /// Are times taken on one call in [`SAMPLE_EVERY`] only?
    pub fn timing_sampled(&self) -> bool {
        self.sampled.get().copied().unwrap_or(false)
    }

    /// A copy of the list of thread profiles, for a dump.
    pub fn threads(&self) -> Vec<Arc<ThreadProfile>> {
        self.threads.lock().clone()
    }
}

/// One tree of calls, read by dumps: a platform thread's, or one carrier's
/// share of a group of virtual threads (a dump adds a group's shares up).
/// Written only by the OS thread that made it.
pub struct ThreadProfile {
    pub thread: Option<ThreadId>,
    pub tree: Tree,
    /// Touched only by the OS thread that made it.
    stats: UnsafeCell<Stats>,
    /// The mean cost of the entry and the exit probe after their clock
    /// read, in ticks, as that thread last measured them: what a dump
    /// reports as the probes' own time (`reported.rs`).
    costs: [AtomicU64; 2],
}

impl ThreadProfile {
    /// Makes `stats`' means readable by a dump.
    fn publish_costs(&self, stats: &Stats) {
        for (c, m) in self.costs.iter().zip(&stats.cost) {
            c.store(m.mean, Relaxed);
        }
    }

    /// The probes' mean costs, entry and exit, in ticks.
    fn costs(&self) -> [u64; 2] {
        self.costs.each_ref().map(|c| c.load(Relaxed))
    }
}

// SAFETY: `stats` is only ever accessed by the OS thread that made the
// profile (through the callers whose home it is); other threads read only
// `tree`, which is built for concurrent reading.
unsafe impl Sync for ThreadProfile {}
// SAFETY: as above; the profile is created on its thread and only shared.
unsafe impl Send for ThreadProfile {}
