//! The ProfilerJ snapshot's vocabulary: every element and attribute name, and
//! the few fixed values, in one place. The agent writes with these names and
//! the CLI reads with them, so the two cannot drift apart. The names are the
//! contract's (`../shared/spec/profilerj-snapshot-format.txt`): changing one
//! changes the format, which the integration tests pin down with literals.
//!
//! ```text
//! <doc>
//!   <sampler>  <thread> <profile>… (call trees of samples)
//!   <profile>  <thread> <profile>… (call trees of instrumented calls)
//!   <memory>   <thread> <memory/>… (live objects per type)
//!   <coverage> <class> <method> <footprints>… (line counts)
//!   <alloc>    <thread> <profile>… (call trees of sampled allocations; profrj's own)
//!   <sites>    <thread> <profile>… (memory's allocation sites, exact; profrj's own)
//!   <lock>     <thread> <profile>… (call trees of contended waits; profrj's own)
//!              <monitorDump> (threads and monitors at the snapshot)
//! </doc>
//! ```

pub mod names;

/// The root element.
pub const DOC: &str = "doc";

/// The values of a boolean attribute (`isAlive`).
pub const TRUE: &str = "true";
pub const FALSE: &str = "false";

/// [`TRUE`] or [`FALSE`].
pub fn boolean(b: bool) -> &'static str {
    if b {
        TRUE
    } else {
        FALSE
    }
}

/// What the two call-tree sections share: `<thread>` elements holding nested
/// `<profile>` nodes, and the attribute names both use. [`sampler`] and
/// [`profile`] re-export what each has.
pub mod calls {
    pub const THREAD: &str = "thread";
    /// A call-tree node (the same name as the `<profile>` section's).
    pub const NODE: &str = "profile";
    /// A thread's name, or a node's method.
    pub const NAME: &str = "name";
    pub const CPU_TIME: &str = "cpuTime";
    pub const IS_ALIVE: &str = "isAlive";
    pub const CUMULATED: &str = "cumulated";
    pub const CUMULATED_ELAPSED: &str = "cumulatedElapsed";
}

/// `<sampler>`: per thread, the call tree of stack samples.
pub mod sampler {
    pub const SECTION: &str = "sampler";
    pub use crate::calls::{NODE, THREAD};

    /// `<thread>`'s attributes.
    pub mod thread {
        pub use crate::calls::{CPU_TIME, CUMULATED, CUMULATED_ELAPSED, IS_ALIVE, NAME};
        pub const ELAPSED_TIME: &str = "elapsedTime";
    }

    /// A node's (`<profile>`'s) attributes.
    pub mod node {
        pub use crate::calls::{CUMULATED, CUMULATED_ELAPSED, NAME};
        pub const HITS: &str = "hits";
        pub const ELAPSED: &str = "elapsed";
        /// With the agent's `lines` option: the frame's source line (absent
        /// when unknown; then the node stands for the method's other samples).
        pub const LINE: &str = "line";
    }
}

/// `<profile>`: per thread, the call tree of instrumented calls.
pub mod profile {
    pub const SECTION: &str = "profile";
    pub use crate::calls::{NODE, THREAD};

    /// `<thread>`'s attributes.
    pub mod thread {
        pub use crate::calls::{CPU_TIME, IS_ALIVE, NAME};
    }

    /// A node's (`<profile>`'s) attributes.
    pub mod node {
        pub use crate::calls::{CUMULATED, CUMULATED_ELAPSED, NAME};
        pub const SIGNATURE: &str = "signature";
        pub const COUNT: &str = "count";
        pub const METHOD_ELAPSED: &str = "methodElapsed";
        pub const METHOD: &str = "method";
        pub const OVERHEAD_CUMULATED: &str = "overheadCumulated";
        pub const OVERHEAD_METHOD: &str = "overheadMethod";
        pub const EXCEPTIONS: &str = "exceptions";
    }
}

/// `<memory>`: per allocating thread, one row per type.
pub mod memory {
    pub const SECTION: &str = "memory";
    pub const THREAD: &str = "thread";
    /// A row (the same name as the section's).
    pub const ROW: &str = "memory";

    /// `<thread>`'s attributes.
    pub mod thread {
        pub const NAME: &str = "name";
    }

    /// A row's attributes.
    pub mod row {
        pub const CLASS: &str = "class";
        pub const COUNT: &str = "count";
        pub const MAX: &str = "max";
    }
}

/// `<coverage>`: per class, per method, a count per source line.
pub mod coverage {
    pub const SECTION: &str = "coverage";
    pub const CLASS: &str = "class";
    pub const METHOD: &str = "method";
    /// A method's counts as text, one per line: -1 no code, 0 never ran, n runs.
    pub const FOOTPRINTS: &str = "footprints";

    /// `<class>`'s attributes.
    pub mod class {
        pub const NAME: &str = "name";
        pub const SOURCE: &str = "source";
    }

    /// `<method>`'s attributes.
    pub mod method {
        pub const NAME: &str = "name";
        pub const SIGNATURE: &str = "signature";
        pub const FIRST_LINE: &str = "firstline";
        pub const COUNT: &str = "count";
        /// `firstline` of a method without line numbers (no footprints).
        pub const NO_LINES: i64 = -1;
    }
}

/// `<alloc>` (profrj's own section, beside the contract's four): per thread,
/// the call paths that allocated, shaped like `<sampler>`, each path's top
/// frame the allocated class (`class="true"`). Figures estimate all bytes and
/// objects from the samples.
pub mod alloc {
    pub const SECTION: &str = "alloc";
    pub use crate::calls::{NODE, THREAD};
    /// The section's attributes: mean bytes between samples, and whether
    /// only objects still reachable at the snapshot are counted.
    pub const INTERVAL: &str = "interval";
    pub const LIVE: &str = "live";
    /// With `live`: which objects count as alive ([`live_rule`]).
    pub const LIVE_RULE: &str = "liveRule";

    /// The values of [`LIVE_RULE`].
    pub mod live_rule {
        /// The snapshot ran a GC: the samples whose object it kept (a dump
        /// while the program runs).
        pub const GC: &str = "gc";
        /// At VM exit, when a GC can no longer tell what the program held
        /// (main's locals are gone): the samples whose object was alive at
        /// the last GC the program ran; objects made after it are left out.
        pub const LAST_GC: &str = "lastGc";
        /// At VM exit, no GC ran during the session: every sample, none
        /// being known dead.
        pub const NO_GC: &str = "noGc";
    }

    /// `<thread>`'s attributes (its totals: `bytes`, `objects`, `samples`).
    pub mod thread {
        pub use super::node::{BYTES, OBJECTS, SAMPLES};
        pub use crate::calls::{CPU_TIME, IS_ALIVE, NAME};
        pub use crate::sampler::thread::ELAPSED_TIME;
    }

    /// A node's attributes: its own figures (events whose top frame it is)
    /// and cumulated ones (events anywhere below it).
    pub mod node {
        pub use crate::calls::NAME;
        /// Set to `true` on a frame that is the allocated class.
        pub const CLASS: &str = "class";
        pub const BYTES: &str = "bytes";
        pub const OBJECTS: &str = "objects";
        pub const SAMPLES: &str = "samples";
        pub const CUMULATED_BYTES: &str = "cumulatedBytes";
        pub const CUMULATED_OBJECTS: &str = "cumulatedObjects";
        pub const CUMULATED_SAMPLES: &str = "cumulatedSamples";
    }
}

/// `<sites>` (profrj's own, written with `<memory>`): per allocating thread,
/// each allocation site as a two-frame path, shaped like `<alloc>`: the
/// method and line (`pkg.Cls.m():12`), then the allocated class
/// (`class="true"`) with the exact objects alive (`count`), the most ever
/// alive at once (`max`) and the objects ever made there (`allocated`).
pub mod sites {
    pub const SECTION: &str = "sites";
    pub use crate::calls::{NODE, THREAD};

    /// `<thread>`'s attributes.
    pub mod thread {
        pub use crate::calls::NAME;
    }

    /// A node's attributes: its own figures (a class frame's) and those of
    /// every site below it (a method frame's).
    pub mod node {
        pub use crate::alloc::node::CLASS;
        pub use crate::calls::NAME;
        pub const COUNT: &str = "count";
        pub const MAX: &str = "max";
        /// Objects ever made at the site (while the memory mode tracked).
        pub const ALLOCATED: &str = "allocated";
        pub const CUMULATED_COUNT: &str = "cumulatedCount";
        pub const CUMULATED_ALLOCATED: &str = "cumulatedAllocated";
        /// The sum of the sites' `max` (each site's peak may fall at another
        /// time, so this bounds the most alive at once from above).
        pub const CUMULATED_MAX: &str = "cumulatedMax";
    }
}

/// `<lock>` (profrj's own section, beside the contract's four): per thread,
/// the call paths where the thread waited to enter a contended monitor,
/// shaped like `<alloc>`, each path's top frame the monitor's class
/// (`class="true"`), with the waits counted and their nanoseconds summed;
/// then a `<monitorDump>` of the threads and monitors at the snapshot.
pub mod lock {
    pub const SECTION: &str = "lock";
    pub use crate::calls::{NODE, THREAD};
    /// The section's attribute: the shortest wait recorded, in ns.
    pub const THRESHOLD: &str = "threshold";

    /// `<thread>`'s attributes (its totals: `count`, `time`).
    pub mod thread {
        pub use super::node::{COUNT, TIME};
        pub use crate::calls::{CPU_TIME, IS_ALIVE, NAME};
        pub use crate::sampler::thread::ELAPSED_TIME;
    }

    /// A node's attributes: its own figures (waits whose top frame it is)
    /// and cumulated ones (waits anywhere below it).
    pub mod node {
        /// Set to `true` on a frame that is the monitor's class.
        pub use crate::alloc::node::CLASS;
        pub use crate::calls::NAME;
        /// Contended acquisitions.
        pub const COUNT: &str = "count";
        /// Nanoseconds waited.
        pub const TIME: &str = "time";
        pub const CUMULATED_COUNT: &str = "cumulatedCount";
        pub const CUMULATED_TIME: &str = "cumulatedTime";
    }

    /// HPROF's MONITOR DUMP, taken at the snapshot: `<thread>`s (`id`,
    /// `name`, `state` R/S/CW/MW, `<frame name=…/>`s top first, the
    /// `monitor` it waits for), `<monitor>`s (`id`, `class`, `owner`,
    /// `entryCount`, `<waiting thread=…/>` to enter, `<notify thread=…/>`
    /// in `Object.wait`) and a `<deadlock>` per cycle of threads waiting
    /// for each other (`<waiting thread=…/>` in cycle order).
    pub mod dump {
        pub const DUMP: &str = "monitorDump";
        pub const THREAD: &str = "thread";
        pub const FRAME: &str = "frame";
        pub const MONITOR: &str = "monitor";
        pub const WAITING: &str = "waiting";
        pub const NOTIFY: &str = "notify";
        pub const DEADLOCK: &str = "deadlock";
        pub const ID: &str = "id";
        pub const NAME: &str = "name";
        pub const STATE: &str = "state";
        pub const CLASS: &str = "class";
        pub const OWNER: &str = "owner";
        pub const ENTRY_COUNT: &str = "entryCount";
        /// On `<monitor>`: the object's identity hash, in hex (as
        /// `Object.toString` prints it).
        pub const HASH: &str = "hash";
        /// On `<thread>`: the `id` of the monitor it waits for.
        pub const WAITS_FOR: &str = "monitor";
        /// On `<monitor>`: `true` for a `java.util.concurrent` lock (its
        /// synchronizer), which a thread parks for: its `owner` is the
        /// exclusive owner, its `waiting` the threads parked for it, and it
        /// has no `entryCount`.
        pub const LOCK: &str = "lock";
        /// On `<waiting>`/`<notify>`: the thread's `id`.
        pub const THREAD_ID: &str = "thread";
    }
}
