//! Between the period timer and the one sending thread: what waits to be
//! sent, as ONE [`Unsent`] into which each new period is folded while the
//! sender is busy or the collector is down, and what the push counts.
//!
//! The bound: the waiting profile and the one the sender holds together at
//! most [`MAX_BYTES`] (their samples' memory, [`Unsent::bytes`]). A folded
//! profile holds each (thread, call path) once, so it grows with the
//! program's distinct paths, not with the length of an outage: it stays
//! below one profile of every path the deltas follow, and the bound only
//! bites for a program with hundreds of thousands of distinct paths. When
//! a fold would pass it, the older periods are dropped, counted (periods
//! and sampling's samples) and said, and the newest kept. Nothing here
//! waits on the program: a collector that is down, slow or hostile costs
//! it a thread asleep and at most this much memory.

use super::unsent::Unsent;
use parking_lot::{Condvar, Mutex};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::{Duration, Instant};

/// The most bytes the waiting and the sending profile hold together: the
/// old queue's figure (4 periods, 32 MiB gzipped), so folding costs no
/// more memory than the queue it replaced.
pub const MAX_BYTES: usize = 32 << 20;

/// What the push did, for `status` and the exit summary. Periods are
/// counted, not requests: a push after an outage carries several.
#[derive(Default)]
pub struct Stats {
    /// Periods with something to send, and with nothing new.
    pub periods: AtomicU64,
    pub empty: AtomicU64,
    /// Periods the collector accepted; the requests that carried them, and
    /// their bytes (gzipped).
    pub sent: AtomicU64,
    pub pushes: AtomicU64,
    pub sent_bytes: AtomicU64,
    /// Requests made (sent or not), their bytes before gzip, and the
    /// threads' CPU time to make them (deltas, folding, encoding, gzip), ns.
    pub tries: AtomicU64,
    pub raw_bytes: AtomicU64,
    pub build_ns: AtomicU64,
    pub retries: AtomicU64,
    /// Periods dropped: folding them would pass [`MAX_BYTES`]; the collector
    /// refused them (a final answer); left when the JVM exited.
    pub dropped_bound: AtomicU64,
    pub dropped_refused: AtomicU64,
    pub dropped_exit: AtomicU64,
    /// `sampling`'s samples in the periods dropped, for every reason.
    pub dropped_samples: AtomicU64,
    pub last_failure: Mutex<Option<String>>,
}

impl Stats {
    pub fn dropped(&self) -> u64 {
        self.dropped_bound.load(Relaxed)
            + self.dropped_refused.load(Relaxed)
            + self.dropped_exit.load(Relaxed)
    }

    /// Counts `periods` periods holding `sampled` samples as dropped for
    /// `reason` (one of the `dropped_` counters).
    pub fn drop(&self, reason: &AtomicU64, (periods, sampled): (u64, u64)) {
        reason.fetch_add(periods, Relaxed);
        self.dropped_samples.fetch_add(sampled, Relaxed);
    }
}

/// An unsent profile's (periods, samples), what a drop counts.
fn weight(u: &Unsent) -> (u64, u64) {
    (u.periods, u.sampled)
}

/// `older` and `later` folded within `limit` bytes: when the fold would
/// pass it, `older` is dropped (counted) and `later` kept alone, if it
/// fits.
fn fold_bounded(
    older: Option<Unsent>,
    later: Unsent,
    limit: usize,
    stats: &Stats,
) -> Option<Unsent> {
    let Some(mut older) = older else {
        if later.bytes > limit {
            stats.drop(&stats.dropped_bound, weight(&later));
            return None;
        }
        return Some(later);
    };
    // A fold never holds more than both: within the limit, no check.
    if older.bytes + later.bytes <= limit {
        older.fold(later);
        return Some(older);
    }
    // Near the limit: paths the two share may keep the fold within it.
    let dropped = weight(&older);
    let alone = later.clone();
    older.fold(later);
    if older.bytes <= limit {
        return Some(older);
    }
    stats.drop(&stats.dropped_bound, dropped);
    fold_bounded(None, alone, limit, stats)
}

#[derive(Default)]
struct State {
    /// The periods waiting, folded.
    waiting: Option<Unsent>,
    /// What the sender holds (popped, not yet sent, dropped or put back):
    /// its (periods, samples) and bytes.
    in_flight: Option<((u64, u64), usize)>,
    /// Set at the end: send what is waiting until then, retry nothing.
    closing: Option<Instant>,
    /// The sender has finished.
    done: bool,
    /// The exit stopped waiting for the sender and counted what it held.
    abandoned: bool,
}

#[derive(Default)]
pub struct Backlog {
    state: Mutex<State>,
    cv: Condvar,
}

impl Backlog {
    /// Adds a period (the timer's): folded into what waits.
    pub fn push(&self, later: Unsent, stats: &Stats) {
        let mut s = self.state.lock();
        let limit = MAX_BYTES.saturating_sub(s.in_flight.map_or(0, |f| f.1));
        let older = s.waiting.take();
        s.waiting = fold_bounded(older, later, limit, stats);
        self.cv.notify_all();
    }

    /// What waits, all of it, waiting for some; `None` once closing and
    /// nothing waits.
    pub fn pop(&self) -> Option<Unsent> {
        let mut s = self.state.lock();
        loop {
            if let Some(u) = s.waiting.take() {
                s.in_flight = Some((weight(&u), u.bytes));
                return Some(u);
            }
            if s.closing.is_some() {
                return None;
            }
            self.cv.wait(&mut s);
        }
    }

    /// The sender could not send `older` (its request failed, to be
    /// retried): what came since is folded into it, to go in the next try.
    pub fn put_back(&self, older: Unsent, stats: &Stats) {
        let mut s = self.state.lock();
        s.in_flight = None;
        if s.abandoned {
            return;
        }
        let later = s.waiting.take();
        s.waiting = match later {
            Some(later) => fold_bounded(Some(older), later, MAX_BYTES, stats),
            None => Some(older),
        };
    }

    /// The periods and bytes waiting or being sent, for `status`.
    pub fn held(&self) -> (u64, usize) {
        let s = self.state.lock();
        let waiting = s.waiting.as_ref().map_or((0, 0), |u| (u.periods, u.bytes));
        let sending = s.in_flight.map_or((0, 0), |((p, _), b)| (p, b));
        (waiting.0 + sending.0, waiting.1 + sending.1)
    }

    pub fn closing(&self) -> Option<Instant> {
        self.state.lock().closing
    }

    /// When a request started now must end: `timeout` from `started`, or
    /// the closing deadline if sooner.
    pub fn deadline(&self, started: Instant, timeout: Duration) -> Instant {
        let own = started + timeout;
        self.closing().map_or(own, |c| c.min(own))
    }

    /// Sleeps `d` unless closing starts first (then false).
    pub fn sleep(&self, d: Duration) -> bool {
        let until = Instant::now() + d;
        let mut s = self.state.lock();
        while s.closing.is_none() {
            if self.cv.wait_until(&mut s, until).timed_out() {
                return true;
            }
        }
        false
    }

    /// Asks the sender to send what waits by `deadline` and stop.
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
            if let Some(u) = s.waiting.take() {
                stats.drop(&stats.dropped_exit, weight(&u));
            }
            if let Some((w, _)) = s.in_flight.take() {
                stats.drop(&stats.dropped_exit, w);
            }
            s.abandoned = true;
        }
    }

    /// The sender is through with its profile (sent or dropped); false if
    /// the exit already counted it.
    pub fn landed(&self) -> bool {
        let mut s = self.state.lock();
        s.in_flight = None;
        !s.abandoned
    }

    pub fn set_done(&self, stats: &Stats) {
        let mut s = self.state.lock();
        if let Some(u) = s.waiting.take() {
            stats.drop(&stats.dropped_exit, weight(&u));
        }
        s.done = true;
        self.cv.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use profrj_otlp::{types, CallTrees, Keeper, Node, ThreadTree, ROOT};

    /// A period whose sampling delta has `paths` new paths of one sample.
    fn period(k: &mut Keeper, paths: u32, t: u64) -> Unsent {
        let trees = CallTrees {
            weights: &[types::SAMPLES],
            names: (0..paths).map(|i| format!("m{i}").into()).collect(),
            threads: vec![ThreadTree {
                key: 1,
                name: "main".into(),
                nodes: (0..paths)
                    .map(|name| Node {
                        parent: ROOT,
                        name,
                        own: [1, 0, 0],
                    })
                    .collect(),
            }],
            ..CallTrees::default()
        };
        let mut u = Unsent::new(t, t + 1);
        u.add("sampling", k.delta(trees));
        u
    }

    /// Within the bound periods fold (one range of time, every sample
    /// kept); past it the older are dropped, counted in periods and
    /// samples, and the newest kept.
    #[test]
    fn folds_within_the_bound_and_counts_what_it_drops() {
        let stats = Stats::default();
        let mut k = Keeper::default();
        let first = period(&mut k, 10, 100);
        let second = period(&mut k, 20, 101);
        let limit = first.bytes + second.bytes;
        let both = fold_bounded(Some(first), second, limit, &stats).unwrap();
        assert_eq!((both.periods, both.sampled), (2, 20));
        assert_eq!((both.start_unix_ns, both.end_unix_ns), (100, 102));
        assert_eq!(stats.dropped(), 0);
        // A third period with new paths does not fit: the two go.
        let third = period(&mut k, 25, 102);
        let kept = fold_bounded(Some(both), third, limit, &stats).unwrap();
        assert_eq!(
            (kept.periods, kept.sampled, kept.start_unix_ns),
            (1, 5, 102)
        );
        assert_eq!(stats.dropped_bound.load(Relaxed), 2);
        assert_eq!(stats.dropped_samples.load(Relaxed), 20);
        // One too big on its own is dropped too.
        let huge = period(&mut Keeper::default(), 400, 103);
        assert!(fold_bounded(Some(kept), huge, limit, &stats).is_none());
        assert_eq!(stats.dropped_bound.load(Relaxed), 4);
        assert_eq!(stats.dropped_samples.load(Relaxed), 20 + 5 + 400);
    }
}
