//! The types profrj writes: their ids, the metadata describing them (field
//! names, order and annotations as the JDK's own recordings have them, so
//! the JDK's `jfr` tool and JMC read them as theirs), the constant pools
//! and one encoder per event. Every event starts with `startTime` and,
//! when it has one, `duration` (the JDK's reader expects them first).
//!
//! This file holds the ids and names every part shares; the rest is apart
//! by what it writes:
//! - `describe`: how a type, field or annotation is described;
//! - `classes`: every type profrj writes, as the metadata event declares it;
//! - `pools`: the constant pools of a chunk and the stack traces' values;
//! - [`events`]: one encoder per event.

mod classes;
mod describe;
pub mod events;
mod pools;

pub use classes::{classes, metadata_event};
pub use pools::{encode_stack, Frame, Pools, ThreadEntry};

/// Type ids (0 and 1 are the metadata and checkpoint events).
pub(crate) mod id {
    pub const BOOLEAN: u64 = 4;
    pub const INT: u64 = 8;
    pub const LONG: u64 = 9;
    pub const STRING: u64 = 10;
    pub const CLASS: u64 = 20;
    pub const THREAD: u64 = 21;
    pub const CLASS_LOADER: u64 = 22;
    pub const FRAME_TYPE: u64 = 23;
    pub const THREAD_STATE: u64 = 24;
    pub const STACK_TRACE: u64 = 25;
    pub const STACK_FRAME: u64 = 26;
    pub const METHOD: u64 = 27;
    pub const PACKAGE: u64 = 28;
    pub const SYMBOL: u64 = 29;
    pub const EXECUTION_SAMPLE: u64 = 101;
    pub const WALL_CLOCK_SAMPLE: u64 = 102;
    pub const ALLOCATION_SAMPLE: u64 = 103;
    pub const MONITOR_ENTER: u64 = 104;
    pub const THREAD_PARK: u64 = 105;
    pub const JVM_INFORMATION: u64 = 106;
    pub const OS_INFORMATION: u64 = 107;
    pub const CPU_INFORMATION: u64 = 108;
    pub const ACTIVE_RECORDING: u64 = 109;
    pub const LABEL: u64 = 200;
    pub const CATEGORY: u64 = 201;
    pub const TIMESTAMP: u64 = 202;
    pub const TIMESPAN: u64 = 203;
    pub const DATA_AMOUNT: u64 = 204;
    pub const MEMORY_ADDRESS: u64 = 205;
    pub const UNSIGNED: u64 = 206;
}

/// Event type names, as the readers match them.
pub(crate) mod name {
    pub const EXECUTION_SAMPLE: &str = "jdk.ExecutionSample";
    /// async-profiler's event for wall-clock samples (`samples` of them).
    pub const WALL_CLOCK_SAMPLE: &str = "profiler.WallClockSample";
    pub const ALLOCATION_SAMPLE: &str = "jdk.ObjectAllocationSample";
    pub const ALLOCATION_IN_NEW_TLAB: &str = "jdk.ObjectAllocationInNewTLAB";
    pub const ALLOCATION_OUTSIDE_TLAB: &str = "jdk.ObjectAllocationOutsideTLAB";
    pub const MONITOR_ENTER: &str = "jdk.JavaMonitorEnter";
    pub const THREAD_PARK: &str = "jdk.ThreadPark";
    pub const JVM_INFORMATION: &str = "jdk.JVMInformation";
    pub const OS_INFORMATION: &str = "jdk.OSInformation";
    pub const CPU_INFORMATION: &str = "jdk.CPUInformation";
    pub const ACTIVE_RECORDING: &str = "jdk.ActiveRecording";
}

/// The frame types a stack frame can have, as the JDK names them. C1 and
/// C2 are both `JIT compiled` (JFR does not tell tiers apart); a frame whose
/// type is not known (and a stub's) is `Java`, a name of profrj's own.
pub mod frame_type {
    /// A frame whose type is not known.
    pub const JAVA: u64 = 1;
    /// A native method's frame.
    pub const NATIVE: u64 = 2;
    /// A method run by the interpreter.
    pub const INTERPRETED: u64 = 3;
    /// A compiled method's own frame (C1 or C2).
    pub const JIT_COMPILED: u64 = 4;
    /// A method inlined into its caller's compiled code.
    pub const INLINED: u64 = 5;
    /// The pool's entries: each key with the name `jfr` prints.
    pub(crate) const NAMES: [(u64, &str); 5] = [
        (JAVA, "Java"),
        (NATIVE, "Native"),
        (INTERPRETED, "Interpreted"),
        (JIT_COMPILED, "JIT compiled"),
        (INLINED, "Inlined"),
    ];
}

/// Thread states (the JDK's names); keys are profrj's own.
pub mod thread_state {
    /// On the CPU, or ready to be.
    pub const RUNNABLE: u64 = 1;
    /// Sleeping, or (as async-profiler says of a thread off the CPU)
    /// RUNNABLE but not running: blocked in a system call.
    pub const SLEEPING: u64 = 2;
    /// In `Object.wait()` without a timeout.
    pub const IN_OBJECT_WAIT: u64 = 3;
    /// In `Object.wait(millis)`.
    pub const IN_OBJECT_WAIT_TIMED: u64 = 4;
    /// In `LockSupport.park()` without a timeout.
    pub const PARKED: u64 = 5;
    /// In `LockSupport.parkNanos()` or `parkUntil()`.
    pub const PARKED_TIMED: u64 = 6;
    /// Waiting to enter a `synchronized` block or method.
    pub const BLOCKED_ON_MONITOR_ENTER: u64 = 7;
    /// Created, not yet started.
    pub const NEW: u64 = 8;
    /// Finished.
    pub const TERMINATED: u64 = 9;
    /// The pool's entries: each key with the JDK's name for it.
    pub(crate) const NAMES: [(u64, &str); 9] = [
        (RUNNABLE, "STATE_RUNNABLE"),
        (SLEEPING, "STATE_SLEEPING"),
        (IN_OBJECT_WAIT, "STATE_IN_OBJECT_WAIT"),
        (IN_OBJECT_WAIT_TIMED, "STATE_IN_OBJECT_WAIT_TIMED"),
        (PARKED, "STATE_PARKED"),
        (PARKED_TIMED, "STATE_PARKED_TIMED"),
        (BLOCKED_ON_MONITOR_ENTER, "STATE_BLOCKED_ON_MONITOR_ENTER"),
        (NEW, "STATE_NEW"),
        (TERMINATED, "STATE_TERMINATED"),
    ];
    /// [`RUNNABLE`]'s name, which the reader matches (the JDK's and
    /// async-profiler's recordings use it too).
    pub(crate) const RUNNABLE_NAME: &str = "STATE_RUNNABLE";
}
