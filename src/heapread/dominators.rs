//! The dominator tree and retained sizes, with nothing recursive: a
//! depth-first numbering from the super root with an explicit stack, then
//! Lengauer and Tarjan's algorithm (the simple version: path compression,
//! its `compress` a loop over an explicit path), every array indexed by
//! the depth-first number and mapped from the private directory. A
//! 50-million-long linked list is a stack of 50 million entries on disk,
//! not a stack overflow.
//!
//! Objects no GC root reaches are left out of the tree: no dominator, no
//! retained bytes (0, as NetBeans' heap library gives them). HotSpot's
//! dumps have some: what only a `java.lang.Class`'s own instance fields
//! hold (its reflection data, its cached name), which its CLASS_DUMP does
//! not carry.

use super::graph::{lay_out, Graph};
use super::scratch::{Mapped, Scratch};
use crate::error::CliError;

/// The dominator of a node no root reaches.
pub const NONE: u32 = u32::MAX;

pub struct Tree {
    /// Node → its immediate dominator (the super root's: itself; [`NONE`]
    /// for a node no root reaches).
    pub idom: Mapped<u32>,
    /// Node → retained bytes (its own and every node it dominates).
    pub retained: Mapped<u64>,
    /// Nodes the roots do not reach.
    pub unreachable: u64,
}

/// A depth-first numbering: dfn by node, vertex and parent by dfn, and
/// how many nodes were numbered.
struct Numbering {
    dfn: Mapped<u32>,
    vertex: Mapped<u32>,
    parent: Mapped<u32>,
    count: usize,
}

/// Numbers the nodes the super root reaches, depth first. While it walks,
/// a node is marked in a bitmap (an eighth of a byte per node, where a
/// `dfn` array read at every edge would be 4 bytes); `dfn` is filled from
/// `vertex` after, in one pass. The stack grows and shrinks in order, so
/// the arrays read at random are only the out edges and the bitmap.
fn number(g: &Graph, scratch: &mut Scratch) -> Result<Numbering, CliError> {
    let total = g.n + 1;
    let mut seen = scratch.array::<u64>("seen", total.div_ceil(64))?;
    let mut vertex = scratch.array::<u32>("vertex", total + 1)?;
    let mut parent = scratch.array::<u32>("parent", total + 1)?;
    // The stack: a node's number and where it stands in its out edges.
    let mut stack_num = scratch.array::<u32>("stack-num", total)?;
    let mut stack_pos = scratch.array::<u32>("stack-pos", total)?;
    let root = g.n as u32;
    let mut next = 1u32;
    seen[g.n / 64] |= 1 << (g.n % 64);
    vertex[1] = root;
    let mut top = 0usize;
    stack_num[0] = 1;
    stack_pos[0] = g.out_at[g.n];
    loop {
        let v = vertex[stack_num[top] as usize] as usize;
        let pos = stack_pos[top];
        if pos == g.out_at[v + 1] {
            if top == 0 {
                break;
            }
            top -= 1;
            continue;
        }
        stack_pos[top] = pos + 1;
        let w = g.out[pos as usize] as usize;
        if seen[w / 64] & (1 << (w % 64)) == 0 {
            seen[w / 64] |= 1 << (w % 64);
            next += 1;
            vertex[next as usize] = w as u32;
            parent[next as usize] = stack_num[top];
            top += 1;
            stack_num[top] = next;
            stack_pos[top] = g.out_at[w];
        }
    }
    drop((seen, stack_num, stack_pos));
    let mut dfn = scratch.array::<u32>("dfn", total)?;
    for i in 1..=next {
        dfn[vertex[i as usize] as usize] = i;
    }
    Ok(Numbering {
        dfn,
        vertex,
        parent,
        count: next as usize,
    })
}

/// Each numbered node's predecessors, by number: `of[at[w]..at[w + 1]]`
/// are the numbers of the nodes with an edge to number `w`.
struct Preds {
    at: Mapped<u32>,
    of: Mapped<u32>,
}

/// The most predecessors placed in one pass over the spooled edges: the
/// slice of `of` a pass writes at random (64 MB).
const PLACED_PER_PASS: u32 = 16 << 20;

/// The predecessor lists in the numbering's order, so that the algorithm,
/// which goes down the numbers, reads them in order instead of jumping
/// across the node arrays (when the graph is larger than memory, a jump
/// is a read from disk). The reached edges are spooled as (to, from)
/// numbers while the out edges are read in node order, then laid out a
/// range of targets at a time ([`lay_out`]).
fn preds(
    g: &Graph,
    dfn: &[u32],
    count: usize,
    per_pass: u32,
    scratch: &mut Scratch,
) -> Result<Preds, CliError> {
    let mut spool = scratch.spool::<u64>("pred-edges")?;
    for v in 0..=g.n {
        let a = dfn[v];
        if a == 0 {
            continue;
        }
        for &w in g.out_of(v as u32) {
            let b = dfn[w as usize];
            if b != 0 {
                spool.push((u64::from(b) << 32) | u64::from(a))?;
            }
        }
    }
    g.out.release();
    g.out_at.release();
    let edges = spool.finish()?;
    let mut at = scratch.array::<u32>("pred-at", count + 2)?;
    let mut of = scratch.array::<u32>("pred", edges.len())?;
    lay_out(&edges, &mut at, &mut of, per_pass);
    Ok(Preds { at, of })
}

/// The dominator tree and each node's retained bytes.
pub fn compute(g: &Graph, scratch: &mut Scratch) -> Result<Tree, CliError> {
    compute_placing(g, scratch, PLACED_PER_PASS)
}

/// [`compute`], placing at most `per_pass` predecessors per pass (a test
/// makes it small, to go through many passes).
pub(super) fn compute_placing(
    g: &Graph,
    scratch: &mut Scratch,
    per_pass: u32,
) -> Result<Tree, CliError> {
    let Numbering {
        dfn,
        vertex,
        parent,
        count: total,
    } = number(g, scratch)?;
    let unreachable = (g.n + 1 - total) as u64;
    let preds = preds(g, &dfn, total, per_pass, scratch)?;
    let mut semi = scratch.array::<u32>("semi", total + 1)?;
    let mut label = scratch.array::<u32>("label", total + 1)?;
    let mut ancestor = scratch.array::<u32>("ancestor", total + 1)?;
    let mut dom = scratch.array::<u32>("dom", total + 1)?;
    let mut bucket = scratch.array::<u32>("bucket", total + 1)?;
    let mut bucket_next = scratch.array::<u32>("bucket-next", total + 1)?;
    for i in 1..=total {
        semi[i] = i as u32;
        label[i] = i as u32;
    }
    let mut path = Vec::new();
    // eval(v): the vertex of least semi on v's path in the forest.
    let mut eval = |v: u32, ancestor: &mut [u32], label: &mut [u32], semi: &[u32]| -> u32 {
        if ancestor[v as usize] == 0 {
            return v;
        }
        // compress: the path up to the tree's root's child, then top down.
        path.clear();
        let mut x = v;
        while ancestor[ancestor[x as usize] as usize] != 0 {
            path.push(x);
            x = ancestor[x as usize];
        }
        while let Some(y) = path.pop() {
            let a = ancestor[y as usize] as usize;
            if semi[label[a] as usize] < semi[label[y as usize] as usize] {
                label[y as usize] = label[a];
            }
            ancestor[y as usize] = ancestor[a];
        }
        label[v as usize]
    };
    for w in (2..=total).rev() {
        let (from, to) = (preds.at[w] as usize, preds.at[w + 1] as usize);
        for &v in &preds.of[from..to] {
            let u = eval(v, &mut ancestor, &mut label, &semi);
            if semi[u as usize] < semi[w] {
                semi[w] = semi[u as usize];
            }
        }
        let s = semi[w] as usize;
        bucket_next[w] = bucket[s];
        bucket[s] = w as u32;
        let pw = parent[w];
        ancestor[w] = pw;
        let mut b = bucket[pw as usize];
        while b != 0 {
            let u = eval(b, &mut ancestor, &mut label, &semi);
            dom[b as usize] = if semi[u as usize] < semi[b as usize] {
                u
            } else {
                pw
            };
            b = bucket_next[b as usize];
        }
        bucket[pw as usize] = 0;
    }
    for w in 2..=total {
        if dom[w] != semi[w] {
            dom[w] = dom[dom[w] as usize];
        }
    }
    drop((semi, label, ancestor, bucket, bucket_next, parent, preds));
    // From numbers back to nodes, in passes that each read or write one
    // array at random while the others go in order: when the graph is
    // larger than memory, a pass's one random array is what must stay in
    // it. The retained bytes are summed by number (a dominator's number is
    // below its nodes'), then read back by node.
    let mut by_number = scratch.array::<u64>("retained-by-number", total + 1)?;
    for v in 0..g.n {
        let w = dfn[v] as usize;
        if w != 0 {
            by_number[w] = g.shallow[v];
        }
    }
    for w in (2..=total).rev() {
        let d = dom[w] as usize;
        by_number[d] = by_number[d].saturating_add(by_number[w]);
    }
    let mut retained = scratch.array::<u64>("retained", g.n + 1)?;
    for v in 0..=g.n {
        retained[v] = by_number[dfn[v] as usize];
    }
    drop(by_number);
    // dom by number becomes the dominator's node by number, then by node.
    for w in 2..=total {
        dom[w] = vertex[dom[w] as usize];
    }
    drop(vertex);
    let mut idom = scratch.array::<u32>("idom", g.n + 1)?;
    for v in 0..g.n {
        let w = dfn[v] as usize;
        idom[v] = if w == 0 { NONE } else { dom[w] };
    }
    idom[g.n] = g.n as u32;
    drop((dfn, dom));
    Ok(Tree {
        idom,
        retained,
        unreachable,
    })
}
