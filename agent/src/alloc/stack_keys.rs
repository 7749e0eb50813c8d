//! Stacks already folded into a tree, by a key of machine words, so that a
//! stack seen before costs one look-up instead of a name look-up per frame
//! and a walk down the tree.

use crate::calltree::NodeId;
pub use crate::stack::WordHasher;
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// The most words the stacks' keys may hold (8 MiB): past it, new stacks
/// take the slow path (their frames named one by one) every time.
pub const STACK_WORDS: usize = 1 << 20;

/// Stacks already in a tree: key `[thread, class name, frame…]` (a frame's
/// jmethodID, its low bit set for a native frame), value the node.
pub type Stacks = HashMap<Box<[usize]>, NodeId, BuildHasherDefault<WordHasher>>;

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
