//! What one sampled object stands for: its bytes and objects weighed by the
//! chance HotSpot's sampling had of picking it (the module's comment,
//! `mod.rs`, says why `s / p` and `1 / p`), and how weights add up.

use crate::calltree::Weights;
use std::ops::AddAssign;

/// Estimated bytes and objects, and the samples they come from.
#[derive(Clone, Copy, Default, Debug, PartialEq)]
pub struct Alloc {
    pub bytes: f64,
    pub objects: f64,
    pub samples: u64,
}

impl AddAssign for Alloc {
    fn add_assign(&mut self, o: Alloc) {
        self.bytes += o.bytes;
        self.objects += o.objects;
        self.samples += o.samples;
    }
}

impl Weights for Alloc {
    fn heaviness(&self) -> u64 {
        self.bytes as u64
    }
}

/// What one sampled object of `size` bytes stands for, at `interval`.
pub fn weigh(size: u64, interval: u32) -> Alloc {
    let p = if interval == 0 || size == 0 {
        1.0
    } else {
        -(-(size as f64) / interval as f64).exp_m1()
    };
    let p = p.max(f64::MIN_POSITIVE);
    Alloc {
        bytes: size as f64 / p,
        objects: 1.0 / p,
        samples: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::weigh;

    /// Sampling objects of a fixed size as HotSpot does (exponential gaps
    /// with the interval as mean) and weighing each sample gives back the
    /// bytes and objects allocated, whatever the size.
    #[test]
    fn weights_estimate_the_totals() {
        let interval = 512 * 1024;
        // A small xorshift: the test must not depend on a crate or the clock.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut uniform = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 11) as f64 / (1u64 << 53) as f64
        };
        for size in [16u64, 1000, 100_000, 4 << 20] {
            let total = 20_000_000_000u64; // bytes allocated, in objects of `size`
            let (mut bytes, mut count) = (0.0, 0.0);
            let mut at = 0u64; // end of the last sampled object
            loop {
                // The next sample point, and the object it falls in.
                let point = at as f64 - (1.0 - uniform()).ln() * interval as f64;
                let object = (point / size as f64).floor() as u64;
                at = (object + 1) * size;
                if at > total {
                    break;
                }
                let w = weigh(size, interval);
                bytes += w.bytes;
                count += w.objects;
            }
            let objects = (total / size) as f64;
            assert!((bytes / total as f64 - 1.0).abs() < 0.03, "{size}: {bytes}");
            assert!(
                (count / objects - 1.0).abs() < 0.03,
                "{size}: {count} of {objects}"
            );
        }
        let every = weigh(24, 0);
        assert_eq!((every.bytes, every.objects), (24.0, 1.0));
    }
}
