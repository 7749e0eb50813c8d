//! A streaming reader of JFR files (the JDK's, async-profiler's, profrj's):
//! chunk by chunk, it reads the header, the metadata and the constant pools
//! (which a chunk keeps at its end), then walks the events in order and hands
//! the ones profrj knows to the caller, one at a time; nothing else is kept.
//!
//! Nothing in the file is trusted: every size, offset and count is checked
//! against the bytes that are really there before it is used, arrays and
//! strings cannot claim more elements than their event has bytes, nesting is
//! bounded, and a checkpoint chain that loops is refused. Memory is the
//! constant pools of one chunk (as compact records, each made from the
//! bytes that describe it) plus one event.

use crate::decode::{Cursor, Error, ErrorKind, JString, Result};
use crate::metadata::{self, Type, Types, CHECKPOINT_TYPE, METADATA_TYPE};
pub use crate::names::java_type_name;
use crate::schema::name;
use crate::writer::{HEADER_SIZE, MAGIC};
use std::collections::{HashMap, HashSet};
use std::io::{Read, Seek, SeekFrom};

/// The largest metadata or checkpoint event read into memory, and the
/// largest ordinary event (real ones are a few hundred bytes; a checkpoint
/// of a long recording can be tens of megabytes).
const MAX_SPECIAL_EVENT: u64 = 1 << 30;
const MAX_EVENT: u64 = 64 << 20;
/// Deepest nesting of inline struct values.
const MAX_VALUE_NESTING: usize = 16;

/// What an event is, as profrj reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// `count` execution samples; `running`: the thread was on the CPU
    /// (`jdk.ExecutionSample`, or a wall-clock sample in `STATE_RUNNABLE`).
    Sample {
        /// How many samples the event stands for (async-profiler batches
        /// wall-clock samples).
        count: u64,
        /// The thread was running Java code on the CPU.
        running: bool,
    },
    /// A sampled allocation standing for `weight` bytes; `size`: the
    /// sampled object's own size, when the event says.
    Allocation {
        /// The bytes the sample stands for.
        weight: u64,
        /// The sampled object's size in bytes, when known.
        size: Option<u64>,
    },
    /// A wait for a lock of `duration_ns`; `park`: a `java.util.concurrent`
    /// lock (`jdk.ThreadPark`), else a monitor.
    Lock {
        /// How long the thread waited, in nanoseconds.
        duration_ns: u64,
        /// A `java.util.concurrent` lock, not a monitor.
        park: bool,
    },
}

/// One event profrj knows: its kind and constant pool keys (0: none).
#[derive(Clone, Copy, Debug)]
pub struct Record {
    /// What happened.
    pub kind: Kind,
    /// When, on the chunk's clock ([`Chunk::ticks_to_epoch_nanos`]).
    pub ticks: u64,
    /// The thread's key ([`Chunk::thread`]).
    pub thread: u64,
    /// The stack trace's key ([`Chunk::stack`]).
    pub stack: u64,
    /// The allocated object's or the lock's class.
    pub class: u64,
}

/// A thread of the `java.lang.Thread` pool.
#[derive(Clone, Debug, Default)]
pub struct Thread {
    /// Its Java name, if it has one.
    pub java_name: Option<JString>,
    /// Its operating system name.
    pub os_name: Option<JString>,
    /// `Thread.getId()` (0: not a Java thread).
    pub java_thread_id: u64,
    /// The kernel's thread id.
    pub os_thread_id: u64,
}

/// A frame of a stack trace: pool keys of its method and frame type.
#[derive(Clone, Copy, Debug, Default)]
pub struct Frame {
    /// The method's key ([`Chunk::method`]).
    pub method: u64,
    /// The source line as recorded (-1: the frame type has no line field).
    pub line: i32,
    /// The bytecode index as recorded (-1: no such field).
    pub bci: i32,
    /// The frame type's key ([`Chunk::frame_type`]).
    pub kind: u64,
}

#[derive(Clone, Debug, Default)]
/// A stack trace of the `jdk.types.StackTrace` pool.
pub struct Stack {
    /// The recorder cut it at its depth limit: the bottom frames are missing.
    pub truncated: bool,
    /// Top frame first.
    pub frames: Vec<Frame>,
}

/// A method, resolved: its class as Java writes it (`java.lang.String`),
/// its name and descriptor.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Method {
    /// The declaring class, as Java writes it.
    pub class: String,
    /// The method's name (`<init>` for a constructor).
    pub name: String,
    /// Its JVM descriptor (`(I)V`).
    pub descriptor: String,
}

/// One chunk's header and constant pools.
#[derive(Default)]
pub struct Chunk {
    /// Its number in the file, from 0.
    pub index: usize,
    /// When the chunk started, in nanoseconds since the Unix epoch.
    pub start_nanos: u64,
    /// When it started on the events' clock.
    pub start_ticks: u64,
    /// The events' clock rate.
    pub ticks_per_second: u64,
    /// How long it covers, in nanoseconds.
    pub duration_nanos: u64,
    strings: HashMap<u64, JString>,
    symbols: HashMap<u64, JString>,
    packages: HashMap<u64, u64>,
    /// Name symbol per class key.
    classes: HashMap<u64, u64>,
    /// (class, name symbol, descriptor symbol) per method key.
    methods: HashMap<u64, (u64, u64, u64)>,
    threads: HashMap<u64, Thread>,
    stacks: HashMap<u64, Stack>,
    frame_types: HashMap<u64, JString>,
    states: HashMap<u64, JString>,
}

impl Chunk {
    /// A string value, following a reference into the string pool.
    pub fn text(&self, s: &JString) -> Option<String> {
        match s {
            JString::Null => None,
            JString::Text(t) => Some(t.clone()),
            JString::Pool(k) => match self.strings.get(k)? {
                JString::Text(t) => Some(t.clone()),
                _ => None,
            },
        }
    }

    fn symbol(&self, key: u64) -> Option<String> {
        self.text(self.symbols.get(&key)?)
    }

    /// A thread of the `java.lang.Thread` pool by key.
    pub fn thread(&self, key: u64) -> Option<&Thread> {
        self.threads.get(&key)
    }

    /// A thread's name: its Java name, else its OS name.
    pub fn thread_name(&self, t: &Thread) -> Option<String> {
        t.java_name
            .as_ref()
            .and_then(|n| self.text(n))
            .or_else(|| t.os_name.as_ref().and_then(|n| self.text(n)))
    }

    /// A stack trace by key.
    pub fn stack(&self, key: u64) -> Option<&Stack> {
        self.stacks.get(&key)
    }

    /// A class's name as Java writes it: `java.lang.String`, `byte[]`,
    /// `java.lang.String[][]` (the file has `java/lang/String`, `[B`, …).
    pub fn class_name(&self, key: u64) -> Option<String> {
        Some(java_type_name(&self.symbol(*self.classes.get(&key)?)?))
    }

    /// A method by key, its names resolved through the symbol and class
    /// pools (empty where a pool lacks one).
    pub fn method(&self, key: u64) -> Option<Method> {
        let &(class, name, descriptor) = self.methods.get(&key)?;
        Some(Method {
            class: self.class_name(class).unwrap_or_default(),
            name: self.symbol(name).unwrap_or_default(),
            descriptor: self.symbol(descriptor).unwrap_or_default(),
        })
    }

    /// A frame type's name (`Interpreted`, `JIT compiled`, `Inlined`,
    /// `Native`, profrj's `Java`).
    pub fn frame_type(&self, key: u64) -> Option<String> {
        self.text(self.frame_types.get(&key)?)
    }

    /// A thread state's name (`STATE_RUNNABLE`).
    pub fn state(&self, key: u64) -> Option<String> {
        self.text(self.states.get(&key)?)
    }

    /// Nanoseconds since the Unix epoch of a time in ticks.
    pub fn ticks_to_epoch_nanos(&self, ticks: u64) -> u64 {
        let since = ticks.saturating_sub(self.start_ticks);
        self.start_nanos
            .saturating_add(scale(since, self.ticks_per_second))
    }
}

/// `ticks` at `per_second` as nanoseconds.
fn scale(ticks: u64, per_second: u64) -> u64 {
    if per_second == 0 || per_second == 1_000_000_000 {
        return ticks;
    }
    (ticks as u128 * 1_000_000_000 / per_second as u128).min(u64::MAX as u128) as u64
}

/// What a whole file held.
#[derive(Default, Debug, Clone, Copy)]
pub struct Summary {
    /// Chunks read.
    pub chunks: usize,
    /// Events of every type, known or not.
    pub events: u64,
    /// Events profrj knows and handed on.
    pub known: u64,
}

/// A value as the metadata describes it.
#[derive(Clone, Debug)]
enum Value {
    Int(i64),
    Float,
    Str(JString),
    /// A constant pool key.
    Ref(u64),
    Obj(Vec<Value>),
    Arr(Vec<Value>),
}

impl Value {
    fn int(&self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(*v),
            Value::Ref(k) => Some(*k as i64),
            _ => None,
        }
    }
    fn key(&self) -> u64 {
        match self {
            Value::Ref(k) => *k,
            Value::Int(v) => *v as u64,
            _ => 0,
        }
    }
}

/// Reads every chunk of `input`, handing each known event to `sink`.
pub fn read<R: Read + Seek>(
    input: &mut R,
    mut sink: impl FnMut(&Chunk, &Record) -> std::result::Result<(), String>,
) -> Result<Summary> {
    let len = input.seek(SeekFrom::End(0)).map_err(io(0))?;
    let mut at = 0u64;
    let mut summary = Summary::default();
    while at < len {
        let mut chunk = Chunk {
            index: summary.chunks,
            ..Default::default()
        };
        let end = read_chunk(input, at, len, &mut chunk, &mut summary, &mut sink)?;
        summary.chunks += 1;
        at = end;
    }
    if summary.chunks == 0 {
        return fail(Error::malformed, 0, "an empty file, not a JFR recording");
    }
    Ok(summary)
}

/// An I/O error of a read that started at `offset`.
fn io(offset: u64) -> impl Fn(std::io::Error) -> Error {
    move |source| Error::Io { offset, source }
}

/// An error of `kind` at `offset`.
fn fail<T>(kind: ErrorKind, offset: u64, message: impl Into<String>) -> Result<T> {
    Err(kind(offset, message.into()))
}

/// The header of the chunk at `at`, its pools into `chunk`, then its
/// events; returns where the next chunk starts.
fn read_chunk<R: Read + Seek>(
    input: &mut R,
    at: u64,
    len: u64,
    chunk: &mut Chunk,
    summary: &mut Summary,
    sink: &mut impl FnMut(&Chunk, &Record) -> std::result::Result<(), String>,
) -> Result<u64> {
    if len - at < HEADER_SIZE {
        return fail(
            Error::truncated,
            at,
            "a chunk header cut short: the file ends inside it",
        );
    }
    let mut h = [0u8; HEADER_SIZE as usize];
    input.seek(SeekFrom::Start(at)).map_err(io(at))?;
    input.read_exact(&mut h).map_err(io(at))?;
    if &h[..4] != MAGIC {
        return fail(Error::malformed, at, "no FLR magic: not a JFR chunk");
    }
    let major = u16::from_be_bytes([h[4], h[5]]);
    let minor = u16::from_be_bytes([h[6], h[7]]);
    if major != 2 {
        return fail(
            Error::unsupported,
            at + 4,
            format!(
                "JFR format {major}.{minor}: only 2.x (JDK 11 and later, async-profiler) is read"
            ),
        );
    }
    let field = |i: usize| u64::from_be_bytes(h[8 + 8 * i..16 + 8 * i].try_into().expect("8"));
    let (size, cp, meta) = (field(0), field(1), field(2));
    chunk.start_nanos = field(3);
    chunk.duration_nanos = field(4);
    chunk.start_ticks = field(5);
    chunk.ticks_per_second = field(6);
    if meta == 0 || h[64] != 0 {
        return fail(
            Error::unsupported,
            at,
            "an unfinished chunk (its recording was still being written, or was cut by a crash)",
        );
    }
    if size < HEADER_SIZE || size > len - at {
        return fail(
            Error::truncated,
            at + 8,
            format!(
                "the chunk claims {size} bytes, the file has {} from here: truncated",
                len - at
            ),
        );
    }
    for (what, off) in [("metadata", meta), ("constant pool", cp)] {
        if off < HEADER_SIZE || off >= size {
            return fail(
                Error::malformed,
                at + 16,
                format!("{what} offset {off} outside the chunk's {size} bytes"),
            );
        }
    }
    let end = at + size;
    let types = read_metadata(input, at + meta, end)?;
    let layout = FrameLayout::of(&types);
    read_pools(input, (at, at + cp, end), &types, layout, chunk)?;
    read_events(input, at + HEADER_SIZE, end, &types, chunk, summary, sink)?;
    Ok(end)
}

/// Reads the special event at `at` (size, type) into memory: its bytes
/// after the type id, and its file offset.
fn read_special<R: Read + Seek>(
    input: &mut R,
    at: u64,
    end: u64,
    want: u64,
) -> Result<(Vec<u8>, u64)> {
    input.seek(SeekFrom::Start(at)).map_err(io(at))?;
    let mut head = [0u8; 18];
    let n = (end - at).min(18) as usize;
    input.read_exact(&mut head[..n]).map_err(io(at))?;
    let mut c = Cursor::at(&head[..n], at);
    let size = c.varint()?;
    let ty = c.varint()?;
    if ty != want {
        return fail(
            Error::malformed,
            at,
            format!("expected an event of type {want} here, found type {ty}"),
        );
    }
    if size > end - at || (size as usize) < c.position() {
        return fail(
            Error::malformed,
            at,
            format!("an event of {size} bytes does not fit its chunk"),
        );
    }
    if size > MAX_SPECIAL_EVENT {
        return fail(
            Error::over_limit,
            at,
            format!("a metadata or checkpoint event of {size} bytes"),
        );
    }
    let body_at = at + c.position() as u64;
    let mut body = vec![0u8; size as usize - c.position()];
    input.seek(SeekFrom::Start(body_at)).map_err(io(body_at))?;
    input.read_exact(&mut body).map_err(io(body_at))?;
    Ok((body, body_at))
}

fn read_metadata<R: Read + Seek>(input: &mut R, at: u64, end: u64) -> Result<Types> {
    let (body, body_at) = read_special(input, at, end, METADATA_TYPE)?;
    let mut c = Cursor::at(&body, body_at);
    let root = metadata::read_root(&mut c)?;
    metadata::types(&root, at)
}

/// Follows the checkpoint chain back from the header's last one.
fn read_pools<R: Read + Seek>(
    input: &mut R,
    (base, mut at, end): (u64, u64, u64),
    types: &Types,
    layout: FrameLayout,
    chunk: &mut Chunk,
) -> Result<()> {
    let mut seen = HashSet::new();
    loop {
        if !seen.insert(at) {
            return fail(Error::malformed, at, "the checkpoint chain loops");
        }
        let (body, body_at) = read_special(input, at, end, CHECKPOINT_TYPE)?;
        let mut c = Cursor::at(&body, body_at);
        c.varint()?; // start
        c.varint()?; // duration
        let delta = c.varint()? as i64;
        c.u8()?; // type flags
        let pools = c.count()?;
        for _ in 0..pools {
            read_pool(&mut c, types, layout, chunk)?;
        }
        if delta == 0 {
            return Ok(());
        }
        let next = at as i64 + delta;
        if next < (base + HEADER_SIZE) as i64 || next as u64 >= end {
            return fail(
                Error::malformed,
                at,
                format!("a checkpoint delta of {delta} leaves the chunk"),
            );
        }
        at = next as u64;
    }
}

fn read_pool(c: &mut Cursor, types: &Types, layout: FrameLayout, chunk: &mut Chunk) -> Result<()> {
    let ty = c.varint()?;
    let Some(t) = types.get(&ty) else {
        return Err(c.error(
            Error::malformed,
            format!("a constant pool of undeclared type {ty}"),
        ));
    };
    let count = c.count()?;
    for _ in 0..count {
        let key = c.varint()?;
        let before = c.position();
        let v = value(c, types, ty, false, 0)?;
        if c.position() == before {
            return Err(c.error(Error::malformed, "a constant of no size"));
        }
        keep(chunk, t, layout, key, v);
    }
    Ok(())
}

/// Keeps a constant profrj uses, as a compact record; others are dropped.
fn keep(chunk: &mut Chunk, t: &Type, layout: FrameLayout, key: u64, v: Value) {
    let f = |name: &str| -> Option<&Value> {
        match &v {
            Value::Obj(fields) => fields.get(t.field(name)?),
            // A simple type's value is its one field's.
            other => Some(other),
        }
    };
    let string = |v: Option<&Value>| match v {
        Some(Value::Str(s)) => Some(s.clone()),
        _ => None,
    };
    let key_of = |v: Option<&Value>| v.map_or(0, Value::key);
    match t.name.as_str() {
        "java.lang.String" => {
            if let Value::Str(s) = v {
                chunk.strings.insert(key, s);
            }
        }
        "jdk.types.Symbol" => {
            if let Some(s) = string(f("string")) {
                chunk.symbols.insert(key, s);
            }
        }
        "jdk.types.Package" => {
            chunk.packages.insert(key, key_of(f("name")));
        }
        "java.lang.Class" => {
            chunk.classes.insert(key, key_of(f("name")));
        }
        "jdk.types.Method" => {
            let m = (
                key_of(f("type")),
                key_of(f("name")),
                key_of(f("descriptor")),
            );
            chunk.methods.insert(key, m);
        }
        "java.lang.Thread" => {
            let t = Thread {
                java_name: string(f("javaName")),
                os_name: string(f("osName")),
                java_thread_id: f("javaThreadId").and_then(Value::int).unwrap_or(0) as u64,
                os_thread_id: f("osThreadId").and_then(Value::int).unwrap_or(0) as u64,
            };
            chunk.threads.insert(key, t);
        }
        "jdk.types.FrameType" => {
            if let Some(s) = string(f("description")) {
                chunk.frame_types.insert(key, s);
            }
        }
        "jdk.types.ThreadState" => {
            if let Some(s) = string(f("name")) {
                chunk.states.insert(key, s);
            }
        }
        "jdk.types.StackTrace" => {
            let truncated = f("truncated").and_then(Value::int).unwrap_or(0) != 0;
            let frames = match f("frames") {
                Some(Value::Arr(a)) => a.iter().filter_map(|fv| layout.frame(fv)).collect(),
                _ => Vec::new(),
            };
            chunk.stacks.insert(key, Stack { truncated, frames });
        }
        _ => {}
    }
}

/// Where a `jdk.types.StackFrame`'s fields are, in the chunk being read
/// (found by name: method, lineNumber, bytecodeIndex, type).
#[derive(Default, Clone, Copy)]
struct FrameLayout {
    method: Option<usize>,
    line: Option<usize>,
    bci: Option<usize>,
    kind: Option<usize>,
}

impl FrameLayout {
    fn of(types: &Types) -> Self {
        types
            .values()
            .find(|t| t.name == "jdk.types.StackFrame")
            .map(|t| FrameLayout {
                method: t.field("method"),
                line: t.field("lineNumber"),
                bci: t.field("bytecodeIndex"),
                kind: t.field("type"),
            })
            .unwrap_or_default()
    }

    fn frame(&self, v: &Value) -> Option<Frame> {
        let Value::Obj(fields) = v else {
            return None;
        };
        let get = |i: Option<usize>| i.and_then(|i| fields.get(i));
        Some(Frame {
            method: get(self.method).map_or(0, Value::key),
            line: get(self.line).and_then(Value::int).unwrap_or(-1) as i32,
            bci: get(self.bci).and_then(Value::int).unwrap_or(-1) as i32,
            kind: get(self.kind).map_or(0, Value::key),
        })
    }
}

/// A value of type `ty` (`cpool`: a key), as the metadata describes it.
fn value(c: &mut Cursor, types: &Types, ty: u64, cpool: bool, depth: usize) -> Result<Value> {
    if cpool {
        return Ok(Value::Ref(c.varint()?));
    }
    let Some(t) = types.get(&ty) else {
        return Err(c.error(Error::malformed, format!("a value of undeclared type {ty}")));
    };
    Ok(match t.name.as_str() {
        "boolean" | "byte" => Value::Int(c.u8()? as i8 as i64),
        "char" | "short" | "int" | "long" => Value::Int(c.varint()? as i64),
        "float" => {
            c.f32()?;
            Value::Float
        }
        "double" => {
            c.f64()?;
            Value::Float
        }
        "java.lang.String" => Value::Str(c.jstring()?),
        _ => {
            if depth >= MAX_VALUE_NESTING {
                return Err(c.error(Error::over_limit, "values nested too deep"));
            }
            let mut fields = Vec::with_capacity(t.fields.len());
            for f in &t.fields {
                fields.push(if f.array {
                    let n = c.count()?;
                    let mut items = Vec::new();
                    for _ in 0..n {
                        let before = c.position();
                        items.push(value(c, types, f.ty, f.cpool, depth + 1)?);
                        if c.position() == before {
                            return Err(c.error(Error::malformed, "an array element of no size"));
                        }
                    }
                    Value::Arr(items)
                } else {
                    value(c, types, f.ty, f.cpool, depth + 1)?
                });
            }
            // A simple type (one field) is its field's value.
            if fields.len() == 1 && !matches!(fields[0], Value::Arr(_)) {
                fields.pop().expect("one field")
            } else {
                Value::Obj(fields)
            }
        }
    })
}

/// How to read one known event type: its kind and where its fields are.
struct Layout {
    what: What,
    start: Option<usize>,
    duration: Option<usize>,
    duration_unit: Unit,
    thread: Option<usize>,
    stack: Option<usize>,
    state: Option<usize>,
    class: Option<usize>,
    /// `weight`, `samples` or `tlabSize`.
    amount: Option<usize>,
    size: Option<usize>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum What {
    Execution,
    WallClock,
    /// `jdk.NativeMethodSample`: a thread in native code, not running Java.
    Native,
    AllocationSample,
    AllocationTlab,
    Lock,
    Park,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Unit {
    Ticks,
    Nanos,
    Micros,
    Millis,
}

fn layouts(types: &Types) -> HashMap<u64, Layout> {
    let mut out = HashMap::new();
    for (&id, t) in types {
        let what = match t.name.as_str() {
            name::EXECUTION_SAMPLE => What::Execution,
            name::WALL_CLOCK_SAMPLE => What::WallClock,
            "jdk.NativeMethodSample" => What::Native,
            name::ALLOCATION_SAMPLE => What::AllocationSample,
            name::ALLOCATION_IN_NEW_TLAB | name::ALLOCATION_OUTSIDE_TLAB => What::AllocationTlab,
            name::MONITOR_ENTER => What::Lock,
            name::THREAD_PARK => What::Park,
            _ => continue,
        };
        let pick = |names: &[&str]| names.iter().find_map(|n| t.field(n));
        let duration = t.field("duration");
        let duration_unit = match duration.and_then(|i| t.fields[i].unit.as_deref()) {
            Some("NANOSECONDS") => Unit::Nanos,
            Some("MICROSECONDS") => Unit::Micros,
            Some("MILLISECONDS") => Unit::Millis,
            _ => Unit::Ticks,
        };
        let amount = match what {
            What::WallClock => pick(&["samples"]),
            What::AllocationSample => pick(&["weight"]),
            What::AllocationTlab => pick(&["tlabSize"]),
            _ => None,
        };
        out.insert(
            id,
            Layout {
                what,
                start: t.field("startTime"),
                duration,
                duration_unit,
                thread: pick(&["sampledThread", "eventThread"]),
                stack: t.field("stackTrace"),
                state: t.field("state"),
                class: pick(&["objectClass", "monitorClass", "parkedClass"]),
                amount,
                size: pick(&["allocationSize"]),
            },
        );
    }
    out
}

fn read_events<R: Read + Seek>(
    input: &mut R,
    start: u64,
    end: u64,
    types: &Types,
    chunk: &Chunk,
    summary: &mut Summary,
    sink: &mut impl FnMut(&Chunk, &Record) -> std::result::Result<(), String>,
) -> Result<()> {
    let layouts = layouts(types);
    input.seek(SeekFrom::Start(start)).map_err(io(start))?;
    let mut r = std::io::BufReader::with_capacity(1 << 16, input);
    let mut at = start;
    let mut body = Vec::new();
    while at < end {
        // Size and type: at most 18 bytes, never past the chunk.
        let mut head = [0u8; 18];
        let n = (end - at).min(18) as usize;
        r.seek(SeekFrom::Start(at)).map_err(io(at))?;
        r.read_exact(&mut head[..n]).map_err(io(at))?;
        let mut c = Cursor::at(&head[..n], at);
        let size = c.varint()?;
        let ty = c.varint()?;
        if size == 0 || (size as usize) < c.position() || size > end - at {
            return fail(
                Error::malformed,
                at,
                format!("an event of {size} bytes does not fit its chunk"),
            );
        }
        summary.events += 1;
        let next = at + size;
        if let Some(l) = layouts.get(&ty) {
            if size > MAX_EVENT {
                return fail(Error::over_limit, at, format!("an event of {size} bytes"));
            }
            let body_at = at + c.position() as u64;
            body.resize((size - c.position() as u64) as usize, 0);
            r.seek(SeekFrom::Start(body_at)).map_err(io(body_at))?;
            r.read_exact(&mut body).map_err(io(body_at))?;
            let mut c = Cursor::at(&body, body_at);
            let t = &types[&ty];
            let mut fields = Vec::with_capacity(t.fields.len());
            for f in &t.fields {
                fields.push(if f.array {
                    let n = c.count()?;
                    for _ in 0..n {
                        value(&mut c, types, f.ty, f.cpool, 1)?;
                    }
                    Value::Arr(Vec::new())
                } else {
                    value(&mut c, types, f.ty, f.cpool, 0)?
                });
            }
            if let Some(rec) = record(l, &fields, chunk) {
                summary.known += 1;
                sink(chunk, &rec).map_err(|message| Error::Refused {
                    offset: at,
                    message,
                })?;
            }
        }
        at = next;
    }
    Ok(())
}

/// The record of an event, from its fields as its layout places them.
fn record(l: &Layout, fields: &[Value], chunk: &Chunk) -> Option<Record> {
    let get = |i: Option<usize>| i.and_then(|i| fields.get(i));
    let num = |i: Option<usize>| get(i).and_then(Value::int).map(|v| v.max(0) as u64);
    let key = |i: Option<usize>| get(i).map_or(0, Value::key);
    let duration_ns = || {
        let d = num(l.duration).unwrap_or(0);
        match l.duration_unit {
            Unit::Ticks => scale(d, chunk.ticks_per_second),
            Unit::Nanos => d,
            Unit::Micros => d.saturating_mul(1_000),
            Unit::Millis => d.saturating_mul(1_000_000),
        }
    };
    // The sampled thread's state, if the event has one.
    let state = || l.state.and_then(|_| chunk.state(key(l.state)));
    let runnable = |s: &str| s == crate::schema::thread_state::RUNNABLE_NAME;
    let kind = match l.what {
        // A CPU sample unless its state says the thread was off the CPU
        // (async-profiler's wall samples without batching; its CPU samples
        // say STATE_DEFAULT).
        What::Execution => Kind::Sample {
            count: 1,
            running: state().is_none_or(|s| runnable(&s) || s == "STATE_DEFAULT"),
        },
        // Running only when found RUNNABLE (async-profiler's signalled samples).
        What::WallClock => Kind::Sample {
            count: num(l.amount).unwrap_or(1),
            running: state().is_some_and(|s| runnable(&s)),
        },
        What::Native => Kind::Sample {
            count: 1,
            running: false,
        },
        What::AllocationSample => Kind::Allocation {
            weight: num(l.amount).unwrap_or(0),
            size: num(l.size).filter(|&s| s > 0),
        },
        What::AllocationTlab => {
            let size = num(l.size).unwrap_or(0);
            Kind::Allocation {
                weight: num(l.amount).unwrap_or(size),
                size: Some(size).filter(|&s| s > 0),
            }
        }
        What::Lock | What::Park => Kind::Lock {
            duration_ns: duration_ns(),
            park: l.what == What::Park,
        },
    };
    Some(Record {
        kind,
        ticks: num(l.start).unwrap_or(0),
        thread: key(l.thread),
        stack: key(l.stack),
        class: key(l.class),
    })
}

#[cfg(test)]
mod tests;
