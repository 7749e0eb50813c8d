//! The heap as a tree of type paths, for `profrj flame HEAP.hprof`
//! (`crate::flame::heap` draws it).
//!
//! - `--by dominator` (the default): each object's frame is its type, under
//!   the frames of the objects that dominate it, from the GC roots down; a
//!   frame's own bytes are its objects' shallow sizes, so its width is the
//!   bytes its objects retain (the sum of the retained sizes of the
//!   dominator tree's nodes on that path), exactly. A chain of objects of
//!   one type (a linked list's nodes) is one frame, paths stop deepening at
//!   [`MAX_DEPTH`] types, and past [`MAX_PATHS`] distinct paths new objects
//!   count on their dominator's path: the memory held is per path, never
//!   per object (each object's path is a mapped array).
//! - `--by site`: the allocating thread, then the allocation site, then
//!   the type, each frame's own bytes the shallow sizes of the objects
//!   allocated there (a dump without traces: one `[no allocation trace]`
//!   thread). Retained sizes do not add up along allocation paths (an
//!   object retained by another is counted in both), so this view weighs
//!   shallow bytes: the live heap by where it was allocated.
//!
//! Objects no GC root reaches are left out of both (their bytes are said).

use super::dominators::NONE;
use super::Heap;
use crate::error::CliError;
use std::collections::HashMap;
use std::path::Path;

/// Types on one dominator path, at most; deeper objects count on the last.
pub const MAX_DEPTH: u16 = 64;
/// Distinct paths kept, at most.
pub const MAX_PATHS: usize = 1 << 20;

/// How the heap is drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    /// Retained bytes along the dominator tree's type paths.
    Dominator,
    /// Shallow bytes by allocating thread, site and type.
    Site,
}

/// The tree of paths: each path (an index; [`ROOT`] first) a frame under
/// its parent, a parent's index below its children's.
pub struct Paths {
    pub parent: Vec<u32>,
    pub frame: Vec<u32>,
    /// Bytes counted on the path itself.
    pub own: Vec<u64>,
    depth: Vec<u16>,
    index: HashMap<(u32, u32), u32>,
    /// Frame names, by frame number, and which frames are types.
    pub names: Vec<String>,
    pub is_type: Vec<bool>,
    name_index: HashMap<String, u32>,
    /// A node type's frame (its name made once, not per object).
    by_type: HashMap<u32, u32>,
}

/// The root path (the page's tree root).
pub const ROOT: u32 = 0;

impl Paths {
    pub fn new() -> Self {
        Paths {
            parent: vec![ROOT],
            frame: vec![u32::MAX],
            own: vec![0],
            depth: vec![0],
            index: HashMap::new(),
            names: Vec::new(),
            is_type: Vec::new(),
            name_index: HashMap::new(),
            by_type: HashMap::new(),
        }
    }

    pub fn frame_named(&mut self, name: String, is_type: bool) -> u32 {
        if let Some(&f) = self.name_index.get(&name) {
            return f;
        }
        let f = self.names.len() as u32;
        self.name_index.insert(name.clone(), f);
        self.names.push(name);
        self.is_type.push(is_type);
        f
    }

    /// The frame of node type `ty` (a graph's `ty`), named by `name` the
    /// first time.
    pub fn type_frame(&mut self, ty: u32, name: impl FnOnce() -> String) -> u32 {
        if let Some(&f) = self.by_type.get(&ty) {
            return f;
        }
        let f = self.frame_named(name(), true);
        self.by_type.insert(ty, f);
        f
    }

    /// The path `frame` under `parent`, made if need be (within the caps).
    pub fn child(&mut self, parent: u32, frame: u32) -> u32 {
        let p = parent as usize;
        if self.frame[p] == frame || self.depth[p] >= MAX_DEPTH {
            return parent;
        }
        if let Some(&c) = self.index.get(&(parent, frame)) {
            return c;
        }
        if self.parent.len() >= MAX_PATHS {
            return parent;
        }
        let c = self.parent.len() as u32;
        self.parent.push(parent);
        self.frame.push(frame);
        self.own.push(0);
        self.depth.push(self.depth[p] + 1);
        self.index.insert((parent, frame), c);
        c
    }
}

/// The dump at `path` drawn `by` one way or the other: its paths, and the
/// bytes of the objects no GC root reaches (left out).
pub fn read(path: &Path, gzip: bool, by: By) -> Result<(Paths, u64), CliError> {
    let mut heap = Heap::read(path, gzip)?;
    match by {
        By::Dominator => by_dominator(&mut heap),
        By::Site => Ok(by_site(&heap)),
    }
}

/// Every reachable object on its dominator path; returns the paths and
/// the bytes of objects no root reaches.
fn by_dominator(heap: &mut Heap) -> Result<(Paths, u64), CliError> {
    let n = heap.g.n;
    let mut memo = heap.scratch.array::<u32>("flame-path", n + 1)?;
    let mut stack = heap.scratch.array::<u32>("flame-stack", n + 1)?;
    let (d, g, idom) = (&heap.d, &heap.g, &heap.tree.idom);
    let super_root = n as u32;
    let mut paths = Paths::new();
    memo.fill(u32::MAX);
    memo[n] = ROOT;
    let mut unreachable = 0u64;
    for v in 0..n as u32 {
        if idom[v as usize] == NONE {
            unreachable += g.shallow[v as usize];
            continue;
        }
        // Up the dominators to one whose path is known, then back down:
        // each object is placed once, whatever the chains' lengths.
        let mut top = 0usize;
        let mut u = v;
        while memo[u as usize] == u32::MAX && u != super_root {
            stack[top] = u;
            top += 1;
            u = idom[u as usize];
        }
        while top > 0 {
            top -= 1;
            let x = stack[top];
            let ty = g.ty[x as usize];
            let frame = paths.type_frame(ty, || g.ty_name(d, ty));
            let p = paths.child(memo[idom[x as usize] as usize], frame);
            memo[x as usize] = p;
            paths.own[p as usize] += g.shallow[x as usize];
        }
    }
    Ok((paths, unreachable))
}

/// Every reachable object under its thread, site and type.
fn by_site(heap: &Heap) -> (Paths, u64) {
    let (d, g, keys, idom) = (&heap.d, &heap.g, &heap.keys, &heap.tree.idom);
    let mut paths = Paths::new();
    let no_trace = paths.frame_named("[no allocation trace]".into(), false);
    let threads: Vec<u32> = keys
        .threads
        .iter()
        .map(|t| paths.frame_named(t.clone(), false))
        .collect();
    let sites: Vec<u32> = keys
        .sites
        .iter()
        .map(|s| paths.frame_named(s.clone(), false))
        .collect();
    let mut unreachable = 0u64;
    for v in 0..g.n as u32 {
        let bytes = g.shallow[v as usize];
        if idom[v as usize] == NONE {
            unreachable += bytes;
            continue;
        }
        let ty = g.ty[v as usize];
        let frame = paths.type_frame(ty, || g.ty_name(d, ty));
        let under = match keys.of(g, v) {
            Some((site, thread)) => {
                let t = paths.child(ROOT, threads[thread as usize]);
                paths.child(t, sites[site as usize])
            }
            None => paths.child(ROOT, no_trace),
        };
        let p = paths.child(under, frame);
        paths.own[p as usize] += bytes;
    }
    (paths, unreachable)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_of_one_type_is_one_frame_and_paths_stop_at_the_caps() {
        let mut p = Paths::new();
        let node = p.frame_named("Node".into(), true);
        let map = p.frame_named("Map".into(), true);
        let a = p.child(ROOT, map);
        let b = p.child(a, node);
        assert_eq!(p.child(b, node), b, "a Node under a Node: the same frame");
        assert_eq!(p.child(a, node), b, "found again, not made twice");
        let mut deep = b;
        for i in 0..200 {
            deep = p.child(deep, if i % 2 == 0 { map } else { node });
        }
        assert_eq!(p.depth[deep as usize], MAX_DEPTH);
    }
}
