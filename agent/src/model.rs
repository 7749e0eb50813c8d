//! What a snapshot holds, in no format: each mode hands its part as
//! [`Section`]s of call trees with named weights, rows, coverage or a
//! monitor dump, and a writer renders them (the ProfilerJ XML,
//! [`crate::xml`]; the next outputs, a push over the network or another
//! file format, are writers over the same model). Nothing here knows XML,
//! JVMTI or a mode.
//!
//! Conventions every writer may rely on: times are nanoseconds; a call
//! tree's nodes come depth first, each after its parent, siblings in the
//! order the mode ranks them (heaviest first); threads are the thread
//! table's ids, resolved against the snapshot's [`ThreadRecord`]s.

use crate::threads::{ThreadId, ThreadRecord};

/// One snapshot: the thread table as the dump found it, the session's
/// window and every mode's sections, in the registry's order.
pub struct Snapshot<'a> {
    pub threads: &'a [std::sync::Arc<ThreadRecord>],
    /// The session's (start, end), monotonic ns.
    pub window: (u64, u64),
    pub sections: Vec<Section>,
}

/// One section: a mode's data of one kind.
pub struct Section {
    /// What it is: the mode's name, or the name of a second part of a
    /// mode's data (`sites`). Writers pick their rendering by it.
    pub name: &'static str,
    /// Not one of the snapshot format's contract sections but profrj's
    /// own: written after every contract section.
    pub extra: bool,
    /// Figures of the section as a whole (alloc's interval, say).
    pub attributes: Vec<(&'static str, Value)>,
    pub parts: Vec<Part>,
}

/// A figure or a word.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Number(u64),
    Flag(bool),
    /// One of the format's fixed words (alloc's `liveRule`).
    Word(&'static str),
}

/// A section's content.
pub enum Part {
    Trees(CallTrees),
    Rows(Rows),
    Coverage(Coverage),
    Monitors(MonitorDump),
}

/// What a weight counts and in what.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    Count,
    Bytes,
    Nanoseconds,
}

/// A node's figure: events that ended on it (`total: false`) or anywhere
/// at or below it (`total: true`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Weight {
    pub name: &'static str,
    pub unit: Unit,
    pub total: bool,
}

impl Weight {
    pub const fn own(name: &'static str, unit: Unit) -> Self {
        Weight {
            name,
            unit,
            total: false,
        }
    }

    pub const fn total(name: &'static str, unit: Unit) -> Self {
        Weight {
            name,
            unit,
            total: true,
        }
    }
}

/// A frame's name and what it stands for.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    /// As profrj prints frames: `pkg.Cls.m()`, `pkg.Cls()` for a
    /// constructor, `byte[]` for a class.
    pub name: Box<str>,
    /// A class (the allocated object's, the monitor's), not a method.
    pub class: bool,
    /// The method's descriptor, where the mode knows it.
    pub descriptor: Option<Box<str>>,
    /// The source line, for a mode that keys frames by line (`sampling`'s
    /// `lines`): one method on two lines is two frames.
    pub line: Option<u32>,
}

impl Frame {
    pub fn method(name: impl Into<Box<str>>) -> Self {
        Frame {
            name: name.into(),
            class: false,
            descriptor: None,
            line: None,
        }
    }
}

/// What one event of a sampling mode stands for: `value` `unit`s of
/// `name` (a CPU sample, an interval of CPU time).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Period {
    pub name: &'static str,
    pub unit: Unit,
    pub value: u64,
}

/// Per thread, a call tree whose nodes carry [`CallTrees::weights`].
pub struct CallTrees {
    pub weights: Vec<Weight>,
    /// What one event stands for, for a sampling mode.
    pub period: Option<Period>,
    /// Frames by id; nodes refer to them.
    pub frames: Vec<Frame>,
    pub threads: Vec<ThreadTree>,
}

/// One node: its frame and its depth (1 for a thread's outermost frames).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node {
    pub frame: u32,
    pub depth: u32,
}

/// One thread's tree.
pub struct ThreadTree {
    /// The thread (`None`: one the agent could not name).
    pub thread: Option<ThreadId>,
    /// The thread as a whole: each weight's value at the root, whose own
    /// figures are 0 and whose totals are the thread's.
    pub root: Vec<u64>,
    /// Depth first, each after its parent.
    pub nodes: Vec<Node>,
    /// `weights.len()` values per node, in node order.
    pub values: Vec<u64>,
    /// Words some nodes carry beside their figures (sampling's frame
    /// types), in node order.
    pub texts: Vec<NodeText>,
}

/// A word-valued attribute of node `node` (an index into `nodes`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeText {
    pub node: u32,
    pub name: &'static str,
    pub value: String,
}

impl ThreadTree {
    /// A tree for `thread` with room for `weights` values per node.
    pub fn new(thread: Option<ThreadId>, root: Vec<u64>) -> Self {
        ThreadTree {
            thread,
            root,
            nodes: Vec::new(),
            values: Vec::new(),
            texts: Vec::new(),
        }
    }

    /// Appends a node (after its parent, depth first).
    pub fn push(&mut self, frame: u32, depth: u32, values: &[u64]) {
        self.nodes.push(Node { frame, depth });
        self.values.extend_from_slice(values);
    }

    /// The values of node `i`.
    pub fn values_of(&self, i: usize, weights: usize) -> &[u64] {
        &self.values[i * weights..(i + 1) * weights]
    }
}

/// Per thread, keyed rows of figures (memory's live objects per class).
pub struct Rows {
    /// What a row's key is (`class`).
    pub key: &'static str,
    pub columns: Vec<Weight>,
    /// Threads in the order to write, each with its rows in order.
    pub threads: Vec<(Option<ThreadId>, Vec<Row>)>,
}

pub struct Row {
    pub key: String,
    pub values: Vec<i64>,
}

/// Line counts of the classes in scope.
pub struct Coverage {
    pub classes: Vec<CoveredClass>,
}

pub struct CoveredClass {
    /// As Java writes it (`pkg.Outer$Inner`).
    pub name: String,
    pub source: Option<String>,
    /// JaCoCo's class id (CRC64 of the class file as loaded).
    pub id: Option<u64>,
    pub methods: Vec<CoveredMethod>,
}

pub struct CoveredMethod {
    pub name: String,
    pub descriptor: String,
    pub calls: i64,
    /// The first line with code and, from it, each line's count: -1 no
    /// code on the line, 0 never reached, n times run. `None`: the class
    /// has no line numbers.
    pub lines: Option<(i64, Vec<i64>)>,
    /// Each branching instruction in code order: its line (-1 none) and
    /// how many times each outcome was taken.
    pub branches: Vec<(i64, Vec<i64>)>,
    /// Per footprint cell: (instructions run, instructions); empty when
    /// unknown.
    pub instructions: Vec<(u32, u32)>,
    /// What JaCoCo's filters inside a method ignore (`<filtered>`,
    /// profrj's extension), when they ignore anything.
    pub filtered: Option<Filtered>,
    /// Which of JaCoCo's filters leaves it out of JaCoCo's report
    /// (`generated`, profrj's extension).
    pub generated: Option<&'static str>,
}

/// The instructions and branches of a method that JaCoCo's filters inside
/// a method leave out of its report.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filtered {
    /// Per footprint cell: (of them, instructions run, instructions).
    pub instructions: Vec<(u32, u32)>,
    /// Indexes into the method's branches.
    pub branches: Vec<u32>,
    /// `(k, j)`: branch `k`, left out, is a `finally` copy of branch `j`.
    pub merged: Vec<(u32, u32)>,
}

/// Every Java thread's state and stack, the monitors and locks they own
/// or wait for, and each cycle of waits (a deadlock), as one snapshot
/// took them (HPROF's MONITOR DUMP).
#[derive(Default)]
pub struct MonitorDump {
    pub threads: Vec<DumpThread>,
    pub monitors: Vec<DumpMonitor>,
    /// Thread ids, each cycle in the order of who waits for whom.
    pub deadlocks: Vec<Vec<u32>>,
}

pub struct DumpThread {
    /// The thread's id in the agent's table, from 1.
    pub id: u32,
    pub name: String,
    /// R runnable, S suspended, CW waiting for a condition, MW waiting to
    /// enter a monitor.
    pub state: &'static str,
    pub frames: Vec<String>,
    /// Index of the monitor it waits to enter (or re-enter).
    pub waits_for: Option<usize>,
}

pub struct DumpMonitor {
    /// A `java.util.concurrent` lock's synchronizer, not a monitor.
    pub lock: bool,
    pub class: String,
    pub hash: Option<i32>,
    pub owner: Option<u32>,
    pub entry_count: i32,
    pub waiting: Vec<u32>,
    pub notify: Vec<u32>,
}
