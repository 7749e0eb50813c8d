//! Shortest paths from the GC roots: one breadth-first search from the
//! super root over the out edges, its queue and each node's parent in
//! mapped arrays; a path is read back by following parents (a loop, at
//! most the number of nodes long).

use super::graph::Graph;
use super::scratch::{Mapped, Scratch};
use crate::error::CliError;

/// No parent: the super root itself, or a node no root reaches.
const NONE: u32 = u32::MAX;

pub struct Paths {
    parent: Mapped<u32>,
    root: u32,
}

/// The longest path shown: its root side and its object side are kept,
/// the middle said as a count.
pub const SHOWN: usize = 24;

/// The most parents followed for one path: deeper (a node far down a
/// long chain), its root side is not looked for, so a report of many
/// retainers stays bounded.
pub const FOLLOWED: u64 = 100_000;

impl Paths {
    pub fn search(g: &Graph, scratch: &mut Scratch) -> Result<Paths, CliError> {
        let total = g.n + 1;
        let mut parent = scratch.array::<u32>("bfs-parent", total)?;
        parent.fill(NONE);
        let mut queue = scratch.array::<u32>("bfs-queue", total)?;
        let root = g.n as u32;
        let (mut head, mut tail) = (0usize, 1usize);
        queue[0] = root;
        parent[g.n] = root;
        while head < tail {
            let v = queue[head];
            head += 1;
            for &w in g.out_of(v) {
                if parent[w as usize] == NONE {
                    parent[w as usize] = v;
                    queue[tail] = w;
                    tail += 1;
                }
            }
        }
        g.out.release();
        g.out_at.release();
        Ok(Paths { parent, root })
    }

    /// The path from the super root (first) to `v` (last), `None` if no
    /// root reaches `v`. One longer than [`SHOWN`] nodes keeps its first
    /// and last `SHOWN / 2`.
    pub fn path(&self, v: u32) -> Option<Path> {
        if self.parent[v as usize] == NONE {
            return None;
        }
        // Walked from `v` up: the object side kept whole, the root side
        // as a window of its last nodes met.
        let mut near = Vec::new();
        let mut far = std::collections::VecDeque::new();
        let mut all = 0u64;
        let mut x = v;
        loop {
            all += 1;
            if near.len() < SHOWN / 2 {
                near.push(x);
            } else {
                far.push_back(x);
                if far.len() > SHOWN / 2 {
                    far.pop_front();
                }
            }
            if x == self.root {
                break;
            }
            if all == FOLLOWED {
                near.reverse();
                return Some(Path {
                    skipped: all - near.len() as u64,
                    nodes: near,
                    split: 0,
                    cut: true,
                });
            }
            x = self.parent[x as usize];
        }
        let split = far.len();
        let mut nodes: Vec<u32> = far.into_iter().rev().collect();
        nodes.extend(near.into_iter().rev());
        Some(Path {
            skipped: all - nodes.len() as u64,
            nodes,
            split,
            cut: false,
        })
    }
}

/// A path as [`Paths::path`] gives it.
pub struct Path {
    /// The super root first, the object last.
    pub nodes: Vec<u32>,
    /// Nodes left out between `nodes[split - 1]` and `nodes[split]`.
    pub skipped: u64,
    pub split: usize,
    /// Longer than [`FOLLOWED`]: `nodes` is the object's side only, and
    /// `skipped` how many more were followed without reaching a root.
    pub cut: bool,
}
