//! `otlp`: every `period`, the delta of each running call-tree mode
//! (sampling, profile, alloc, lock) since the last period, as one OTLP
//! profiles request pushed to an OpenTelemetry Collector.
//!
//! Two threads of the agent's own (plain OS threads: the JVM neither sees
//! nor waits for them): the period timer asks the session's modes for
//! their call trees ([`crate::mode::Mode::call_trees`], the agent's model,
//! which [`model`] turns into the push's), turns them into deltas (a
//! [`Keeper`] per mode, keyed by call path) and hands them to the
//! [`backlog`], where they fold into what has not been sent yet; the sender
//! ([`sender`]) encodes, gzips and posts what waits ([`http`]), putting it
//! back to be retried with the periods that come meanwhile when the
//! collector cannot take it. The backlog is bounded; the sender's every
//! wait has a deadline; the JVM's exit makes one last push within
//! [`EXIT_DEADLINE`]. Where the push sends and with what: [`config`].

/// An [`AgentError::Push`] whose message is `format!`'s.
macro_rules! bad {
    ($($message:tt)*) => {
        $crate::error::AgentError::Push(format!($($message)*))
    };
}

mod backlog;
pub mod config;
pub mod endpoint;
mod http;
pub mod model;
mod sender;
mod unsent;

use crate::error::AgentError;
use backlog::{Backlog, Stats};
use config::Config;
use parking_lot::{Condvar, Mutex};
use profrj_otlp::{CallTrees, Keeper};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};
use unsent::Unsent;

/// The last push at the JVM's exit (or a replaced session's) gets this long.
pub const EXIT_DEADLINE: Duration = Duration::from_secs(2);

/// Each mode's call trees, by the mode's name.
pub type ModeTrees = Vec<(&'static str, CallTrees)>;

/// Where the timer reads the trees: `None` once the session that started
/// the push is gone (the timer then ends).
pub type Source = Box<dyn Fn() -> Option<ModeTrees> + Send + Sync>;

/// Pushers made so far: each one's id.
static MADE: AtomicU64 = AtomicU64::new(0);

/// One session's push.
pub struct Pusher {
    id: u64,
    shared: Arc<Shared>,
}

struct Shared {
    config: Config,
    backlog: Backlog,
    stats: Stats,
    timer: Mutex<Timer>,
    timer_cv: Condvar,
    /// Serialises collections (timer, stop, exit) and holds what they keep.
    collect: Mutex<Collect>,
}

#[derive(Default)]
struct Timer {
    stop: bool,
    /// Collect now (the session stopped).
    now: bool,
}

struct Collect {
    keepers: HashMap<&'static str, Keeper>,
    /// Where the next period's range starts, ns since the epoch: the end
    /// of the last period that had something to send.
    since_unix_ns: u64,
    /// The last collection was made: later ones are not sent.
    finished: bool,
}

impl Pusher {
    /// Starts the timer and the sender for `config`, reading trees from `source`
    /// (given this pusher's id).
    pub fn start(config: Config, source: impl FnOnce(u64) -> Source) -> Result<Pusher, AgentError> {
        let id = MADE.fetch_add(1, Relaxed) + 1;
        let shared = Arc::new(Shared {
            config,
            backlog: Backlog::default(),
            stats: Stats::default(),
            timer: Mutex::new(Timer::default()),
            timer_cv: Condvar::new(),
            collect: Mutex::new(Collect {
                keepers: HashMap::new(),
                since_unix_ns: unix_now_ns(),
                finished: false,
            }),
        });
        let source = source(id);
        let s = shared.clone();
        std::thread::Builder::new()
            .name("profrj otlp send".into())
            .spawn(move || sender::run(&s.config, &s.backlog, &s.stats))
            .map_err(|e| bad!("otlp: cannot start the sending thread: {e}"))?;
        let s = shared.clone();
        let started = std::thread::Builder::new()
            .name("profrj otlp".into())
            .spawn(move || s.run_timer(source));
        if let Err(e) = started {
            shared.backlog.close(Instant::now());
            return Err(bad!("otlp: cannot start the period thread: {e}"));
        }
        Ok(Pusher { id, shared })
    }

    pub fn id(&self) -> u64 {
        self.id
    }

    /// Pushes what the modes have now without waiting for the period's end
    /// (a session stopped).
    pub fn push_now(&self) {
        self.shared.timer.lock().now = true;
        self.shared.timer_cv.notify_all();
    }

    /// The last push: `last` (the stopped modes' trees) is collected and
    /// sent with what waits, within `deadline`; then both threads end.
    pub fn finish(&self, last: ModeTrees, deadline: Duration) {
        let until = Instant::now() + deadline;
        {
            let mut t = self.shared.timer.lock();
            t.stop = true;
            self.shared.timer_cv.notify_all();
        }
        self.shared.collect(last, true, thread_cpu_ns());
        self.shared.backlog.close(until);
        let stats = &self.shared.stats;
        self.shared
            .backlog
            .wait_done(until + Duration::from_millis(100), stats);
    }

    /// What the push did, for `status` and the exit summary.
    pub fn summary(&self) -> String {
        let s = &self.shared.stats;
        let c = &self.shared.config;
        let pushes = s.pushes.load(Relaxed);
        let tries = s.tries.load(Relaxed).max(1);
        let mut text = format!(
            "otlp to {} every {:?}: {} periods sent of {} with profiles ({} empty) in {pushes} pushes; per push {} bytes gzipped ({} raw), {} us CPU to build",
            c.endpoint.url(),
            c.period,
            s.sent.load(Relaxed),
            s.periods.load(Relaxed),
            s.empty.load(Relaxed),
            s.sent_bytes.load(Relaxed) / pushes.max(1),
            s.raw_bytes.load(Relaxed) / tries,
            s.build_ns.load(Relaxed) / tries / 1000,
        );
        let dropped = s.dropped();
        if dropped > 0 || s.retries.load(Relaxed) > 0 {
            text.push_str(&format!(
                "; {dropped} dropped ({} samples; over {} MiB {}, refused {}, at exit {}), {} retries",
                s.dropped_samples.load(Relaxed),
                backlog::MAX_BYTES >> 20,
                s.dropped_bound.load(Relaxed),
                s.dropped_refused.load(Relaxed),
                s.dropped_exit.load(Relaxed),
                s.retries.load(Relaxed)
            ));
        }
        let (periods, bytes) = self.shared.backlog.held();
        if periods > 0 {
            text.push_str(&format!(
                "; {periods} periods not sent yet, folded ({} KiB)",
                bytes.div_ceil(1024)
            ));
        }
        if let Some(f) = s.last_failure.lock().as_deref() {
            text.push_str(&format!("; last failure: {f}"));
        }
        text
    }
}

impl Shared {
    fn run_timer(&self, source: Source) {
        let period = self.config.period;
        let mut next = Instant::now() + period;
        loop {
            {
                let mut t = self.timer.lock();
                while !t.stop && !t.now && Instant::now() < next {
                    self.timer_cv.wait_until(&mut t, next);
                }
                if t.stop {
                    return;
                }
                t.now = false;
            }
            let cpu = thread_cpu_ns();
            let Some(trees) = source() else {
                return;
            };
            self.collect(trees, false, cpu);
            // A collection asked for early (`stop`) keeps the schedule.
            let now = Instant::now();
            if now >= next {
                next += period;
                if next <= now {
                    next = now + period;
                }
            }
        }
    }

    /// Makes the period's deltas from `trees` and hands them to the
    /// backlog; `last`: the final one (none is made after it). Under the
    /// collection lock from start to hand-over, so that the last one comes
    /// after every other. `cpu`: this thread's CPU time when it began to
    /// read the trees.
    fn collect(&self, trees: ModeTrees, last: bool, cpu: u64) {
        let mut c = self.collect.lock();
        if c.finished {
            return;
        }
        c.finished = last;
        let now = unix_now_ns();
        let since = std::mem::replace(&mut c.since_unix_ns, now);
        let mut unsent = Unsent::new(since, now);
        for (name, t) in trees {
            unsent.add(name, c.keepers.entry(name).or_default().delta(t));
        }
        if unsent.is_empty() {
            // The next push's range starts where the last one's ended: the
            // pushes' ranges tile the session, an empty stretch in one.
            c.since_unix_ns = since;
            self.stats.empty.fetch_add(1, Relaxed);
            return;
        }
        self.stats.periods.fetch_add(1, Relaxed);
        self.backlog.push(unsent, &self.stats);
        self.stats
            .build_ns
            .fetch_add(thread_cpu_ns().saturating_sub(cpu), Relaxed);
    }
}

fn unix_now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// The calling thread's CPU time, ns.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime only writes the timespec it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    if rc != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
