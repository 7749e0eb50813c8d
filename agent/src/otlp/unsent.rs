//! What waits to be sent: the deltas of one period, or of several folded
//! into one ([`Unsent::fold`]) when the collector could not take them, with
//! the time they cover. Kept as the deltas' samples, not as encoded bytes,
//! so that a later period can still be folded in: a push after an outage
//! is one profile per mode and weight covering the whole gap.

use profrj_otlp::{Attribute, Request, Samples};

/// The mode whose first weight is the samples the summary counts.
const SAMPLING: &str = "sampling";

/// One or more periods' deltas, not sent yet.
#[derive(Clone)]
pub struct Unsent {
    /// Each mode's samples, by the mode's name (a mode with nothing new in
    /// any of the periods is absent).
    modes: Vec<(&'static str, Samples)>,
    /// The periods covered: from the first's start to the last's end, ns
    /// since the epoch (a profile's `time_unix_nano` and `duration_nano`).
    pub start_unix_ns: u64,
    pub end_unix_ns: u64,
    /// Periods folded in (1 until a fold).
    pub periods: u64,
    /// `sampling`'s samples in it: what the summary says a drop lost.
    pub sampled: u64,
    /// [`Samples::heap_bytes`] of every mode: what the bound counts.
    pub bytes: usize,
}

impl Unsent {
    /// One period, from `start_unix_ns` to `end_unix_ns`, empty so far.
    pub fn new(start_unix_ns: u64, end_unix_ns: u64) -> Unsent {
        Unsent {
            modes: Vec::new(),
            start_unix_ns,
            end_unix_ns,
            periods: 1,
            sampled: 0,
            bytes: 0,
        }
    }

    /// Adds mode `name`'s delta of the period (nothing if it is empty).
    pub fn add(&mut self, name: &'static str, samples: Samples) {
        if samples.is_empty() {
            return;
        }
        if name == SAMPLING {
            self.sampled = self.sampled.saturating_add(samples.total(0));
        }
        self.bytes += samples.heap_bytes();
        self.modes.push((name, samples));
    }

    /// No mode has anything new.
    pub fn is_empty(&self) -> bool {
        self.modes.is_empty()
    }

    /// Folds `later` (the periods after these) in: one range of time from
    /// this one's start to `later`'s end, each mode's samples summed.
    pub fn fold(&mut self, later: Unsent) {
        self.start_unix_ns = self.start_unix_ns.min(later.start_unix_ns);
        self.end_unix_ns = self.end_unix_ns.max(later.end_unix_ns);
        self.periods += later.periods;
        self.sampled = self.sampled.saturating_add(later.sampled);
        for (name, samples) in later.modes {
            match self.modes.iter_mut().find(|(n, _)| *n == name) {
                Some((_, mine)) => mine.fold(samples),
                None => self.modes.push((name, samples)),
            }
        }
        self.bytes = self.modes.iter().map(|(_, s)| s.heap_bytes()).sum();
    }

    /// The request's bytes (not compressed): one profile per mode and
    /// weight, each covering the whole range.
    pub fn request(&self, resource: &[Attribute]) -> Vec<u8> {
        let mut request = Request::new();
        let duration = self.end_unix_ns.saturating_sub(self.start_unix_ns);
        for (_, samples) in &self.modes {
            request.add(samples, self.start_unix_ns, duration);
        }
        request.finish(resource, ("profrj", env!("CARGO_PKG_VERSION")))
    }
}
