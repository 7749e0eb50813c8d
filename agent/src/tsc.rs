//! The probes' clocks (`profile`, `trace`). Wall time: the TSC (10 ns a read here, against 25 ns
//! for CLOCK_MONOTONIC), when the CPU says it is invariant; else
//! CLOCK_MONOTONIC. Thread CPU time: CLOCK_THREAD_CPUTIME_ID costs a system
//! call (~560 ns), far too much per probe, so each thread reads it at most
//! once per `SYNC_NS` of wall time and in between counts wall time as CPU
//! time ([`CpuDrift`]); the clock is never off by more than `SYNC_NS` (a
//! call that blocks longer than that shows its real CPU time).

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

/// One thread's CPU clock against the wall clock, in ticks (so a probe
/// does no float arithmetic): between two reads of the CPU clock the
/// thread's CPU time is taken to run with the wall clock; at a read (at
/// most once per `SYNC_NS`), the wall time the thread was not on a CPU since
/// the read before comes out ([`fell`](Self::fell)). So a call that no read
/// falls in used as much CPU as wall time, and the probes read one clock.
pub struct CpuDrift {
    /// Ticks after which the CPU clock is read again.
    next_sync: u64,
    /// The thread's CPU time less the wall clock at the last read, in
    /// ticks (wrapping).
    drift: u64,
    sync_every: u64,
}

impl CpuDrift {
    pub fn new(now_ticks: u64) -> Self {
        let sync_every = ns_to_ticks(SYNC_NS);
        Self {
            next_sync: now_ticks.saturating_add(sync_every),
            drift: ns_to_ticks(thread_cpu_ns()).wrapping_sub(now_ticks),
            sync_every,
        }
    }

    /// At `ticks`: the wall ticks that were not the thread's CPU time since
    /// the last read, where the CPU clock is read again now (`SYNC_NS` since
    /// the last read); else 0.
    #[inline(always)]
    pub fn fell(&mut self, ticks: u64) -> u64 {
        match ticks > self.next_sync {
            true => self.sync(ticks),
            false => 0,
        }
    }

    #[cold]
    #[inline(never)]
    fn sync(&mut self, ticks: u64) -> u64 {
        let drift = ns_to_ticks(thread_cpu_ns()).wrapping_sub(ticks);
        let fell = self.drift.wrapping_sub(drift) as i64;
        self.drift = drift;
        self.next_sync = ticks.saturating_add(self.sync_every);
        fell.max(0) as u64
    }
}
