//! One thread's call tree, written by that thread alone and read by a dump
//! while it runs. Nodes live in chunks that never move (chunk `k` holds
//! `BASE << k` nodes), so a reader can follow child links without a lock;
//! every field a reader looks at is an atomic written with plain (Relaxed)
//! stores by the owner — no read-modify-write, no lock on the hot path. A new
//! node is fully written before it is linked (Release), and readers follow
//! links with Acquire. Figures read during a dump may be a few calls apart
//! from each other; each is a value that really was there.

use std::ptr::null_mut;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicU64, Ordering::*};

const BASE: usize = 256;
const CHUNKS: usize = 17; // 256 * (2^17 - 1) ≈ 33 million nodes per thread
const NONE: u32 = u32::MAX;

/// Per-node figures, in ticks (wall and CPU alike), as the probes read them.
#[derive(Default)]
pub struct Node {
    pub method: AtomicU32,
    pub first_child: AtomicU32,
    pub next_sibling: AtomicU32,
    pub count: AtomicU64,
    /// `timing=sampled`: the calls whose times are in `cum_*`.
    pub timed: AtomicU64,
    pub exceptions: AtomicU64,
    /// Wall ticks in completed calls, callees included / excluded.
    pub cum_ticks: AtomicU64,
    pub self_ticks: AtomicU64,
    /// Of those, the ticks that were not the thread's CPU time (its CPU
    /// time is the wall time less these): callees included, and excluded
    /// (a wrapping sum, read as signed: a call's own part can come out
    /// below 0 where its callees' were clamped). Zero while the thread's
    /// CPU clock runs with the wall clock, so a call's exit adds to these
    /// only where the clock was read again during the call.
    pub cpu_short_cum: AtomicU64,
    pub cpu_short_self: AtomicU64,
    /// The child the owner found last (null: none yet): the entry probe
    /// tries it before walking the children, and reads it from the
    /// parent's node, which the caller's exit touches anyway. Only the
    /// owner reads or writes it.
    hot: AtomicPtr<Node>,
}

/// Adds without a read-modify-write: only the owning thread writes.
#[inline(always)]
pub fn bump(a: &AtomicU64, d: u64) {
    a.store(a.load(Relaxed).wrapping_add(d), Relaxed);
}

pub struct Tree {
    chunks: [AtomicPtr<Node>; CHUNKS],
    /// Nodes in use (only the owner changes it).
    len: AtomicU32,
}

fn locate(index: u32) -> (usize, usize) {
    let i = index as usize / BASE + 1;
    let k = (usize::BITS - 1 - i.leading_zeros()) as usize;
    (k, index as usize - BASE * ((1 << k) - 1))
}

impl Tree {
    /// A tree with its root (method `u32::MAX`, never written out itself).
    pub fn new() -> Self {
        let t = Self {
            chunks: Default::default(),
            len: AtomicU32::new(0),
        };
        t.push(NONE);
        t
    }

    pub const ROOT: u32 = 0;

    /// The node at `index`, or `None` past the nodes made: never panics
    /// (on the probes' unguarded path).
    #[inline(always)]
    fn get(&self, index: u32) -> Option<&Node> {
        let (k, off) = locate(index);
        let chunk = self.chunks.get(k)?.load(Acquire);
        if chunk.is_null() || index >= self.len.load(Acquire) {
            return None;
        }
        // SAFETY: as in `node`.
        Some(unsafe { &*chunk.add(off) })
    }

    /// The root's node (`None` never happens: made with the tree).
    #[inline(always)]
    pub fn root(&self) -> Option<&Node> {
        self.get(Self::ROOT)
    }

    pub fn node(&self, index: u32) -> &Node {
        let (k, off) = locate(index);
        let chunk = self.chunks[k].load(Acquire);
        assert!(!chunk.is_null() && index < self.len.load(Acquire));
        // SAFETY: chunk `k` holds `BASE << k` initialised nodes and is never
        // freed while the tree lives; `off` is within it (locate).
        unsafe { &*chunk.add(off) }
    }

    /// A new unlinked node; `None` once the tree is full.
    fn push(&self, method: u32) -> Option<u32> {
        let index = self.len.load(Relaxed);
        let (k, off) = locate(index);
        if k >= CHUNKS {
            return None;
        }
        if off == 0 {
            let chunk: Box<[Node]> = (0..BASE << k).map(|_| Node::default()).collect();
            self.chunks[k].store(Box::into_raw(chunk).cast(), Release);
        }
        let chunk = self.chunks[k].load(Relaxed);
        // SAFETY: chunk `k` holds `BASE << k` initialised nodes (stored above
        // when `off` is 0, else by an earlier push) and `off` is within it
        // (locate). No chunk is freed while the tree lives: one replaced by a
        // racing push (another thread than the owner, which `child` rules
        // out by contract only) would leak, not be freed.
        let n = unsafe { &*chunk.add(off) };
        n.method.store(method, Relaxed);
        n.first_child.store(NONE, Relaxed);
        n.next_sibling.store(NONE, Relaxed);
        n.hot.store(null_mut(), Relaxed);
        self.len.store(index + 1, Release);
        Some(index)
    }

    /// The child of `parent` for `method`, created if new (owner only).
    /// `None` when the tree is full: the call is then not recorded.
    #[inline]
    #[cfg(test)]
    pub fn child(&self, parent: u32, method: u32) -> Option<u32> {
        self.child_of(self.node(parent), method).map(|(c, _)| c)
    }

    /// The child of `p` for `method` if it exists (owner only): the last
    /// one found first, then a walk of the children. Never panics and
    /// allocates nothing: the entry probe's unguarded path; making a child
    /// is [`Tree::child_of`]'s.
    #[inline(always)]
    pub fn find_child(&self, p: &Node, method: u32) -> Option<&Node> {
        let hot = p.hot.load(Relaxed);
        if !hot.is_null() {
            // SAFETY: a node of this tree (set below and in `child_of`);
            // nodes never move or go while the tree lives.
            let n = unsafe { &*hot };
            if n.method.load(Relaxed) == method {
                return Some(n);
            }
        }
        let mut c = p.first_child.load(Relaxed);
        while c != NONE {
            let n = self.get(c)?;
            if n.method.load(Relaxed) == method {
                p.hot.store(n as *const Node as *mut Node, Relaxed);
                return Some(n);
            }
            c = n.next_sibling.load(Relaxed);
        }
        None
    }

    /// [`Tree::child`] from the parent's node, answering the child's node
    /// too (the probes keep it in their frame: no lookup by index).
    pub fn child_of(&self, p: &Node, method: u32) -> Option<(u32, &Node)> {
        let mut c = p.first_child.load(Relaxed);
        while c != NONE {
            let n = self.node(c);
            if n.method.load(Relaxed) == method {
                return Some((c, n));
            }
            c = n.next_sibling.load(Relaxed);
        }
        let new = self.push(method)?;
        let n = self.node(new);
        n.next_sibling.store(p.first_child.load(Relaxed), Relaxed);
        p.first_child.store(new, Release);
        p.hot.store(n as *const Node as *mut Node, Relaxed);
        Some((new, n))
    }

    /// Children of `index` as a reader sees them now.
    pub fn children(&self, index: u32) -> Vec<u32> {
        let mut out = Vec::new();
        let mut c = self.node(index).first_child.load(Acquire);
        while c != NONE {
            out.push(c);
            c = self.node(c).next_sibling.load(Acquire);
        }
        out
    }
}

impl Drop for Tree {
    fn drop(&mut self) {
        for (k, c) in self.chunks.iter().enumerate() {
            let p = c.load(Relaxed);
            if !p.is_null() {
                // SAFETY: allocated in `push` as a boxed slice of `BASE << k` nodes.
                drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, BASE << k)) });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_indices_without_gaps() {
        assert_eq!(locate(0), (0, 0));
        assert_eq!(locate(255), (0, 255));
        assert_eq!(locate(256), (1, 0));
        assert_eq!(locate(767), (1, 511));
        assert_eq!(locate(768), (2, 0));
    }

    #[test]
    fn children_are_found_again_and_survive_growth() {
        let t = Tree::new();
        let a = t.child(Tree::ROOT, 7).unwrap();
        assert_eq!(t.child(Tree::ROOT, 7), Some(a));
        let mut last = a;
        for m in 0..5000 {
            last = t.child(last, m).unwrap();
        }
        assert_eq!(t.children(Tree::ROOT), vec![a]);
        assert_eq!(t.node(last).method.load(Relaxed), 4999);
        let b = t.child(Tree::ROOT, 8).unwrap();
        assert_eq!(t.children(Tree::ROOT), vec![b, a]);
    }
}
