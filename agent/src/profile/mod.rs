//! `profile` mode: exact call counts and times per call path, per thread.
//! Injected code calls `Probe.enter(id)` at method entry, `Probe.exit(id)`
//! before every return and `Probe.unwind(id)` when an exception leaves the
//! method. Each thread keeps a shadow stack of open calls (TPTP's
//! CTicketStack) and its own call tree (`tree`), so the probes take no lock
//! and, after warm-up, allocate nothing.
//!
//! Each probe reads the clock once, at its start. Times exclude the agent's
//! own probe time, reported as overhead: the part of each probe after its
//! clock read is measured on one call in [`MEASURE_EVERY`] (a second read at
//! the probe's end), and every call is charged the thread's running mean
//! (before: two more reads on every call, ~10 ns each). A call's total is
//! never below the sum of its callees' totals (a mean that overstates a
//! call's probe cost shrinks it to that sum, its self time to 0), so the
//! tree stays consistent however the estimate errs.
//!
//! Virtual threads (JDK 21+): a Java thread's open calls
//! ([`Caller`](thread_state::Caller)) are a slot of its record, which
//! follows a virtual thread from carrier to carrier (`per_thread`); the
//! trees stay per OS thread, a carrier keeping one per group of virtual
//! threads it ran ([`CarrierTrees`](thread_state::CarrierTrees), in its own
//! record), so the probes never share a tree between threads. At a mount
//! the virtual thread's open calls move onto this carrier's tree (the same
//! paths: a call counts where it began, its times where it ends) and its
//! CPU clock goes on from where it stopped; a dump adds a group's trees up.
//!
//! The files: `thread_state.rs` what the probes keep per thread (open
//! calls, trees, stats), `probes.rs` the natives and how a call closes,
//! `cost.rs` the probes' own cost, `tree.rs` the lock-free tree, `model.rs`
//! what a dump hands a snapshot, `mode.rs` the registration.

use crate::tsc as clock;
mod cost;
pub mod mode;
mod model;
mod probes;
mod thread_state;
mod tree;

use crate::threads::ThreadId;
use parking_lot::Mutex;
pub use probes::{natives, natives_sampled};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
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
}

// SAFETY: `stats` is only ever accessed by the OS thread that made the
// profile (through the callers whose home it is); other threads read only
// `tree`, which is built for concurrent reading.
unsafe impl Sync for ThreadProfile {}
// SAFETY: as above; the profile is created on its thread and only shared.
unsafe impl Send for ThreadProfile {}
