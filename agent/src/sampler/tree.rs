//! One thread's sampled call tree: a node per distinct call path, with the
//! sampler's four counters. A [`WeightTree`] of sample counts: `hits` and
//! `elapsed` are a node's own, `cumulated` and `cumulatedElapsed` its
//! cumulated ones.

use crate::calltree::{self, WeightTree, Weights};
use crate::methods::NameId;
use std::ops::AddAssign;

pub use crate::calltree::NodeId;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Samples with this node on top, thread RUNNABLE.
    pub hits: u64,
    /// Samples with this node on top, any state.
    pub elapsed: u64,
    /// Samples with this node anywhere on the stack, thread RUNNABLE.
    pub cumulated: u64,
    /// Samples with this node anywhere on the stack, any state.
    pub cumulated_elapsed: u64,
}

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

fn counts(own: &Samples, cumulated: &Samples) -> Counts {
    Counts {
        hits: own.running,
        elapsed: own.all,
        cumulated: cumulated.running,
        cumulated_elapsed: cumulated.all,
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

    /// The tree as the OTLP model's nodes, weights (all samples, RUNNABLE
    /// ones); the samples with an empty stack on a node of their own,
    /// [`profrj_otlp::NO_JAVA_FRAME_ID`], as a snapshot reader shows them.
    pub fn model_nodes(&self) -> Vec<profrj_otlp::Node> {
        let (mut nodes, on_nodes) = self.0.model_nodes(|w| [w.all, w.running, 0]);
        let t = self.0.totals();
        let frameless = [
            t.all.saturating_sub(on_nodes.all),
            t.running.saturating_sub(on_nodes.running),
            0,
        ];
        if frameless != [0; 3] {
            nodes.push(profrj_otlp::Node {
                parent: profrj_otlp::ROOT,
                name: profrj_otlp::NO_JAVA_FRAME_ID,
                own: frameless,
            });
        }
        nodes
    }

    /// The thread's totals.
    pub fn totals(&self) -> Counts {
        counts(&Samples::default(), &self.0.totals())
    }

    #[cfg(test)]
    pub fn node_count(&self) -> usize {
        self.0.len()
    }

    /// Visits the tree depth-first without recursion (stacks may be thousands
    /// deep). Children come heaviest first (`cumulated_elapsed`, then name id).
    /// Every non-leaf `Enter` is matched by one `Leave`.
    pub fn walk(&self, mut visit: impl FnMut(Visit) -> std::io::Result<()>) -> std::io::Result<()> {
        self.0.walk(|v| match v {
            calltree::Visit::Enter {
                name,
                own,
                cumulated,
                leaf,
            } => visit(Visit::Enter {
                name,
                counts: counts(own, cumulated),
                leaf,
            }),
            calltree::Visit::Leave => visit(Visit::Leave),
        })
    }
}

/// A step of [`CallTree::walk`]. A leaf gets no `Leave`.
pub enum Visit {
    Enter {
        name: NameId,
        counts: Counts,
        leaf: bool,
    },
    Leave,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(t: &CallTree) -> Vec<String> {
        let mut out = Vec::new();
        let mut depth = 0;
        t.walk(|v| {
            match v {
                Visit::Enter { name, counts, leaf } => {
                    out.push(format!(
                        "{}{} h{} e{} c{} ce{}",
                        " ".repeat(depth),
                        name,
                        counts.hits,
                        counts.elapsed,
                        counts.cumulated,
                        counts.cumulated_elapsed
                    ));
                    depth += !leaf as usize;
                }
                Visit::Leave => depth -= 1,
            }
            Ok(())
        })
        .unwrap();
        out
    }

    #[test]
    fn folds_samples_into_paths() {
        let mut t = CallTree::default();
        t.add_sample(&[1, 2, 3], true);
        t.add_sample(&[1, 2, 3], false);
        t.add_sample(&[1, 2], true);
        t.add_sample(&[1, 4], true);
        assert_eq!(
            t.totals(),
            Counts {
                hits: 0,
                elapsed: 0,
                cumulated: 3,
                cumulated_elapsed: 4
            }
        );
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
        assert_eq!(a.totals(), b.totals());
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
        assert_eq!(t.totals().cumulated_elapsed, 1);
        assert_eq!(t.node_count(), 0);
    }

    #[test]
    fn deep_paths_walk_without_recursion() {
        let mut t = CallTree::default();
        let path: Vec<NameId> = (0..100_000).collect();
        t.add_sample(&path, true);
        let mut enters = 0;
        let mut leaves = 0;
        t.walk(|v| {
            match v {
                Visit::Enter { .. } => enters += 1,
                Visit::Leave => leaves += 1,
            }
            Ok(())
        })
        .unwrap();
        assert_eq!((enters, leaves), (100_000, 99_999));
    }
}
