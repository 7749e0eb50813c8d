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
#![deny(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod frame_types;
pub mod names;

/// The root element.
pub const DOC: &str = "doc";

/// The values of a boolean attribute (`isAlive`).
pub const TRUE: &str = "true";
/// [`TRUE`]'s opposite.
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
    /// A thread's element: its call tree (or its rows) inside.
    pub const THREAD: &str = "thread";
    /// A call-tree node (the same name as the `<profile>` section's).
    pub const NODE: &str = "profile";
    /// A thread's name, or a node's method.
    pub const NAME: &str = "name";
    /// A thread's CPU time, ns.
    pub const CPU_TIME: &str = "cpuTime";
    /// Whether the thread was alive at the snapshot (`true`/`false`).
    pub const IS_ALIVE: &str = "isAlive";
    /// Samples (or time) with the node anywhere on the stack, the thread running.
    pub const CUMULATED: &str = "cumulated";
    /// Samples with the node anywhere on the stack, whatever the thread's state.
    pub const CUMULATED_ELAPSED: &str = "cumulatedElapsed";
    /// profrj's own, on a `<thread>` that is a group of virtual threads
    /// (JDK 21+): how many joined it. Absent on a platform thread.
    pub const VIRTUAL_THREADS: &str = "virtualThreads";
    /// profrj's own, on a `<thread>` that is a group of ended platform
    /// threads folded by name (`ended=fold`): how many. Absent otherwise.
    pub const ENDED_THREADS: &str = "endedThreads";
}

/// `<sampler>`: per thread, the call tree of stack samples.
pub mod sampler {
    /// The section's element.
    pub const SECTION: &str = "sampler";
    pub use crate::calls::{NODE, THREAD};

    /// `<thread>`'s attributes.
    pub mod thread {
        pub use crate::calls::{CPU_TIME, CUMULATED, CUMULATED_ELAPSED, IS_ALIVE, NAME};
        /// How long the thread lived within the session's window, ns.
        pub const ELAPSED_TIME: &str = "elapsedTime";
        /// profrj's own, on a thread of the JVM itself (no Java thread): what
        /// it does, one of [`JVM_THREAD_KINDS`]. Absent on a Java thread.
        pub const JVM_THREAD: &str = "jvmThread";
        /// [`JVM_THREAD`]'s values: a garbage collector's thread, a JIT
        /// compiler's, the VM thread (safepoint operations), any other.
        pub const JVM_THREAD_KINDS: [&str; 4] = ["gc", "compiler", "vm", "other"];
    }

    /// A node's (`<profile>`'s) attributes.
    pub mod node {
        pub use crate::calls::{CUMULATED, CUMULATED_ELAPSED, NAME};
        /// Samples with this node on top, the thread running.
        pub const HITS: &str = "hits";
        /// Samples with this node on top, whatever the thread's state.
        pub const ELAPSED: &str = "elapsed";
        /// With the agent's `lines` option: the frame's source line (absent
        /// when unknown; then the node stands for the method's other samples).
        pub const LINE: &str = "line";
        /// profrj's own: how the node's frame ran, per sample with the node
        /// on its stack (`c2:40 inlined:5`; see [`crate::frame_types`]).
        /// Absent when no sample's frame type is known.
        pub const FRAME_TYPES: &str = "frameTypes";
        /// profrj's own: as [`FRAME_TYPES`], over the samples with the node
        /// on top (weighted as `elapsed`). Absent when there is none.
        pub const SELF_TYPES: &str = "selfTypes";
    }
}

/// `<profile>`: per thread, the call tree of instrumented calls.
pub mod profile {
    /// The section's element (the same name as its nodes').
    pub const SECTION: &str = "profile";
    pub use crate::calls::{NODE, THREAD};

    /// `<thread>`'s attributes.
    pub mod thread {
        pub use crate::calls::{CPU_TIME, IS_ALIVE, NAME};
    }

    /// A node's (`<profile>`'s) attributes.
    pub mod node {
        pub use crate::calls::{CUMULATED, CUMULATED_ELAPSED, NAME};
        /// The method's descriptor (`(I)V`).
        pub const SIGNATURE: &str = "signature";
        /// Calls of the method on this path.
        pub const COUNT: &str = "count";
        /// Wall time in the method itself, callees excluded, µs.
        pub const METHOD_ELAPSED: &str = "methodElapsed";
        /// CPU time in the method itself, callees excluded, µs.
        pub const METHOD: &str = "method";
        /// Time in the agent's probes of this method and its callees, µs.
        pub const OVERHEAD_CUMULATED: &str = "overheadCumulated";
        /// Time in the agent's probes of this method alone, µs.
        pub const OVERHEAD_METHOD: &str = "overheadMethod";
        /// Calls left by an exception.
        pub const EXCEPTIONS: &str = "exceptions";
    }
}

/// `<memory>`: per allocating thread, one row per type.
pub mod memory {
    /// The section's element (the same name as its rows').
    pub const SECTION: &str = "memory";
    /// An allocating thread's element, its rows inside.
    pub const THREAD: &str = "thread";
    /// A row (the same name as the section's).
    pub const ROW: &str = "memory";

    /// `<thread>`'s attributes.
    pub mod thread {
        /// The thread's name.
        pub const NAME: &str = "name";
    }

    /// A row's attributes.
    pub mod row {
        /// The class as Java writes it (`java.lang.String[]`).
        pub const CLASS: &str = "class";
        /// Objects of the class alive at the snapshot (after a full GC).
        pub const COUNT: &str = "count";
        /// The most objects of the class ever alive at once.
        pub const MAX: &str = "max";
    }
}

/// `<coverage>`: per class, per method, a count per source line.
pub mod coverage {
    /// The section's element.
    pub const SECTION: &str = "coverage";
    /// A class's element (its methods inside).
    pub const CLASS: &str = "class";
    /// A method's element (its footprints inside).
    pub const METHOD: &str = "method";
    /// A method's counts as text, one per line: -1 no code, 0 never ran, n runs.
    pub const FOOTPRINTS: &str = "footprints";
    /// profrj's extension, after `<footprints>`: one token per branching
    /// instruction in bytecode order, `LINE:N0,N1[,N2…]`, each outcome's
    /// count (a conditional: fell through, jumped; a switch: each distinct
    /// target, the default's first). Absent: none, or unknown.
    pub const BRANCHES: &str = "branches";
    /// profrj's extension, after `<footprints>` (and `<branches>`): one
    /// token per footprint cell, `C/T`: the bytecode instructions on that
    /// line (as loaded) and how many of them ran; `0/0` where the
    /// footprint is -1.
    pub const INSTRUCTIONS: &str = "instructions";
    /// profrj's extension, after `<instructions>`, only in a method where
    /// JaCoCo's filters inside a method (a `switch` on a `String`,
    /// try-with-resources) leave instructions out of JaCoCo's report: one
    /// token per footprint cell, `C/T`, of the line's instructions those
    /// JaCoCo ignores and how many of them ran; [`filtered::BRANCHES`] the
    /// `<branches>` tokens it ignores.
    pub const FILTERED: &str = "filtered";

    /// `<filtered>`'s attributes.
    pub mod filtered {
        /// The indexes (from 0) of the `<branches>` tokens JaCoCo ignores,
        /// space-separated.
        pub const BRANCHES: &str = "branches";
        /// `K:J` pairs, space-separated: branch `K` (one of `branches`) is
        /// a copy of a `finally` block's branch `J`, which JaCoCo counts
        /// once: `J`'s outcome taken where either copy's was.
        pub const MERGED: &str = "merged";

        /// [`MERGED`]'s text of `(K, J)` pairs.
        pub fn merged_text(pairs: &[(u32, u32)]) -> String {
            let words: Vec<String> = pairs.iter().map(|(k, j)| format!("{k}:{j}")).collect();
            words.join(" ")
        }

        /// The pairs of [`MERGED`]'s text; `Err` names the first word that
        /// is not `K:J`.
        pub fn parse_merged(text: &str) -> Result<Vec<(u32, u32)>, String> {
            text.split_ascii_whitespace()
                .map(|w| {
                    let pair = w.split_once(':');
                    pair.and_then(|(k, j)| Some((k.parse().ok()?, j.parse().ok()?)))
                        .ok_or_else(|| w.to_owned())
                })
                .collect()
        }
    }

    /// `<class>`'s attributes.
    pub mod class {
        /// The class as Java writes it (`pkg.Outer$Inner`).
        pub const NAME: &str = "name";
        /// The class's source file, when the class file says.
        pub const SOURCE: &str = "source";
        /// profrj's own: JaCoCo's class id, the CRC64 of the class file's
        /// bytes as the JVM handed them over (before any instrumentation),
        /// 16 lower-case hex digits. Two classes of one name with two ids
        /// are two different classes.
        pub const ID: &str = "id";
    }

    /// `<method>`'s attributes.
    pub mod method {
        /// The method's name (`<init>` for a constructor).
        pub const NAME: &str = "name";
        /// The method's descriptor (`(I)V`).
        pub const SIGNATURE: &str = "signature";
        /// The first line with code, where the footprints start.
        pub const FIRST_LINE: &str = "firstline";
        /// Calls of the method.
        pub const COUNT: &str = "count";
        /// profrj's extension: which of JaCoCo's filters leaves the method
        /// out of JaCoCo's report (`synthetic`, `enum`, `empty
        /// constructor`); absent for every other method.
        pub const GENERATED: &str = "generated";
        /// `generated`: a synthetic method, not a lambda's body
        /// (JaCoCo's SyntheticFilter).
        pub const SYNTHETIC: &str = "synthetic";
        /// `generated`: an enum's `values`, `valueOf` or empty constructor
        /// (EnumFilter, EnumEmptyConstructorFilter).
        pub const ENUM: &str = "enum";
        /// `generated`: a private no-argument constructor that only calls
        /// its superclass's (PrivateEmptyNoArgConstructorFilter).
        pub const EMPTY_CONSTRUCTOR: &str = "empty constructor";
        /// `generated`: the method, or its class, is annotated with an
        /// annotation whose simple name contains `Generated` (Lombok's,
        /// `javax.annotation.Generated`…: AnnotationGeneratedFilter).
        pub const ANNOTATED: &str = "annotated";
        /// Every value, in the order readers number them from 1.
        pub const GENERATED_KINDS: [&str; 4] = [SYNTHETIC, ENUM, EMPTY_CONSTRUCTOR, ANNOTATED];
        /// `firstline` of a method without line numbers (no footprints).
        pub const NO_LINES: i64 = -1;
    }
}

/// `<alloc>` (profrj's own section, beside the contract's four): per thread,
/// the call paths that allocated, shaped like `<sampler>`, each path's top
/// frame the allocated class (`class="true"`). Figures estimate all bytes and
/// objects from the samples.
pub mod alloc {
    /// The section's element.
    pub const SECTION: &str = "alloc";
    pub use crate::calls::{NODE, THREAD};
    /// The section's attributes: mean bytes between samples, and whether
    /// only objects still reachable at the snapshot are counted.
    pub const INTERVAL: &str = "interval";
    /// `true`: only objects still reachable at the snapshot.
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
        /// Bytes allocated (estimated) by events whose top frame this is.
        pub const BYTES: &str = "bytes";
        /// Objects allocated (estimated) by events whose top frame this is.
        pub const OBJECTS: &str = "objects";
        /// Samples whose top frame this is.
        pub const SAMPLES: &str = "samples";
        /// Bytes allocated (estimated) anywhere at or below this node.
        pub const CUMULATED_BYTES: &str = "cumulatedBytes";
        /// Objects allocated (estimated) anywhere at or below this node.
        pub const CUMULATED_OBJECTS: &str = "cumulatedObjects";
        /// Samples anywhere at or below this node.
        pub const CUMULATED_SAMPLES: &str = "cumulatedSamples";
    }
}

/// `<sites>` (profrj's own, written with `<memory>`): per allocating thread,
/// each allocation site as a two-frame path, shaped like `<alloc>`: the
/// method and line (`pkg.Cls.m():12`), then the allocated class
/// (`class="true"`) with the exact objects alive (`count`), the most ever
/// alive at once (`max`) and the objects ever made there (`allocated`).
pub mod sites {
    /// The section's element.
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
        /// Objects of the site alive at the snapshot (a class frame's own).
        pub const COUNT: &str = "count";
        /// The most objects of the site ever alive at once.
        pub const MAX: &str = "max";
        /// Objects ever made at the site (while the memory mode tracked).
        pub const ALLOCATED: &str = "allocated";
        /// Objects alive of every site at or below this node.
        pub const CUMULATED_COUNT: &str = "cumulatedCount";
        /// Objects ever made at every site at or below this node.
        pub const CUMULATED_ALLOCATED: &str = "cumulatedAllocated";
        /// The sum of the sites' `max` (each site's peak may fall at another
        /// time, so this bounds the most alive at once from above).
        pub const CUMULATED_MAX: &str = "cumulatedMax";
    }

    /// The section's attributes: what the heap censuses cost the program
    /// (each stops every Java thread), in the JVM that wrote it.
    /// The pause of the census these counts come from, in ns.
    pub const CENSUS_PAUSE: &str = "censusPause";
    /// Censuses taken in this JVM (after full GCs and for snapshots).
    pub const CENSUSES: &str = "censuses";
    /// Their pauses, summed, in ns.
    pub const CENSUS_PAUSES: &str = "censusPauses";
    /// The longest of them, in ns.
    pub const LONGEST_CENSUS_PAUSE: &str = "longestCensusPause";
    /// Full GCs (ZGC, Shenandoah: GCs) the `census=` budget left without one.
    pub const CENSUSES_SKIPPED: &str = "censusesSkipped";
    /// Counters the agent holds (one per thread and site or type with
    /// objects tracked): what its memory for `memory` follows.
    pub const COUNTERS: &str = "counters";
    /// Counters of ended threads it gave back so far (docs/THREADS.md).
    pub const COUNTERS_GIVEN_BACK: &str = "countersGivenBack";
    /// The attributes above: one JVM's facts, which a merge of several leaves out.
    pub const JVM_FACTS: [&str; 7] = [
        CENSUS_PAUSE,
        CENSUSES,
        CENSUS_PAUSES,
        LONGEST_CENSUS_PAUSE,
        CENSUSES_SKIPPED,
        COUNTERS,
        COUNTERS_GIVEN_BACK,
    ];
}

/// `<lock>` (profrj's own section, beside the contract's four): per thread,
/// the call paths where the thread waited to enter a contended monitor,
/// shaped like `<alloc>`, each path's top frame the monitor's class
/// (`class="true"`), with the waits counted and their nanoseconds summed;
/// then a `<monitorDump>` of the threads and monitors at the snapshot.
pub mod lock {
    /// The section's element.
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
        /// Contended acquisitions anywhere at or below this node.
        pub const CUMULATED_COUNT: &str = "cumulatedCount";
        /// Nanoseconds waited anywhere at or below this node.
        pub const CUMULATED_TIME: &str = "cumulatedTime";
    }

    /// HPROF's MONITOR DUMP, taken at the snapshot: `<thread>`s (`id`,
    /// `name`, `state` R/S/CW/MW, `<frame name=…/>`s top first, the
    /// `monitor` it waits for), `<monitor>`s (`id`, `class`, `owner`,
    /// `entryCount`, `<waiting thread=…/>` to enter, `<notify thread=…/>`
    /// in `Object.wait`) and a `<deadlock>` per cycle of threads waiting
    /// for each other (`<waiting thread=…/>` in cycle order).
    pub mod dump {
        /// The dump's element, inside `<lock>`.
        pub const DUMP: &str = "monitorDump";
        /// A thread's element: its state and stack.
        pub const THREAD: &str = "thread";
        /// One frame of a thread's stack, top first.
        pub const FRAME: &str = "frame";
        /// A monitor's (or lock's) element: its owner and waiters.
        pub const MONITOR: &str = "monitor";
        /// A thread waiting to enter the monitor (or, in a deadlock, the next in the cycle).
        pub const WAITING: &str = "waiting";
        /// A thread waiting in `Object.wait` to be notified.
        pub const NOTIFY: &str = "notify";
        /// A cycle of threads waiting for each other.
        pub const DEADLOCK: &str = "deadlock";
        /// A thread's or monitor's number in the dump.
        pub const ID: &str = "id";
        /// A thread's name, or a frame's.
        pub const NAME: &str = "name";
        /// A thread's state: R, S, CW or MW.
        pub const STATE: &str = "state";
        /// A monitor's class.
        pub const CLASS: &str = "class";
        /// The `id` of the thread that owns the monitor.
        pub const OWNER: &str = "owner";
        /// How many times the owner entered the monitor.
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

#[cfg(test)]
mod tests {
    use super::coverage::filtered::{merged_text, parse_merged};

    #[test]
    fn merged_pairs_read_back_as_written() {
        let pairs = vec![(1, 4), (2, 4), (30, 7)];
        assert_eq!(merged_text(&pairs), "1:4 2:4 30:7");
        assert_eq!(parse_merged(&merged_text(&pairs)), Ok(pairs));
        assert_eq!(parse_merged(""), Ok(Vec::new()));
        assert_eq!(parse_merged("1:4 2-4"), Err("2-4".to_owned()));
        assert_eq!(parse_merged("1:x"), Err("1:x".to_owned()));
    }
}
