//! The constant pools of a chunk: the checkpoint chain followed back from
//! the header's last checkpoint (a loop is refused), each pool's constants
//! read and the ones profrj uses kept in the [`Chunk`] as compact records.
//! Apart from the events: the pools are read first, whole, and the events
//! only refer to them.

use super::chunk::{Chunk, Frame, Stack, Thread};
use super::value::{value, Value};
use super::{fail, read_special};
use crate::decode::{Cursor, Error, Result};
use crate::metadata::{Type, Types, CHECKPOINT_TYPE};
use crate::writer::HEADER_SIZE;
use std::collections::HashSet;
use std::io::{Read, Seek};

/// Follows the checkpoint chain back from the header's last one.
pub(super) fn read_pools<R: Read + Seek>(
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
pub(super) struct FrameLayout {
    method: Option<usize>,
    line: Option<usize>,
    bci: Option<usize>,
    kind: Option<usize>,
}

impl FrameLayout {
    pub(super) fn of(types: &Types) -> Self {
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
