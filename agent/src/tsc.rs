//! The probes' clocks (`profile`, `trace`). Wall time: the TSC (10 ns a read here, against 25 ns
//! for CLOCK_MONOTONIC), when the CPU says it is invariant; else
//! CLOCK_MONOTONIC. Thread CPU time: CLOCK_THREAD_CPUTIME_ID costs a system
//! call (~560 ns), far too much per probe, so each thread reads it at most
//! once per `SYNC_NS` of wall time and in between counts wall time as CPU
//! time; the clock never runs backwards and is never off by more than
//! `SYNC_NS` (a call that blocks longer than that shows its real CPU time).

use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::OnceLock;

/// Longest stretch of wall time a thread's CPU clock is extrapolated over.
pub const SYNC_NS: u64 = 1_000_000;

struct Tsc {
    /// Nanoseconds per tick, measured against CLOCK_MONOTONIC.
    ns_per_tick: f64,
}

static TSC: OnceLock<Tsc> = OnceLock::new();

/// Whether the TSC is used (invariant TSC on x86_64), set once it is
/// calibrated: what [`ticks`] tests (one load, where a `OnceLock` and a
/// field of it took two and a compare, on every probe).
static TSC_USABLE: AtomicBool = AtomicBool::new(false);

fn tsc() -> &'static Tsc {
    TSC.get_or_init(|| {
        let usable = cfg!(target_arch = "x86_64")
            && std::fs::read_to_string("/proc/cpuinfo")
                .map(|s| s.contains(" constant_tsc") && s.contains(" nonstop_tsc"))
                .unwrap_or(false);
        if !usable {
            return Tsc { ns_per_tick: 1.0 };
        }
        // 5 ms against the monotonic clock: a read error of ~50 ns at each
        // end makes the rate good to 0.002%.
        let (t0, n0) = (raw_tsc(), crate::clock::now_ns());
        while crate::clock::now_ns() - n0 < 5_000_000 {
            std::hint::spin_loop();
        }
        let (t1, n1) = (raw_tsc(), crate::clock::now_ns());
        TSC_USABLE.store(true, Relaxed);
        Tsc {
            ns_per_tick: (n1 - n0) as f64 / (t1 - t0).max(1) as f64,
        }
    })
}

#[inline(always)]
fn raw_tsc() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: rdtsc has no preconditions on x86_64.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        crate::clock::now_ns()
    }
}

/// Calibrates the clock (once, ~5 ms); call before the first probe runs.
pub fn init() {
    tsc();
}

/// Wall-clock ticks (TSC or ns).
#[inline(always)]
pub fn ticks() -> u64 {
    match TSC_USABLE.load(Relaxed) {
        true => raw_tsc(),
        false => crate::clock::now_ns(),
    }
}

pub fn ticks_to_ns(ticks: u64) -> u64 {
    (ticks as f64 * tsc().ns_per_tick) as u64
}

pub fn ns_to_ticks(ns: u64) -> u64 {
    (ns as f64 / tsc().ns_per_tick) as u64
}

/// This thread's CPU time in ns (a system call).
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// One thread's CPU clock, kept in ticks (so a probe does no float
/// arithmetic), read at probe times given in ticks.
pub struct CpuClock {
    sync_ticks: u64,
    /// The thread's CPU time at `sync_ticks`, in ticks.
    sync_cpu: u64,
    last: u64,
    sync_every: u64,
}

impl CpuClock {
    pub fn new(now_ticks: u64) -> Self {
        Self {
            sync_ticks: now_ticks,
            sync_cpu: ns_to_ticks(thread_cpu_ns()),
            last: 0,
            sync_every: ns_to_ticks(SYNC_NS),
        }
    }

    #[inline]
    pub fn now(&mut self, ticks: u64) -> u64 {
        let since = ticks.wrapping_sub(self.sync_ticks);
        let est = if since > self.sync_every {
            self.sync_ticks = ticks;
            self.sync_cpu = ns_to_ticks(thread_cpu_ns());
            self.sync_cpu
        } else {
            self.sync_cpu + since
        };
        self.last = self.last.max(est);
        self.last
    }
}
