//! The bounded queue between the period timer and the one sending thread,
//! and that thread: each request is tried, retried with backoff while the
//! collector's answer (or silence) is retryable, and dropped (counted)
//! otherwise. The queue holds at most [`MAX_ITEMS`] requests and
//! [`MAX_BYTES`]; a full queue drops its oldest. Nothing here waits on the
//! program: a collector that is down, slow or hostile costs it a thread
//! asleep and a few megabytes at most.

use super::config::Config;
use super::http;
use crate::log;
use parking_lot::{Condvar, Mutex};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// Requests (periods) waiting at most.
pub const MAX_ITEMS: usize = 4;
/// Bytes waiting at most (gzipped requests).
pub const MAX_BYTES: usize = 32 << 20;
/// Tries of one request after the first.
const MAX_RETRIES: u32 = 5;
const FIRST_BACKOFF: Duration = Duration::from_secs(1);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// The longest `Retry-After` honoured.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// What the push did, for `status` and the exit summary.
#[derive(Default)]
pub struct Stats {
    /// Periods with something to send (requests made).
    pub requests: AtomicU64,
    /// Periods with nothing new (no request).
    pub empty: AtomicU64,
    /// Requests the collector accepted, and their bytes (gzipped).
    pub sent: AtomicU64,
    pub sent_bytes: AtomicU64,
    /// Bytes before gzip, of every request made.
    pub raw_bytes: AtomicU64,
    /// Thread CPU time building requests (deltas, encoding, gzip), ns.
    pub build_ns: AtomicU64,
    pub retries: AtomicU64,
    /// Requests dropped: the queue was full; the collector refused them
    /// (a final answer); it stayed unreachable through the retries; left
    /// when the JVM exited.
    pub dropped_full: AtomicU64,
    pub dropped_refused: AtomicU64,
    pub dropped_unreachable: AtomicU64,
    pub dropped_exit: AtomicU64,
    pub last_failure: Mutex<Option<String>>,
}

impl Stats {
    pub fn dropped(&self) -> u64 {
        self.dropped_full.load(Relaxed)
            + self.dropped_refused.load(Relaxed)
            + self.dropped_unreachable.load(Relaxed)
            + self.dropped_exit.load(Relaxed)
    }
}

#[derive(Default)]
struct State {
    items: VecDeque<Vec<u8>>,
    bytes: usize,
    /// Set at the end: send what is queued until then, retry nothing.
    closing: Option<Instant>,
    /// The sender has finished.
    done: bool,
    /// The sender holds a request (popped, not yet sent or dropped).
    in_flight: bool,
    /// The exit stopped waiting for the sender and counted what it held.
    abandoned: bool,
}

#[derive(Default)]
pub struct Queue {
    state: Mutex<State>,
    cv: Condvar,
}

impl Queue {
    /// Queues a request, dropping the oldest while the queue is full.
    pub fn push(&self, body: Vec<u8>, stats: &Stats) {
        let mut s = self.state.lock();
        while !s.items.is_empty()
            && (s.items.len() >= MAX_ITEMS || s.bytes + body.len() > MAX_BYTES)
        {
            if let Some(old) = s.items.pop_front() {
                s.bytes -= old.len();
                stats.dropped_full.fetch_add(1, Relaxed);
            }
        }
        if body.len() > MAX_BYTES {
            stats.dropped_full.fetch_add(1, Relaxed);
            return;
        }
        s.bytes += body.len();
        s.items.push_back(body);
        self.cv.notify_all();
    }

    /// The next request, waiting for one; `None` once closing and empty.
    fn pop(&self) -> Option<Vec<u8>> {
        let mut s = self.state.lock();
        loop {
            if let Some(b) = s.items.pop_front() {
                s.bytes -= b.len();
                s.in_flight = true;
                return Some(b);
            }
            if s.closing.is_some() {
                return None;
            }
            self.cv.wait(&mut s);
        }
    }

    fn closing(&self) -> Option<Instant> {
        self.state.lock().closing
    }

    /// When a request started now must end: `timeout` from `started`, or
    /// the closing deadline if sooner.
    fn deadline(&self, started: Instant, timeout: Duration) -> Instant {
        let own = started + timeout;
        self.closing().map_or(own, |c| c.min(own))
    }

    /// Sleeps `d` unless the queue starts closing first (then false).
    fn sleep(&self, d: Duration) -> bool {
        let until = Instant::now() + d;
        let mut s = self.state.lock();
        while s.closing.is_none() {
            if self.cv.wait_until(&mut s, until).timed_out() {
                return true;
            }
        }
        false
    }

    /// Asks the sender to send what is queued by `deadline` and stop.
    pub fn close(&self, deadline: Instant) {
        let mut s = self.state.lock();
        s.closing = Some(s.closing.map_or(deadline, |d| d.min(deadline)));
        self.cv.notify_all();
    }

    /// Waits until the sender is done or `until`; then what it has not
    /// sent is dropped and counted (the sender, if still at it, counts
    /// nothing more).
    pub fn wait_done(&self, until: Instant, stats: &Stats) {
        let mut s = self.state.lock();
        while !s.done {
            if self.cv.wait_until(&mut s, until).timed_out() {
                break;
            }
        }
        if !s.done {
            let left = s.items.len() as u64 + u64::from(s.in_flight);
            stats.dropped_exit.fetch_add(left, Relaxed);
            s.items.clear();
            s.bytes = 0;
            s.abandoned = true;
        }
    }

    /// The sender is through with its request; false if the exit already
    /// counted it.
    fn landed(&self) -> bool {
        let mut s = self.state.lock();
        s.in_flight = false;
        !s.abandoned
    }

    fn set_done(&self, stats: &Stats) {
        let mut s = self.state.lock();
        let left = s.items.len() as u64;
        s.items.clear();
        s.bytes = 0;
        stats.dropped_exit.fetch_add(left, Relaxed);
        s.done = true;
        self.cv.notify_all();
    }
}

/// What became of one request.
enum Outcome {
    Sent(usize),
    /// A final answer.
    Refused,
    /// Retryable failures through every retry.
    Unreachable,
    /// Cut by the exit.
    Exit,
}

/// The sending thread's body.
pub fn run(config: &Config, queue: &Queue, stats: &Stats) {
    let url = config.endpoint.url();
    let mut failing = false;
    while let Some(body) = queue.pop() {
        let outcome = send(config, queue, stats, &body, &url, &mut failing);
        if queue.landed() {
            match outcome {
                Outcome::Sent(n) => {
                    stats.sent.fetch_add(1, Relaxed);
                    stats.sent_bytes.fetch_add(n as u64, Relaxed);
                }
                Outcome::Refused => _ = stats.dropped_refused.fetch_add(1, Relaxed),
                Outcome::Unreachable => _ = stats.dropped_unreachable.fetch_add(1, Relaxed),
                Outcome::Exit => _ = stats.dropped_exit.fetch_add(1, Relaxed),
            }
        }
    }
    queue.set_done(stats);
}

/// One request, tried until sent, refused, given up on, or cut by the exit.
fn send(
    config: &Config,
    queue: &Queue,
    stats: &Stats,
    body: &[u8],
    url: &str,
    failing: &mut bool,
) -> Outcome {
    let mut retries = 0;
    let mut backoff = FIRST_BACKOFF;
    loop {
        let started = Instant::now();
        if queue.closing().is_some_and(|end| end <= started) {
            return Outcome::Exit;
        }
        let deadline = || queue.deadline(started, config.timeout);
        match http::post(config, body, &deadline) {
            Ok(_) => {
                if std::mem::take(failing) {
                    log::info(&format!("otlp: {url} accepts profiles again"));
                }
                return Outcome::Sent(body.len());
            }
            Err(f) => {
                *failing = true;
                *stats.last_failure.lock() = Some(f.to_string());
                log::warn_once(
                    &format!("otlp {}", f.kind()),
                    &format!(
                        "otlp: {url}: {f}; {} (said once per kind of failure; `status` counts the periods dropped)",
                        if f.retryable() {
                            "retrying, keeping at most 4 periods"
                        } else {
                            "that period's profile is dropped"
                        }
                    ),
                );
                if !f.retryable() {
                    return Outcome::Refused;
                }
                if queue.closing().is_some() {
                    return Outcome::Exit;
                }
                if retries >= MAX_RETRIES {
                    return Outcome::Unreachable;
                }
                retries += 1;
                stats.retries.fetch_add(1, Relaxed);
                let wait = backoff.max(f.retry_after().unwrap_or_default().min(MAX_RETRY_AFTER));
                backoff = (backoff * 2).min(MAX_BACKOFF);
                // Closing cuts the wait short; the loop then makes one
                // last try within the closing deadline.
                queue.sleep(wait);
            }
        }
    }
}
