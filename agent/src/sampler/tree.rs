//! One thread's sampled call tree: a node per distinct call path, with the
//! samples that ended on it and passed through it, all and those that found
//! the thread running. A [`WeightTree`] of sample counts.

use super::type_counts::TypeCounts;
use crate::calltree::{WeightTree, Weights};
use crate::methods::NameId;
use crate::model::NodeText;
use profrj_format::sampler::node::{FRAME_TYPES, SELF_TYPES};
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

/// Node 0 is the thread itself (its `cumulated*` are the thread's totals);
/// beside the tree, per node, how its frame ran (`frameTypes`, `selfTypes`).
#[derive(Default)]
pub struct CallTree {
    tree: WeightTree<Samples>,
    types: TypeCounts,
}

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
        self.tree.add(path.iter().copied(), w)
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
        self.tree.add_at(leaf, w)
    }

    /// Adds `other` (an ended thread's tree) into this one (its group's).
    pub fn absorb(&mut self, other: &CallTree) {
        let map = self.tree.absorb(&other.tree);
        self.types.absorb(&other.types, &map);
    }

    /// [`Self::add_samples`] with each frame's type: `kinds[i]` is the
    /// type code (0: not known) of the frame at `path[i]`; both root first.
    pub fn add_typed_samples(
        &mut self,
        path: &[NameId],
        kinds: &[u8],
        count: u64,
        hits: u64,
    ) -> NodeId {
        let leaf = self.add_samples(path, count, hits);
        self.count_types(leaf, kinds, count);
        leaf
    }

    /// [`Self::repeat_samples`] with the frames' types (as in
    /// [`Self::add_typed_samples`], for the path that ends at `leaf`).
    pub fn repeat_typed_samples(&mut self, leaf: NodeId, kinds: &[u8], count: u64, hits: u64) {
        self.repeat_samples(leaf, count, hits);
        self.count_types(leaf, kinds, count);
    }

    /// Counts `count` samples of the path ending at `leaf` by type, walking
    /// up from the leaf as `kinds` runs back from its end.
    fn count_types(&mut self, leaf: NodeId, kinds: &[u8], count: u64) {
        let mut node = Some(leaf).filter(|n| n.0 != 0);
        for (i, &k) in kinds.iter().rev().enumerate() {
            let Some(n) = node else {
                break;
            };
            self.types.add(n, k, i == 0, count);
            node = self.tree.parent(n).filter(|p| p.0 != 0);
        }
    }

    /// The tree in the model's form: per node its own and total samples,
    /// running and all (`hits`, `elapsed`, `cumulated`, `cumulatedElapsed`),
    /// and its frame types where any is known.
    pub fn to_model(&self, thread: Option<crate::threads::ThreadId>) -> crate::model::ThreadTree {
        let figures = |v: &mut Vec<u64>, own: &Samples, cumulated: &Samples| {
            v.extend([own.running, own.all, cumulated.running, cumulated.all])
        };
        self.tree.to_model_seeing(thread, figures, |id, model| {
            let node = model.nodes.len() as u32 - 1;
            let names = [FRAME_TYPES, SELF_TYPES];
            for (name, value) in names.into_iter().zip(self.types.values(id)) {
                if !value.is_empty() {
                    model.texts.push(NodeText { node, name, value });
                }
            }
        })
    }

    #[cfg(test)]
    pub fn node_count(&self) -> usize {
        self.tree.len()
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
    fn frame_types_count_per_node_through_and_on_top() {
        use profrj_format::frame_types::FrameType::{Inlined, Interpreted, C2};
        let mut t = CallTree::default();
        let leaf = t.add_typed_samples(
            &[1, 2, 3],
            &[Interpreted as u8, C2 as u8, Inlined as u8],
            2,
            2,
        );
        t.repeat_typed_samples(leaf, &[Interpreted as u8, C2 as u8, Inlined as u8], 1, 0);
        // Not known on the root frame, and a kind for the path's leaf only.
        t.add_typed_samples(&[1, 2], &[0, C2 as u8], 4, 4);
        t.add_samples(&[1, 2], 5, 5);
        let m = t.to_model(None);
        let text = |i: usize| {
            m.texts
                .iter()
                .filter(|x| x.node as usize == i)
                .map(|x| format!("{}={}", x.name, x.value))
                .collect::<Vec<_>>()
        };
        // Node order: 1, 2, 3.
        assert_eq!(text(0), ["frameTypes=interpreted:3"]);
        assert_eq!(text(1), ["frameTypes=c2:7", "selfTypes=c2:4"]);
        assert_eq!(text(2), ["frameTypes=inlined:3", "selfTypes=inlined:3"]);
        let mut group = CallTree::default();
        group.add_typed_samples(&[1, 2], &[0, C2 as u8], 1, 1);
        group.absorb(&t);
        let g = group.to_model(None);
        assert!(
            g.texts.iter().any(|x| x.node == 1 && x.value == "c2:8"),
            "{:?}",
            g.texts
        );
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
