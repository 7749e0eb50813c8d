//! `--to otlp`: the snapshot's call sections (`<sampler>`, `<profile>`,
//! `<alloc>`, `<lock>`) as one OTLP `ExportProfilesServiceRequest`
//! (protobuf, not compressed): the message the agent's `otlp` push sends,
//! with the whole snapshot as one period, so that
//! `curl --data-binary @out.pb -H 'Content-Type: application/x-protobuf'
//! http://collector:4318/v1development/profiles` delivers it. The sample
//! types are the push's ([`profrj_otlp::types`]); `<profile>`'s
//! microseconds are sent as nanoseconds (×1000), as the push sends them;
//! a sampler's period (its interval) is not in a snapshot and is left out.
//! A node's `line` (the agent's `lines`) is its location's `Line.line`, each
//! line of a method a location of its own (as `--to pprof` writes them).
//! Streamed: what is held is bounded by the trees (`profrj_otlp`'s
//! `Request`); the stack table, which spells out every path, is written as
//! it is walked.

use crate::error::CliError;
use crate::snapshot::{CallKind, CallSection, Snapshot, NO_LINE};
use profrj_otlp::{
    types, Attribute, CallTrees, Keeper, Node, Request, ThreadTree, Value, ValueType,
};
use profrj_otlp::{MAX_WEIGHTS, ROOT};
use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;

/// The weights of a section, and for each the node attribute it comes
/// from and its scale.
type Weights = (&'static [ValueType], &'static [(&'static str, u64)]);

fn weights(sec: &CallSection) -> Weights {
    use profrj_format::{alloc, lock, profile, sampler};
    match sec.kind {
        CallKind::Sampler => (
            &[types::SAMPLES, types::RUNNABLE_SAMPLES],
            &[(sampler::node::ELAPSED, 1), (sampler::node::HITS, 1)],
        ),
        CallKind::Profile => (
            &[types::CALLS, types::WALL, types::CPU],
            &[
                (profile::node::COUNT, 1),
                (profile::node::METHOD_ELAPSED, 1000),
                (profile::node::METHOD, 1000),
            ],
        ),
        CallKind::Alloc if sec.live => (
            &[types::INUSE_OBJECTS, types::INUSE_SPACE],
            &[(alloc::node::OBJECTS, 1), (alloc::node::BYTES, 1)],
        ),
        CallKind::Alloc => (
            &[types::ALLOC_OBJECTS, types::ALLOC_SPACE],
            &[(alloc::node::OBJECTS, 1), (alloc::node::BYTES, 1)],
        ),
        CallKind::Lock => (
            &[types::CONTENTIONS, types::DELAY],
            &[(lock::node::COUNT, 1), (lock::node::TIME, 1)],
        ),
        CallKind::Sites => (&[], &[]),
    }
}

/// The model's frames: the snapshot's names as they are (a frame without
/// a line is its name's id), and a frame id past them for each (name,
/// line) a node has (`lines`), so one method on two lines is two frames,
/// two locations of one function.
#[derive(Default)]
struct Frames {
    names: Vec<Box<str>>,
    lines: Vec<u32>,
    with_line: HashMap<(u32, u32), u32>,
}

impl Frames {
    fn new(snap: &Snapshot) -> Frames {
        Frames {
            names: snap.names.all().iter().map(|s| s.as_str().into()).collect(),
            ..Frames::default()
        }
    }

    /// The frame id of name `name` on `line`.
    fn id(&mut self, name: u32, line: u32) -> u32 {
        if line == NO_LINE {
            return name;
        }
        let next = self.names.len() as u32;
        let (names, lines) = (&mut self.names, &mut self.lines);
        *self.with_line.entry((name, line)).or_insert_with(|| {
            let text = names.get(name as usize).cloned().unwrap_or_default();
            names.push(text);
            lines.resize(next as usize, NO_LINE);
            lines.push(line);
            next
        })
    }
}

/// A section as the model the encoder reads.
fn call_trees(snap: &Snapshot, sec: &CallSection) -> CallTrees {
    let (types, attrs) = weights(sec);
    let desc = sec.desc();
    let slots: Vec<(usize, u64)> = attrs
        .iter()
        .map(|&(attr, scale)| (desc.slot(attr).expect("a node value"), scale))
        .collect();
    let mut frames = Frames::new(snap);
    let threads = sec
        .threads
        .iter()
        .enumerate()
        .map(|(i, t)| ThreadTree {
            key: i as u64,
            name: t.name.clone(),
            nodes: t
                .tree
                .walk()
                .map(|n| {
                    let mut own = [0; MAX_WEIGHTS];
                    for (o, &(slot, scale)) in own.iter_mut().zip(&slots) {
                        *o = n.v.0[slot].saturating_mul(scale);
                    }
                    Node {
                        parent: if n.parent == 0 { ROOT } else { n.parent - 1 },
                        name: frames.id(n.name, n.line),
                        own,
                    }
                })
                .collect(),
        })
        .collect();
    CallTrees {
        weights: types,
        period: None,
        names: frames.names,
        lines: frames.lines,
        threads,
    }
}

/// The request, ready to be written: every section's samples added.
pub struct Otlp {
    request: Request,
    resource: [Attribute; 2],
}

impl Otlp {
    /// `service` names the resource (`service.name`).
    pub fn new(snap: &Snapshot, source: &Path, service: &str) -> Result<Otlp, CliError> {
        let created_ns = std::fs::metadata(source)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as u64);
        let mut request = Request::new();
        for kind in snap.call_kinds() {
            let Some(sec) = snap.calls(kind).filter(|_| kind != CallKind::Sites) else {
                continue;
            };
            let samples = Keeper::default().delta(call_trees(snap, sec));
            request.add(&samples, created_ns, 0);
        }
        if request.is_empty() {
            return Err(CliError::Usage(format!(
                "the snapshot has no samples in <sampler>, <profile>, <alloc> or <lock> for OTLP ({})",
                source.display()
            )));
        }
        let resource = [
            Attribute::str("service.name", service),
            Attribute {
                key: "profrj.snapshot".into(),
                value: Value::Str(source.display().to_string()),
            },
        ];
        Ok(Otlp { request, resource })
    }

    /// Writes the request's bytes as they are made.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let scope = ("profrj", env!("CARGO_PKG_VERSION"));
        self.request.write(&self.resource, scope, out)
    }
}
