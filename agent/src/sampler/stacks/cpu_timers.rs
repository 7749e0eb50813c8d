//! `event=cpu`: the CPU timer of a thread that starts while sampling runs is
//! armed in the thread's own ThreadStart, before it runs any Java code.
//!
//! Why not at the sampler's next tick: at load that tick can come tens of
//! milliseconds late, and the CPU a thread uses before its timer exists is
//! never sampled (a short task's whole life, or a tenth of a busy thread's
//! first second). The tick still arms the threads that were running when
//! sampling started, and any whose ThreadStart came before this was armed.
//!
//! One timer per thread, whoever arms it first: each thread's claim is
//! kept here from the first arming until the sampler forgets the thread.
//! A timer armed at ThreadStart waits here until the tick takes it into
//! the thread's state; one no tick took by the second sweep after it was
//! armed belongs to a thread that ended unseen, and is deleted.

use crate::events::Listener;
use crate::sampler::signal::{self, cpu_timer::CpuTimer};
use crate::threads::ThreadId;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::Duration;

/// The process's one set of early timers (one `event=cpu` session arms it
/// at a time; another arms its threads at its ticks).
pub(in crate::sampler) static CPU_TIMERS: CpuTimers = CpuTimers {
    armed: Mutex::new(None),
};

pub(in crate::sampler) struct CpuTimers {
    armed: Mutex<Option<Armed>>,
}

/// What ThreadStart arms with, while a session samples CPU.
struct Armed {
    /// Which session armed it (its signal ring's address).
    owner: usize,
    signo: i32,
    interval: Duration,
    claims: HashMap<ThreadId, Claim>,
}

enum Claim {
    /// Armed at ThreadStart, not yet taken by a tick; `swept` once a sweep
    /// has passed it.
    Early { timer: CpuTimer, swept: bool },
    /// The thread's timer is in its sampler state (or failed there).
    Taken,
}

/// What the tick finds for a thread without a timer.
pub(super) enum Found {
    /// Its ThreadStart armed this one.
    Armed(CpuTimer),
    /// None: the tick arms it (and has claimed it).
    ToArm,
}

impl CpuTimers {
    /// From now on, threads that start get their timer at ThreadStart.
    /// `false` when another session has it armed.
    pub(super) fn arm(&self, owner: usize, signo: i32, interval: Duration) -> bool {
        let mut a = self.armed.lock();
        if a.is_some() {
            return false;
        }
        *a = Some(Armed {
            owner,
            signo,
            interval,
            claims: HashMap::new(),
        });
        true
    }

    /// No more arming at ThreadStart; timers not yet taken are deleted.
    pub(super) fn disarm(&self, owner: usize) {
        let mut a = self.armed.lock();
        if a.as_ref().is_some_and(|a| a.owner == owner) {
            *a = None;
        }
    }

    /// `id` has no timer in its state: the one its ThreadStart armed, or
    /// leave to arm it (and no ThreadStart will now).
    pub(super) fn claim(&self, owner: usize, id: ThreadId) -> Found {
        let mut a = self.armed.lock();
        let Some(a) = a.as_mut().filter(|a| a.owner == owner) else {
            return Found::ToArm;
        };
        match a.claims.insert(id, Claim::Taken) {
            Some(Claim::Early { timer, .. }) => Found::Armed(timer),
            _ => Found::ToArm,
        }
    }

    /// The CPU clock of `id` when its ThreadStart armed its timer, while
    /// no tick has taken it yet (`cpu_credit.rs`).
    pub(super) fn armed_cpu_ns(&self, owner: usize, id: ThreadId) -> Option<u64> {
        let a = self.armed.lock();
        match a.as_ref().filter(|a| a.owner == owner)?.claims.get(&id)? {
            Claim::Early { timer, .. } => timer.armed_cpu_ns(),
            Claim::Taken => None,
        }
    }

    /// The sampler forgot `id` (its thread ended).
    pub(super) fn forget(&self, owner: usize, id: ThreadId) {
        if let Some(a) = self.armed.lock().as_mut().filter(|a| a.owner == owner) {
            a.claims.remove(&id);
        }
    }

    /// Once a tick: deletes the timers of threads that ended before any
    /// tick saw them (armed before the previous sweep and still not taken:
    /// a live thread is taken at the first tick after its start).
    pub(super) fn sweep(&self, owner: usize) {
        if let Some(a) = self.armed.lock().as_mut().filter(|a| a.owner == owner) {
            a.claims.retain(|_, c| match c {
                Claim::Early { swept, .. } if *swept => false,
                Claim::Early { swept, .. } => {
                    *swept = true;
                    true
                }
                Claim::Taken => true,
            });
        }
    }

    /// Timers waiting for a tick (for tests of the sweep).
    #[cfg(test)]
    fn waiting(&self) -> usize {
        self.armed.lock().as_ref().map_or(0, |a| {
            a.claims
                .values()
                .filter(|c| matches!(c, Claim::Early { .. }))
                .count()
        })
    }
}

impl Listener for CpuTimers {
    /// On the starting thread itself: its timer, unless a tick claimed it.
    fn thread_start(&self, id: ThreadId, tid: i32) {
        let mut a = self.armed.lock();
        let Some(a) = a.as_mut() else {
            return;
        };
        if a.claims.contains_key(&id) {
            return;
        }
        let token = signal::token(id, 0);
        // A timer that cannot be made is left to the tick, which tries
        // again and says so if it fails.
        if let Ok(timer) = CpuTimer::start(tid, a.signo, a.interval, token) {
            let swept = false;
            a.claims.insert(id, Claim::Early { timer, swept });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timers() -> CpuTimers {
        CpuTimers {
            armed: Mutex::new(None),
        }
    }

    /// A timer on this thread's CPU clock, never firing within a test.
    fn a_timer(id: ThreadId) -> CpuTimer {
        let tid = crate::vm::hotspot::current_tid();
        // An hour of this thread's CPU is never used here.
        CpuTimer::start(
            tid,
            libc::SIGPROF,
            Duration::from_secs(3600),
            signal::token(id, 0),
        )
        .unwrap()
    }

    fn early(t: &CpuTimers, id: ThreadId) {
        let mut a = t.armed.lock();
        let a = a.as_mut().unwrap();
        let timer = a_timer(id);
        a.claims.insert(
            id,
            Claim::Early {
                timer,
                swept: false,
            },
        );
    }

    #[test]
    fn a_thread_armed_at_its_start_is_taken_once_and_never_armed_again() {
        let t = timers();
        assert!(t.arm(1, libc::SIGPROF, Duration::from_millis(10)));
        assert!(!t.arm(2, libc::SIGPROF, Duration::from_millis(10)));
        early(&t, ThreadId(7));
        assert!(matches!(t.claim(1, ThreadId(7)), Found::Armed(_)));
        // Claimed: a ThreadStart now (it cannot come later, but a racing
        // one) arms nothing, and the tick is told to arm nothing twice.
        t.thread_start(ThreadId(7), crate::vm::hotspot::current_tid());
        assert_eq!(t.waiting(), 0);
        assert!(matches!(t.claim(1, ThreadId(8)), Found::ToArm));
        t.thread_start(ThreadId(8), crate::vm::hotspot::current_tid());
        assert_eq!(t.waiting(), 0);
    }

    #[test]
    fn a_timer_no_tick_took_goes_at_the_second_sweep() {
        let t = timers();
        assert!(t.arm(1, libc::SIGPROF, Duration::from_millis(10)));
        early(&t, ThreadId(3));
        t.sweep(1);
        assert_eq!(t.waiting(), 1, "armed after the previous tick: kept");
        t.sweep(1);
        assert_eq!(t.waiting(), 0, "no tick took it: its thread ended");
    }

    #[test]
    fn another_sessions_calls_change_nothing_and_disarming_drops_all() {
        let t = timers();
        assert!(t.arm(1, libc::SIGPROF, Duration::from_millis(10)));
        early(&t, ThreadId(4));
        assert!(matches!(t.claim(2, ThreadId(4)), Found::ToArm));
        t.sweep(2);
        t.sweep(2);
        t.disarm(2);
        assert_eq!(t.waiting(), 1);
        t.disarm(1);
        assert_eq!(t.waiting(), 0);
        assert!(t.arm(2, libc::SIGPROF, Duration::from_millis(10)));
    }
}
