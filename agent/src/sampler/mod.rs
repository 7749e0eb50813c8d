//! `sampling` mode: an agent thread wakes once per `interval` and, for each
//! live Java thread, counts one sample (`event=wall`), or collects the samples
//! each thread's CPU-time timer asked for (`event=cpu`, waking at most every
//! 10 ms).
//!
//! Where a stack comes from (`stacks/`): by default the thread is signalled
//! and walks its own stack with AsyncGetCallTrace (`signal/`); a carrier
//! running a virtual thread, a thread whose OS id is unknown, and `stacks=jvmti`
//! use JVMTI GetStackTrace (a handshake with that thread alone).

mod frames;
pub mod mode;
mod model;
pub mod signal;
mod stacks;
pub mod tree;
mod type_counts;

pub use frames::{Frame, NO_LINE};
pub use stacks::StackSource;

use crate::error::AgentError;
use crate::events::Events;
use crate::host::Host;
use crate::threads::{ThreadId, Threads};
use crate::vm::sys::JvmtiExtensionFunction;
use crate::vm::{Jni, Jvmti};
use crate::{clock, log};
use frames::NameTables;
use parking_lot::{Condvar, Mutex};
use stacks::ThreadState;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tree::CallTree;

/// What a sample measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Every live thread, once per interval, whatever it does.
    Wall,
    /// Each thread once per `interval` of CPU time it uses.
    Cpu,
}

impl Event {
    pub fn name(self) -> &'static str {
        match self {
            Event::Wall => "event=wall",
            Event::Cpu => "event=cpu",
        }
    }
}

/// Name of the synthetic node that holds stacks deeper than `depth`.
pub const TRUNCATED: &str = "[truncated]";

/// What a dump reads: every thread's tree and the names its nodes refer to.
#[derive(Default)]
pub struct SamplerData {
    pub trees: HashMap<ThreadId, CallTree>,
    /// Per thread: what the sampler remembers between samples.
    states: HashMap<ThreadId, ThreadState>,
    /// The JVM's own threads (`jvmthreads`).
    jvm: stacks::JvmThreads,
    /// The names and keys the trees refer to, and what naming frames reads.
    pub tables: NameTables,
    pub counters: Counters,
    /// Number of the last signal request (tells a late answer from the awaited one).
    seq: u32,
    /// The thread table's fold count when ended threads' trees were last
    /// moved into their groups.
    folded_at: u64,
}

/// What sampling did, for the exit summary and `status`.
#[derive(Default, Clone)]
pub struct Counters {
    /// Sampler wake-ups.
    pub ticks: u64,
    /// Intervals a late wake-up made up for (counted with its samples).
    pub caught_up: u64,
    /// The most intervals one late wake-up made up for: with `caught_up`,
    /// it bounds how much fewer than their count the independent samples
    /// are (one sample counted 50 times is one observation).
    pub largest_catch_up: u64,
    /// Intervals in gaps too long to be a late wake-up (a stopped JVM, or a
    /// machine so loaded the sampler did not run for a second): not counted.
    pub paused: u64,
    /// Thread samples counted again without a new stack (the thread had not run).
    pub repeated: u64,
    /// Stacks taken with JVMTI (a handshake).
    pub walked: u64,
    /// `event=wall`: samples whose signal found the thread busy inside the
    /// VM, counted on the thread's stack from JVMTI at the next tick.
    pub deferred: u64,
    /// Signals sent asking a thread for its stack.
    pub asked: u64,
    /// Stacks that came back from a signal handler.
    pub arrived: u64,
    /// Samples whose stack could not be walked, by synthetic frame.
    pub failures: BTreeMap<&'static str, u64>,
    /// Stacks that could not be walked, each counted once whatever the
    /// samples it stands for (a late CPU timer's signal stands for several).
    pub failed_walks: u64,
    /// Answers to requests already given up on.
    pub late: u64,
    /// Samples owed to a request still unanswered when sampling stopped.
    pub unanswered_at_stop: u64,
    /// Wall time getting states, CPU times and stacks, ns.
    pub vm_ns: u64,
    /// Wall time folding stacks into trees, ns.
    pub fold_ns: u64,
}

impl Counters {
    fn add_fold(&mut self, ns: u64) {
        self.fold_ns += ns;
    }
}

/// When samples are taken: one per `interval`-long slot, at a uniformly random
/// point inside the slot. The mean rate is exactly one per interval, but no
/// periodic activity in the program can stay in lockstep with the sampler
/// (a fixed rate measured 100%/0% on a 50/50 workload with a 10 ms period).
/// The longest gap a late tick makes up for; a longer one is a pause (a
/// stopped JVM), not a slow sampler.
const MAX_CATCH_UP: Duration = Duration::from_secs(1);

struct Schedule {
    interval: Duration,
    slot: Instant,
    rng: u64,
    /// Intervals in gaps taken for pauses, not made up.
    paused: u64,
}

impl Schedule {
    fn new(interval: Duration, seed: u64) -> Self {
        Self {
            interval,
            slot: Instant::now(),
            rng: seed | 1,
            paused: 0,
        }
    }

    /// The instant of the next sample, in the next slot, and how many
    /// intervals it stands for: 1, or more when the sampler thread woke late
    /// and whole slots passed without a sample (a loaded machine delays it),
    /// so every thread is still counted once per interval. A gap longer than
    /// [`MAX_CATCH_UP`] (or 10 intervals) is a pause (a stopped JVM): not counted.
    fn next_sample(&mut self) -> (Instant, u64) {
        let now = Instant::now();
        let mut weight = 1;
        if self.slot + self.interval <= now {
            let gap = now - self.slot;
            let missed = (gap.as_nanos() / self.interval.as_nanos().max(1)) as u64;
            if gap <= MAX_CATCH_UP.max(self.interval * 10) {
                // Keep the phase: the missed slots count with this sample.
                weight += missed;
                self.slot += self.interval * missed as u32;
            } else {
                self.paused += missed;
                self.slot = now;
            }
        }
        // xorshift64*: plenty for picking an offset, and no dependency.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
        let offset = r % self.interval.as_nanos().max(1) as u64;
        let at = self.slot + Duration::from_nanos(offset);
        self.slot += self.interval;
        (at, weight)
    }
}

#[derive(Default)]
struct Control {
    stop: bool,
    running: bool,
    /// The sampler threads' own CPU time and wall time, summed over runs, ns.
    own_cpu_ns: u64,
    own_wall_ns: u64,
}

/// `event=cpu`: the sampler thread's shortest period (see
/// [`Sampler::tick_period`]).
const CPU_TICK_MIN: Duration = Duration::from_millis(10);

/// How a session samples.
pub struct Config {
    pub interval: Duration,
    pub depth: u32,
    pub event: Event,
    /// Key frames by method and source line (`lines`).
    pub lines: bool,
    /// Also sample the JVM's own threads (`jvmthreads`).
    pub jvm_threads: bool,
    /// `kernel=on`: kernel frames (wall: those of waiting threads, from
    /// `/proc`; cpu: perf events, set up apart).
    pub kernel: bool,
    /// JDK 21+: finds the virtual thread mounted on a carrier. Only ever
    /// HotSpot's GetVirtualThread extension (`Agent::get_virtual_thread`).
    pub get_virtual_thread: Option<JvmtiExtensionFunction>,
}

pub struct Sampler {
    config: Config,
    /// The handler's counts of walks recovered from the caller, by the
    /// interrupted code (stub, compiled method, unknown), when this sampler
    /// was made: the counts are the process's.
    recovered_base: signal::recover::Recovered,
    /// Where stacks come from, decided when the session starts.
    source: StackSource,
    control: Mutex<Control>,
    wake: Condvar,
    data: Mutex<SamplerData>,
}

impl Sampler {
    pub fn new(config: Config, source: StackSource) -> Self {
        Self {
            config,
            recovered_base: signal::recover::recovered_counts(),
            source,
            control: Mutex::new(Control::default()),
            wake: Condvar::new(),
            data: Mutex::new(SamplerData::default()),
        }
    }

    /// Starts (or, after [`Sampler::stop`], restarts) the `profrj sampler`
    /// thread, which runs [`Sampler::run`] on `me`.
    pub fn start(
        &self,
        host: &'static Host,
        jni: &Jni,
        me: Arc<Sampler>,
    ) -> Result<(), AgentError> {
        {
            let mut c = self.control.lock();
            c.stop = false;
            c.running = true;
        }
        host.start_thread(jni, "profrj sampler", "sampler thread", move |jni| {
            me.run(host.jvmti, jni, &host.threads, &host.events)
        })
        .inspect_err(|_| self.control.lock().running = false)
    }

    /// How often the sampler thread wakes. `wall`: every interval (it takes
    /// the samples). `cpu`: the threads' own timers take them, and the
    /// thread only folds what they brought, times the threads the JVM made
    /// and finds its own: every interval, but at most every
    /// [`CPU_TICK_MIN`], so that at a short interval it neither takes a
    /// share of a core nor preempts the busy threads a thousand times a
    /// second (a parallel GC's workers wait for the one it preempts). What
    /// the timers bring in between waits in the ring: at most a tick's
    /// intervals per core.
    fn tick_period(&self) -> Duration {
        match self.config.event {
            Event::Wall => self.config.interval,
            Event::Cpu => self.config.interval.max(CPU_TICK_MIN),
        }
    }

    /// The sampler thread's body: sample at a fixed rate until [`Sampler::stop`].
    /// Each sample folded is published on `events` (`Kind::Sampled`).
    pub fn run(&self, jvmti: Jvmti, jni: &Jni, threads: &Threads, events: &Events) {
        let started = clock::now_ns();
        let mut schedule = Schedule::new(self.tick_period(), started);
        let mut walker = stacks::Walker::new(&self.config, &self.source, events);
        walker.set_active(true);
        loop {
            let (next, weight) = schedule.next_sample();
            {
                let mut c = self.control.lock();
                while !c.stop && Instant::now() < next {
                    self.wake.wait_until(&mut c, next);
                }
                if c.stop {
                    break;
                }
            }
            // One local reference per thread, plus a few per newly seen thread or method.
            let refs = threads.count() as i32 + 64;
            jni.with_local_frame(refs, || {
                let mut data = self.data.lock();
                data.counters.paused = schedule.paused;
                walker.tick(jvmti, jni, threads, &mut data, weight)
            });
        }
        walker.set_active(false);
        jni.with_local_frame(64, || {
            walker.finish(jvmti, jni, threads, &mut self.data.lock())
        });
        let mut c = self.control.lock();
        c.own_cpu_ns += jvmti.thread_cpu_time(std::ptr::null_mut()).unwrap_or(0) as u64;
        c.own_wall_ns += clock::now_ns() - started;
        c.running = false;
        self.wake.notify_all();
    }

    /// Asks the sampler thread to finish and waits for it (at most 5 s, so a
    /// stuck VM operation can never hang the JVM's exit).
    pub fn stop(&self) {
        let mut c = self.control.lock();
        c.stop = true;
        self.wake.notify_all();
        let deadline = Instant::now() + Duration::from_secs(5);
        while c.running {
            if self.wake.wait_until(&mut c, deadline).timed_out() {
                log::warn("sampler thread did not stop within 5 s; writing the snapshot anyway");
                break;
            }
        }
    }

    /// One line on what sampling did and cost, for the log at exit and `status`.
    pub fn cost_summary(&self) -> String {
        let (cpu, wall) = {
            let c = self.control.lock();
            (c.own_cpu_ns, c.own_wall_ns.max(1))
        };
        let d = self.data.lock();
        let k = &d.counters;
        let n = k.ticks.max(1);
        let now = signal::recover::recovered_counts();
        let base = self.recovered_base;
        let mut s = format!(
            "sampling: {} ticks every {:?} ({} missed intervals made up, at most {} at once, {} in pauses not counted; {}, stacks from {}): {} stacks from signals ({} asked; walked from the caller of a stub {}, of a compiled method's entry or exit {}, of unknown code {}; from the last Java frame of a thread in the VM {}; from the sp an intrinsic saved {}), \
             {} walked with JVMTI ({} samples of threads a signal found busy in the VM among them), {} repeated unchanged; per tick {} us taking stacks, {} us folding; \
             sampler CPU {} ms = {:.2}% of one core",
            k.ticks,
            self.tick_period(),
            k.caught_up,
            k.largest_catch_up,
            k.paused,
            self.config.event.name(),
            self.source.describe(),
            k.arrived,
            k.asked,
            now.stub - base.stub,
            now.compiled - base.compiled,
            now.unknown - base.unknown,
            now.vm - base.vm,
            now.saved_sp - base.saved_sp,
            k.walked,
            k.deferred,
            k.repeated,
            k.vm_ns / n / 1000,
            k.fold_ns / n / 1000,
            cpu / 1_000_000,
            cpu as f64 * 100.0 / wall as f64
        );
        if self.config.jvm_threads {
            s.push_str(&format!(
                "; the JVM's threads: {} found, {} samples",
                d.jvm.found, d.jvm.samples
            ));
        }
        s.push_str(&self.failure_summary(k));
        signal::diag::report();
        s
    }

    fn failure_summary(&self, k: &Counters) -> String {
        let mut s = String::new();
        let dropped = self.source.dropped();
        let not_java = signal::handler::not_java_count();
        // Walks that found the fault guard's table full (more threads in
        // the handler at once than it has slots).
        let unguarded = crate::vm::fault_guard::counts().1;
        if !k.failures.is_empty()
            || unguarded > 0
            || dropped > 0
            || k.late > 0
            || k.unanswered_at_stop > 0
            || not_java > 0
        {
            s.push_str("; not walked:");
            for (name, n) in &k.failures {
                s.push_str(&format!(" {name} {n}"));
            }
            if !k.failures.is_empty() {
                s.push_str(&format!(" (in {} walks)", k.failed_walks));
            }
            if dropped > 0 {
                s.push_str(&format!(" ring-full {dropped}"));
            }
            if not_java > 0 {
                s.push_str(&format!(" not-a-Java-thread {not_java}"));
            }
            if unguarded > 0 {
                s.push_str(&format!(" walks-run-unguarded {unguarded}"));
            }
            if k.late > 0 {
                s.push_str(&format!(" late {}", k.late));
            }
            if k.unanswered_at_stop > 0 {
                s.push_str(&format!(" unanswered-at-stop {}", k.unanswered_at_stop));
            }
        }
        s
    }

    /// How it samples.
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// Runs `f` on the collected data; sampling waits meanwhile.
    pub fn with_data<R>(&self, f: impl FnOnce(&SamplerData) -> R) -> R {
        f(&self.data.lock())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sample_per_slot_at_a_varying_offset() {
        let interval = Duration::from_millis(10);
        let mut s = Schedule::new(interval, 42);
        let start = s.slot;
        let mut offsets = Vec::new();
        for k in 0..1000u32 {
            let (at, weight) = s.next_sample();
            assert_eq!(weight, 1);
            let slot = start + interval * k;
            assert!(
                at >= slot && at < slot + interval,
                "sample {k} outside its slot"
            );
            offsets.push((at - slot).as_nanos() as f64 / interval.as_nanos() as f64);
        }
        // Uniform on [0, 1): mean near 0.5, both halves used.
        let mean = offsets.iter().sum::<f64>() / offsets.len() as f64;
        assert!((mean - 0.5).abs() < 0.05, "mean offset {mean}");
        let low = offsets.iter().filter(|&&o| o < 0.5).count();
        assert!((400..600).contains(&low), "{low} of 1000 in the first half");
    }

    #[test]
    fn a_late_tick_makes_up_for_missed_slots_but_not_for_a_pause() {
        let interval = Duration::from_millis(10);
        let mut s = Schedule::new(interval, 7);
        s.slot -= interval * 4; // woke 4 slots late
        assert_eq!(s.next_sample().1, 5);
        assert_eq!(s.next_sample().1, 1);
        assert_eq!(s.paused, 0);
        s.slot -= interval * 500; // stopped for 5 s
        assert_eq!(s.next_sample().1, 1);
        assert!((490..=501).contains(&s.paused), "{}", s.paused);
    }
}
