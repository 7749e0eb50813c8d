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
//! A sampler node with `selfTypes` (how its frame ran in the samples with
//! it on top) is one sample per type, labelled `frame_type` with the type's
//! name (`c2`, `interpreted`, …), and one without the label for its samples
//! of no known type. `samples/count` splits exactly (`selfTypes` counts
//! those very samples); `runnable_samples/count`, of which the snapshot
//! does not say the types, is shared in the same proportions, rounded down,
//! the rest on the sample without a type, so every value still sums to the
//! node's.
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
use crate::snapshot::{
    type_slot, CallSection, CallThread, FrameCounts, Metric, Names, ValueType, NONE, NO_LINE,
};
use flate2::write::GzEncoder;
use flate2::Compression;
use profrj_format::frame_types::{FrameType, ALL};
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
    /// The index in a sample's values of the one `selfTypes` is weighted
    /// as (`elapsed`), when the section has types.
    typed_by: Option<usize>,
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
        let typed_by = types
            .iter()
            .position(|(m, _)| m.desc.own == profrj_format::sampler::node::ELAPSED)
            .filter(|_| sec.typed);
        Ok(Pprof {
            names,
            threads,
            types,
            typed_by,
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
        let mut type_label = Label::default();
        // Samples of stacks cut to MAX_FRAMES, by (thread, top frames,
        // type): the stack (leaf first, [truncated] last) and the summed
        // values.
        let mut deep: HashMap<(u64, Key, Option<FrameType>), usize> = HashMap::new();
        let mut deep_samples: Vec<DeepSample> = Vec::new();
        let mut deep_held = 0usize;
        let mut sample = Msg::default();
        let mut leaf_first: Vec<u64> = Vec::new();
        let mut vals: Vec<u64> = Vec::new();
        let mut parts: Vec<(Option<FrameType>, Vec<u64>)> = Vec::new();
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
                self.split(&vals, &n.types, &mut parts);
                if d <= MAX_FRAMES {
                    for (ty, vals) in &parts {
                        sample.buf.clear();
                        let labels = (thread_key, thread_name, type_label.of(&mut strings, *ty));
                        encode_sample(&mut sample, &leaf_first, vals, labels);
                        write_field(&mut gz, field::SAMPLE, &sample.buf)?;
                    }
                    continue;
                }
                let truncated = functions.truncated(&mut strings);
                leaf_first.push(locations.id(truncated, NO_LINE));
                for (ty, vals) in parts.drain(..) {
                    match deep.entry((thread_name, key, ty)) {
                        std::collections::hash_map::Entry::Occupied(e) => {
                            let sum = &mut deep_samples[*e.get()].3;
                            for (a, b) in sum.iter_mut().zip(&vals) {
                                *a = a.saturating_add(*b);
                            }
                        }
                        std::collections::hash_map::Entry::Vacant(e) => {
                            deep_held += leaf_first.len();
                            let label = type_label.of(&mut strings, ty);
                            deep_samples.push((thread_name, label, leaf_first.clone(), vals));
                            e.insert(deep_samples.len() - 1);
                        }
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

/// A merged sample of stacks cut to MAX_FRAMES: its thread, its type's
/// label, its locations (leaf first, `[truncated]` last) and its summed
/// values.
type DeepSample = (u64, Option<(u64, u64)>, Vec<u64>, Vec<u64>);

/// The label key naming a sample's leaf frame's type.
pub const FRAME_TYPE: &str = "frame_type";

/// The `frame_type` label's key and each type's name, as string ids,
/// added to the string table when first used (a profile without types has
/// none of them).
#[derive(Default)]
struct Label {
    key: Option<u64>,
    names: [Option<u64>; ALL.len()],
}

impl Label {
    /// The (key, value) of type `t`'s label.
    fn of(&mut self, strings: &mut Strings, t: Option<FrameType>) -> Option<(u64, u64)> {
        let t = t?;
        let key = *self.key.get_or_insert_with(|| strings.id(FRAME_TYPE));
        let name = &mut self.names[type_slot(t)];
        Some((key, *name.get_or_insert_with(|| strings.id(t.name()))))
    }
}

impl Pprof<'_> {
    /// A node's values as samples (`parts`): one per type of its
    /// `selfTypes` and one for the rest (none when nothing is left), each
    /// value shared as the samples of the type are among the node's
    /// `elapsed` (exact for `elapsed` itself, rounded down for the others).
    /// A node without types, or whose types add up to more than its
    /// `elapsed` (no agent writes that), is one sample of no type.
    fn split(
        &self,
        vals: &[u64],
        types: &FrameCounts,
        parts: &mut Vec<(Option<FrameType>, Vec<u64>)>,
    ) {
        parts.clear();
        let elapsed = self.typed_by.map_or(0, |i| vals[i]);
        let typed: u64 = types.own.iter().fold(0u64, |a, &c| a.saturating_add(c));
        if elapsed == 0 || typed == 0 || typed > elapsed {
            parts.push((None, vals.to_vec()));
            return;
        }
        let mut rest = vals.to_vec();
        for (t, &c) in ALL.iter().zip(&types.own).filter(|(_, &c)| c > 0) {
            let share: Vec<u64> = vals
                .iter()
                .map(|&v| (u128::from(v) * u128::from(c) / u128::from(elapsed)) as u64)
                .collect();
            for (r, s) in rest.iter_mut().zip(&share) {
                *r -= s;
            }
            parts.push((Some(*t), share));
        }
        if rest.iter().any(|&v| v > 0) {
            parts.push((None, rest));
        }
    }
}

/// The most locations of merged deep samples held before they are written.
const DEEP_HELD: usize = super::collapsed::DEEP_HELD;

fn write_deep(
    gz: &mut impl Write,
    sample: &mut Msg,
    deep: &mut Vec<DeepSample>,
    thread_key: u64,
) -> io::Result<()> {
    for (thread_name, label, leaf_first, vals) in deep.drain(..) {
        sample.buf.clear();
        encode_sample(sample, &leaf_first, &vals, (thread_key, thread_name, label));
        write_field(gz, field::SAMPLE, &sample.buf)?;
    }
    Ok(())
}

/// A sample's labels: the thread's (key, name) and the frame type's, if any.
type Labels = (u64, u64, Option<(u64, u64)>);

fn encode_sample(s: &mut Msg, leaf_first: &[u64], vals: &[u64], labels: Labels) {
    s.packed(field::S_LOCATION_ID, leaf_first);
    s.packed(field::S_VALUE, vals);
    let (key, thread, ty) = labels;
    for (key, value) in std::iter::once((key, thread)).chain(ty) {
        let mut label = Msg::default();
        label.int(field::L_KEY, key);
        label.int(field::L_STR, value);
        s.msg(field::S_LABEL, &label);
    }
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

    /// A leaf's samples split by its `selfTypes`: `samples` exactly, the
    /// runnable ones in proportion, rounded down, the rest without a type.
    #[test]
    fn self_types_split_samples() {
        let xml = r#"<doc><sampler><thread name="t">
          <profile name="a()" hits="1" elapsed="4" selfTypes="c2:3"/>
          <profile name="b()" hits="3" elapsed="3" selfTypes="inlined:1 c2:2"/>
          <profile name="c()" hits="2" elapsed="2"/>
          <profile name="d()" hits="1" elapsed="1" selfTypes="c2:5"/></thread></sampler></doc>"#;
        let s = crate::snapshot::parse_bytes(xml.as_bytes()).unwrap();
        let sec = s.calls(CallKind::Sampler).unwrap();
        let threads: Vec<_> = sec.threads.iter().collect();
        let m = Metric::of(CallKind::Sampler, None).unwrap();
        let p = Pprof::new(&s.names, sec, &threads, m, Path::new("x")).unwrap();
        let at = |name: &str| p.types.iter().position(|(_, (t, _))| *t == name).unwrap();
        let (all, runnable) = (at("samples"), at("runnable_samples"));
        let mut parts = Vec::new();
        let mut got = Vec::new();
        for n in sec.threads[0].tree.walk() {
            let vals: Vec<u64> = p.types.iter().map(|(m, _)| m.own(&n.v)).collect();
            p.split(&vals, &n.types, &mut parts);
            for (t, v) in &parts {
                got.push((
                    s.names.get(n.name),
                    t.map(|t| t.name()),
                    v[all],
                    v[runnable],
                ));
            }
        }
        assert_eq!(
            got,
            vec![
                ("a()", Some("c2"), 3, 0),
                ("a()", None, 1, 1),
                ("b()", Some("c2"), 2, 2),
                ("b()", Some("inlined"), 1, 1),
                ("c()", None, 2, 2),
                // More typed samples than samples: left whole, untyped.
                ("d()", None, 1, 1),
            ]
        );
    }

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
