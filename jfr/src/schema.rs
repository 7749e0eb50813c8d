//! The types profrj writes: their ids, the metadata describing them (field
//! names, order and annotations as the JDK's own recordings have them, so
//! the JDK's `jfr` tool and JMC read them as theirs), the constant pools
//! and one encoder per event. Every event starts with `startTime` and,
//! when it has one, `duration` (the JDK's reader expects them first).

use crate::encode::Buf;
use crate::metadata::{Annotation, ClassDesc, FieldDesc, ANNOTATION_SUPER_TYPE, EVENT_SUPER_TYPE};
use crate::writer::ChunkWriter;
use std::collections::HashMap;
use std::io::{self, Seek, Write};

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

/// The frame types a stack frame can have. profrj cannot tell an
/// interpreted frame from a compiled or inlined one (AsyncGetCallTrace and
/// JVMTI do not say), so a Java frame is just `Java`.
pub mod frame_type {
    /// A Java method's frame (interpreted, compiled or inlined).
    pub const JAVA: u64 = 1;
    /// A native method's frame.
    pub const NATIVE: u64 = 2;
    /// The pool's entries: each key with the name `jfr` prints.
    pub(crate) const NAMES: [(u64, &str); 2] = [(JAVA, "Java"), (NATIVE, "Native")];
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

fn ann(ty: u64, value: Option<&str>) -> Annotation {
    Annotation {
        ty,
        values: value
            .map(|v| vec![("value".to_owned(), v.to_owned())])
            .unwrap_or_default(),
    }
}

fn label(text: &str) -> Annotation {
    ann(id::LABEL, Some(text))
}

fn category(path: &[&str]) -> Annotation {
    Annotation {
        ty: id::CATEGORY,
        values: path
            .iter()
            .enumerate()
            .map(|(i, p)| (format!("value-{i}"), (*p).to_owned()))
            .collect(),
    }
}

/// A field: plain, or constant pool (`cp`), with a label and more annotations.
fn field(name: &'static str, ty: u64, text: &str, more: Vec<Annotation>) -> FieldDesc {
    let mut annotations = vec![label(text)];
    annotations.extend(more);
    FieldDesc {
        name,
        ty,
        cpool: false,
        array: false,
        annotations,
    }
}

fn cp(name: &'static str, ty: u64, text: &str) -> FieldDesc {
    FieldDesc {
        cpool: true,
        ..field(name, ty, text, Vec::new())
    }
}

fn start_time() -> FieldDesc {
    field(
        "startTime",
        id::LONG,
        "Start Time",
        vec![ann(id::TIMESTAMP, Some("TICKS"))],
    )
}

fn duration() -> FieldDesc {
    field(
        "duration",
        id::LONG,
        "Duration",
        vec![ann(id::TIMESPAN, Some("TICKS"))],
    )
}

fn plain(id: u64, name: &'static str) -> ClassDesc {
    ClassDesc {
        id,
        name,
        super_type: None,
        simple: false,
        fields: Vec::new(),
        annotations: Vec::new(),
    }
}

fn class(
    id: u64,
    name: &'static str,
    text: &str,
    simple: bool,
    fields: Vec<FieldDesc>,
) -> ClassDesc {
    ClassDesc {
        simple,
        fields,
        annotations: vec![label(text)],
        ..plain(id, name)
    }
}

fn event(
    id: u64,
    name: &'static str,
    text: &str,
    cat: &[&str],
    fields: Vec<FieldDesc>,
) -> ClassDesc {
    ClassDesc {
        super_type: Some(EVENT_SUPER_TYPE),
        fields,
        annotations: vec![label(text), category(cat)],
        ..plain(id, name)
    }
}

fn annotation_type(id: u64, name: &'static str, fields: Vec<FieldDesc>) -> ClassDesc {
    ClassDesc {
        super_type: Some(ANNOTATION_SUPER_TYPE),
        fields,
        ..plain(id, name)
    }
}

fn value_field(array: bool) -> FieldDesc {
    FieldDesc {
        name: "value",
        ty: id::STRING,
        cpool: false,
        array,
        annotations: Vec::new(),
    }
}

/// Every type profrj writes, for the metadata event.
pub fn classes() -> Vec<ClassDesc> {
    use id::*;
    let bytes = || vec![ann(DATA_AMOUNT, Some("BYTES"))];
    let millis = || vec![ann(TIMESTAMP, Some("MILLISECONDS_SINCE_EPOCH"))];
    let stack_frames = FieldDesc {
        array: true,
        ..field("frames", STACK_FRAME, "Stack Frames", Vec::new())
    };
    vec![
        plain(BOOLEAN, "boolean"),
        plain(INT, "int"),
        plain(LONG, "long"),
        plain(STRING, "java.lang.String"),
        class(
            CLASS,
            "java.lang.Class",
            "Java Class",
            false,
            vec![
                cp("classLoader", CLASS_LOADER, "Class Loader"),
                cp("name", SYMBOL, "Name"),
                cp("package", PACKAGE, "Package"),
                field("modifiers", INT, "Access Modifiers", Vec::new()),
            ],
        ),
        class(
            THREAD,
            "java.lang.Thread",
            "Thread",
            false,
            vec![
                field("osName", STRING, "OS Thread Name", Vec::new()),
                field("osThreadId", LONG, "OS Thread Id", Vec::new()),
                field("javaName", STRING, "Java Thread Name", Vec::new()),
                field("javaThreadId", LONG, "Java Thread Id", Vec::new()),
            ],
        ),
        class(
            CLASS_LOADER,
            "jdk.types.ClassLoader",
            "Java Class Loader",
            false,
            vec![cp("type", CLASS, "Type"), cp("name", SYMBOL, "Name")],
        ),
        class(
            FRAME_TYPE,
            "jdk.types.FrameType",
            "Frame type",
            true,
            vec![field("description", STRING, "Description", Vec::new())],
        ),
        class(
            THREAD_STATE,
            "jdk.types.ThreadState",
            "Java Thread State",
            true,
            vec![field("name", STRING, "Name", Vec::new())],
        ),
        class(
            STACK_TRACE,
            "jdk.types.StackTrace",
            "Stacktrace",
            false,
            vec![
                field("truncated", BOOLEAN, "Truncated", Vec::new()),
                stack_frames,
            ],
        ),
        class(
            STACK_FRAME,
            "jdk.types.StackFrame",
            "Stack Frame",
            false,
            vec![
                cp("method", METHOD, "Java Method"),
                field("lineNumber", INT, "Line Number", Vec::new()),
                field("bytecodeIndex", INT, "Bytecode Index", Vec::new()),
                cp("type", FRAME_TYPE, "Frame Type"),
            ],
        ),
        class(
            METHOD,
            "jdk.types.Method",
            "Java Method",
            false,
            vec![
                cp("type", CLASS, "Type"),
                cp("name", SYMBOL, "Name"),
                cp("descriptor", SYMBOL, "Descriptor"),
                field("modifiers", INT, "Access Modifiers", Vec::new()),
                field("hidden", BOOLEAN, "Hidden", Vec::new()),
            ],
        ),
        class(
            PACKAGE,
            "jdk.types.Package",
            "Package",
            false,
            vec![cp("name", SYMBOL, "Name")],
        ),
        class(
            SYMBOL,
            "jdk.types.Symbol",
            "Symbol",
            true,
            vec![field("string", STRING, "String", Vec::new())],
        ),
        event(
            EXECUTION_SAMPLE,
            name::EXECUTION_SAMPLE,
            "Method Profiling Sample",
            &["Java Virtual Machine", "Profiling"],
            vec![
                start_time(),
                cp("sampledThread", THREAD, "Thread"),
                cp("stackTrace", STACK_TRACE, "Stack Trace"),
                cp("state", THREAD_STATE, "Thread State"),
            ],
        ),
        event(
            WALL_CLOCK_SAMPLE,
            name::WALL_CLOCK_SAMPLE,
            "Wall Clock Sample",
            &["Java Virtual Machine", "Profiling"],
            vec![
                start_time(),
                cp("sampledThread", THREAD, "Thread"),
                cp("stackTrace", STACK_TRACE, "Stack Trace"),
                cp("state", THREAD_STATE, "Thread State"),
                field("samples", INT, "Samples", vec![ann(UNSIGNED, None)]),
                field(
                    "timeSpan",
                    LONG,
                    "Time Span",
                    vec![ann(TIMESPAN, Some("TICKS"))],
                ),
            ],
        ),
        event(
            ALLOCATION_SAMPLE,
            name::ALLOCATION_SAMPLE,
            "Object Allocation Sample",
            &["Java Application"],
            vec![
                start_time(),
                cp("eventThread", THREAD, "Event Thread"),
                cp("stackTrace", STACK_TRACE, "Stack Trace"),
                cp("objectClass", CLASS, "Object Class"),
                field("weight", LONG, "Sample Weight", bytes()),
                field("allocationSize", LONG, "Allocation Size", bytes()),
            ],
        ),
        event(
            MONITOR_ENTER,
            name::MONITOR_ENTER,
            "Java Monitor Blocked",
            &["Java Application"],
            vec![
                start_time(),
                duration(),
                cp("eventThread", THREAD, "Event Thread"),
                cp("stackTrace", STACK_TRACE, "Stack Trace"),
                cp("monitorClass", CLASS, "Monitor Class"),
                cp("previousOwner", THREAD, "Previous Monitor Owner"),
                field(
                    "address",
                    LONG,
                    "Monitor Address",
                    vec![ann(MEMORY_ADDRESS, None)],
                ),
            ],
        ),
        event(
            THREAD_PARK,
            name::THREAD_PARK,
            "Java Thread Park",
            &["Java Application"],
            vec![
                start_time(),
                duration(),
                cp("eventThread", THREAD, "Event Thread"),
                cp("stackTrace", STACK_TRACE, "Stack Trace"),
                cp("parkedClass", CLASS, "Class Parked On"),
                field(
                    "timeout",
                    LONG,
                    "Park Timeout",
                    vec![ann(TIMESPAN, Some("NANOSECONDS"))],
                ),
                field("until", LONG, "Park Until", millis()),
                field(
                    "address",
                    LONG,
                    "Address of Object Parked",
                    vec![ann(MEMORY_ADDRESS, None)],
                ),
            ],
        ),
        event(
            JVM_INFORMATION,
            name::JVM_INFORMATION,
            "JVM Information",
            &["Java Virtual Machine"],
            vec![
                start_time(),
                field("jvmName", STRING, "JVM Name", Vec::new()),
                field("jvmVersion", STRING, "JVM Version", Vec::new()),
                field(
                    "jvmArguments",
                    STRING,
                    "JVM Command Line Arguments",
                    Vec::new(),
                ),
                field(
                    "jvmFlags",
                    STRING,
                    "JVM Settings File Arguments",
                    Vec::new(),
                ),
                field(
                    "javaArguments",
                    STRING,
                    "Java Application Arguments",
                    Vec::new(),
                ),
                field("jvmStartTime", LONG, "JVM Start Time", millis()),
                field("pid", LONG, "Process Identifier", Vec::new()),
            ],
        ),
        event(
            OS_INFORMATION,
            name::OS_INFORMATION,
            "OS Information",
            &["Operating System"],
            vec![
                start_time(),
                field("osVersion", STRING, "OS Version", Vec::new()),
            ],
        ),
        event(
            CPU_INFORMATION,
            name::CPU_INFORMATION,
            "CPU Information",
            &["Operating System", "Processor"],
            vec![
                start_time(),
                field("cpu", STRING, "Type", Vec::new()),
                field("description", STRING, "Description", Vec::new()),
                field("sockets", INT, "Sockets", vec![ann(UNSIGNED, None)]),
                field("cores", INT, "Cores", vec![ann(UNSIGNED, None)]),
                field(
                    "hwThreads",
                    INT,
                    "Hardware Threads",
                    vec![ann(UNSIGNED, None)],
                ),
            ],
        ),
        event(
            ACTIVE_RECORDING,
            name::ACTIVE_RECORDING,
            "Flight Recording",
            &["Flight Recorder"],
            vec![
                start_time(),
                field("id", LONG, "Id", Vec::new()),
                field("name", STRING, "Name", Vec::new()),
                field("destination", STRING, "Destination", Vec::new()),
                field(
                    "maxAge",
                    LONG,
                    "Max Age",
                    vec![ann(TIMESPAN, Some("MILLISECONDS"))],
                ),
                field("maxSize", LONG, "Max Size", bytes()),
                field("recordingStart", LONG, "Start Time", millis()),
                field(
                    "recordingDuration",
                    LONG,
                    "Recording Duration",
                    vec![ann(TIMESPAN, Some("MILLISECONDS"))],
                ),
            ],
        ),
        annotation_type(LABEL, "jdk.jfr.Label", vec![value_field(false)]),
        annotation_type(CATEGORY, "jdk.jfr.Category", vec![value_field(true)]),
        annotation_type(TIMESTAMP, "jdk.jfr.Timestamp", vec![value_field(false)]),
        annotation_type(TIMESPAN, "jdk.jfr.Timespan", vec![value_field(false)]),
        annotation_type(DATA_AMOUNT, "jdk.jfr.DataAmount", vec![value_field(false)]),
        annotation_type(MEMORY_ADDRESS, "jdk.jfr.MemoryAddress", Vec::new()),
        annotation_type(UNSIGNED, "jdk.jfr.Unsigned", Vec::new()),
    ]
}

/// The metadata event for [`classes`]. Its id must not be one the JDK
/// uses for its own metadata (`jfr print` would mix them up).
pub fn metadata_event(start_ticks: u64) -> Vec<u8> {
    crate::metadata::metadata_event(&classes(), start_ticks, 0x7fff_fff0)
}

/// A thread as the `java.lang.Thread` pool holds it.
#[derive(Clone, Debug, Default)]
pub struct ThreadEntry {
    /// The name `jfr` and JMC show for the thread.
    pub name: String,
    /// The kernel's thread id (0: unknown).
    pub os_thread_id: u64,
    /// The Java thread id (the writer's key for the thread).
    pub java_thread_id: u64,
}

/// A stack frame: its method (a [`Pools::method`] key), line (-1: none),
/// bytecode index and frame type ([`frame_type`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Frame {
    /// The method's [`Pools::method`] key.
    pub method: u64,
    /// The source line (-1: no line table).
    pub line: i32,
    /// The bytecode index (-1: none, a native frame).
    pub bci: i32,
    /// A [`frame_type`] key.
    pub kind: u64,
}

/// A stack trace's pool value: `truncated`, then the frames, top first.
pub fn encode_stack(out: &mut Buf, truncated: bool, frames: &[Frame]) {
    out.boolean(truncated).varint(frames.len() as u64);
    for f in frames {
        out.varint(f.method)
            .long(f.line as i64)
            .long(f.bci as i64)
            .varint(f.kind);
    }
}

/// The small constant pools of a chunk, keys from 1 (0 is null): symbols,
/// packages, classes, methods and threads, each interned once. Stack traces
/// are the caller's, written when the pools are
/// ([`Pools::write_checkpoint`]).
#[derive(Default)]
pub struct Pools {
    symbols: Vec<String>,
    symbol_keys: HashMap<String, u64>,
    /// Package name symbol per package key.
    packages: Vec<u64>,
    package_keys: HashMap<u64, u64>,
    /// (key, name symbol, package key) per class.
    classes: Vec<(u64, u64, u64)>,
    class_keys: HashMap<String, u64>,
    /// (class key, name symbol, descriptor symbol, modifiers) per method key.
    methods: Vec<(u64, u64, u64, i32)>,
    method_keys: HashMap<(u64, u64, u64), u64>,
    threads: Vec<(u64, ThreadEntry)>,
}

impl Pools {
    /// A symbol's key, interned: the same text always gets the same key.
    pub fn symbol(&mut self, s: &str) -> u64 {
        if let Some(&k) = self.symbol_keys.get(s) {
            return k;
        }
        self.symbols.push(s.to_owned());
        let k = self.symbols.len() as u64;
        self.symbol_keys.insert(s.to_owned(), k);
        k
    }

    /// A class by its name as the JVM writes it internally
    /// (`java/lang/String`, `[B`): its package is everything before the
    /// last `/` (none for an array or the unnamed package).
    pub fn class(&mut self, internal_name: &str) -> u64 {
        if let Some(&k) = self.class_keys.get(internal_name) {
            return k;
        }
        let key = self.classes.len() as u64 + 1;
        self.class_keyed(key, internal_name);
        key
    }

    /// A class under the caller's key (a caller that names its own keys
    /// uses this for every class, never [`Pools::class`]).
    pub fn class_keyed(&mut self, key: u64, internal_name: &str) {
        if self.class_keys.contains_key(internal_name) {
            return;
        }
        let name = self.symbol(internal_name);
        let package = match internal_name.rfind('/') {
            Some(i) if !internal_name.starts_with('[') => {
                let sym = self.symbol(&internal_name[..i]);
                match self.package_keys.get(&sym) {
                    Some(&p) => p,
                    None => {
                        self.packages.push(sym);
                        let p = self.packages.len() as u64;
                        self.package_keys.insert(sym, p);
                        p
                    }
                }
            }
            _ => 0,
        };
        self.classes.push((key, name, package));
        self.class_keys.insert(internal_name.to_owned(), key);
    }

    /// A method of class `class` (a [`Pools::class`] key).
    pub fn method(&mut self, class: u64, name: &str, descriptor: &str, modifiers: i32) -> u64 {
        let (n, d) = (self.symbol(name), self.symbol(descriptor));
        if let Some(&k) = self.method_keys.get(&(class, n, d)) {
            return k;
        }
        self.methods.push((class, n, d, modifiers));
        let k = self.methods.len() as u64;
        self.method_keys.insert((class, n, d), k);
        k
    }

    /// A thread under the caller's key (never 0).
    pub fn thread(&mut self, key: u64, t: ThreadEntry) {
        self.threads.push((key, t));
    }

    /// Writes the chunk's checkpoint: these pools, the fixed ones (frame
    /// types, thread states) and `stacks` stack traces, which `write_stacks`
    /// writes (each a key then [`encode_stack`]'s bytes).
    pub fn write_checkpoint<W: Write + Seek>(
        &self,
        w: &mut ChunkWriter<W>,
        ticks: u64,
        stacks: u64,
        write_stacks: impl FnOnce(&mut ChunkWriter<W>) -> io::Result<()>,
    ) -> io::Result<()> {
        let sizes = [
            self.symbols.len(),
            self.packages.len(),
            self.classes.len(),
            self.methods.len(),
            self.threads.len(),
            stacks as usize,
        ];
        // An empty pool is not written (the JDK's reader refuses one).
        let pools = 2 + sizes.iter().filter(|&&n| n > 0).count() as u64;
        let at = w.begin_checkpoint(ticks, pools)?;
        let mut b = Buf::new();
        // Written out whenever it grows past 64 KiB.
        let flush = |w: &mut ChunkWriter<W>, b: &mut Buf, all: bool| -> io::Result<()> {
            if all || b.len() > 1 << 16 {
                w.raw(&b.bytes)?;
                b.clear();
            }
            Ok(())
        };
        b.varint(id::FRAME_TYPE)
            .varint(frame_type::NAMES.len() as u64);
        for (k, n) in frame_type::NAMES {
            b.varint(k).string(n);
        }
        b.varint(id::THREAD_STATE)
            .varint(thread_state::NAMES.len() as u64);
        for (k, n) in thread_state::NAMES {
            b.varint(k).string(n);
        }
        if !self.symbols.is_empty() {
            b.varint(id::SYMBOL).varint(self.symbols.len() as u64);
            for (i, s) in self.symbols.iter().enumerate() {
                b.varint(i as u64 + 1).string(s);
                flush(w, &mut b, false)?;
            }
        }
        if !self.packages.is_empty() {
            b.varint(id::PACKAGE).varint(self.packages.len() as u64);
            for (i, &name) in self.packages.iter().enumerate() {
                b.varint(i as u64 + 1).varint(name);
                flush(w, &mut b, false)?;
            }
        }
        if !self.classes.is_empty() {
            b.varint(id::CLASS).varint(self.classes.len() as u64);
            for &(key, name, package) in &self.classes {
                // classLoader null, modifiers unknown (0).
                b.varint(key)
                    .varint(0)
                    .varint(name)
                    .varint(package)
                    .varint(0);
                flush(w, &mut b, false)?;
            }
        }
        if !self.methods.is_empty() {
            b.varint(id::METHOD).varint(self.methods.len() as u64);
            for (i, &(class, name, desc, modifiers)) in self.methods.iter().enumerate() {
                b.varint(i as u64 + 1)
                    .varint(class)
                    .varint(name)
                    .varint(desc)
                    .long(modifiers as i64)
                    .boolean(false);
                flush(w, &mut b, false)?;
            }
        }
        if !self.threads.is_empty() {
            b.varint(id::THREAD).varint(self.threads.len() as u64);
            for (key, t) in &self.threads {
                b.varint(*key)
                    .string(&t.name)
                    .varint(t.os_thread_id)
                    .string(&t.name)
                    .varint(t.java_thread_id);
                flush(w, &mut b, false)?;
            }
        }
        if stacks > 0 {
            b.varint(id::STACK_TRACE).varint(stacks);
            flush(w, &mut b, true)?;
            write_stacks(w)?;
        }
        flush(w, &mut b, true)?;
        w.end_checkpoint(at)
    }
}

/// The events, each into `b` (type id first; the writer adds the size).
pub mod events {
    use super::id;
    use crate::encode::Buf;

    /// A sample of a running thread (`state`: a [`super::thread_state`] key).
    pub fn execution_sample(b: &mut Buf, ticks: u64, thread: u64, stack: u64, state: u64) {
        b.varint(id::EXECUTION_SAMPLE)
            .varint(ticks)
            .varint(thread)
            .varint(stack)
            .varint(state);
    }

    /// `samples` wall-clock samples of a thread that was not running.
    pub fn wall_clock_sample(
        b: &mut Buf,
        ticks: u64,
        (thread, stack, state): (u64, u64, u64),
        samples: u32,
        span_ticks: u64,
    ) {
        b.varint(id::WALL_CLOCK_SAMPLE)
            .varint(ticks)
            .varint(thread)
            .varint(stack)
            .varint(state)
            .varint(samples as u64)
            .varint(span_ticks);
    }

    /// A sampled allocation of an object of `size` bytes standing for
    /// `weight` bytes.
    pub fn allocation_sample(
        b: &mut Buf,
        ticks: u64,
        (thread, stack, class): (u64, u64, u64),
        weight: u64,
        size: u64,
    ) {
        b.varint(id::ALLOCATION_SAMPLE)
            .varint(ticks)
            .varint(thread)
            .varint(stack)
            .varint(class)
            .varint(weight)
            .varint(size);
    }

    /// A contended `synchronized` entry: waited `duration` ticks from `ticks`.
    pub fn monitor_enter(
        b: &mut Buf,
        (ticks, duration): (u64, u64),
        (thread, stack, class): (u64, u64, u64),
        previous_owner: u64,
        address: u64,
    ) {
        b.varint(id::MONITOR_ENTER)
            .varint(ticks)
            .varint(duration)
            .varint(thread)
            .varint(stack)
            .varint(class)
            .varint(previous_owner)
            .varint(address);
    }

    /// A park for a lock (no timeout known: `timeout` and `until` are
    /// `Long.MIN_VALUE`, which the JDK writes for "none").
    pub fn thread_park(
        b: &mut Buf,
        (ticks, duration): (u64, u64),
        (thread, stack, class): (u64, u64, u64),
        address: u64,
    ) {
        b.varint(id::THREAD_PARK)
            .varint(ticks)
            .varint(duration)
            .varint(thread)
            .varint(stack)
            .varint(class)
            .long(i64::MIN)
            .long(i64::MIN)
            .varint(address);
    }

    /// What `jdk.JVMInformation` holds.
    #[derive(Clone, Debug, Default)]
    pub struct JvmInfo {
        /// The JVM's name (`OpenJDK 64-Bit Server VM`).
        pub name: String,
        /// Its version line (`java.vm.info`'s).
        pub version: String,
        /// The JVM's options, space-separated.
        pub jvm_arguments: String,
        /// The main class or jar and its arguments.
        pub java_arguments: String,
        /// When the JVM started, in milliseconds since the Unix epoch.
        pub start_millis: u64,
        /// The JVM's process id.
        pub pid: u64,
    }

    /// `jdk.JVMInformation`: which JVM recorded, with which arguments
    /// (what `jfr summary` and JMC show first).
    pub fn jvm_information(b: &mut Buf, ticks: u64, i: &JvmInfo) {
        b.varint(id::JVM_INFORMATION)
            .varint(ticks)
            .string(&i.name)
            .string(&i.version)
            .string(&i.jvm_arguments)
            .string("")
            .string(&i.java_arguments)
            .varint(i.start_millis)
            .varint(i.pid);
    }

    /// `jdk.OSInformation`: the operating system's version line.
    pub fn os_information(b: &mut Buf, ticks: u64, version: &str) {
        b.varint(id::OS_INFORMATION).varint(ticks).string(version);
    }

    /// What `jdk.CPUInformation` holds.
    #[derive(Clone, Debug, Default)]
    pub struct CpuInfo {
        /// The CPU's model name.
        pub cpu: String,
        /// A longer description of the CPU.
        pub description: String,
        /// Physical packages.
        pub sockets: u32,
        /// Cores over all sockets.
        pub cores: u32,
        /// Hardware threads (what the scheduler can run at once).
        pub hw_threads: u32,
    }

    /// `jdk.CPUInformation`: the machine the samples were taken on.
    pub fn cpu_information(b: &mut Buf, ticks: u64, c: &CpuInfo) {
        b.varint(id::CPU_INFORMATION)
            .varint(ticks)
            .string(&c.cpu)
            .string(&c.description)
            .varint(c.sockets as u64)
            .varint(c.cores as u64)
            .varint(c.hw_threads as u64);
    }

    /// What `jdk.ActiveRecording` holds.
    #[derive(Clone, Debug, Default)]
    pub struct RecordingInfo {
        /// The recording's id (unique within its JVM).
        pub id: u64,
        /// Its name, as `jfr summary` lists it.
        pub name: String,
        /// The file it is written to.
        pub destination: String,
        /// When it started, in milliseconds since the Unix epoch.
        pub start_millis: u64,
        /// How long it ran, in milliseconds.
        pub duration_millis: u64,
    }

    /// `jdk.ActiveRecording`: the recording itself, so the JDK's tools
    /// name it.
    pub fn active_recording(b: &mut Buf, ticks: u64, r: &RecordingInfo) {
        b.varint(id::ACTIVE_RECORDING)
            .varint(ticks)
            .varint(r.id)
            .string(&r.name)
            .string(&r.destination)
            .varint(0)
            .varint(0)
            .varint(r.start_millis)
            .varint(r.duration_millis);
    }
}
