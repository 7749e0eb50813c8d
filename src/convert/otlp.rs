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
//! Streamed in a fixed budget, by this encoder rather than the push's
//! (`profrj_otlp::Request`, which holds its samples and a tree of stacks):
//! a first walk of every section's trees numbers the strings, functions,
//! locations and threads' attributes (bounded by the distinct frames and
//! thread names) and counts each message's bytes, so that a nested
//! message's length is known before it is written; then one walk per
//! profile writes its samples, and one more the stack table. Each node
//! with a figure is a sample and a stack of its own: two threads with one
//! stack write it twice (the proto does not ask stacks to be distinct;
//! samples of one stack add up), and nothing is merged in memory. The
//! layout and field numbers are the push's (`otlp/src/encode`).

use crate::error::CliError;
use crate::snapshot::{CallKind, CallSection, Snapshot};
use profrj_otlp::types;
use profrj_otlp::wire::Msg;
use profrj_otlp::{Attribute, Value, ValueType};
use std::io::{self, Write};
use std::path::Path;

use otlp_fields as field;
pub(crate) use profrj_otlp::field as otlp_fields;

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

mod dict;
use dict::{field_len, figures, len_header, Dictionary};

/// One profile: a section's weight that has a sample.
struct Profile {
    section: usize,
    weight: usize,
    /// Its `ProfileSample`… fields' bytes before and after the samples.
    head: Msg,
    tail: Msg,
    samples_len: u64,
}

/// A section as the request carries it: its weights' slots and scales,
/// and the stack index before its first.
struct Section<'a> {
    sec: &'a CallSection,
    slots: Vec<(usize, u64)>,
    stack_base: u64,
}

/// The request, ready to be written: every length counted.
pub struct Otlp<'a> {
    snap: &'a Snapshot,
    sections: Vec<Section<'a>>,
    profiles: Vec<Profile>,
    dict: Dictionary,
    resource: Msg,
}

/// A sample's bytes: its stack, its thread's attribute, its value.
fn sample(m: &mut Msg, stack: u64, attr: u64, v: u64) {
    m.buf.clear();
    m.int(field::SAMPLE_STACK_INDEX, stack);
    m.packed(field::SAMPLE_ATTRIBUTE_INDICES, &[attr]);
    m.packed(field::SAMPLE_VALUES, &[v.min(i64::MAX as u64)]);
}

impl<'a> Otlp<'a> {
    /// `service` names the resource (`service.name`).
    pub fn new(snap: &'a Snapshot, source: &Path, service: &str) -> Result<Otlp<'a>, CliError> {
        let created_ns = std::fs::metadata(source)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as u64);
        let mut dict = Dictionary::new();
        let mut sections = Vec::new();
        let mut profiles = Vec::new();
        let mut stacks = 0u64;
        let mut m = Msg::default();
        for kind in snap.call_kinds() {
            let Some(sec) = snap.calls(kind).filter(|_| kind != CallKind::Sites) else {
                continue;
            };
            let (types, attrs) = weights(sec);
            let desc = sec.desc();
            let slots: Vec<(usize, u64)> = attrs
                .iter()
                .map(|&(attr, scale)| (desc.slot(attr).expect("a node value"), scale))
                .collect();
            let stack_base = stacks;
            let mut samples_len = vec![0u64; types.len()];
            // The first walk: names numbered, stacks and samples counted.
            for t in &sec.threads {
                let attr = dict.thread_attribute(&t.name);
                let mut path: Vec<u32> = Vec::new();
                for n in t.tree.walk() {
                    path.truncate(n.depth as usize - 1);
                    path.push(dict.location(n.name, snap.names.get(n.name), n.line));
                    let Some(f) = figures(&slots, &n.v.0) else {
                        continue;
                    };
                    stacks += 1;
                    dict.count_stack(&path);
                    for (len, &v) in samples_len.iter_mut().zip(&f) {
                        if v != 0 {
                            sample(&mut m, stacks, attr, v);
                            *len += field_len(field::PROFILE_SAMPLES, m.buf.len() as u64);
                        }
                    }
                }
            }
            for (w, &len) in samples_len.iter().enumerate() {
                if len == 0 {
                    continue;
                }
                let mut head = Msg::default();
                let mut vt = Msg::default();
                vt.int(field::VALUE_TYPE_TYPE, dict.string(types[w].0));
                vt.int(field::VALUE_TYPE_UNIT, dict.string(types[w].1));
                head.msg(field::PROFILE_SAMPLE_TYPE, &vt);
                let mut tail = Msg::default();
                tail.fixed64(field::PROFILE_TIME_UNIX_NANO, created_ns);
                tail.int(field::PROFILE_DURATION_NANO, 0);
                profiles.push(Profile {
                    section: sections.len(),
                    weight: w,
                    head,
                    tail,
                    samples_len: len,
                });
            }
            sections.push(Section {
                sec,
                slots,
                stack_base,
            });
        }
        if profiles.is_empty() {
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
        let mut attrs = Msg::default();
        for a in &resource {
            let mut v = Msg::default();
            match &a.value {
                Value::Str(s) => v.bytes(field::ANY_VALUE_STRING, s.as_bytes()),
                Value::Int(i) => v.int(field::ANY_VALUE_INT, *i as u64),
            }
            let mut kv = Msg::default();
            kv.bytes(field::KEY_VALUE_KEY, a.key.as_bytes());
            kv.msg(field::KEY_VALUE_VALUE, &v);
            attrs.msg(field::RESOURCE_ATTRIBUTES, &kv);
        }
        Ok(Otlp {
            snap,
            sections,
            profiles,
            dict,
            resource: attrs,
        })
    }

    fn profile_len(p: &Profile) -> u64 {
        p.head.buf.len() as u64 + p.samples_len + p.tail.buf.len() as u64
    }

    /// Writes the request's bytes as they are made.
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut scope = Msg::default();
        scope.bytes(field::SCOPE_NAME, b"profrj");
        scope.bytes(field::SCOPE_VERSION, env!("CARGO_PKG_VERSION").as_bytes());
        let profiles_len: u64 = self
            .profiles
            .iter()
            .map(|p| field_len(field::SCOPE_PROFILES_PROFILES, Self::profile_len(p)))
            .sum();
        let scope_profiles =
            field_len(field::SCOPE_PROFILES_SCOPE, scope.buf.len() as u64) + profiles_len;
        let resource_profiles =
            field_len(
                field::RESOURCE_PROFILES_RESOURCE,
                self.resource.buf.len() as u64,
            ) + field_len(field::RESOURCE_PROFILES_SCOPE_PROFILES, scope_profiles);
        len_header(out, field::REQUEST_RESOURCE_PROFILES, resource_profiles)?;
        len_header(
            out,
            field::RESOURCE_PROFILES_RESOURCE,
            self.resource.buf.len() as u64,
        )?;
        out.write_all(&self.resource.buf)?;
        len_header(out, field::RESOURCE_PROFILES_SCOPE_PROFILES, scope_profiles)?;
        len_header(out, field::SCOPE_PROFILES_SCOPE, scope.buf.len() as u64)?;
        out.write_all(&scope.buf)?;
        let mut m = Msg::default();
        for p in &self.profiles {
            len_header(out, field::SCOPE_PROFILES_PROFILES, Self::profile_len(p))?;
            out.write_all(&p.head.buf)?;
            let s = &self.sections[p.section];
            let mut stack = s.stack_base;
            for t in &s.sec.threads {
                let attr = self.dict.attribute_of(&t.name);
                for n in t.tree.walk() {
                    let Some(f) = figures(&s.slots, &n.v.0) else {
                        continue;
                    };
                    stack += 1;
                    if f[p.weight] != 0 {
                        sample(&mut m, stack, attr, f[p.weight]);
                        len_header(out, field::PROFILE_SAMPLES, m.buf.len() as u64)?;
                        out.write_all(&m.buf)?;
                    }
                }
            }
            out.write_all(&p.tail.buf)?;
        }
        let names = &self.snap.names;
        let sections = self.sections.iter().map(|s| (s.sec, s.slots.as_slice()));
        self.dict.write(out, names, sections.collect())
    }
}
