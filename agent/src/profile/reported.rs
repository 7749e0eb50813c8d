//! A thread's calls as a dump reports them: a group's trees (one per
//! carrier of a group of virtual threads) added up path by path, CPU time
//! made from the wall time and what was not CPU time (`Node::cpu_short_*`),
//! the probes' own time from the counts, and totals made consistent.
//!
//! The probes' own time (`probe_overhead`): a probe pair's mean cost (the
//! thread's, as last measured: `ThreadProfile::costs`) for each call of the
//! node, and with its callees' for each call in its subtree. The exits
//! take the same estimate off each call's times as it closes (a pair for
//! every call made under it, the rest of its own entry probe), so that the
//! times only grow from dump to dump and a push's deltas add up to the
//! snapshot (`otlp=`); taking it off here instead, from the counts, was
//! ~2 ns a call cheaper but let a node's times go down when the mean cost
//! rose (docs/BENCHMARKS.md).
//!
//! A call still running at the dump is counted (its entry was) but has no
//! times yet; its completed callees have. A total is raised to the node's
//! own part and its children's totals where it is below them (a call still
//! running), so that a node's children never add up to more than the node.

use super::tree::{Node, Tree};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// A node's figures in the order of the section's weights: calls, self wall,
/// self CPU, total wall, total CPU, probe time with callees, probe time own,
/// exceptions; times in ticks.
pub(super) type Values = [u64; 8];

const CALLS: usize = 0;
const SELF_WALL: usize = 1;
const SELF_CPU: usize = 2;
const CUM_WALL: usize = 3;
const CUM_CPU: usize = 4;
const OVERHEAD_CUM: usize = 5;
const OVERHEAD_SELF: usize = 6;
const EXCEPTIONS: usize = 7;

/// The weights that are times (ticks, made ns for the snapshot).
pub(super) const TIMES: [usize; 6] = [
    SELF_WALL,
    SELF_CPU,
    CUM_WALL,
    CUM_CPU,
    OVERHEAD_CUM,
    OVERHEAD_SELF,
];

/// One thread's trees added up path by path (a group of virtual threads has
/// one per carrier), in pre-order: index 0 is the root (no method), and
/// every node comes after its parent.
pub(super) struct Flat {
    pub(super) method: Vec<u32>,
    pub(super) parent: Vec<u32>,
    pub(super) values: Vec<Values>,
    at: HashMap<(u32, u32), u32>,
}

/// What one source node holds, read once.
struct Raw {
    flat: u32,
    /// Its parent's position in the source's list (the root: none).
    parent: Option<usize>,
    count: u64,
    timed: u64,
    exceptions: u64,
    cum: u64,
    own: u64,
    short_cum: u64,
    short_self: u64,
}

impl Flat {
    pub(super) fn new() -> Self {
        Self {
            method: vec![u32::MAX],
            parent: vec![0],
            values: vec![[0; 8]],
            at: HashMap::new(),
        }
    }

    pub(super) fn len(&self) -> usize {
        self.method.len()
    }

    /// A new node for `method` under `parent`.
    fn push(&mut self, parent: u32, method: u32) -> u32 {
        self.method.push(method);
        self.parent.push(parent);
        self.values.push([0; 8]);
        self.method.len() as u32 - 1
    }

    /// The node for `method` under `parent`, made if new (a second tree
    /// of the thread: the first one's nodes are indexed by path the first
    /// time, so that a thread of one tree, the usual, hashes nothing).
    fn child(&mut self, parent: u32, method: u32) -> u32 {
        if self.at.is_empty() {
            for i in 1..self.len() {
                self.at.insert((self.parent[i], self.method[i]), i as u32);
            }
        }
        let next = self.method.len() as u32;
        match *self.at.entry((parent, method)).or_insert(next) {
            i if i == next => self.push(parent, method),
            i => i,
        }
    }

    /// Adds `tree`'s calls, with its probes' mean costs `[enter, exit]`
    /// (ticks) for the probes' time. `sampled`: `timing=sampled`'s tree,
    /// whose nodes hold the timed calls' totals.
    pub(super) fn add(&mut self, tree: &Tree, [enter, exit]: [u64; 2], sampled: bool) {
        let raw = self.read(tree);
        let n = raw.len();
        // Calls in each subtree (the list is in pre-order: children after
        // their parent).
        let mut subtree: Vec<u64> = raw.iter().map(|r| r.count).collect();
        for i in (0..n).rev() {
            if let Some(p) = raw[i].parent {
                subtree[p] = subtree[p].wrapping_add(subtree[i]);
            }
        }
        let pair = enter.wrapping_add(exit);
        let mut values: Vec<Values> = Vec::with_capacity(n);
        for (i, r) in raw.iter().enumerate() {
            let mut v = [0u64; 8];
            v[CALLS] = r.count;
            v[EXCEPTIONS] = r.exceptions;
            v[OVERHEAD_SELF] = r.count.wrapping_mul(pair);
            v[OVERHEAD_CUM] = subtree[i].wrapping_mul(pair);
            match sampled {
                false => {
                    // Totals and own parts as the exits summed them, the
                    // probes' cost already off.
                    v[CUM_WALL] = r.cum;
                    v[SELF_WALL] = r.own.min(r.cum);
                    v[CUM_CPU] = r.cum.saturating_sub(r.short_cum);
                    // `short_self` is a signed sum (`Node::cpu_short_self`).
                    let own_cpu = r.own as i128 - r.short_self as i64 as i128;
                    v[SELF_CPU] = own_cpu.clamp(0, v[CUM_CPU] as i128) as u64;
                }
                true => {
                    // Totals: the timed calls' scaled to all calls.
                    let scale = |v: u64| match r.timed {
                        0 => 0,
                        t => (v as u128 * r.count as u128 / t as u128) as u64,
                    };
                    v[CUM_WALL] = scale(r.cum);
                    v[CUM_CPU] = scale(r.cum.saturating_sub(r.short_cum));
                }
            }
            values.push(v);
        }
        if sampled {
            // Own parts: the total less the children's totals.
            let mut kids_cum = vec![[0u64; 2]; n];
            for i in (0..n).rev() {
                if let Some(p) = raw[i].parent {
                    kids_cum[p][0] += values[i][CUM_WALL];
                    kids_cum[p][1] += values[i][CUM_CPU];
                }
            }
            for (v, k) in values.iter_mut().zip(&kids_cum) {
                v[SELF_WALL] = v[CUM_WALL].saturating_sub(k[0]);
                v[SELF_CPU] = v[CUM_CPU].saturating_sub(k[1]);
            }
        }
        for (r, v) in raw.iter().zip(&values) {
            let into = &mut self.values[r.flat as usize];
            for (a, b) in into.iter_mut().zip(v) {
                *a = a.wrapping_add(*b);
            }
        }
    }

    /// `tree`'s nodes in pre-order, each placed in this flat tree (the
    /// first tree's as they come: one tree's paths are distinct).
    fn read(&mut self, tree: &Tree) -> Vec<Raw> {
        let get = |a: &AtomicU64| a.load(Relaxed);
        let first = self.len() == 1;
        let mut out: Vec<Raw> = Vec::new();
        let mut stack: Vec<(u32, Option<usize>, u32)> = tree
            .children(Tree::ROOT)
            .into_iter()
            .rev()
            .map(|c| (c, None, 0))
            .collect();
        while let Some((index, parent, flat_parent)) = stack.pop() {
            let n: &Node = tree.node(index);
            let method = n.method.load(Relaxed);
            let flat = match first {
                true => self.push(flat_parent, method),
                false => self.child(flat_parent, method),
            };
            let here = out.len();
            out.push(Raw {
                flat,
                parent,
                count: get(&n.count),
                timed: get(&n.timed),
                exceptions: get(&n.exceptions),
                cum: get(&n.cum_ticks),
                own: get(&n.self_ticks),
                short_cum: get(&n.cpu_short_cum),
                short_self: get(&n.cpu_short_self),
            });
            let kids = tree.children(index);
            stack.extend(kids.into_iter().rev().map(|c| (c, Some(here), flat)));
        }
        out
    }

    /// Raises each total to its node's own part and its children's totals
    /// where it is below them (wall and CPU); call once every tree is in.
    pub(super) fn finish(&mut self) {
        let n = self.len();
        let mut kids = vec![[0u64; 2]; n];
        for i in (1..n).rev() {
            let v = &mut self.values[i];
            v[CUM_WALL] = v[CUM_WALL].max(v[SELF_WALL].saturating_add(kids[i][0]));
            v[CUM_CPU] = v[CUM_CPU].max(v[SELF_CPU].saturating_add(kids[i][1]));
            let (wall, cpu) = (v[CUM_WALL], v[CUM_CPU]);
            let p = self.parent[i] as usize;
            kids[p][0] = kids[p][0].saturating_add(wall);
            kids[p][1] = kids[p][1].saturating_add(cpu);
        }
    }

    /// Children of each node, the most expensive (total wall time) first.
    pub(super) fn children(&self) -> Vec<Vec<u32>> {
        let mut out = vec![Vec::new(); self.len()];
        for i in 1..self.len() {
            out[self.parent[i] as usize].push(i as u32);
        }
        for c in &mut out {
            c.sort_by_key(|&i| std::cmp::Reverse(self.values[i as usize][CUM_WALL]));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::tree::bump;

    fn put(t: &Tree, path: &[u32], f: impl Fn(&Node)) {
        let mut n = Tree::ROOT;
        for &m in path {
            n = t.child(n, m).unwrap();
        }
        f(t.node(n));
    }

    /// A node's figures as the exits summed them; the probes' time from the
    /// counts: a(2 calls) → b(6 calls), enter 1, exit 2 (a pair 3).
    #[test]
    fn probe_time_comes_from_the_counts() {
        let t = Tree::new();
        put(&t, &[1], |n| {
            bump(&n.count, 2);
            bump(&n.cum_ticks, 980);
            bump(&n.self_ticks, 386);
            bump(&n.cpu_short_cum, 60); // b's
        });
        put(&t, &[1, 2], |n| {
            bump(&n.count, 6);
            bump(&n.cum_ticks, 594);
            bump(&n.self_ticks, 594);
            bump(&n.cpu_short_cum, 60);
            bump(&n.cpu_short_self, 60);
        });
        let mut f = Flat::new();
        f.add(&t, [1, 2], false);
        f.finish();
        assert_eq!(f.method, [u32::MAX, 1, 2]);
        // a: probe time 2 × 3 own, 8 × 3 with b's; b: 6 × 3 both.
        assert_eq!(f.values[1], [2, 386, 386, 980, 920, 24, 6, 0]);
        assert_eq!(f.values[2], [6, 594, 534, 594, 534, 18, 18, 0]);
    }

    /// A call still running: counted, no times of its own; its total is its
    /// completed children's.
    #[test]
    fn a_running_call_totals_its_completed_callees() {
        let t = Tree::new();
        put(&t, &[1], |n| bump(&n.count, 1));
        put(&t, &[1, 2], |n| {
            bump(&n.count, 3);
            bump(&n.cum_ticks, 300);
            bump(&n.self_ticks, 300);
        });
        let mut f = Flat::new();
        f.add(&t, [0, 0], false);
        f.finish();
        assert_eq!(f.values[1][..5], [1, 0, 0, 300, 300]);
    }

    /// Two carriers' trees of one group add up path by path, each with its
    /// own probe costs.
    #[test]
    fn trees_add_up_by_path() {
        let (one, two) = (Tree::new(), Tree::new());
        for (t, k) in [(&one, 1), (&two, 2)] {
            put(t, &[1, 2], |n| {
                bump(&n.count, k);
                bump(&n.cum_ticks, 100 * k);
                bump(&n.self_ticks, 100 * k);
            });
        }
        put(&two, &[3], |n| bump(&n.count, 4));
        let mut f = Flat::new();
        f.add(&one, [1, 0], false);
        f.add(&two, [2, 0], false);
        f.finish();
        assert_eq!(f.method, [u32::MAX, 1, 2, 3]);
        // [1, 2]: 100 + 200, the probes' time 1 × 1 + 2 × 2.
        assert_eq!(f.values[2][..4], [3, 300, 300, 300]);
        assert_eq!(f.values[2][OVERHEAD_SELF], 5);
        assert_eq!(f.values[3][CALLS], 4);
        assert_eq!(f.children()[0], [1, 3]);
    }

    /// `timing=sampled`: totals scaled from the timed calls to all calls,
    /// self the total less the children's, never below 0.
    #[test]
    fn sampled_times_scale_to_the_count() {
        let t = Tree::new();
        let set = |path: &[u32], count, timed, cum| {
            put(&t, path, |n| {
                n.count.store(count, Relaxed);
                n.timed.store(timed, Relaxed);
                n.cum_ticks.store(cum, Relaxed);
                n.cpu_short_cum.store(cum / 2, Relaxed);
            })
        };
        set(&[1], 64, 2, 100);
        set(&[1, 2], 64, 2, 40);
        let values = |t: &Tree| {
            let mut f = Flat::new();
            f.add(t, [0, 0], true);
            f.values
        };
        let v = values(&t);
        assert_eq!(v[1][..5], [64, 1920, 960, 3200, 1600]);
        assert_eq!(v[2][..5], [64, 1280, 640, 1280, 640]);
        // Children estimated above the parent: self 0.
        set(&[1, 2], 64, 1, 100);
        assert_eq!(values(&t)[1][SELF_WALL], 0);
        // Never timed: no times.
        set(&[1, 2], 5, 0, 0);
        assert_eq!(values(&t)[2][1..5], [0; 4]);
    }
}
