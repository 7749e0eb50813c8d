//! The probes' own cost: the running mean each probe is charged, and which
//! calls measure it (one in [`MEASURE_EVERY`](super::MEASURE_EVERY), or with
//! `timing=sampled` the timed ones, one in [`SAMPLE_EVERY`](super::SAMPLE_EVERY); drawn at random).

use super::clock;

/// A running mean of probe costs in ticks. A sample is at most four times
/// the mean once there are 8 (an interrupt, a page fault), and never more
/// than `cap` ([`MAX_PROBE_NS`]); a probe that did more than its usual
/// work (a new node, the thread's first probe) is not a sample.
pub(super) struct Mean {
    sum: u64,
    n: u64,
    pub(super) mean: u64,
    cap: u64,
}

/// The most one probe's cost sample may count for.
const MAX_PROBE_NS: u64 = 1_000;

impl Mean {
    pub(super) fn new() -> Self {
        Self {
            sum: 0,
            n: 0,
            mean: 0,
            cap: clock::ns_to_ticks(MAX_PROBE_NS),
        }
    }

    // `#[inline]`: on the probes' path (`probes.rs`), which may be built
    // in another codegen unit than this file.
    #[inline]
    pub(super) fn add(&mut self, sample: u64) {
        let sample = match self.n {
            0..=7 => sample.min(self.cap),
            _ => sample.min(4 * self.mean + 1).min(self.cap),
        };
        self.sum += sample;
        self.n += 1;
        self.mean = self.sum / self.n.max(1);
    }
}

/// Calls until the next measured one: 1 to 2 × `every` - 1, mean `every`
/// ([`SAMPLE_EVERY`](super::SAMPLE_EVERY) or
/// [`MEASURE_EVERY`](super::MEASURE_EVERY)), drawn at random so that code
/// repeating a cycle of calls (a chain of 22 calls against a period of 32)
/// cannot keep one of them from ever being sampled.
#[inline] // as `Mean::add`
pub(super) fn next_countdown(rng: &mut u32, every: u32) -> u32 {
    let mut x = *rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *rng = x;
    1 + x % (2 * every - 1)
}
