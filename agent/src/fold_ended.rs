//! Ended threads folded into groups in a snapshot, so that a service whose
//! threads come and go (pools that shrink and grow, a thread per request)
//! writes snapshots whose size follows its distinct stacks and thread
//! names, not the threads it ever ran.
//!
//! The rule is applied when a thread ends ([`crate::threads`]: `ended=N`,
//! docs/THREADS.md): past the first N ended threads of a name pattern (the
//! name with its digits as `#`), a thread is folded into its pattern's
//! group, a thread-table record marked `endedThreads="M"`. The modes that
//! keep data per thread in a call tree (`sampling`, `alloc`, `lock`) move
//! a folded thread's tree into its group's themselves, so the agent does
//! not keep it; here, on the snapshot's model, every section's trees and
//! rows still under a folded thread's id (the other modes') are added into
//! the group's, so the file has one row per group, whatever the mode.
//!
//! The figures of a group are its threads' sums, node by node: samples,
//! times, bytes, objects, waits — exact. One figure cannot be summed: the
//! most objects alive at once (`max_live`, `<memory>`'s `max`), since the
//! threads' peaks need not have come together. A group's is the highest of
//! its threads' peaks, raised to the group's objects alive now if that is
//! more: never above the group's true peak, never below what is alive.

use crate::model::{CallTrees, Node, Part, Rows, Section, ThreadTree, Weight};
use crate::threads::{ThreadId, ThreadRecord};
use std::collections::{BTreeMap, HashMap, HashSet};

/// `sections` with the trees and rows of every folded thread in `threads`
/// added into its group's (and a group's own merged with them).
pub fn fold_ended(
    threads: &[std::sync::Arc<ThreadRecord>],
    mut sections: Vec<Section>,
) -> Vec<Section> {
    let into: HashMap<ThreadId, ThreadId> = threads
        .iter()
        .enumerate()
        .filter_map(|(i, t)| Some((ThreadId(i as u32), t.folded_into?)))
        .collect();
    if into.is_empty() {
        return sections;
    }
    // A group's own rows (a mode that folded already) merge with its threads'.
    let groups: HashSet<ThreadId> = into.values().copied().collect();
    let target = |id: Option<ThreadId>| {
        let id = id?;
        into.get(&id)
            .copied()
            .or_else(|| groups.contains(&id).then_some(id))
    };
    for section in &mut sections {
        for part in &mut section.parts {
            match part {
                Part::Trees(t) => fold_trees(t, &target),
                Part::Rows(r) => fold_rows(r, &target),
                Part::Coverage(_) | Part::Monitors(_) => {}
            }
        }
    }
    sections
}

/// Each column's rule: `Some(live)` for a peak (`max_live`), the index of
/// the count alive it pairs with (same name less `max_`, same `total`).
fn peaks(weights: &[Weight]) -> Vec<Option<usize>> {
    weights
        .iter()
        .map(|w| {
            let live = w.name.strip_prefix("max_")?;
            weights
                .iter()
                .position(|o| o.name == live && o.total == w.total)
        })
        .collect()
}

/// Adds `from` into `to`, each column by its rule (sum, or the higher peak).
fn add(to: &mut [u64], from: &[u64], peaks: &[Option<usize>]) {
    for ((t, f), p) in to.iter_mut().zip(from).zip(peaks) {
        *t = if p.is_some() {
            (*t).max(*f)
        } else {
            t.saturating_add(*f)
        };
    }
}

/// A peak is never below the count alive it pairs with.
fn raise_peaks(values: &mut [u64], peaks: &[Option<usize>]) {
    for (i, p) in peaks.iter().enumerate() {
        if let Some(live) = *p {
            values[i] = values[i].max(values[live]);
        }
    }
}

/// The threads' trees with every ended thread's merged into its group's
/// (groups after the threads that stay, in group order).
fn fold_trees(trees: &mut CallTrees, target: &impl Fn(Option<ThreadId>) -> Option<ThreadId>) {
    let peaks = peaks(&trees.weights);
    let width = trees.weights.len();
    let canon = same_frames(&trees.frames);
    let mut merged: BTreeMap<ThreadId, Trie> = BTreeMap::new();
    let mut kept = Vec::with_capacity(trees.threads.len());
    for mut tree in std::mem::take(&mut trees.threads) {
        match target(tree.thread) {
            Some(g) => {
                for n in &mut tree.nodes {
                    n.frame = canon.get(n.frame as usize).copied().unwrap_or(n.frame);
                }
                merged
                    .entry(g)
                    .or_insert_with(|| Trie::new(width))
                    .add(&tree, &peaks)
            }
            None => kept.push(tree),
        }
    }
    let order = heaviness_column(&trees.weights);
    kept.extend(
        merged
            .into_iter()
            .map(|(g, trie)| trie.into_tree(g, order, &peaks)),
    );
    trees.threads = kept;
}

/// For each frame id, the first id of an equal frame: a mode may give each
/// thread frames of its own (`memory`'s sites), and a group's nodes are
/// merged by what their frames are.
fn same_frames(frames: &[crate::model::Frame]) -> Vec<u32> {
    let mut first: HashMap<&crate::model::Frame, u32> = HashMap::new();
    frames
        .iter()
        .enumerate()
        .map(|(i, f)| *first.entry(f).or_insert(i as u32))
        .collect()
}

/// The rows of every ended thread added into its group's, key by key.
fn fold_rows(rows: &mut Rows, target: &impl Fn(Option<ThreadId>) -> Option<ThreadId>) {
    let peaks = peaks(&rows.columns);
    let mut merged: BTreeMap<ThreadId, BTreeMap<String, Vec<u64>>> = BTreeMap::new();
    let mut kept = Vec::with_capacity(rows.threads.len());
    for (id, list) in std::mem::take(&mut rows.threads) {
        let Some(g) = target(id) else {
            kept.push((id, list));
            continue;
        };
        let group = merged.entry(g).or_default();
        for r in list {
            let values: Vec<u64> = r.values.iter().map(|&v| v.max(0) as u64).collect();
            match group.get_mut(&r.key) {
                Some(to) => add(to, &values, &peaks),
                None => {
                    group.insert(r.key, values);
                }
            }
        }
    }
    for (g, group) in merged {
        let mut list: Vec<crate::model::Row> = group
            .into_iter()
            .map(|(key, mut values)| {
                raise_peaks(&mut values, &peaks);
                crate::model::Row {
                    key,
                    values: values.into_iter().map(|v| v as i64).collect(),
                }
            })
            .collect();
        // Most first, as the modes order rows (then by key, for a stable file).
        list.sort_by(|a, b| b.values.cmp(&a.values).then_with(|| a.key.cmp(&b.key)));
        kept.push((Some(g), list));
    }
    rows.threads = kept;
}

/// The column siblings are ranked by, heaviest first: the first total.
fn heaviness_column(weights: &[Weight]) -> usize {
    weights.iter().position(|w| w.total).unwrap_or(0)
}

const NO_PARENT: u32 = u32::MAX;

/// Two nodes' words as one: frame types' counts added type by type (the
/// only words nodes carry); a word that is not one is kept as the first.
fn add_texts(a: &str, b: &str) -> String {
    use profrj_format::frame_types::{parse, write};
    if a.is_empty() {
        return b.to_owned();
    }
    let (Ok(mut sum), Ok(more)) = (parse(a), parse(b)) else {
        return a.to_owned();
    };
    for (t, n) in more {
        match sum.iter_mut().find(|(u, _)| *u == t) {
            Some((_, m)) => *m = m.saturating_add(n),
            None => sum.push((t, n)),
        }
    }
    write(&sum)
}

/// Trees merged by frame path: an arena (no recursion, any depth).
struct Trie {
    width: usize,
    root: Vec<u64>,
    /// (parent, frame) of each node; node values at `values[i * width..]`.
    nodes: Vec<(u32, u32)>,
    values: Vec<u64>,
    index: HashMap<(u32, u32), u32>,
    /// (node, attribute) -> its word: frame types, added up as counts.
    texts: BTreeMap<(u32, &'static str), String>,
}

impl Trie {
    fn new(width: usize) -> Self {
        Trie {
            width,
            root: vec![0; width],
            nodes: Vec::new(),
            values: Vec::new(),
            index: HashMap::new(),
            texts: BTreeMap::new(),
        }
    }

    /// Adds a depth-first tree: a node at depth d hangs under the last
    /// node seen at depth d - 1.
    fn add(&mut self, tree: &ThreadTree, peaks: &[Option<usize>]) {
        add(&mut self.root, &tree.root, peaks);
        let mut path: Vec<u32> = Vec::new();
        let mut texts = tree.texts.iter().peekable();
        for (i, n) in tree.nodes.iter().enumerate() {
            let depth = n.depth.max(1) as usize;
            path.truncate(depth - 1);
            let parent = path.last().copied().unwrap_or(NO_PARENT);
            let at = match self.index.get(&(parent, n.frame)) {
                Some(&at) => at,
                None => {
                    let at = self.nodes.len() as u32;
                    self.nodes.push((parent, n.frame));
                    self.values.extend(std::iter::repeat_n(0, self.width));
                    self.index.insert((parent, n.frame), at);
                    at
                }
            };
            let from = tree.values_of(i, self.width);
            let w = self.width;
            add(&mut self.values[at as usize * w..][..w], from, peaks);
            while let Some(t) = texts.next_if(|t| t.node as usize <= i) {
                if t.node as usize == i {
                    let word = self.texts.entry((at, t.name)).or_default();
                    *word = add_texts(word, &t.value);
                }
            }
            path.push(at);
        }
    }

    /// The merged tree, depth first, siblings heaviest first by `order`.
    fn into_tree(mut self, thread: ThreadId, order: usize, peaks: &[Option<usize>]) -> ThreadTree {
        let w = self.width;
        raise_peaks(&mut self.root, peaks);
        if w > 0 {
            self.values
                .chunks_mut(w)
                .for_each(|v| raise_peaks(v, peaks));
        }
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        for (i, &(parent, _)) in self.nodes.iter().enumerate() {
            children.entry(parent).or_default().push(i as u32);
        }
        let weight = |n: u32| {
            self.values
                .get(n as usize * w + order)
                .copied()
                .unwrap_or(0)
        };
        for kids in children.values_mut() {
            // Popped from the end: lightest first here.
            kids.sort_by_key(|&k| (weight(k), std::cmp::Reverse(self.nodes[k as usize].1)));
        }
        let mut out = ThreadTree::new(Some(thread), self.root.clone());
        let mut stack: Vec<(u32, u32)> = children
            .remove(&NO_PARENT)
            .unwrap_or_default()
            .into_iter()
            .map(|k| (k, 1))
            .collect();
        while let Some((n, depth)) = stack.pop() {
            let frame = self.nodes[n as usize].1;
            let node = out.nodes.len() as u32;
            out.nodes.push(Node { frame, depth });
            for ((_, name), value) in self.texts.range((n, "")..(n + 1, "")) {
                out.texts.push(crate::model::NodeText {
                    node,
                    name,
                    value: value.clone(),
                });
            }
            out.values
                .extend_from_slice(&self.values[n as usize * w..][..w]);
            if let Some(kids) = children.remove(&n) {
                stack.extend(kids.into_iter().map(|k| (k, depth + 1)));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
