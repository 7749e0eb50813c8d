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

use super::graph::Graph;
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

/// Numbers the nodes the super root reaches, depth first.
fn number(g: &Graph, scratch: &mut Scratch) -> Result<Numbering, CliError> {
    let total = g.n + 1;
    let mut dfn = scratch.array::<u32>("dfn", total)?;
    let mut vertex = scratch.array::<u32>("vertex", total + 1)?;
    let mut parent = scratch.array::<u32>("parent", total + 1)?;
    // The stack: a node and where it stands in its out edges.
    let mut stack_node = scratch.array::<u32>("stack-node", total)?;
    let mut stack_pos = scratch.array::<u64>("stack-pos", total)?;
    let root = g.n as u32;
    let mut next = 1u32;
    dfn[g.n] = 1;
    vertex[1] = root;
    let mut top = 0usize;
    stack_node[0] = root;
    stack_pos[0] = g.out_at[g.n];
    loop {
        let v = stack_node[top] as usize;
        let pos = stack_pos[top];
        if pos == g.out_at[v + 1] {
            if top == 0 {
                break;
            }
            top -= 1;
            continue;
        }
        stack_pos[top] = pos + 1;
        let w = g.out[pos as usize];
        if dfn[w as usize] == 0 {
            next += 1;
            dfn[w as usize] = next;
            vertex[next as usize] = w;
            parent[next as usize] = dfn[v];
            top += 1;
            stack_node[top] = w;
            stack_pos[top] = g.out_at[w as usize];
        }
    }
    Ok(Numbering {
        dfn,
        vertex,
        parent,
        count: next as usize,
    })
}

/// The dominator tree and each node's retained bytes.
pub fn compute(g: &Graph, scratch: &mut Scratch) -> Result<Tree, CliError> {
    let Numbering {
        dfn,
        vertex,
        parent,
        count: total,
    } = number(g, scratch)?;
    let unreachable = (g.n + 1 - total) as u64;
    // The numbering was the out edges' last use until the paths.
    g.out.release();
    g.out_at.release();
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
        let node = vertex[w];
        for &p in g.in_of(node) {
            let v = dfn[p as usize];
            if v == 0 {
                continue;
            }
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
    drop((semi, label, ancestor, bucket, bucket_next, parent));
    g.inn.release();
    g.in_at.release();
    let mut idom = scratch.array::<u32>("idom", g.n + 1)?;
    let mut retained = scratch.array::<u64>("retained", g.n + 1)?;
    idom.fill(NONE);
    idom[g.n] = g.n as u32;
    for w in 2..=total {
        let v = vertex[w] as usize;
        idom[v] = vertex[dom[w] as usize];
        retained[v] = g.shallow[v];
    }
    // A dominator is numbered before what it dominates.
    for w in (2..=total).rev() {
        let v = vertex[w] as usize;
        let r = retained[v];
        let d = idom[v] as usize;
        retained[d] = retained[d].saturating_add(r);
    }
    drop(dfn);
    Ok(Tree {
        idom,
        retained,
        unreachable,
    })
}
