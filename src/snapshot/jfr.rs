//! A JFR recording (profrj's, the JDK's, async-profiler's) read into the
//! same call trees a snapshot holds, so every report works on it:
//!
//! - `<sampler>`: `jdk.ExecutionSample` (one sample, a hit unless its state
//!   says the thread was off the CPU), `profiler.WallClockSample` (its
//!   `samples`, hits when `STATE_RUNNABLE`) and `jdk.NativeMethodSample`
//!   (one sample, never a hit);
//! - `<alloc>`: `jdk.ObjectAllocationSample` (`weight` bytes; objects
//!   `weight / allocationSize` when the event has profrj's `allocationSize`,
//!   else one per event) and async-profiler's `jdk.ObjectAllocationInNewTLAB`
//!   / `OutsideTLAB` (`tlabSize` or `allocationSize` bytes), the class on top;
//! - `<lock>`: `jdk.JavaMonitorEnter` and `jdk.ThreadPark` (one wait of
//!   `duration` ns each), the lock's class on top.
//!
//! Frames are named as the sampler names them (`pkg.Cls.m()`,
//! `pkg.Cls.m(native)`, constructors `pkg.Cls()`; a frame without a class,
//! such as async-profiler's native and profrj's synthetic frames, by its
//! name alone); a stack the recording marks truncated, or deeper than
//! [`MAX_FRAMES`], keeps its top frames under `[truncated]`; a sample
//! without a stack counts on `[no Java frame]` (an allocation or a wait
//! without one has its class frame at the root). Threads are told apart by
//! their ids and name, across chunks. A frame's `lineNumber` (the JDK's
//! recordings and profrj's always have one) is kept only when asked
//! (`--lines`, as async-profiler's converter's): then one method on two
//! lines is two nodes, each with its `line`, as the agent's `lines` makes
//! them; else a method is one node, as in a snapshot without `lines`.
//!
//! A sample's frame types (async-profiler's and the JDK's recordings have
//! them, and the agent's with issue 40) are its nodes' `frameTypes`, and
//! its top frame's its `selfTypes`, weighted as its samples, as the
//! agent counts them: `Interpreted`, `JIT compiled` (a tier not known:
//! `jit`), async-profiler's `C1 compiled`, `Inlined`, `Native`, its `C++`
//! (`vm`) and `Kernel`; profrj's `Java` (a type not known) is none.
//!
//! Bounds: each (chunk, thread, stack, class) is walked into the tree once,
//! later events add to its leaf; cumulated figures are summed in one
//! backward pass at the end. The trees may hold at most [`node_limit`]
//! nodes for the file's size, so a small hostile file cannot claim a huge
//! tree.

use super::{
    CallKind, CallSection, CallThread, Names, Node, Snapshot, Tree, Values, NONE, NO_LINE,
};
use crate::error::CliError;
use profrj_format::frame_types::FrameType;
use profrj_jfr::reader::{self, Chunk, Kind, Record};
use std::collections::HashMap;
use std::path::Path;

/// Frames kept of a stack (the agent's default `depth`, and the converters').
pub const MAX_FRAMES: usize = 2048;
const TRUNCATED: &str = "[truncated]";

/// The most call-tree nodes a recording of `bytes` may make.
fn node_limit(bytes: u64) -> usize {
    (1_000_000 + bytes / 2).min(usize::MAX as u64) as usize
}

/// Reads the JFR file at `path` (a regular file: a chunk's pools are at
/// its end); `lines`: each frame keyed by its line too.
pub fn read_file(path: &Path, lines: bool) -> Result<Snapshot, CliError> {
    let mut file = std::fs::File::open(path)
        .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return Err(CliError::Input(format!(
            "{}: a JFR recording is read from a regular file, not a pipe",
            path.display()
        )));
    }
    let mut b = Builder::new(node_limit(len), lines);
    // The reader's sink answers a message, which it reports at its offset.
    reader::read(&mut file, |c, r| b.add(c, r).map_err(|e| e.to_string()))
        .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
    Ok(b.finish())
}

/// What one event adds to its leaf, in its section's own-value slots.
struct Add {
    kind: CallKind,
    own: Values,
    /// The class frame on top (allocations, locks).
    class: Option<u64>,
}

/// A stack's frames with a type: (node, type's slot, whether the top
/// frame), and the samples counted on it.
struct TypedStack {
    section: usize,
    frames: Vec<(u32, u8, bool)>,
    count: u64,
}

#[derive(Default)]
struct SectionTrees {
    threads: Vec<CallThread>,
    by_thread: HashMap<(u64, u64, String), usize>,
    /// (thread, parent node, name, line) -> child node.
    children: HashMap<(usize, u32, u32, u32), u32>,
}

struct Builder {
    names: Names,
    sections: Vec<(CallKind, SectionTrees)>,
    /// (section, chunk, thread key) -> thread index in the section.
    threads: HashMap<(CallKind, usize, u64), usize>,
    /// (section, chunk, thread index, stack key, class key) -> leaf node.
    leaves: HashMap<(CallKind, usize, usize, u64, u64), u32>,
    nodes: usize,
    limit: usize,
    /// Keep each frame's line.
    lines: bool,
    /// The stack being walked: (name, line) per frame, root first.
    path: Vec<(u32, u32)>,
    /// The nodes of the path last walked, root first.
    path_nodes: Vec<u32>,
    /// The chunk [`Builder::typed_chunk`]'s sampler stacks, by (thread
    /// index, stack key): their typed frames and samples, held for one
    /// chunk (as the reader holds its stacks).
    typed_stacks: HashMap<(usize, u64), TypedStack>,
    /// The chunk's frame type keys: each one's slot in `FrameCounts`.
    type_slots: HashMap<u64, Option<usize>>,
    typed_chunk: usize,
}

impl Builder {
    fn new(limit: usize, lines: bool) -> Self {
        Builder {
            names: Names::default(),
            sections: Vec::new(),
            threads: HashMap::new(),
            leaves: HashMap::new(),
            nodes: 0,
            limit,
            lines,
            path: Vec::new(),
            path_nodes: Vec::new(),
            typed_stacks: HashMap::new(),
            type_slots: HashMap::new(),
            typed_chunk: 0,
        }
    }

    fn section(&mut self, kind: CallKind) -> usize {
        match self.sections.iter().position(|s| s.0 == kind) {
            Some(i) => i,
            None => {
                self.sections.push((kind, SectionTrees::default()));
                self.sections.len() - 1
            }
        }
    }

    fn add(&mut self, c: &Chunk, r: &Record) -> Result<(), CliError> {
        let Some(add) = weigh(r) else {
            return Ok(());
        };
        let kind = add.kind;
        let s = self.section(kind);
        let thread = match self.threads.get(&(kind, c.index, r.thread)) {
            Some(&t) => t,
            None => {
                let t = self.thread_index(s, c, r.thread);
                self.threads.insert((kind, c.index, r.thread), t);
                t
            }
        };
        let class = add.class.unwrap_or(0);
        // Whether `path_nodes` holds this stack's path.
        let mut walked = false;
        let leaf = match self.leaves.get(&(kind, c.index, thread, r.stack, class)) {
            Some(&l) => l,
            None => {
                self.path_of(c, r.stack, add.class);
                let l = self.walk(s, thread, add.class.is_some())?;
                self.leaves
                    .insert((kind, c.index, thread, r.stack, class), l);
                walked = true;
                l
            }
        };
        let node = &mut self.sections[s].1.threads[thread].tree.nodes_mut()[leaf as usize];
        for (v, a) in node.v.0.iter_mut().zip(add.own.0) {
            *v = v.saturating_add(a);
        }
        if let Kind::Sample { count, .. } = r.kind {
            self.add_types(c, (s, thread, r.stack), count, walked)?;
        }
        Ok(())
    }

    /// Counts a sample's frame types (`count` samples) for its stack's
    /// nodes: a stack's (node, type) pairs are found once per chunk, its
    /// samples summed, and added to the nodes when the chunk ends.
    /// `walked`: `path_nodes` holds the stack's path already.
    fn add_types(
        &mut self,
        c: &Chunk,
        (s, thread, stack): (usize, usize, u64),
        count: u64,
        walked: bool,
    ) -> Result<(), CliError> {
        if self.typed_chunk != c.index {
            self.flush_types();
            self.type_slots.clear();
            self.typed_chunk = c.index;
        }
        if let Some(t) = self.typed_stacks.get_mut(&(thread, stack)) {
            t.count = t.count.saturating_add(count);
            return Ok(());
        }
        let Some(st) = c.stack(stack) else {
            return Ok(());
        };
        let kept = &st.frames[..st.frames.len().min(MAX_FRAMES)];
        let slots = &mut self.type_slots;
        let types: Vec<Option<usize>> = kept
            .iter()
            .map(|f| {
                *slots
                    .entry(f.kind)
                    .or_insert_with(|| frame_type(c, f).map(super::type_slot))
            })
            .collect();
        let mut frames = Vec::new();
        if types.iter().any(Option::is_some) {
            if !walked {
                self.path_of(c, stack, None);
                self.walk(s, thread, false)?;
            }
            // The path ends in the stack's frames, top last.
            for (k, ty) in types.iter().enumerate() {
                let node = self.path_nodes.len().checked_sub(1 + k);
                if let (Some(ty), Some(i)) = (ty, node) {
                    frames.push((self.path_nodes[i], *ty as u8, k == 0));
                }
            }
        }
        let typed = TypedStack {
            section: s,
            frames,
            count,
        };
        self.typed_stacks.insert((thread, stack), typed);
        Ok(())
    }

    /// Adds the chunk's counted frame types to their nodes.
    fn flush_types(&mut self) {
        for ((thread, _), t) in self.typed_stacks.drain() {
            let nodes = self.sections[t.section].1.threads[thread].tree.nodes_mut();
            for &(n, ty, top) in &t.frames {
                let c = &mut nodes[n as usize].types;
                let ty = ty as usize;
                c.through[ty] = c.through[ty].saturating_add(t.count);
                if top {
                    c.own[ty] = c.own[ty].saturating_add(t.count);
                }
            }
        }
    }

    fn thread_index(&mut self, s: usize, c: &Chunk, key: u64) -> usize {
        let t = c.thread(key);
        let name = t
            .and_then(|t| c.thread_name(t))
            .unwrap_or_else(|| "[unknown thread]".into());
        let id = t.map_or((0, 0), |t| (t.java_thread_id, t.os_thread_id));
        let trees = &mut self.sections[s].1;
        let n = trees.threads.len();
        *trees
            .by_thread
            .entry((id.0, id.1, name.clone()))
            .or_insert_with(|| {
                trees.threads.push(CallThread {
                    name,
                    tree: Tree::new(),
                    ..Default::default()
                });
                n
            })
    }

    /// `self.path`: the stack's frame names root first, then the class.
    fn path_of(&mut self, c: &Chunk, stack: u64, class: Option<u64>) {
        self.path.clear();
        match c.stack(stack) {
            None => {}
            Some(st) => {
                let cut = st.truncated || st.frames.len() > MAX_FRAMES;
                if cut {
                    self.path.push((self.names.intern(TRUNCATED), NO_LINE));
                }
                let kept = &st.frames[..st.frames.len().min(MAX_FRAMES)];
                for f in kept.iter().rev() {
                    let name = frame_name(c, f);
                    let line = match f.line {
                        line if self.lines && line > 0 => line as u32,
                        _ => NO_LINE,
                    };
                    self.path.push((self.names.intern(&name), line));
                }
            }
        }
        // A sample without a Java frame counts on a node of its own, as the
        // snapshot reader gives it; a class frame stands at the root.
        if self.path.is_empty() && class.is_none() {
            self.path
                .push((self.names.intern(super::NO_JAVA_FRAME), NO_LINE));
        }
        if let Some(k) = class {
            let name = c.class_name(k).unwrap_or_else(|| "[unknown class]".into());
            self.path.push((self.names.intern(&name), NO_LINE));
        }
    }

    /// Walks `self.path` down thread `t`'s tree, making the nodes it lacks;
    /// the last is a class frame when `class`.
    fn walk(&mut self, s: usize, t: usize, class: bool) -> Result<u32, CliError> {
        let trees = &mut self.sections[s].1;
        let tree = &mut trees.threads[t].tree;
        let mut node = 0u32;
        self.path_nodes.clear();
        let last = self.path.len().saturating_sub(1);
        for (i, &(name, line)) in self.path.iter().enumerate() {
            node = match trees.children.get(&(t, node, name, line)) {
                Some(&n) => n,
                None => {
                    if self.nodes >= self.limit {
                        return Err(CliError::Input(format!(
                            "the recording makes more than {} call-tree nodes for its size: \
                             refused as hostile",
                            self.limit
                        )));
                    }
                    self.nodes += 1;
                    let id = tree.nodes_mut().len() as u32;
                    let depth = tree.nodes_mut()[node as usize].depth + 1;
                    tree.nodes_mut().push(Node {
                        name,
                        signature: NONE,
                        parent: node,
                        depth,
                        class: class && i == last,
                        line,
                        v: Values::default(),
                        types: super::FrameCounts::default(),
                    });
                    trees.children.insert((t, node, name, line), id);
                    id
                }
            };
            self.path_nodes.push(node);
        }
        Ok(node)
    }

    /// The sections, with cumulated figures and thread totals summed.
    fn finish(mut self) -> Snapshot {
        self.flush_types();
        let mut snap = Snapshot {
            names: self.names,
            ..Default::default()
        };
        for (kind, trees) in self.sections {
            let desc = kind.desc();
            let mut threads = trees.threads;
            for t in &mut threads {
                preorder(&mut t.tree);
                let nodes = t.tree.nodes_mut();
                // Cumulated = own, then each node's into its parent (children
                // always follow their parent).
                for m in desc.metrics {
                    let (Some(own), Some(cum)) =
                        (desc.slot(m.own), m.cumulated.and_then(|c| desc.slot(c)))
                    else {
                        continue;
                    };
                    for n in nodes.iter_mut() {
                        n.v.0[cum] = n.v.0[own];
                    }
                    for i in (1..nodes.len()).rev() {
                        let (v, p) = (nodes[i].v.0[cum], nodes[i].parent as usize);
                        if p != 0 {
                            nodes[p].v.0[cum] = nodes[p].v.0[cum].saturating_add(v);
                        }
                    }
                }
                for (slot, &(attr, _)) in desc.thread_totals.iter().enumerate() {
                    let metric = desc
                        .metrics
                        .iter()
                        .find(|m| m.own == attr || m.thread_total == Some(attr));
                    if let Some(own) = metric.and_then(|m| desc.slot(m.own)) {
                        let sum = nodes.iter().fold(0u64, |a, n| a.saturating_add(n.v.0[own]));
                        t.totals[slot] = Some(sum);
                    }
                }
            }
            let typed = threads.iter().any(|t| t.tree.walk().any(|n| n.types.any()));
            snap.call_sections.push(CallSection {
                kind,
                typed,
                live: false,
                live_rule: None,
                values: vec![None; desc.section_values.len()],
                threads,
            });
        }
        snap.call_sections
            .sort_by_key(|s| CallKind::ALL.iter().position(|&k| k == s.kind));
        snap
    }
}

/// Puts a tree's nodes in document order (each node's subtree right after
/// it, as a snapshot lists them: the readers rebuild paths by depth), the
/// order the events made them in being any.
fn preorder(tree: &mut Tree) {
    let n = tree.nodes_mut().len();
    let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
    for (i, node) in tree.nodes().iter().enumerate().skip(1) {
        children[node.parent as usize].push(i as u32);
    }
    let mut order = Vec::with_capacity(n);
    let mut stack = vec![0u32];
    while let Some(i) = stack.pop() {
        order.push(i);
        stack.extend(children[i as usize].iter().rev());
    }
    let mut new_index = vec![0u32; n];
    for (new, &old) in order.iter().enumerate() {
        new_index[old as usize] = new as u32;
    }
    let old = std::mem::take(tree.nodes_mut());
    *tree.nodes_mut() = order
        .iter()
        .map(|&i| {
            let mut node = old[i as usize];
            if i != 0 {
                node.parent = new_index[node.parent as usize];
            }
            node
        })
        .collect();
}

/// The section an event goes to and what it adds there.
fn weigh(r: &Record) -> Option<Add> {
    let mut own = Values::default();
    let (kind, class, figures): (CallKind, _, Vec<(&str, u64)>) = match r.kind {
        Kind::Sample { count, running } => (
            CallKind::Sampler,
            None,
            vec![
                (profrj_format::sampler::node::ELAPSED, count),
                (
                    profrj_format::sampler::node::HITS,
                    if running { count } else { 0 },
                ),
            ],
        ),
        Kind::Allocation { weight, size } => {
            use profrj_format::alloc::node::{BYTES, OBJECTS, SAMPLES};
            let objects = match size {
                Some(s) => (weight as f64 / s as f64).round() as u64,
                None => 1,
            };
            (
                CallKind::Alloc,
                Some(r.class),
                vec![(BYTES, weight), (OBJECTS, objects), (SAMPLES, 1)],
            )
        }
        Kind::Lock { duration_ns, .. } => {
            use profrj_format::lock::node::{COUNT, TIME};
            (
                CallKind::Lock,
                Some(r.class),
                vec![(COUNT, 1), (TIME, duration_ns)],
            )
        }
    };
    let desc = kind.desc();
    for (attr, v) in figures {
        own.0[desc.slot(attr)?] = v;
    }
    Some(Add { kind, own, class })
}

/// A frame's type as the recording names it (none: `Java`, profrj's for a
/// type not known, or a name of no type profrj has).
fn frame_type(c: &Chunk, f: &reader::Frame) -> Option<FrameType> {
    Some(match c.frame_type(f.kind)?.as_str() {
        "Interpreted" => FrameType::Interpreted,
        "JIT compiled" => FrameType::Jit,
        "C1 compiled" => FrameType::C1,
        "Inlined" => FrameType::Inlined,
        "Native" => FrameType::Native,
        "C++" => FrameType::Vm,
        "Kernel" => FrameType::Kernel,
        _ => return None,
    })
}

/// A frame named as the sampler names it.
fn frame_name(c: &Chunk, f: &reader::Frame) -> String {
    let Some(m) = c.method(f.method) else {
        return "[unknown_method]".into();
    };
    let native = c.frame_type(f.kind).as_deref() == Some("Native");
    if m.class.is_empty() {
        return m.name;
    }
    let args = if native { "native" } else { "" };
    if m.name == "<init>" {
        format!("{}({args})", m.class)
    } else {
        format!("{}.{}({args})", m.class, m.name)
    }
}
