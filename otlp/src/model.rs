//! The format-neutral model a mode hands out: call trees with named weights.

/// A weight's (type, unit), as pprof and OTLP's `ValueType` name them.
pub type ValueType = (&'static str, &'static str);

/// The most weights one mode has (profile's calls, wall and CPU time).
pub const MAX_WEIGHTS: usize = 3;

/// A node's own weights, in the order of [`CallTrees::weights`] (the
/// unused ones 0).
pub type Weights = [u64; MAX_WEIGHTS];

/// A frame's line when it has none (lines start at 1).
pub const NO_LINE: u32 = 0;

/// The parent of a thread's outermost frames.
pub const ROOT: u32 = u32::MAX;

/// The frame of events without a Java frame (a thread in native code or
/// the VM only), as snapshot readers name it; a mode may use
/// [`NO_JAVA_FRAME_ID`] for it without having the name among its own.
pub const NO_JAVA_FRAME: &str = "[no Java frame]";
/// [`NO_JAVA_FRAME`]'s name id, outside any mode's name list.
pub const NO_JAVA_FRAME_ID: u32 = u32::MAX - 2;

/// The sample types profrj sends, named as pprof names them (Go's runtime
/// profiles where one exists: what backends such as Pyroscope recognise).
pub mod types {
    use super::ValueType;
    /// Sampling: every sample, whatever the thread's state (`elapsed`).
    pub const SAMPLES: ValueType = ("samples", "count");
    /// Sampling: samples that found the thread RUNNABLE (`hits`).
    pub const RUNNABLE_SAMPLES: ValueType = ("runnable_samples", "count");
    /// What one sample of `event=cpu` stands for (the period type).
    pub const CPU_PERIOD: ValueType = ("cpu", "nanoseconds");
    /// What one sample of `event=wall` stands for (the period type).
    pub const WALL_PERIOD: ValueType = ("wall", "nanoseconds");
    /// Profile: calls of the method.
    pub const CALLS: ValueType = ("calls", "count");
    /// Profile: wall-clock nanoseconds in the method, callees excluded.
    pub const WALL: ValueType = ("wall", "nanoseconds");
    /// Profile: the thread's CPU nanoseconds in the method, callees excluded.
    pub const CPU: ValueType = ("cpu", "nanoseconds");
    /// Alloc: estimated objects allocated (Go's heap profile).
    pub const ALLOC_OBJECTS: ValueType = ("alloc_objects", "count");
    /// Alloc: the bytes those objects stand for.
    pub const ALLOC_SPACE: ValueType = ("alloc_space", "bytes");
    /// Alloc with `live`, in a snapshot: the sampled objects still
    /// reachable.
    pub const INUSE_OBJECTS: ValueType = ("inuse_objects", "count");
    /// Alloc with `live`: the bytes those objects stand for.
    pub const INUSE_SPACE: ValueType = ("inuse_space", "bytes");
    /// Lock: contended acquisitions (Go's mutex profile).
    pub const CONTENTIONS: ValueType = ("contentions", "count");
    /// Lock: the nanoseconds threads waited.
    pub const DELAY: ValueType = ("delay", "nanoseconds");
}

/// One mode's data: per thread, a call tree of frame names, each node with
/// its own weights (events that ended on it, callees not included).
/// Figures are cumulative since the mode started; a [`crate::Keeper`]
/// makes deltas of them.
#[derive(Clone, Debug, Default)]
pub struct CallTrees {
    /// What each weight is, in order (at most [`MAX_WEIGHTS`]).
    pub weights: &'static [ValueType],
    /// What one event stands for, and how much: a sampler's
    /// `("cpu", "nanoseconds")` and its interval.
    pub period: Option<(ValueType, i64)>,
    /// Frame names by id. Between two calls of one keeper, ids keep their
    /// names (the list only grows): a mode's interned names are.
    pub names: Vec<Box<str>>,
    /// Frame source lines by id, beside [`CallTrees::names`] ([`NO_LINE`]
    /// for a frame without one; shorter than `names`, even empty, when the
    /// frames past its end have none). A mode that keys frames by line
    /// (sampling's `lines`) gives one method on two lines two ids of one
    /// name: two locations of one function in OTLP.
    pub lines: Vec<u32>,
    /// One tree per thread that has figures.
    pub threads: Vec<ThreadTree>,
}

/// One thread's tree.
#[derive(Clone, Debug, Default)]
pub struct ThreadTree {
    /// Tells threads apart across calls (the agent's thread id).
    pub key: u64,
    /// The thread's name, as the samples' `thread.name` attribute.
    pub name: String,
    /// Every node after its parent.
    pub nodes: Vec<Node>,
}

/// A frame in a thread's tree, under its caller's node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Node {
    /// Index of the parent in [`ThreadTree::nodes`], or [`ROOT`].
    pub parent: u32,
    /// Index into [`CallTrees::names`].
    pub name: u32,
    /// Its own figures: events that ended on this frame, callees not
    /// included.
    pub own: Weights,
}
