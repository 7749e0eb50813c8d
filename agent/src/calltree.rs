//! A call tree of weighted events, for the modes whose sections are shaped
//! like `<sampler>` but count something else per call path (`alloc`: bytes
//! and objects; `lock`: waits and time). Each node keeps the weights of the
//! events that ended on it (`own`) and of those anywhere below it
//! (`cumulated`). An arena (indices, not pointers), walked without
//! recursion: stacks may be thousands of frames deep.

use crate::methods::NameId;
use std::collections::HashMap;
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

    /// The tree as the OTLP model's nodes (parents first, as they are
    /// here), each with its own weights as `own` gives them; and the
    /// weights on the outermost nodes (the thread's [`WeightTree::totals`]
    /// less these are its events with an empty stack).
    pub fn model_nodes(
        &self,
        own: impl Fn(&W) -> profrj_otlp::Weights,
    ) -> (Vec<profrj_otlp::Node>, W) {
        let mut on_nodes = W::default();
        let nodes = self.nodes[1..]
            .iter()
            .map(|n| {
                if n.parent == 0 {
                    on_nodes += n.cumulated;
                }
                profrj_otlp::Node {
                    parent: if n.parent == 0 {
                        profrj_otlp::ROOT
                    } else {
                        n.parent - 1
                    },
                    name: n.name,
                    own: own(&n.own),
                }
            })
            .collect();
        (nodes, on_nodes)
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
        name: NameId,
        own: &'a W,
        cumulated: &'a W,
        leaf: bool,
    },
    Leave,
}

/// A thread's name for the OTLP model, from the thread records.
pub fn thread_name(
    threads: &[crate::threads::ThreadRecord],
    id: crate::threads::ThreadId,
) -> String {
    threads
        .get(id.0 as usize)
        .map_or_else(|| format!("thread {}", id.0), |t| t.name.clone())
}

/// A mode's trees as the OTLP model's: each thread's nodes with their own
/// weights as `own` gives them (a weighted section's: alloc, lock).
pub fn call_trees<W: Weights>(
    weights: &'static [profrj_otlp::ValueType],
    names: Vec<Box<str>>,
    trees: &HashMap<crate::threads::ThreadId, WeightTree<W>>,
    threads: &[crate::threads::ThreadRecord],
    own: impl Fn(&W) -> profrj_otlp::Weights,
) -> profrj_otlp::CallTrees {
    profrj_otlp::CallTrees {
        weights,
        period: None,
        names,
        threads: trees
            .iter()
            .map(|(id, tree)| profrj_otlp::ThreadTree {
                key: id.0 as u64,
                name: thread_name(threads, *id),
                nodes: tree.model_nodes(&own).0,
            })
            .collect(),
    }
}

/// The `<thread>` start tag of a weighted call-tree section (`<alloc>`,
/// `<lock>`): the thread's name, CPU time, life in `window` and whether it
/// is alive, as `<sampler>` writes them; the section adds its totals.
pub fn thread_start(
    t: &crate::threads::ThreadRecord,
    window: (u64, u64),
) -> quick_xml::events::BytesStart<'static> {
    use profrj_format::calls::{CPU_TIME, IS_ALIVE, NAME, THREAD};
    use profrj_format::sampler::thread::ELAPSED_TIME;
    let mut el = quick_xml::events::BytesStart::new(THREAD);
    el.push_attribute((NAME, crate::xml::name(&t.name).as_ref()));
    el.push_attribute((CPU_TIME, t.cpu_ns.to_string().as_str()));
    el.push_attribute((ELAPSED_TIME, t.elapsed_ns(window).to_string().as_str()));
    el.push_attribute((IS_ALIVE, profrj_format::boolean(t.is_alive())));
    el
}

/// Writes a tree's nodes as `<profile name=… [class="true"] …>` elements,
/// nested as the tree is (the `<alloc>` and `<lock>` sections' shape):
/// `names` by [`NameId`], `classes` the names that are class frames, and
/// `figures` appending a node's own and cumulated attributes to its tag.
pub fn write_nodes<W: Weights>(
    w: &mut crate::snapshot::XmlWriter,
    tree: &WeightTree<W>,
    (names, classes): (&[Box<str>], &std::collections::HashSet<NameId>),
    escaped: &mut crate::xml::EscapedNames,
    figures: impl Fn(&mut String, &W, &W),
) -> std::io::Result<()> {
    use profrj_format::alloc::node::{CLASS, NAME};
    use profrj_format::calls::NODE;
    use quick_xml::events::{BytesEnd, BytesStart, Event};
    let mut buf = String::with_capacity(256);
    tree.walk(|v| match v {
        Visit::Enter {
            name,
            own,
            cumulated,
            leaf,
        } => {
            let text = names.get(name as usize).map_or("", |s| &**s);
            let esc = escaped.get(name, text);
            buf.clear();
            buf.push_str(NODE);
            crate::xml::push_attribute(&mut buf, NAME, esc);
            if classes.contains(&name) {
                crate::xml::push_attribute(&mut buf, CLASS, profrj_format::TRUE);
            }
            figures(&mut buf, own, cumulated);
            let el = BytesStart::from_content(buf.as_str(), NODE.len());
            w.write_event(if leaf {
                Event::Empty(el)
            } else {
                Event::Start(el)
            })
        }
        Visit::Leave => w.write_event(Event::End(BytesEnd::new(NODE))),
    })
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
