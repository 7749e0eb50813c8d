//! A ProfilerJ snapshot read: the model the report, flame, convert and diff
//! commands work on. The XML is read as a stream (`parse.rs`); only this
//! model is kept, never a tree of the document, and of a snapshot read from
//! a file the call trees' nodes stay in a scratch file (`spill.rs`), so what
//! is held is its names, threads and small sections (issue 44).
//!
//! Call trees are stored flat, in document order, each node with its depth:
//! a node's subtree follows it, so a forward walk keeping only the current
//! path visits callers before callees and knows a subtree's sums when it
//! leaves it — no recursion, so a 3,000-deep recursion in the profiled
//! program costs nothing special here.

use crate::error::CliError;
mod frame_counts;
mod jfr;
/// The most frames a reader keeps of a stack (the agent's default `depth`).
pub use jfr::MAX_FRAMES;
mod parse;
mod sections;
mod spill;
#[cfg(test)]
pub mod test_alloc;
pub mod type_counts;
mod weights;

pub use frame_counts::{slot as type_slot, FrameCounts};
#[cfg(any(test, fuzzing))]
pub use parse::parse_bytes;
pub use parse::{read_file, read_file_with_lines, NO_JAVA_FRAME};
pub use sections::{
    CallKind, MetricDesc, MetricName, SectionDesc, ValueType, MAX_THREAD_TOTALS, MAX_VALUES,
};
#[cfg(test)]
pub use weights::Weighted;
pub use weights::{method_table, site_table, tree_total, MethodRow, Metric};

use std::collections::HashMap;

/// Method (and thread-independent) names, stored once.
#[derive(Default, Debug)]
pub struct Names {
    strings: Vec<String>,
    index: HashMap<String, u32>,
}

impl Names {
    pub fn intern(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.to_owned());
        self.index.insert(s.to_owned(), i);
        i
    }

    /// Every name, by id.
    pub fn all(&self) -> &[String] {
        &self.strings
    }

    pub fn get(&self, id: u32) -> &str {
        self.strings.get(id as usize).map_or("", String::as_str)
    }
}

/// The figures of one call-tree node: the numbers its section keeps, in
/// the order of [`SectionDesc::node_values`].
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Values(pub [u64; MAX_VALUES]);

pub const NONE: u32 = u32::MAX;

#[derive(Clone, Copy, Debug)]
pub struct Node {
    /// Index into [`Names`] ([`NONE`] for a thread's root).
    pub name: u32,
    /// `<profile>`'s descriptor, index into [`Names`], or [`NONE`].
    pub signature: u32,
    pub parent: u32,
    pub depth: u32,
    /// A class frame (the allocated class), not a method: see
    /// [`SectionDesc::class_marker`].
    pub class: bool,
    /// The frame's source line (`line`, the agent's `lines` option), or
    /// [`NO_LINE`].
    pub line: u32,
    pub v: Values,
    /// `<sampler>`'s `frameTypes` and `selfTypes` (zero when absent).
    pub types: FrameCounts,
}

/// A node's line when the snapshot gives none.
pub const NO_LINE: u32 = 0;

/// One thread's call tree, in document order: a node's callees follow it,
/// each with its depth. Node 0 is the thread itself (no figures). Held in
/// memory (a JFR recording, a test's snapshot), or on disk (a snapshot read
/// from a file, `spill.rs`): either way read through [`Tree::walk`], in a
/// fixed budget; [`Tree::nodes`] loads it whole, for the readers that
/// index it.
#[derive(Clone, Debug)]
pub struct Tree {
    mem: Vec<Node>,
    spilled: Option<spill::Spilled>,
    /// Nodes, the thread's included, of a spilled tree.
    len: usize,
}

fn root() -> Node {
    Node {
        name: NONE,
        signature: NONE,
        parent: NONE,
        depth: 0,
        class: false,
        line: NO_LINE,
        v: Values::default(),
        types: FrameCounts::default(),
    }
}

impl Tree {
    pub fn new() -> Tree {
        Tree {
            mem: vec![root()],
            spilled: None,
            len: 1,
        }
    }

    /// A tree whose nodes the parse writes to the scratch file from `start`.
    fn spilled(start: u64) -> Tree {
        Tree {
            mem: Vec::new(),
            spilled: Some(spill::Spilled {
                file: None,
                start,
                end: start,
            }),
            len: 1,
        }
    }

    /// Nodes, the thread's included.
    pub fn len(&self) -> usize {
        match self.spilled {
            Some(_) => self.len,
            None => self.mem.len(),
        }
    }

    /// Every node but the thread's, in document order, each with its
    /// parent's index.
    pub fn walk(&self) -> Walk<'_> {
        match &self.spilled {
            Some(s) => Walk::Spilled(spill::SpillIter::new(s)),
            None => Walk::Mem(self.mem.iter().skip(1)),
        }
    }

    /// The nodes in memory, the thread's first (index = node id): loads a
    /// spilled tree whole.
    pub fn nodes(&self) -> std::borrow::Cow<'_, [Node]> {
        match &self.spilled {
            None => std::borrow::Cow::Borrowed(&self.mem),
            Some(_) => {
                let mut all = Vec::with_capacity(self.len);
                all.push(root());
                all.extend(self.walk());
                std::borrow::Cow::Owned(all)
            }
        }
    }

    /// Gives a spilled tree the file the parse wrote.
    fn attach(&mut self, file: &std::sync::Arc<std::fs::File>) {
        if let Some(s) = &mut self.spilled {
            s.file = Some(file.clone());
        }
    }

    /// A tree in memory, to build or change.
    pub fn nodes_mut(&mut self) -> &mut Vec<Node> {
        assert!(self.spilled.is_none(), "a spilled tree is read only");
        &mut self.mem
    }

    /// Adds a node below the last ones (its parent among them).
    pub fn push(&mut self, n: Node, spill: Option<&mut spill::SpillWriter>) -> std::io::Result<()> {
        match (&mut self.spilled, spill) {
            (Some(s), Some(w)) => {
                w.push(&n)?;
                s.end = w.pos();
            }
            _ => self.mem.push(n),
        }
        self.len += 1;
        Ok(())
    }
}

/// A tree's nodes in document order ([`Tree::walk`]).
pub enum Walk<'a> {
    Mem(std::iter::Skip<std::slice::Iter<'a, Node>>),
    Spilled(spill::SpillIter),
}

impl Iterator for Walk<'_> {
    type Item = Node;
    fn next(&mut self) -> Option<Node> {
        match self {
            Walk::Mem(i) => i.next().copied(),
            Walk::Spilled(i) => i.next(),
        }
    }
}

impl Default for Tree {
    fn default() -> Self {
        Tree::new()
    }
}

#[derive(Clone, Debug, Default)]
pub struct CallThread {
    pub name: String,
    pub cpu_time: Option<u64>,
    pub elapsed_time: Option<u64>,
    pub is_alive: Option<bool>,
    /// A group of virtual threads (JDK 21+): how many joined it.
    pub virtual_threads: Option<u64>,
    /// A group of ended threads the agent folded by name: how many.
    pub ended_threads: Option<u64>,
    /// The section's [`SectionDesc::thread_totals`], in that order.
    pub totals: [Option<u64>; MAX_THREAD_TOTALS],
    /// `<sampler>`'s `jvmThread`: a thread of the JVM itself, not Java's.
    pub jvm_thread: Option<JvmThread>,
    pub tree: Tree,
}

/// What a thread of the JVM itself does (`jvmThread`, one of
/// `profrj_format::sampler::thread::JVM_THREAD_KINDS`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JvmThread {
    Gc,
    Compiler,
    Vm,
    Other,
}

impl JvmThread {
    /// The attribute's value, as written.
    pub fn from_name(v: &str) -> Option<JvmThread> {
        let all = [
            JvmThread::Gc,
            JvmThread::Compiler,
            JvmThread::Vm,
            JvmThread::Other,
        ];
        profrj_format::sampler::thread::JVM_THREAD_KINDS
            .iter()
            .position(|&k| k == v)
            .map(|i| all[i])
    }

    /// The attribute's value.
    pub fn name(self) -> &'static str {
        profrj_format::sampler::thread::JVM_THREAD_KINDS[self as usize]
    }
}

#[derive(Clone, Debug)]
pub struct CallSection {
    pub kind: CallKind,
    /// A node of its trees has frame types (`frameTypes`, `selfTypes`).
    pub typed: bool,
    /// Only objects live at the snapshot count ([`SectionDesc::live`]).
    pub live: bool,
    /// [`SectionDesc::live_rule`]'s value, when the section says.
    pub live_rule: Option<String>,
    /// The section's [`SectionDesc::section_values`], in that order.
    pub values: Vec<Option<u64>>,
    pub threads: Vec<CallThread>,
}

impl CallSection {
    pub fn desc(&self) -> &'static SectionDesc {
        self.kind.desc()
    }

    /// A node's figure by attribute name (0 if the section has no such).
    #[cfg(test)]
    pub fn value(&self, n: &Node, attr: &str) -> u64 {
        self.desc().slot(attr).map_or(0, |i| n.v.0[i])
    }

    /// A thread's total by attribute name.
    #[cfg(test)]
    pub fn thread_total(&self, t: &CallThread, attr: &str) -> Option<u64> {
        self.desc().thread_slot(attr).and_then(|i| t.totals[i])
    }

    /// Threads named `name`, or all of them for `None`. Errors list the names.
    pub fn select(&self, name: Option<&str>) -> Result<Vec<&CallThread>, CliError> {
        match name {
            None => Ok(self.threads.iter().collect()),
            Some(n) => {
                let found: Vec<_> = self.threads.iter().filter(|t| t.name == n).collect();
                if found.is_empty() {
                    let mut names: Vec<_> = self.threads.iter().map(|t| t.name.as_str()).collect();
                    names.sort();
                    names.dedup();
                    Err(CliError::Usage(format!(
                        "no thread named {n:?} in <{}>; threads: {}",
                        self.kind.tag(),
                        names.join(", ")
                    )))
                } else {
                    Ok(found)
                }
            }
        }
    }
}

/// `<memory class count max/>`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemoryRow {
    pub class: String,
    pub count: u64,
    pub max: u64,
}

#[derive(Clone, Debug, Default)]
pub struct MemoryThread {
    pub name: String,
    pub rows: Vec<MemoryRow>,
}

#[derive(Clone, Debug, Default)]
pub struct MemorySection {
    pub threads: Vec<MemoryThread>,
}

/// `<method name signature firstline count><footprints>…</footprints></method>`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoverageMethod {
    pub name: String,
    pub signature: String,
    /// `None` for a method without line numbers (`firstline="-1"`, a class
    /// compiled with `-g:none`): its footprints are empty, only its calls count.
    pub first_line: Option<u32>,
    /// Calls.
    pub count: u64,
    /// One per source line from `first_line` on: -1 no code, 0 never run, n runs.
    pub footprints: Vec<i64>,
    /// `<branches>` (profrj's extension): each branching instruction in
    /// bytecode order. Empty: none, or unknown (a snapshot without them).
    pub branches: Vec<CoverageBranch>,
    /// `<instructions>`, when the snapshot has it: per footprint cell,
    /// (instructions run, instructions). `None`: unknown.
    pub instructions: Option<Vec<(u64, u64)>>,
    /// `<filtered>` (profrj's extension): what JaCoCo's filters inside a
    /// method leave out of its report. `None`: nothing, or an older snapshot.
    pub filtered: Option<CoverageFiltered>,
    /// `generated` (profrj's extension): which of JaCoCo's filters leaves
    /// the method out of JaCoCo's report (`synthetic`, `enum`, `empty
    /// constructor`). `None`: no filter, or an older snapshot.
    pub generated: Option<String>,
}

/// The instructions and branches of a method that JaCoCo's filters inside
/// a method (a `switch` on a `String`, try-with-resources) leave out.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoverageFiltered {
    /// Per footprint cell: (of them, instructions run, instructions).
    pub instructions: Vec<(u64, u64)>,
    /// Indexes into the method's `branches`.
    pub branches: Vec<u32>,
    /// `(k, j)`: branch `k` (one of `branches`) is a `finally` copy of
    /// branch `j`, which JaCoCo counts once (`merged`).
    pub merged: Vec<(u32, u32)>,
}

/// One branching instruction: its source line (`None`: -1, none) and how
/// many times each outcome was taken (a conditional: fell through, jumped;
/// a switch: each distinct target, the default's first).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CoverageBranch {
    pub line: Option<u32>,
    pub outcomes: Vec<u64>,
}

#[derive(Clone, Debug, Default)]
pub struct CoverageClass {
    pub name: String,
    pub source: Option<String>,
    /// JaCoCo's class id (`id`, profrj's extension), when the snapshot has it.
    pub id: Option<u64>,
    pub methods: Vec<CoverageMethod>,
}

#[derive(Clone, Debug, Default)]
pub struct CoverageSection {
    pub classes: Vec<CoverageClass>,
}

#[derive(Debug, Default)]
pub struct Snapshot {
    pub names: Names,
    /// The call-tree sections present, one per kind.
    pub call_sections: Vec<CallSection>,
    pub memory: Option<MemorySection>,
    pub coverage: Option<CoverageSection>,
    /// The `<lock>` section's `<monitorDump>`.
    pub monitor_dump: Option<MonitorDump>,
}

/// HPROF's MONITOR DUMP as the `<lock>` section holds it.
#[derive(Clone, Debug, Default)]
pub struct MonitorDump {
    pub threads: Vec<DumpThread>,
    pub monitors: Vec<DumpMonitor>,
    /// Each cycle of threads waiting for each other, as thread ids.
    pub deadlocks: Vec<Vec<u64>>,
}

/// A thread of the dump: `state` is R, S, CW or MW; frames top first.
#[derive(Clone, Debug, Default)]
pub struct DumpThread {
    pub id: u64,
    pub name: String,
    pub state: String,
    /// The `id` of the monitor it waits for.
    pub monitor: Option<u64>,
    pub frames: Vec<String>,
}

/// A monitor in use: its owner and the threads waiting to enter it and to
/// be notified, as thread ids.
#[derive(Clone, Debug, Default)]
pub struct DumpMonitor {
    pub id: u64,
    /// A `java.util.concurrent` lock (its synchronizer), not a monitor.
    pub lock: bool,
    pub class: String,
    pub hash: Option<String>,
    pub owner: Option<u64>,
    pub entry_count: u64,
    pub waiting: Vec<u64>,
    pub notify: Vec<u64>,
}

impl Snapshot {
    pub fn calls(&self, kind: CallKind) -> Option<&CallSection> {
        self.call_sections.iter().find(|c| c.kind == kind)
    }

    /// The call sections present, in [`CallKind::ALL`]'s order.
    pub fn call_kinds(&self) -> Vec<CallKind> {
        CallKind::ALL
            .into_iter()
            .filter(|&k| self.calls(k).is_some())
            .collect()
    }

    /// The section asked for, or the first call section present (in
    /// [`CallKind::ALL`]'s order: sampler, profile, alloc).
    pub fn call_section(&self, kind: Option<CallKind>) -> Result<&CallSection, CliError> {
        match kind {
            Some(k) => self.calls(k).ok_or_else(|| {
                CliError::Usage(format!("the snapshot has no <{}> section", k.tag()))
            }),
            None => self
                .call_kinds()
                .first()
                .and_then(|&k| self.calls(k))
                .ok_or_else(|| {
                    CliError::Usage(format!("the snapshot has no {} section", call_tags("or")))
                }),
        }
    }
}

/// `<sampler>, <profile> or <alloc>`.
pub fn call_tags(last: &str) -> String {
    let tags: Vec<String> = CallKind::ALL
        .iter()
        .map(|k| format!("<{}>", k.tag()))
        .collect();
    match tags.split_last() {
        Some((l, rest)) if !rest.is_empty() => format!("{} {last} {l}", rest.join(", ")),
        _ => tags.join(""),
    }
}
