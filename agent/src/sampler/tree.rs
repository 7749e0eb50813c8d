//! One thread's sampled call tree: a node per distinct call path, with the
//! sampler's four counters. Stored as an arena (indices, not pointers) so it can
//! grow to millions of nodes without per-node allocations.

use crate::methods::NameId;
use std::collections::HashMap;

const NONE: u32 = u32::MAX;

/// A node of one [`CallTree`] (0 is the thread itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeId(u32);

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

#[derive(Clone, Debug)]
struct Node {
    name: NameId,
    counts: Counts,
    parent: u32,
    first_child: u32,
    next_sibling: u32,
}

/// Node 0 is the thread itself (its `cumulated*` are the thread's totals).
pub struct CallTree {
    nodes: Vec<Node>,
    /// (parent, name) -> child
    index: HashMap<(u32, NameId), u32>,
}

impl Default for CallTree {
    fn default() -> Self {
        let root = Node {
            name: NameId::MAX,
            counts: Counts::default(),
            parent: NONE,
            first_child: NONE,
            next_sibling: NONE,
        };
        Self {
            nodes: vec![root],
            index: HashMap::new(),
        }
    }
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
        let mut node = 0u32;
        self.bump_cumulated(node, count, hits);
        for &name in path {
            node = self.child(node, name);
            self.bump_cumulated(node, count, hits);
        }
        self.bump_self(node, count, hits);
        NodeId(node)
    }

    /// Counts one more sample on the path that ends at `leaf` (the same stack as
    /// an earlier sample), walking up through parents instead of down by name.
    #[cfg(test)]
    pub fn repeat_sample(&mut self, leaf: NodeId, runnable: bool) {
        self.repeat_samples(leaf, 1, runnable as u64)
    }

    /// Counts `count` more samples, `hits` of them running, on the path that ends at `leaf`.
    pub fn repeat_samples(&mut self, leaf: NodeId, count: u64, hits: u64) {
        self.bump_self(leaf.0, count, hits);
        let mut node = leaf.0;
        while node != NONE {
            self.bump_cumulated(node, count, hits);
            node = self.nodes[node as usize].parent;
        }
    }

    fn bump_self(&mut self, node: u32, count: u64, hits: u64) {
        if node != 0 {
            let c = &mut self.nodes[node as usize].counts;
            c.hits = c.hits.saturating_add(hits);
            c.elapsed = c.elapsed.saturating_add(count);
        }
    }

    fn bump_cumulated(&mut self, node: u32, count: u64, hits: u64) {
        let c = &mut self.nodes[node as usize].counts;
        c.cumulated = c.cumulated.saturating_add(hits);
        c.cumulated_elapsed = c.cumulated_elapsed.saturating_add(count);
    }

    fn child(&mut self, parent: u32, name: NameId) -> u32 {
        if let Some(&c) = self.index.get(&(parent, name)) {
            return c;
        }
        let id = self.nodes.len() as u32;
        let next = self.nodes[parent as usize].first_child;
        self.nodes.push(Node {
            name,
            counts: Counts::default(),
            parent,
            first_child: NONE,
            next_sibling: next,
        });
        self.nodes[parent as usize].first_child = id;
        self.index.insert((parent, name), id);
        id
    }

    /// The thread's totals.
    pub fn totals(&self) -> &Counts {
        &self.nodes[0].counts
    }

    #[cfg(test)]
    pub fn node_count(&self) -> usize {
        self.nodes.len() - 1
    }

    /// Visits the tree depth-first without recursion (stacks may be thousands
    /// deep). Children come heaviest first (`cumulated_elapsed`, then name id).
    /// Every non-leaf `Enter` is matched by one `Leave`.
    pub fn walk(
        &self,
        mut visit: impl FnMut(Visit<'_>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        // Each entry: the children still to visit at that level, in reverse.
        let mut stack: Vec<Vec<u32>> = vec![self.sorted_children(0)];
        while let Some(level) = stack.last_mut() {
            match level.pop() {
                Some(n) => {
                    let node = &self.nodes[n as usize];
                    let kids = self.sorted_children(n);
                    let leaf = kids.is_empty();
                    visit(Visit::Enter {
                        name: node.name,
                        counts: &node.counts,
                        leaf,
                    })?;
                    if !leaf {
                        stack.push(kids);
                    }
                }
                None => {
                    stack.pop();
                    if !stack.is_empty() {
                        visit(Visit::Leave)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Children of `n`, lightest first (popped from the end, so heaviest is visited first).
    fn sorted_children(&self, n: u32) -> Vec<u32> {
        let mut kids = Vec::new();
        let mut c = self.nodes[n as usize].first_child;
        while c != NONE {
            kids.push(c);
            c = self.nodes[c as usize].next_sibling;
        }
        kids.sort_by_key(|&k| {
            let node = &self.nodes[k as usize];
            (node.counts.cumulated_elapsed, std::cmp::Reverse(node.name))
        });
        kids
    }
}

/// A step of [`CallTree::walk`]. A leaf gets no `Leave`.
pub enum Visit<'a> {
    Enter {
        name: NameId,
        counts: &'a Counts,
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
            &Counts {
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
