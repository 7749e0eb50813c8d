//! What changed since the last period: a [`Keeper`] remembers, per thread
//! and call path, the figures already sent, and answers each call with the
//! samples added since (the first call: everything). Paths are kept as a
//! tree of (parent, frame name) like the modes' own, so memory grows with
//! the distinct paths, not with periods; at most [`MAX_PATHS`] are followed.
//! The samples name their paths in a tree too ([`Samples::paths`]), never
//! spelt out: a deep tree's paths add up to the square of its depth.

use crate::model::{CallTrees, ValueType, Weights, MAX_WEIGHTS, ROOT};
use std::collections::HashMap;

/// The most call paths one keeper follows (all threads together); a path
/// first seen beyond it is left out of every push, and counted.
pub const MAX_PATHS: usize = 4 << 20;

const UNTRACKED: u32 = u32::MAX - 1;

/// The figures sent so far for each call path of each thread of one mode.
#[derive(Default)]
pub struct Keeper {
    threads: HashMap<u64, Paths>,
    paths: usize,
    /// Nodes with figures that were left out: their path is new and
    /// [`MAX_PATHS`] were followed already.
    pub untracked: u64,
    epoch: u32,
}

#[derive(Default)]
struct Paths {
    nodes: Vec<PathNode>,
    /// (parent, name) -> node
    index: HashMap<(u32, u32), u32>,
}

struct PathNode {
    parent: u32,
    name: u32,
    /// What was sent so far.
    sent: Weights,
    /// This call's figures (valid when `epoch` is the keeper's).
    now: Weights,
    epoch: u32,
    /// The node's index in this call's [`Samples::paths`] (NOT_COPIED
    /// until a sample needs it; valid when `epoch` is the keeper's).
    copied: u32,
}

const NOT_COPIED: u32 = u32::MAX;

/// One call's samples of one mode.
#[derive(Clone, Debug, Default)]
pub struct Samples {
    /// What each of a sample's values is ([`CallTrees::weights`]).
    pub weights: &'static [ValueType],
    /// What one event stands for ([`CallTrees::period`]).
    pub period: Option<(ValueType, i64)>,
    /// Frame names by id (the mode's).
    pub names: Vec<Box<str>>,
    /// Frame lines by id ([`CallTrees::lines`]).
    pub lines: Vec<u32>,
    /// Names of the threads the samples name, by [`Sample::thread`].
    pub threads: Vec<String>,
    /// The samples' call paths and their prefixes, a step a frame: every
    /// step after its parent.
    pub paths: Vec<Step>,
    /// What each (thread, path) added since the last call; none of zero.
    pub samples: Vec<Sample>,
}

/// A frame of a call path, under the path of its callers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    /// Index of the callers' step in [`Samples::paths`], or [`ROOT`].
    pub parent: u32,
    /// Frame name id.
    pub name: u32,
}

/// What one thread added on one call path since the last call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sample {
    /// Index into [`Samples::threads`].
    pub thread: u32,
    /// Index into [`Samples::paths`] of its top frame.
    pub path: u32,
    /// What was added on this path since the last call.
    pub values: Weights,
}

impl Samples {
    /// No sample: nothing was added since the last call.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty()
    }

    /// The frame name ids of the path ending at step `path`, the leaf (top
    /// frame) first.
    pub fn frames(&self, path: u32) -> impl Iterator<Item = u32> + '_ {
        let mut at = path;
        std::iter::from_fn(move || {
            let step = self.paths.get(at as usize)?;
            at = step.parent;
            Some(step.name)
        })
    }

    /// Adds the path of frame name ids `root_first` (tests: samples by hand).
    #[cfg(test)]
    pub(crate) fn push_path(&mut self, root_first: &[u32]) -> u32 {
        let mut parent = ROOT;
        for &name in root_first {
            self.paths.push(Step { parent, name });
            parent = self.paths.len() as u32 - 1;
        }
        parent
    }
}

impl Keeper {
    /// The samples added to `trees` since the last call. A figure that went
    /// down (only an estimate can: `profile`'s `timing=sampled`) adds
    /// nothing until it is above what was sent again, so a path's sent
    /// figures sum to the highest it ever had: its last, for every count.
    pub fn delta(&mut self, trees: CallTrees) -> Samples {
        self.epoch = self.epoch.wrapping_add(1);
        let epoch = self.epoch;
        let mut out = Samples {
            weights: trees.weights,
            period: trees.period,
            threads: Vec::new(),
            paths: Vec::new(),
            samples: Vec::new(),
            names: Vec::new(),
            lines: Vec::new(),
        };
        let mut map: Vec<u32> = Vec::new();
        let mut touched: Vec<u32> = Vec::new();
        let mut climb: Vec<u32> = Vec::new();
        for t in &trees.threads {
            let paths = self.threads.entry(t.key).or_default();
            map.clear();
            touched.clear();
            for n in &t.nodes {
                let parent = match n.parent {
                    ROOT => ROOT,
                    p => map.get(p as usize).copied().unwrap_or(UNTRACKED),
                };
                let id = match parent {
                    UNTRACKED => None,
                    _ => match paths.index.get(&(parent, n.name)) {
                        Some(&id) => Some(id),
                        None if self.paths < MAX_PATHS => {
                            let id = paths.nodes.len() as u32;
                            paths.nodes.push(PathNode {
                                parent,
                                name: n.name,
                                sent: [0; MAX_WEIGHTS],
                                now: [0; MAX_WEIGHTS],
                                epoch: epoch.wrapping_sub(1),
                                copied: NOT_COPIED,
                            });
                            paths.index.insert((parent, n.name), id);
                            self.paths += 1;
                            Some(id)
                        }
                        None => None,
                    },
                };
                let Some(id) = id else {
                    map.push(UNTRACKED);
                    if n.own.iter().any(|&v| v != 0) {
                        self.untracked += 1;
                    }
                    continue;
                };
                map.push(id);
                let p = &mut paths.nodes[id as usize];
                if p.epoch != epoch {
                    p.epoch = epoch;
                    p.now = [0; MAX_WEIGHTS];
                    p.copied = NOT_COPIED;
                    touched.push(id);
                }
                for (a, b) in p.now.iter_mut().zip(n.own) {
                    *a = a.saturating_add(b);
                }
            }
            let mut thread = None;
            for &id in &touched {
                let p = &mut paths.nodes[id as usize];
                let mut values = [0; MAX_WEIGHTS];
                for ((v, sent), now) in values.iter_mut().zip(&mut p.sent).zip(p.now) {
                    if now > *sent {
                        *v = now - *sent;
                        *sent = now;
                    }
                }
                if values.iter().all(|&v| v == 0) {
                    continue;
                }
                let thread = *thread.get_or_insert_with(|| {
                    out.threads.push(t.name.clone());
                    out.threads.len() as u32 - 1
                });
                let path = copy_path(&mut paths.nodes, id, &mut out.paths, &mut climb);
                out.samples.push(Sample {
                    thread,
                    path,
                    values,
                });
            }
        }
        out.names = trees.names;
        out.lines = trees.lines;
        out
    }
}

/// Node `id`'s path in `out`, its steps not copied yet added (its callers
/// first): each node of this call is copied once. `climb`: scratch.
fn copy_path(nodes: &mut [PathNode], id: u32, out: &mut Vec<Step>, climb: &mut Vec<u32>) -> u32 {
    climb.clear();
    let mut n = id;
    while n != ROOT && nodes[n as usize].copied == NOT_COPIED {
        climb.push(n);
        n = nodes[n as usize].parent;
    }
    let mut parent = match n {
        ROOT => ROOT,
        n => nodes[n as usize].copied,
    };
    for &c in climb.iter().rev() {
        let node = &mut nodes[c as usize];
        out.push(Step {
            parent,
            name: node.name,
        });
        parent = out.len() as u32 - 1;
        node.copied = parent;
    }
    parent
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{types, Node, ThreadTree};

    fn trees(nodes: &[(u32, u32, u64)]) -> CallTrees {
        CallTrees {
            weights: &[types::SAMPLES],
            period: None,
            names: ["a", "b", "c"].iter().map(|s| (*s).into()).collect(),
            lines: Vec::new(),
            threads: vec![ThreadTree {
                key: 7,
                name: "main".into(),
                nodes: nodes
                    .iter()
                    .map(|&(parent, name, v)| Node {
                        parent,
                        name,
                        own: [v, 0, 0],
                    })
                    .collect(),
            }],
        }
    }

    /// The first call sends every path with figures; the next only what grew,
    /// by how much; same-named siblings (profile's overloads) are one path.
    #[test]
    fn sends_what_was_added_per_path() {
        let mut k = Keeper::default();
        let s = k.delta(trees(&[(ROOT, 0, 1), (0, 1, 5), (0, 2, 0)]));
        let got: Vec<_> = s
            .samples
            .iter()
            .map(|x| (s.frames(x.path).collect::<Vec<_>>(), x.values[0]))
            .collect();
        assert_eq!(got, [(vec![0], 1), (vec![1, 0], 5)]);
        assert_eq!(s.threads, ["main"]);
        let s = k.delta(trees(&[(ROOT, 0, 1), (0, 1, 7), (0, 2, 3), (0, 2, 1)]));
        let got: Vec<_> = s
            .samples
            .iter()
            .map(|x| (s.frames(x.path).collect::<Vec<_>>(), x.values[0]))
            .collect();
        assert_eq!(got, [(vec![1, 0], 2), (vec![2, 0], 4)]);
        assert!(k.delta(trees(&[(ROOT, 0, 1), (0, 1, 7)])).is_empty());
        // An estimate that went down sends nothing until it passes what was sent.
        assert!(k.delta(trees(&[(ROOT, 0, 1), (0, 1, 6)])).is_empty());
        let s = k.delta(trees(&[(ROOT, 0, 1), (0, 1, 9)]));
        assert_eq!(s.samples[0].values[0], 2);
        assert_eq!(k.untracked, 0);
    }
}
