//! A chunk's events, walked in order: each event's size and type read
//! first, the events profrj knows (samples, allocations, lock waits) read
//! as their metadata lays them out and handed to the caller as a
//! [`Record`], the others skipped unread. Apart from the pools, which are
//! read before and which these records refer to by key.

use super::chunk::{scale, Chunk};
use super::value::{value, Value};
use super::{fail, io, Summary, MAX_EVENT};
use crate::decode::{Cursor, Error, Result};
use crate::metadata::Types;
use crate::schema::name;
use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom};

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

pub(super) fn read_events<R: Read + Seek>(
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
