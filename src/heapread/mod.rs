//! `profrj report HEAP.hprof[.gz]` and `profrj diff A.hprof B.hprof`: a
//! heap dump read as a graph, for what retains the heap and what grew.
//!
//! 1. `load.rs`: the dump mapped (a gzipped one inflated into a private
//!    directory first), a first pass keeping classes, symbols, frames,
//!    traces and roots, and spooling every object's id;
//! 2. `graph.rs`: the ids sorted on disk (a node is an id's rank), a
//!    second pass writing each node's type, size, trace and offset and its
//!    references, laid out as adjacency arrays;
//! 3. `dominators.rs`: the dominator tree (Lengauer–Tarjan, iterative)
//!    and retained sizes; `paths.rs`: shortest paths from the GC roots
//!    (breadth first);
//! 4. `views.rs`: per class, site and thread; `text.rs`, `diff.rs`: the
//!    tables; `type_paths.rs`: the objects by type path, for the flame
//!    page.
//!
//! Every per-object array is a file of the private directory
//! (`scratch.rs`), mapped: the process holds the dump's classes, symbols
//! and traces, never a structure per object.

mod diff;
mod dominators;
mod graph;
pub mod histogram;
mod load;
mod objects;
mod paths;
pub mod pprof;
pub mod type_paths;
use crate::scratch;
#[cfg(test)]
mod tests;
pub mod text;
mod views;

pub use diff::diff;
pub use text::report;

use crate::error::CliError;
use std::path::Path;

/// One dump read whole: its tables, graph, dominator tree and paths.
pub struct Heap {
    pub d: load::Dump,
    pub g: graph::Graph,
    pub tree: dominators::Tree,
    pub paths: paths::Paths,
    pub keys: views::Keys,
    /// Dropped last: the directory of every mapped array above (and of
    /// those a view adds).
    scratch: scratch::Scratch,
}

impl Heap {
    /// Reads the dump at `path` (`gzip` as `heap::sniff` said).
    pub fn read(path: &Path, gzip: bool) -> Result<Heap, CliError> {
        // PROFRJ_HEAP_TIMES=1: each phase's end on stderr, in seconds.
        let t0 = std::time::Instant::now();
        let tick = |what: &str| {
            if std::env::var_os("PROFRJ_HEAP_TIMES").is_some() {
                eprintln!("{what}: {:.2}", t0.elapsed().as_secs_f64());
            }
        };
        let mut scratch = scratch::Scratch::new()?;
        let (d, ids) = load::open_with_ids(path, gzip, &mut scratch)?;
        tick("pass 1");
        let g = graph::build(&d, ids, &mut scratch, path)?;
        tick("graph");
        let tree = dominators::compute(&g, &mut scratch)?;
        tick("dominators");
        let paths = paths::Paths::search(&g, &mut scratch)?;
        tick("paths");
        let keys = views::Keys::new(&d, &g);
        Ok(Heap {
            d,
            g,
            tree,
            paths,
            keys,
            scratch,
        })
    }

    /// A path from a GC root to `v` as one line per step: the root's kind,
    /// then each referrer's field or index and what it refers to.
    pub fn path_lines(&self, v: u32) -> Vec<String> {
        let Some(p) = self.paths.path(v) else {
            return vec!["(no GC root reaches it)".into()];
        };
        let (d, g) = (&self.d, &self.g);
        let mut lines = Vec::new();
        if p.cut {
            lines.push(format!(
                "... more than {} steps from a GC root (not followed further) ...",
                p.skipped
            ));
        }
        for (i, pair) in p.nodes.windows(2).enumerate() {
            if p.skipped > 0 && !p.cut && i + 1 == p.split {
                lines.push(format!("... {} more steps ...", p.skipped));
                continue;
            }
            let how = objects::step(d, g, pair[0], pair[1]);
            lines.push(format!("{how} -> {}", g.node_name(d, pair[1])));
        }
        lines
    }

    /// The path's shape without addresses, to match a retainer between two
    /// dumps: each step's field (or root kind) and the type it reaches;
    /// `None` for a node no root reaches or a path too long to show whole.
    pub fn path_steps(&self, v: u32) -> Option<Vec<(String, String)>> {
        let p = self.paths.path(v).filter(|p| p.skipped == 0 && !p.cut)?;
        let steps = p.nodes.windows(2).map(|pair| {
            let how = objects::step(&self.d, &self.g, pair[0], pair[1]);
            (how, self.type_of(pair[1]))
        });
        Some(steps.collect())
    }

    /// The node a path of [`Heap::path_steps`] leads to in this dump: from
    /// the super root, at each step the first referent of that type
    /// through that field.
    pub fn resolve(&self, steps: &[(String, String)]) -> Option<u32> {
        let mut at = self.g.n as u32;
        for (how, ty) in steps {
            at = *self.g.out_of(at).iter().find(|&&w| {
                self.type_of(w) == *ty && objects::step(&self.d, &self.g, at, w) == *how
            })?;
        }
        Some(at)
    }

    /// A node's type as a name (`class X` for a class object).
    fn type_of(&self, v: u32) -> String {
        match self.g.histogram_type(v) {
            Some(t) => self.g.type_name(&self.d, t),
            None => self.g.node_name(&self.d, v),
        }
    }
}
