//! pprof's profile format (`tests/data/profile.proto`), gzipped. One sample
//! per call-tree node with a non-zero value, its stack leaf first, labelled
//! with its thread; a node's `line` (the agent's `lines`) is its location's
//! `Line.line`. Value types, named for what they count (each section's
//! metrics' [`pprof`](crate::snapshot::MetricDesc::pprof) names):
//! - sampler: `samples/count` (every sample, any thread state: `elapsed`) and
//!   `runnable_samples/count` (samples with the thread RUNNABLE: `hits`);
//! - profile: `calls/count` (`count`), `wall/microseconds` (`methodElapsed`)
//!   and `cpu/microseconds` (`method`), each without callees, as pprof wants;
//! - alloc: `alloc_objects/count` and `alloc_space/bytes` as Go's heap
//!   profiles, `inuse_objects/count` and `inuse_space/bytes` when `live`.
//!
//! `--metric` picks the default sample type (cpu: runnable_samples / cpu).
//! A stack deeper than `MAX_FRAMES` keeps its top frames below a
//! `[truncated]` function, and samples whose stacks then coincide are
//! merged, so the output stays bounded on a pathologically deep chain.
//! Names are escaped as every writer does (`profrj_format::escape`).
//!
//! Streamed in a fixed budget: a `Profile`'s fields may come in any order
//! and its repeated fields be spread out, so each sample is written to the
//! gzip stream as the walk of its thread's tree (read back from the scratch
//! file) reaches its node, then the locations, functions and string table.
//! Threads are not merged: a stack two threads have is two samples, each
//! labelled with its thread. What is held: the string table (distinct
//! names, signatures and thread names), one function per distinct name and
//! signature, one location per function and line, the walk's path, and up
//! to `DEEP_HELD` locations of merged samples of stacks deeper than
//! `MAX_FRAMES` (written when that many are held: samples may repeat a
//! stack) — bounded by the distinct frames, never by the stacks.

use super::stacks::{Key, TopFrames, MAX_FRAMES, TRUNCATED};
use crate::error::CliError;
use crate::snapshot::{CallSection, CallThread, Metric, Names, ValueType, NONE, NO_LINE};
use flate2::write::GzEncoder;
use flate2::Compression;
use profrj_format::names;
use profrj_otlp::wire::{varint, Msg};
use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;

/// Field numbers of profile.proto.
mod field {
    pub const SAMPLE_TYPE: u64 = 1;
    pub const SAMPLE: u64 = 2;
    pub const LOCATION: u64 = 4;
    pub const FUNCTION: u64 = 5;
    pub const STRING_TABLE: u64 = 6;
    pub const COMMENT: u64 = 13;
    pub const DEFAULT_SAMPLE_TYPE: u64 = 14;
    // ValueType
    pub const VT_TYPE: u64 = 1;
    pub const VT_UNIT: u64 = 2;
    // Sample
    pub const S_LOCATION_ID: u64 = 1;
    pub const S_VALUE: u64 = 2;
    pub const S_LABEL: u64 = 3;
    // Label
    pub const L_KEY: u64 = 1;
    pub const L_STR: u64 = 2;
    // Location
    pub const LOC_ID: u64 = 1;
    pub const LOC_LINE: u64 = 4;
    // Line
    pub const LINE_FUNCTION_ID: u64 = 1;
    pub const LINE_LINE: u64 = 2;
    // Function
    pub const F_ID: u64 = 1;
    pub const F_NAME: u64 = 2;
    pub const F_SYSTEM_NAME: u64 = 3;
}

#[derive(Default)]
struct Strings {
    table: Vec<String>,
    index: HashMap<String, u64>,
}

impl Strings {
    fn new() -> Strings {
        let mut s = Strings::default();
        s.id(""); // string_table[0] must be ""
        s
    }

    fn id(&mut self, s: &str) -> u64 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.table.len() as u64;
        self.table.push(s.to_owned());
        self.index.insert(s.to_owned(), i);
        i
    }
}

/// The section's metrics that pprof carries, with their value type.
fn sample_types(sec: &CallSection) -> Vec<(Metric, ValueType)> {
    Metric::all(sec.kind)
        .filter_map(|m| {
            let ty = if sec.live {
                m.desc.pprof_live
            } else {
                m.desc.pprof
            };
            Some((m, ty?))
        })
        .collect()
}

/// A profile ready to be written: the checks done.
pub struct Pprof<'a> {
    names: &'a Names,
    threads: &'a [&'a CallThread],
    types: Vec<(Metric, ValueType)>,
    default: &'static str,
    comment: String,
}

impl<'a> Pprof<'a> {
    /// Fails when the section has no pprof value for `metric`.
    pub fn new(
        names: &'a Names,
        sec: &'a CallSection,
        threads: &'a [&'a CallThread],
        metric: Metric,
        source: &Path,
    ) -> Result<Pprof<'a>, CliError> {
        let types = sample_types(sec);
        let default = types
            .iter()
            .find(|(m, _)| *m == metric)
            .map(|(_, (ty, _))| *ty)
            .ok_or_else(|| {
                let all: Vec<&str> = types.iter().map(|(m, _)| m.name()).collect();
                CliError::Usage(format!(
                    "pprof has no value for --metric {}: pick one of {}",
                    metric.name(),
                    all.join(", ")
                ))
            })?;
        let comment = format!(
            "profrj convert of {} <{}>",
            names::escape(&source.display().to_string()),
            sec.kind.tag()
        );
        Ok(Pprof {
            names,
            threads,
            types,
            default,
            comment,
        })
    }

    /// Writes the gzipped profile to `out`.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut gz = GzEncoder::new(out, Compression::default());
        let mut strings = Strings::new();
        let mut head = Msg::default();
        for (_, (ty, unit)) in &self.types {
            let mut vt = Msg::default();
            vt.int(field::VT_TYPE, strings.id(ty));
            vt.int(field::VT_UNIT, strings.id(unit));
            head.msg(field::SAMPLE_TYPE, &vt);
        }
        gz.write_all(&head.buf)?;
        let mut functions = Functions::default();
        let mut locations = Locations::default();
        let thread_key = strings.id("thread");
        // Samples of stacks cut to MAX_FRAMES, by (thread, top frames): the
        // stack (leaf first, [truncated] last) and the summed values.
        let mut deep: HashMap<(u64, Key), usize> = HashMap::new();
        let mut deep_samples: Vec<DeepSample> = Vec::new();
        let mut deep_held = 0usize;
        let mut sample = Msg::default();
        let mut leaf_first: Vec<u64> = Vec::new();
        let mut vals: Vec<u64> = Vec::new();
        for t in self.threads {
            let thread_name = strings.id(&names::escape(&t.name));
            let mut stack: Vec<u64> = Vec::new();
            let mut top = TopFrames::new(MAX_FRAMES);
            for n in t.tree.walk() {
                let function = functions.id(&mut strings, self.names, n.name, n.signature);
                let id = locations.id(function, n.line);
                let d = n.depth as usize;
                stack.truncate(d - 1);
                stack.push(id);
                let key = top.push(d, id);
                vals.clear();
                vals.extend(self.types.iter().map(|(m, _)| m.own(&n.v)));
                if vals.iter().all(|&v| v == 0) {
                    continue;
                }
                leaf_first.clear();
                leaf_first.extend(stack.iter().rev().take(MAX_FRAMES));
                if d <= MAX_FRAMES {
                    sample.buf.clear();
                    encode_sample(&mut sample, &leaf_first, &vals, thread_key, thread_name);
                    write_field(&mut gz, field::SAMPLE, &sample.buf)?;
                    continue;
                }
                match deep.entry((thread_name, key)) {
                    std::collections::hash_map::Entry::Occupied(e) => {
                        let sum = &mut deep_samples[*e.get()].2;
                        for (a, b) in sum.iter_mut().zip(&vals) {
                            *a = a.saturating_add(*b);
                        }
                    }
                    std::collections::hash_map::Entry::Vacant(e) => {
                        let truncated = functions.truncated(&mut strings);
                        leaf_first.push(locations.id(truncated, NO_LINE));
                        deep_held += leaf_first.len();
                        deep_samples.push((thread_name, leaf_first.clone(), vals.clone()));
                        e.insert(deep_samples.len() - 1);
                    }
                }
                // Samples may repeat a stack (readers sum them): what is
                // merged is written once it holds DEEP_HELD locations.
                if deep_held >= DEEP_HELD {
                    write_deep(&mut gz, &mut sample, &mut deep_samples, thread_key)?;
                    deep.clear();
                    deep_held = 0;
                }
            }
        }
        write_deep(&mut gz, &mut sample, &mut deep_samples, thread_key)?;
        let mut tail = Msg::default();
        // Locations, by id (from 1): a function and its line, if any.
        for (i, &(function, line_number)) in locations.list.iter().enumerate() {
            let mut line = Msg::default();
            line.int(field::LINE_FUNCTION_ID, function);
            if line_number != NO_LINE {
                line.int(field::LINE_LINE, u64::from(line_number));
            }
            let mut loc = Msg::default();
            loc.int(field::LOC_ID, i as u64 + 1);
            loc.msg(field::LOC_LINE, &line);
            tail.msg(field::LOCATION, &loc);
        }
        gz.write_all(&tail.buf)?;
        gz.write_all(&functions.msgs.buf)?;
        let comment = strings.id(&self.comment);
        let default = strings.id(self.default);
        let mut tail = Msg::default();
        for s in &strings.table {
            tail.bytes(field::STRING_TABLE, s.as_bytes());
            gz.write_all(&tail.buf)?;
            tail.buf.clear();
        }
        tail.int(field::COMMENT, comment);
        tail.int(field::DEFAULT_SAMPLE_TYPE, default);
        gz.write_all(&tail.buf)?;
        gz.finish()?.flush()
    }
}

/// One location per function and line (ids from 1, in the order met).
#[derive(Default)]
struct Locations {
    ids: HashMap<(u64, u32), u64>,
    list: Vec<(u64, u32)>,
}

impl Locations {
    fn id(&mut self, function: u64, line: u32) -> u64 {
        *self.ids.entry((function, line)).or_insert_with(|| {
            self.list.push((function, line));
            self.list.len() as u64
        })
    }
}

/// One function per distinct name and signature, their
/// `Function` messages written as they are met.
#[derive(Default)]
struct Functions {
    ids: HashMap<(u32, u32), u64>,
    count: u64,
    msgs: Msg,
    truncated: Option<u64>,
}

impl Functions {
    fn id(&mut self, strings: &mut Strings, names: &Names, name: u32, signature: u32) -> u64 {
        if let Some(&id) = self.ids.get(&(name, signature)) {
            return id;
        }
        let text = names::escape(names.get(name));
        let system = if signature == NONE {
            text.clone().into_owned()
        } else {
            format!("{text} {}", names::escape(names.get(signature)))
        };
        let id = self.add(strings, &text, &system);
        self.ids.insert((name, signature), id);
        id
    }

    /// The function that stands for the frames cut off a deep stack.
    fn truncated(&mut self, strings: &mut Strings) -> u64 {
        if let Some(id) = self.truncated {
            return id;
        }
        let id = self.add(strings, TRUNCATED, TRUNCATED);
        self.truncated = Some(id);
        id
    }

    fn add(&mut self, strings: &mut Strings, name: &str, system: &str) -> u64 {
        self.count += 1;
        let mut f = Msg::default();
        f.int(field::F_ID, self.count);
        f.int(field::F_NAME, strings.id(name));
        f.int(field::F_SYSTEM_NAME, strings.id(system));
        self.msgs.msg(field::FUNCTION, &f);
        self.count
    }
}

/// A merged sample of stacks cut to MAX_FRAMES: its thread, its locations
/// (leaf first, `[truncated]` last) and its summed values.
type DeepSample = (u64, Vec<u64>, Vec<u64>);

/// The most locations of merged deep samples held before they are written.
const DEEP_HELD: usize = super::collapsed::DEEP_HELD;

fn write_deep(
    gz: &mut impl Write,
    sample: &mut Msg,
    deep: &mut Vec<DeepSample>,
    thread_key: u64,
) -> io::Result<()> {
    for (thread_name, leaf_first, vals) in deep.drain(..) {
        sample.buf.clear();
        encode_sample(sample, &leaf_first, &vals, thread_key, thread_name);
        write_field(gz, field::SAMPLE, &sample.buf)?;
    }
    Ok(())
}

fn encode_sample(s: &mut Msg, leaf_first: &[u64], vals: &[u64], key: u64, thread: u64) {
    s.packed(field::S_LOCATION_ID, leaf_first);
    s.packed(field::S_VALUE, vals);
    let mut label = Msg::default();
    label.int(field::L_KEY, key);
    label.int(field::L_STR, thread);
    s.msg(field::S_LABEL, &label);
}

/// A length-delimited field of the profile, written straight to `out`.
fn write_field(out: &mut impl Write, field: u64, body: &[u8]) -> io::Result<()> {
    let mut head = Vec::with_capacity(12);
    varint(&mut head, field << 3 | 2);
    varint(&mut head, body.len() as u64);
    out.write_all(&head)?;
    out.write_all(body)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::test_alloc::{alloc, live, metric};
    use crate::snapshot::CallKind;

    /// Go's heap profile names: alloc_* for all allocations, inuse_* live.
    #[test]
    fn alloc_value_types() {
        let names = |s: &crate::snapshot::Snapshot| {
            let sec = s.calls(CallKind::Alloc).unwrap();
            let t: Vec<ValueType> = sample_types(sec).into_iter().map(|(_, t)| t).collect();
            t
        };
        assert_eq!(
            names(&alloc()),
            [("alloc_objects", "count"), ("alloc_space", "bytes")]
        );
        assert_eq!(
            names(&live()),
            [("inuse_objects", "count"), ("inuse_space", "bytes")]
        );
        let s = alloc();
        let sec = s.calls(CallKind::Alloc).unwrap();
        let threads: Vec<_> = sec.threads.iter().collect();
        let e = Pprof::new(&s.names, sec, &threads, metric("samples"), Path::new("x"))
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("no value for --metric samples"), "{e}");
        let p = Pprof::new(&s.names, sec, &threads, metric("bytes"), Path::new("x")).unwrap();
        p.write(&mut Vec::new()).unwrap();
    }
}
