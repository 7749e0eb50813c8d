//! What the stack formats share: the most frames a stack keeps, and the
//! identity of a stack's top frames computed while walking a tree.
//!
//! A converter that spells out stacks (collapsed, pprof, hprof) must merge
//! two nodes whose top frames agree (a stack cut to its top [`MAX_FRAMES`],
//! an HPROF trace of `depth` frames) without spelling either out: that would
//! cost the depth for every node, quadratic on a deep chain. So a node's top
//! frames are identified by a rolling hash of its path ([`TopFrames`]): two
//! 61-bit polynomial hashes and the number of frames, updated in O(1) per
//! node of a depth-first walk.

/// The most frames a stack keeps in the converted formats (the agent's
/// default `depth`, as the JFR reader keeps); deeper ones keep their top
/// frames.
pub use crate::snapshot::MAX_FRAMES;

/// Name of the root that stands for the frames cut off a deeper stack.
pub const TRUNCATED: &str = "[truncated]";

/// The identity of a stack's top frames: two hashes and their number.
pub type Key = (u64, u64, u32);

/// The key of no frame at all.
pub const EMPTY: Key = (0, 0, 0);

const P: u64 = (1 << 61) - 1;
const BASES: [u64; 2] = [0x1f3d_5b79_a2c4_e6f1 % P, 0x0b5d_1e2f_9a8c_7d63 % P];

fn mulmod(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) % P as u128) as u64
}

/// Keys of the top `window` frames of the paths of a depth-first walk.
pub struct TopFrames {
    window: usize,
    /// BASES^k for k up to `window`.
    pow: Vec<[u64; 2]>,
    /// prefix[k]: the hashes of the current path's first k frames.
    prefix: Vec<[u64; 2]>,
}

impl TopFrames {
    pub fn new(window: usize) -> TopFrames {
        let mut pow = vec![[1u64, 1u64]];
        for k in 1..=window {
            let p = pow[k - 1];
            pow.push([mulmod(p[0], BASES[0]), mulmod(p[1], BASES[1])]);
        }
        TopFrames {
            window,
            pow,
            prefix: vec![[0, 0]],
        }
    }

    /// Enters the frame `value` at `depth` (from 1; the frames above it are
    /// those entered last at depths 1 to `depth - 1`) and returns the key of
    /// the path's top `min(depth, window)` frames. Equal values are equal
    /// frames; `value` is below 2^61.
    pub fn push(&mut self, depth: usize, value: u64) -> Key {
        self.prefix.truncate(depth);
        let last = self.prefix[depth - 1];
        let v = value + 1;
        self.prefix.push([
            (mulmod(last[0], BASES[0]) + v) % P,
            (mulmod(last[1], BASES[1]) + v) % P,
        ]);
        let w = depth.min(self.window);
        if w == 0 {
            return EMPTY;
        }
        let (top, base, p) = (self.prefix[depth], self.prefix[depth - w], self.pow[w]);
        (
            (top[0] + P - mulmod(base[0], p[0])) % P,
            (top[1] + P - mulmod(base[1], p[1])) % P,
            w as u32,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_top_frames_equal_keys() {
        let mut t = TopFrames::new(2);
        // a b c, then a' b c: the top two (b c) agree.
        let path1: Vec<Key> = [1, 2, 3]
            .iter()
            .enumerate()
            .map(|(d, &v)| t.push(d + 1, v))
            .collect();
        let k = t.push(1, 9);
        assert_ne!(k, path1[0]);
        t.push(2, 2);
        assert_eq!(t.push(3, 3), path1[2]);
        assert_ne!(t.push(2, 3), path1[1]);
        assert_eq!(TopFrames::new(0).push(1, 5), EMPTY);
    }
}
