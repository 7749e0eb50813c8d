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

use super::collapsed::{MAX_FRAMES, TRUNCATED};
use super::proto::Msg;
use crate::snapshot::{CallSection, CallThread, Metric, Names, ValueType, NONE, NO_LINE};
use flate2::write::GzEncoder;
use flate2::Compression;
use std::collections::HashMap;
use std::io::Write;
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

/// The gzipped profile.
pub fn pprof(
    names: &Names,
    sec: &CallSection,
    threads: &[&CallThread],
    metric: Metric,
    source: &Path,
) -> Result<Vec<u8>, String> {
    let types = sample_types(sec);
    let default = types
        .iter()
        .find(|(m, _)| *m == metric)
        .map(|(_, (ty, _))| *ty)
        .ok_or_else(|| {
            let all: Vec<&str> = types.iter().map(|(m, _)| m.name()).collect();
            format!(
                "pprof has no value for --metric {}: pick one of {}",
                metric.name(),
                all.join(", ")
            )
        })?;
    let mut strings = Strings::new();
    let mut profile = Msg::default();
    for (_, (ty, unit)) in &types {
        let mut vt = Msg::default();
        vt.int(field::VT_TYPE, strings.id(ty));
        vt.int(field::VT_UNIT, strings.id(unit));
        profile.msg(field::SAMPLE_TYPE, &vt);
    }
    // One function per distinct name and signature; one location per
    // function and line (a node's `line`, or none).
    let mut functions: HashMap<(u32, u32), u64> = HashMap::new();
    let mut locations: HashMap<(u64, u32), u64> = HashMap::new();
    let mut function_msgs = Msg::default();
    let thread_key = strings.id("thread");
    // (thread, stack leaf first) -> values: one sample each, in first-seen order.
    let mut samples: Vec<(u64, Vec<u64>, Vec<u64>)> = Vec::new();
    let mut sample_index: HashMap<(u64, Vec<u64>), usize> = HashMap::new();
    let mut truncated_id = None;
    for t in threads {
        let thread_name = strings.id(&t.name);
        let mut stack: Vec<u64> = Vec::new();
        for n in t.tree.nodes.iter().skip(1) {
            let next_id = functions.len() as u64 + 1;
            let id = *functions.entry((n.name, n.signature)).or_insert_with(|| {
                let name = names.get(n.name);
                let mut f = Msg::default();
                f.int(field::F_ID, next_id);
                f.int(field::F_NAME, strings.id(name));
                let system = if n.signature == NONE {
                    name.to_owned()
                } else {
                    format!("{name} {}", names.get(n.signature))
                };
                f.int(field::F_SYSTEM_NAME, strings.id(&system));
                function_msgs.msg(field::FUNCTION, &f);
                next_id
            });
            let next_location = locations.len() as u64 + 1;
            let location = *locations.entry((id, n.line)).or_insert(next_location);
            stack.truncate(n.depth as usize - 1);
            stack.push(location);
            let vals: Vec<u64> = types.iter().map(|(m, _)| m.own(&n.v)).collect();
            if vals.iter().all(|&v| v == 0) {
                continue;
            }
            let mut leaf_first: Vec<u64> = stack.iter().rev().take(MAX_FRAMES).copied().collect();
            if stack.len() > MAX_FRAMES {
                let location = *truncated_id.get_or_insert_with(|| {
                    let id = functions.len() as u64 + 1;
                    functions.insert((NONE - 1, NONE - 1), id);
                    let mut f = Msg::default();
                    f.int(field::F_ID, id);
                    f.int(field::F_NAME, strings.id(TRUNCATED));
                    f.int(field::F_SYSTEM_NAME, strings.id(TRUNCATED));
                    function_msgs.msg(field::FUNCTION, &f);
                    let location = locations.len() as u64 + 1;
                    locations.insert((id, NO_LINE), location);
                    location
                });
                leaf_first.push(location);
            }
            match sample_index.entry((thread_name, leaf_first)) {
                std::collections::hash_map::Entry::Occupied(e) => {
                    let sum = &mut samples[*e.get()].2;
                    for (a, b) in sum.iter_mut().zip(&vals) {
                        *a = a.saturating_add(*b);
                    }
                }
                std::collections::hash_map::Entry::Vacant(e) => {
                    samples.push((thread_name, e.key().1.clone(), vals));
                    e.insert(samples.len() - 1);
                }
            }
        }
    }
    for (thread_name, leaf_first, vals) in &samples {
        let mut s = Msg::default();
        s.packed(field::S_LOCATION_ID, leaf_first);
        s.packed(field::S_VALUE, vals);
        let mut label = Msg::default();
        label.int(field::L_KEY, thread_key);
        label.int(field::L_STR, *thread_name);
        s.msg(field::S_LABEL, &label);
        profile.msg(field::SAMPLE, &s);
    }
    // Locations, by id.
    let mut by_id: Vec<(u64, (u64, u32))> = locations.into_iter().map(|(k, id)| (id, k)).collect();
    by_id.sort_unstable();
    for (id, (function, line_number)) in by_id {
        let mut line = Msg::default();
        line.int(field::LINE_FUNCTION_ID, function);
        if line_number != NO_LINE {
            line.int(field::LINE_LINE, u64::from(line_number));
        }
        let mut loc = Msg::default();
        loc.int(field::LOC_ID, id);
        loc.msg(field::LOC_LINE, &line);
        profile.msg(field::LOCATION, &loc);
    }
    profile.buf.extend_from_slice(&function_msgs.buf);
    let comment = strings.id(&format!(
        "profrj convert of {} <{}>",
        source.display(),
        sec.kind.tag()
    ));
    let default = strings.id(default);
    for s in &strings.table {
        profile.bytes(field::STRING_TABLE, s.as_bytes());
    }
    profile.int(field::COMMENT, comment);
    profile.int(field::DEFAULT_SAMPLE_TYPE, default);

    let mut gz = GzEncoder::new(Vec::new(), Compression::default());
    gz.write_all(&profile.buf)
        .and_then(|()| gz.finish())
        .map_err(|e| format!("gzip: {e}"))
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
        let e = pprof(&s.names, sec, &threads, metric("samples"), Path::new("x")).unwrap_err();
        assert!(e.contains("no value for --metric samples"), "{e}");
        assert!(pprof(&s.names, sec, &threads, metric("bytes"), Path::new("x")).is_ok());
    }
}
