//! Stacks already folded into a tree, by a key of machine words, so that a
//! stack seen before costs one look-up instead of a name look-up per frame
//! and a walk down the tree.

use crate::calltree::NodeId;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// The most words the stacks' keys may hold (8 MiB): past it, new stacks
/// take the slow path (their frames named one by one) every time.
pub const STACK_WORDS: usize = 1 << 20;

/// Stacks already in a tree: key `[thread, class name, frame…]` (a frame's
/// jmethodID, its low bit set for a native frame), value the node.
pub type Stacks = HashMap<Box<[usize]>, NodeId, BuildHasherDefault<WordHasher>>;

/// A hasher for keys of machine words (jmethodIDs, small ids): SipHash's
/// resistance to chosen keys buys nothing here and costs per word.
#[derive(Default)]
pub struct WordHasher(u64);

impl Hasher for WordHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    /// A slice of words arrives here as its bytes: a word at a time.
    fn write(&mut self, bytes: &[u8]) {
        let mut words = bytes.chunks_exact(8);
        for w in words.by_ref() {
            self.write_u64(u64::from_ne_bytes(w.try_into().expect("8 bytes")));
        }
        for &b in words.remainder() {
            self.write_u64(b as u64);
        }
    }
    fn write_u64(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, w: usize) {
        self.write_u64(w as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    /// Keys that differ in one word, or only in length, hash apart.
    #[test]
    fn words_change_the_hash() {
        let h = |k: &[usize]| BuildHasherDefault::<WordHasher>::default().hash_one(k);
        let a = [1usize, 7, 0x7f00_1234_5670, 0x7f00_1234_5680];
        let mut b = a;
        b[3] |= 1; // the same method, native
        assert_ne!(h(&a), h(&b));
        assert_ne!(h(&a), h(&a[..3]));
        let mut s = Stacks::default();
        s.insert(a.as_slice().into(), NodeId(3));
        assert_eq!(s.get(a.as_slice()), Some(&NodeId(3)));
        assert_eq!(s.get(b.as_slice()), None);
    }
}
