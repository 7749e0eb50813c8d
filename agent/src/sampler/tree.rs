//! One thread's sampled call tree: a node per distinct call path, with the
//! samples that ended on it and passed through it, all and those that found
//! the thread running. A [`WeightTree`] of sample counts.

use crate::calltree::{WeightTree, Weights};
use crate::methods::NameId;
use std::ops::AddAssign;

pub use crate::calltree::NodeId;

/// Samples, and how many found the thread running.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Samples {
    running: u64,
    all: u64,
}

impl AddAssign for Samples {
    fn add_assign(&mut self, o: Samples) {
        self.running = self.running.saturating_add(o.running);
        self.all = self.all.saturating_add(o.all);
    }
}

impl Weights for Samples {
    fn heaviness(&self) -> u64 {
        self.all
    }
}

/// Node 0 is the thread itself (its `cumulated*` are the thread's totals).
#[derive(Default)]
pub struct CallTree(WeightTree<Samples>);

impl CallTree {
    /// Folds one sample in; `path` runs from the thread's root frame to the top
    /// frame. Returns the node the sample ended on.
    #[cfg(test)]
    pub fn add_sample(&mut self, path: &[NameId], runnable: bool) -> NodeId {
        self.add_samples(path, 1, runnable as u64)
    }

    /// Folds `count` samples with the same stack in, `hits` of them counted as
    /// running (`hits <= count`).
    pub fn add_samples(&mut self, path: &[NameId], count: u64, hits: u64) -> NodeId {
        let w = Samples {
            running: hits,
            all: count,
        };
        self.0.add(path.iter().copied(), w)
    }

    /// Counts one more sample on the path that ends at `leaf` (the same stack as
    /// an earlier sample), walking up through parents instead of down by name.
    #[cfg(test)]
    pub fn repeat_sample(&mut self, leaf: NodeId, runnable: bool) {
        self.repeat_samples(leaf, 1, runnable as u64)
    }

    /// Counts `count` more samples, `hits` of them running, on the path that ends at `leaf`.
    pub fn repeat_samples(&mut self, leaf: NodeId, count: u64, hits: u64) {
        let w = Samples {
            running: hits,
            all: count,
        };
        self.0.add_at(leaf, w)
    }

    /// Adds `other` (an ended thread's tree) into this one (its group's).
    pub fn absorb(&mut self, other: &CallTree) {
        self.0.absorb(&other.0);
    }

    /// The tree in the model's form: per node its own and total samples,
    /// running and all (`hits`, `elapsed`, `cumulated`, `cumulatedElapsed`).
    pub fn to_model(&self, thread: Option<crate::threads::ThreadId>) -> crate::model::ThreadTree {
        self.0.to_model(thread, |v, own, cumulated| {
            v.extend([own.running, own.all, cumulated.running, cumulated.all])
        })
    }

    #[cfg(test)]
    pub fn node_count(&self) -> usize {
        self.0.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each node as the model has it: indented by depth, its frame, then
    /// hits, elapsed, cumulated, cumulatedElapsed.
    fn collect(t: &CallTree) -> Vec<String> {
        let m = t.to_model(None);
        m.nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let v = m.values_of(i, 4);
                format!(
                    "{}{} h{} e{} c{} ce{}",
                    " ".repeat(n.depth as usize - 1),
                    n.frame,
                    v[0],
                    v[1],
                    v[2],
                    v[3]
                )
            })
            .collect()
    }

    /// The thread's totals: (running, all).
    fn totals(t: &CallTree) -> (u64, u64) {
        let root = t.to_model(None).root;
        (root[2], root[3])
    }

    #[test]
    fn folds_samples_into_paths() {
        let mut t = CallTree::default();
        t.add_sample(&[1, 2, 3], true);
        t.add_sample(&[1, 2, 3], false);
        t.add_sample(&[1, 2], true);
        t.add_sample(&[1, 4], true);
        assert_eq!(t.to_model(None).root, [0, 0, 3, 4]);
        assert_eq!(
            collect(&t),
            vec![
                "1 h0 e0 c3 ce4",
                " 2 h1 e1 c2 ce3",
                "  3 h1 e2 c1 ce2",
                " 4 h1 e1 c1 ce1"
            ]
        );
        assert_eq!(t.node_count(), 4);
    }

    #[test]
    fn repeating_a_sample_equals_adding_the_same_path() {
        let mut a = CallTree::default();
        let mut b = CallTree::default();
        let leaf = a.add_sample(&[1, 2, 3], false);
        a.repeat_sample(leaf, true);
        a.repeat_sample(leaf, false);
        let root = a.add_sample(&[], true);
        a.repeat_sample(root, false);
        for r in [false, true, false] {
            b.add_sample(&[1, 2, 3], r);
        }
        b.add_sample(&[], true);
        b.add_sample(&[], false);
        assert_eq!(collect(&a), collect(&b));
        assert_eq!(totals(&a), totals(&b));
    }

    #[test]
    fn same_name_under_different_parents_is_two_nodes() {
        let mut t = CallTree::default();
        t.add_sample(&[1, 9], true);
        t.add_sample(&[2, 9], true);
        assert_eq!(t.node_count(), 4);
    }

    #[test]
    fn empty_stack_counts_at_thread_level_only() {
        let mut t = CallTree::default();
        t.add_sample(&[], false);
        assert_eq!(totals(&t).1, 1);
        assert_eq!(t.node_count(), 0);
    }

    #[test]
    fn deep_paths_walk_without_recursion() {
        let mut t = CallTree::default();
        let path: Vec<NameId> = (0..100_000).collect();
        t.add_sample(&path, true);
        let m = t.to_model(None);
        assert_eq!(m.nodes.len(), 100_000);
        assert_eq!(m.nodes.last().map(|n| n.depth), Some(100_000));
    }
}
