//! A call tree of weighted events, for the modes whose sections are shaped
//! like `<sampler>` but count something else per call path (`alloc`: bytes
//! and objects; `lock`: waits and time). Each node keeps the weights of the
//! events that ended on it (`own`) and of those anywhere below it
//! (`cumulated`). An arena (indices, not pointers), walked without
//! recursion: stacks may be thousands of frames deep.

use crate::methods::NameId;
use crate::threads::{ThreadId, ThreadRecord};
use std::collections::{HashMap, HashSet};
use std::ops::AddAssign;

const NONE: u32 = u32::MAX;

/// What one event adds to every node of its path.
pub trait Weights: Copy + Default + AddAssign {
    /// Orders siblings, heaviest first.
    fn heaviness(&self) -> u64;
}

/// A node of a [`WeightTree`] (0 is the thread itself).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NodeId(pub u32);

#[derive(Clone, Debug)]
struct Node<W> {
    name: NameId,
    own: W,
    cumulated: W,
    parent: u32,
    first_child: u32,
    next_sibling: u32,
}

/// Node 0 is the thread itself: its `cumulated` is the thread's total.
#[derive(Clone, Debug)]
pub struct WeightTree<W> {
    nodes: Vec<Node<W>>,
    /// (parent, name) -> child
    index: HashMap<(u32, NameId), u32>,
}

impl<W: Weights> Default for WeightTree<W> {
    fn default() -> Self {
        Self {
            nodes: vec![Node {
                name: NameId::MAX,
                own: W::default(),
                cumulated: W::default(),
                parent: NONE,
                first_child: NONE,
                next_sibling: NONE,
            }],
            index: HashMap::new(),
        }
    }
}

impl<W: Weights> WeightTree<W> {
    /// Adds one event whose stack runs `path` (root frame first, top last).
    /// Returns the node it ended on.
    pub fn add(&mut self, path: impl IntoIterator<Item = NameId>, w: W) -> NodeId {
        let mut node = 0u32;
        self.nodes[0].cumulated += w;
        for name in path {
            node = self.child(node, name);
            self.nodes[node as usize].cumulated += w;
        }
        if node != 0 {
            self.nodes[node as usize].own += w;
        }
        NodeId(node)
    }

    /// Adds `w` once more on the path that ends at `leaf`, walking up
    /// through parents instead of down by name.
    pub fn add_at(&mut self, leaf: NodeId, w: W) {
        if leaf.0 != 0 {
            self.nodes[leaf.0 as usize].own += w;
        }
        let mut n = leaf.0;
        while n != NONE {
            self.nodes[n as usize].cumulated += w;
            n = self.nodes[n as usize].parent;
        }
    }

    /// Adds `w` once more on the path ending at `leaf` of `from` (a tree
    /// with the same names), making the nodes this tree lacks.
    pub fn add_like(&mut self, from: &WeightTree<W>, leaf: NodeId, w: W) {
        let mut path = Vec::new();
        let mut n = leaf.0;
        while n != 0 && n != NONE {
            path.push(from.nodes[n as usize].name);
            n = from.nodes[n as usize].parent;
        }
        self.add(path.into_iter().rev(), w);
    }

    /// Adds every node of `other` into this tree, each under its parent's
    /// place here by name (an ended thread's tree into its group's).
    /// Returns where each of `other`'s nodes went, by its index. A node is
    /// always made after its parent, so one forward pass places them all.
    pub fn absorb(&mut self, other: &WeightTree<W>) -> Vec<NodeId> {
        let mut map = vec![NodeId(0); other.nodes.len()];
        self.nodes[0].cumulated += other.nodes[0].cumulated;
        for (i, n) in other.nodes.iter().enumerate().skip(1) {
            let at = self.child(map[n.parent as usize].0, n.name);
            let node = &mut self.nodes[at as usize];
            node.own += n.own;
            node.cumulated += n.cumulated;
            map[i] = NodeId(at);
        }
        map
    }

    fn child(&mut self, parent: u32, name: NameId) -> u32 {
        if let Some(&c) = self.index.get(&(parent, name)) {
            return c;
        }
        let id = self.nodes.len() as u32;
        let next = self.nodes[parent as usize].first_child;
        self.nodes.push(Node {
            name,
            own: W::default(),
            cumulated: W::default(),
            parent,
            first_child: NONE,
            next_sibling: next,
        });
        self.nodes[parent as usize].first_child = id;
        self.index.insert((parent, name), id);
        id
    }

    /// The node `n` hangs under (None for the thread's own node 0).
    pub fn parent(&self, n: NodeId) -> Option<NodeId> {
        let p = self.nodes.get(n.0 as usize)?.parent;
        (p != NONE).then_some(NodeId(p))
    }

    /// The thread's totals.
    pub fn totals(&self) -> W {
        self.nodes[0].cumulated
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 1
    }

    /// Nodes, the thread's own not counted.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.nodes.len() - 1
    }

    /// Visits the tree depth-first, heaviest children first. Every non-leaf
    /// `Enter` is matched by one `Leave`.
    pub fn walk(
        &self,
        mut visit: impl FnMut(Visit<'_, W>) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let mut stack: Vec<Vec<u32>> = vec![self.sorted_children(0)];
        while let Some(level) = stack.last_mut() {
            match level.pop() {
                Some(n) => {
                    let node = &self.nodes[n as usize];
                    let kids = self.sorted_children(n);
                    let leaf = kids.is_empty();
                    visit(Visit::Enter {
                        id: NodeId(n),
                        name: node.name,
                        own: &node.own,
                        cumulated: &node.cumulated,
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

    /// Children of `n`, lightest first (popped from the end).
    fn sorted_children(&self, n: u32) -> Vec<u32> {
        let mut kids = Vec::new();
        let mut c = self.nodes[n as usize].first_child;
        while c != NONE {
            kids.push(c);
            c = self.nodes[c as usize].next_sibling;
        }
        kids.sort_by_key(|&k| {
            let node = &self.nodes[k as usize];
            (node.cumulated.heaviness(), std::cmp::Reverse(node.name))
        });
        kids
    }
}

/// A step of [`WeightTree::walk`]. A leaf gets no `Leave`.
pub enum Visit<'a, W> {
    Enter {
        id: NodeId,
        name: NameId,
        own: &'a W,
        cumulated: &'a W,
        leaf: bool,
    },
    Leave,
}

/// Threads folded since a mode last moved its trees: it waits for this
/// many, so that the look over its trees (and what points into them) is
/// paid once per batch, not once per ended thread.
pub const FOLD_BATCH: u64 = 32;

/// Moves the trees of the threads the thread table folded into a group
/// (docs/THREADS.md) into their groups' trees, once [`FOLD_BATCH`] threads
/// were folded since `folded_at`; a folded thread has ended, so nothing
/// more comes for it. Returns each tree moved, its group and where each of
/// its nodes went (for a mode that points into its trees).
pub fn fold_ended<W: Weights>(
    trees: &mut HashMap<ThreadId, WeightTree<W>>,
    threads: &crate::threads::Threads,
    folded_at: &mut u64,
) -> Vec<(ThreadId, ThreadId, Vec<NodeId>)> {
    let batch = (FOLD_BATCH, |_: ThreadId| true);
    fold_ended_with(trees, threads, folded_at, batch, |group, tree| {
        group.absorb(tree)
    })
}

/// [`fold_ended`] for any per-thread value: after `batch.0` folds, each
/// value of a folded thread that `batch.1` says is done with goes into its
/// group's by `absorb`, whose answers come back with the ids moved.
pub fn fold_ended_with<T: Default, R>(
    values: &mut HashMap<ThreadId, T>,
    threads: &crate::threads::Threads,
    folded_at: &mut u64,
    (batch, done): (u64, impl Fn(ThreadId) -> bool),
    mut absorb: impl FnMut(&mut T, &T) -> R,
) -> Vec<(ThreadId, ThreadId, R)> {
    let folds = threads.folds();
    if folds < folded_at.saturating_add(batch) {
        return Vec::new();
    }
    *folded_at = folds;
    let gone: Vec<(ThreadId, ThreadId)> = values
        .keys()
        .filter(|&&id| done(id))
        .filter_map(|&id| Some((id, threads.folded_into(id)?)))
        .collect();
    let mut moved = Vec::with_capacity(gone.len());
    for (id, group) in gone {
        if let Some(value) = values.remove(&id) {
            let answer = absorb(values.entry(group).or_default(), &value);
            moved.push((id, group, answer));
        }
    }
    moved
}

/// Frames named `names` (by [`NameId`]), `classes` the class frames (the
/// allocated class, the monitor's), for the model.
pub fn frames(names: &[Box<str>], classes: &HashSet<NameId>) -> Vec<crate::model::Frame> {
    names
        .iter()
        .enumerate()
        .map(|(id, name)| crate::model::Frame {
            name: name.clone(),
            class: classes.contains(&(id as NameId)),
            descriptor: None,
            line: None,
        })
        .collect()
}

/// The model's trees of the threads in `threads` (by id) that lived in
/// `window` and have a non-empty tree in `trees`, in thread order; each
/// node's values from `figures` (see [`WeightTree::to_model`]).
pub fn threads_in_window<W: Weights>(
    trees: &HashMap<ThreadId, WeightTree<W>>,
    threads: &[std::sync::Arc<ThreadRecord>],
    window: (u64, u64),
    figures: impl Fn(&mut Vec<u64>, &W, &W) + Copy,
) -> Vec<crate::model::ThreadTree> {
    let mut out = Vec::new();
    for (i, t) in threads.iter().enumerate() {
        let id = ThreadId(i as u32);
        let Some(tree) = trees.get(&id) else {
            continue;
        };
        if t.lived_in(window) && !tree.is_empty() {
            out.push(tree.to_model(Some(id), figures));
        }
    }
    out
}

impl<W: Weights> WeightTree<W> {
    /// The tree in the model's form ([`crate::model::ThreadTree`]): nodes
    /// depth first, heaviest children first; `figures` appends a node's
    /// values given its own and cumulated weights (the root's too, from
    /// zero own weights and the thread's totals).
    pub fn to_model(
        &self,
        thread: Option<crate::threads::ThreadId>,
        figures: impl Fn(&mut Vec<u64>, &W, &W),
    ) -> crate::model::ThreadTree {
        self.to_model_seeing(thread, figures, |_, _| {})
    }

    /// [`Self::to_model`], with `seen` told each node's id and its index in
    /// the model as it is pushed (for a mode that adds to its nodes).
    pub fn to_model_seeing(
        &self,
        thread: Option<crate::threads::ThreadId>,
        figures: impl Fn(&mut Vec<u64>, &W, &W),
        mut seen: impl FnMut(NodeId, &mut crate::model::ThreadTree),
    ) -> crate::model::ThreadTree {
        let mut values = Vec::new();
        figures(&mut values, &W::default(), &self.nodes[0].cumulated);
        let mut tree = crate::model::ThreadTree::new(thread, values.clone());
        let mut depth = 0u32;
        let _ = self.walk(|v| {
            match v {
                Visit::Enter {
                    id,
                    name,
                    own,
                    cumulated,
                    leaf,
                } => {
                    values.clear();
                    figures(&mut values, own, cumulated);
                    tree.push(name, depth + 1, &values);
                    seen(id, &mut tree);
                    if !leaf {
                        depth += 1;
                    }
                }
                Visit::Leave => depth -= 1,
            }
            Ok(())
        });
        tree
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Clone, Copy, Default, Debug, PartialEq)]
    struct N(u64);
    impl AddAssign for N {
        fn add_assign(&mut self, o: N) {
            self.0 += o.0;
        }
    }
    impl Weights for N {
        fn heaviness(&self) -> u64 {
            self.0
        }
    }

    #[test]
    fn a_tree_absorbed_adds_node_by_node_and_says_where_each_went() {
        let mut group = WeightTree::default();
        group.add([1, 2], N(4));
        let mut ended = WeightTree::default();
        let a = ended.add([1, 3], N(2));
        let b = ended.add([1, 2, 5], N(1));
        let map = group.absorb(&ended);
        assert_eq!(group.totals(), N(7));
        assert_eq!(group.len(), 4, "1, 2, 3 and 5 under 2");
        let mut again = WeightTree::default();
        again.add_like(&group, map[a.0 as usize], N(1));
        again.add_like(&group, map[b.0 as usize], N(1));
        let mut paths = Vec::new();
        let mut path = Vec::new();
        again
            .walk(|v| {
                match v {
                    Visit::Enter { name, leaf, .. } => {
                        path.push(name);
                        if leaf {
                            paths.push(path.clone());
                            path.pop();
                        }
                    }
                    Visit::Leave => {
                        path.pop();
                    }
                }
                Ok(())
            })
            .unwrap();
        paths.sort();
        assert_eq!(paths, vec![vec![1, 2, 5], vec![1, 3]]);
    }

    #[test]
    fn own_and_cumulated_weights_and_heaviest_first() {
        let mut t = WeightTree::default();
        let a = t.add([1, 2, 9], N(5));
        t.add([1, 3], N(7));
        t.add([1, 2, 9], N(1));
        assert_eq!(t.totals(), N(13));
        let mut live = WeightTree::default();
        live.add_like(&t, a, N(2));
        assert_eq!(live.totals(), N(2));
        let mut seen = Vec::new();
        t.walk(|v| {
            if let Visit::Enter {
                name,
                own,
                cumulated,
                ..
            } = v
            {
                seen.push((name, own.0, cumulated.0));
            }
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, [(1, 0, 13), (3, 7, 7), (2, 0, 6), (9, 6, 6)]);
    }
}
