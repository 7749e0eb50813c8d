//! One `ExportProfilesServiceRequest` (`opentelemetry.proto.collector.profiles.v1development`):
//! a resource, one scope, one `Profile` per (mode, weight) with samples,
//! and the dictionary they all index (strings, functions, locations,
//! stacks, attributes; each table's entry 0 the zero value, as the proto
//! requires). A frame is a location of one line: the function named by
//! the frame's name and, where the frame has one, its source line
//! (`Line.line`; one method on two lines is two locations of one
//! function, as pprof writes them); a stack lists locations leaf first; a
//! sample's one attribute is its thread's `thread.name`.
//!
//! Streamed ([`Request::write`]): what is held is bounded by the call trees
//! (the strings, functions and thread attributes, the encoded samples, the
//! stacks as a tree in `stacks.rs`); the nested messages' lengths are
//! counted in a first pass over that model (`wire::nested`), and the stack
//! table, which spells out every path, is written as it is walked.

mod stacks;
#[cfg(test)]
mod tests;

use crate::delta::Samples;
use crate::model::{ValueType, NO_JAVA_FRAME, NO_JAVA_FRAME_ID, NO_LINE, ROOT};
use crate::wire::{nested, put_bytes, Msg};
use stacks::{Stacks, TOP};
use std::collections::HashMap;
use std::io::{self, Write};

/// Field numbers of the proto messages written here.
/// The proto's field numbers (opentelemetry/proto/profiles/v1development),
/// shared with the CLI's streaming `convert --to otlp`: each is
/// `MESSAGE_FIELD`, the message's name and the field's, as the proto spells them.
#[allow(missing_docs)]
pub mod field {
    pub const REQUEST_RESOURCE_PROFILES: u64 = 1;
    pub const REQUEST_DICTIONARY: u64 = 2;
    pub const RESOURCE_PROFILES_RESOURCE: u64 = 1;
    pub const RESOURCE_PROFILES_SCOPE_PROFILES: u64 = 2;
    pub const RESOURCE_ATTRIBUTES: u64 = 1;
    pub const SCOPE_PROFILES_SCOPE: u64 = 1;
    pub const SCOPE_PROFILES_PROFILES: u64 = 2;
    pub const SCOPE_NAME: u64 = 1;
    pub const SCOPE_VERSION: u64 = 2;
    pub const KEY_VALUE_KEY: u64 = 1;
    pub const KEY_VALUE_VALUE: u64 = 2;
    pub const ANY_VALUE_STRING: u64 = 1;
    pub const ANY_VALUE_INT: u64 = 3;
    pub const PROFILE_SAMPLE_TYPE: u64 = 1;
    pub const PROFILE_SAMPLES: u64 = 2;
    pub const PROFILE_TIME_UNIX_NANO: u64 = 3;
    pub const PROFILE_DURATION_NANO: u64 = 4;
    pub const PROFILE_PERIOD_TYPE: u64 = 5;
    pub const PROFILE_PERIOD: u64 = 6;
    pub const VALUE_TYPE_TYPE: u64 = 1;
    pub const VALUE_TYPE_UNIT: u64 = 2;
    pub const SAMPLE_STACK_INDEX: u64 = 1;
    pub const SAMPLE_ATTRIBUTE_INDICES: u64 = 2;
    pub const SAMPLE_VALUES: u64 = 4;
    pub const DICT_MAPPING_TABLE: u64 = 1;
    pub const DICT_LOCATION_TABLE: u64 = 2;
    pub const DICT_FUNCTION_TABLE: u64 = 3;
    pub const DICT_LINK_TABLE: u64 = 4;
    pub const DICT_STRING_TABLE: u64 = 5;
    pub const DICT_ATTRIBUTE_TABLE: u64 = 6;
    pub const DICT_STACK_TABLE: u64 = 7;
    pub const LOCATION_LINES: u64 = 3;
    pub const LINE_FUNCTION_INDEX: u64 = 1;
    pub const LINE_LINE: u64 = 2;
    pub const FUNCTION_NAME: u64 = 1;
    pub const STACK_LOCATION_INDICES: u64 = 1;
    pub const KEY_VALUE_AND_UNIT_KEY: u64 = 1;
    pub const KEY_VALUE_AND_UNIT_VALUE: u64 = 2;
}

/// A sample's thread, as the semantic conventions name it.
pub const THREAD_NAME: &str = "thread.name";

/// A resource attribute's value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// A string (`service.name`, `host.name`).
    Str(String),
    /// An integer (`process.pid`).
    Int(i64),
}

/// A resource attribute: what the Collector and backends group and
/// filter profiles by.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attribute {
    /// Its name, as the semantic conventions spell it (`service.name`).
    pub key: String,
    /// Its value.
    pub value: Value,
}

impl Attribute {
    /// A string attribute.
    pub fn str(key: &str, value: &str) -> Self {
        Attribute {
            key: key.to_owned(),
            value: Value::Str(value.to_owned()),
        }
    }
}

/// A request being built: profiles added one mode at a time, then written
/// out with the resource ([`Request::write`]; [`Request::finish`] makes the
/// bytes of the push's small requests).
pub struct Request {
    strings: Vec<Box<str>>,
    string_index: HashMap<Box<str>, u32>,
    /// String index of a function's name -> its index.
    functions: HashMap<u32, u32>,
    function_table: Msg,
    /// (function index, line) -> location index.
    locations: HashMap<(u32, u32), u32>,
    /// Per location index from 1: its (function index, line).
    location_list: Vec<(u32, u32)>,
    stacks: Stacks,
    /// String index of a thread name -> its attribute's index.
    attributes: HashMap<u32, u32>,
    attribute_table: Msg,
    profiles: Msg,
    /// Profiles added (one per weight that had a sample).
    pub(crate) profile_count: usize,
    /// Samples added, over all profiles.
    pub(crate) sample_count: usize,
}

impl Default for Request {
    fn default() -> Self {
        Self::new()
    }
}

impl Request {
    /// An empty request.
    pub fn new() -> Self {
        let mut r = Request {
            strings: Vec::new(),
            string_index: HashMap::new(),
            functions: HashMap::new(),
            function_table: Msg::default(),
            locations: HashMap::new(),
            location_list: Vec::new(),
            stacks: Stacks::default(),
            attributes: HashMap::new(),
            attribute_table: Msg::default(),
            profiles: Msg::default(),
            profile_count: 0,
            sample_count: 0,
        };
        // Entry 0 of each table is its zero value.
        r.string("");
        let zero = Msg::default();
        r.function_table.msg(field::DICT_FUNCTION_TABLE, &zero);
        r.attribute_table.msg(field::DICT_ATTRIBUTE_TABLE, &zero);
        r
    }

    /// Nothing added yet (or only samples of zero).
    pub fn is_empty(&self) -> bool {
        self.profile_count == 0
    }

    fn string(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.string_index.get(s) {
            return i;
        }
        let i = self.strings.len() as u32;
        self.strings.push(s.into());
        self.string_index.insert(s.into(), i);
        i
    }

    /// The location index of a frame: its name's function on `line`
    /// ([`NO_LINE`]: none). Without lines a location's index is its
    /// function's (both numbered as met).
    fn location(&mut self, name: &str, line: u32) -> u32 {
        let s = self.string(name);
        let next = self.functions.len() as u32 + 1;
        let function = *self.functions.entry(s).or_insert_with(|| {
            let mut f = Msg::default();
            f.int(field::FUNCTION_NAME, s as u64);
            self.function_table.msg(field::DICT_FUNCTION_TABLE, &f);
            next
        });
        let next = self.location_list.len() as u32 + 1;
        let list = &mut self.location_list;
        *self.locations.entry((function, line)).or_insert_with(|| {
            list.push((function, line));
            next
        })
    }

    fn thread_attribute(&mut self, name: &str) -> u32 {
        let key = self.string(THREAD_NAME);
        let value = self.string(name);
        let next = self.attributes.len() as u32 + 1;
        let table = &mut self.attribute_table;
        let strings = &self.strings;
        *self.attributes.entry(value).or_insert_with(|| {
            let mut v = Msg::default();
            v.bytes(field::ANY_VALUE_STRING, strings[value as usize].as_bytes());
            let mut a = Msg::default();
            a.int(field::KEY_VALUE_AND_UNIT_KEY, key as u64);
            a.msg(field::KEY_VALUE_AND_UNIT_VALUE, &v);
            table.msg(field::DICT_ATTRIBUTE_TABLE, &a);
            next
        })
    }

    fn value_type(&mut self, (ty, unit): ValueType) -> Msg {
        let mut m = Msg::default();
        m.int(field::VALUE_TYPE_TYPE, self.string(ty) as u64);
        m.int(field::VALUE_TYPE_UNIT, self.string(unit) as u64);
        m
    }

    /// Adds one mode's samples: a profile per weight that has a sample,
    /// covering `duration_ns` from `start_unix_ns`. Samples with the same
    /// stack and thread (threads of one name) are summed.
    pub fn add(&mut self, samples: &Samples, start_unix_ns: u64, duration_ns: u64) {
        if samples.is_empty() {
            return;
        }
        // Each sample's (stack, attribute), once for all weights. Names are
        // met as the old encoder met them, leaf first sample after sample
        // (what numbers the strings and functions), but each step once:
        // above a step already met, every name is known.
        let mut keys = Vec::with_capacity(samples.samples.len());
        let mut thread_attrs: Vec<Option<u32>> = vec![None; samples.threads.len()];
        // Per step of `samples.paths`: its node in the stack tree, once met.
        let mut nodes = vec![TOP; samples.paths.len()];
        let mut climb: Vec<(u32, u32)> = Vec::new();
        for s in &samples.samples {
            climb.clear();
            let mut at = s.path;
            while let Some(step) = samples.paths.get(at as usize) {
                if nodes[at as usize] != TOP {
                    break;
                }
                let name = match step.name {
                    NO_JAVA_FRAME_ID => NO_JAVA_FRAME,
                    f => samples.names.get(f as usize).map_or("", |n| &**n),
                };
                let line = samples.lines.get(step.name as usize).copied();
                climb.push((at, self.location(name, line.unwrap_or(NO_LINE))));
                // A parent comes first; any other ends the path (no loop).
                at = if step.parent < at { step.parent } else { ROOT };
            }
            let mut node = match at {
                ROOT => TOP,
                at => nodes.get(at as usize).copied().unwrap_or(TOP),
            };
            for &(step, location) in climb.iter().rev() {
                node = self.stacks.child(node, location);
                nodes[step as usize] = node;
            }
            let stack = match nodes.get(s.path as usize) {
                Some(&n) if n != TOP => self.stacks.index(n),
                _ => 0,
            };
            let t = s.thread as usize;
            let attr = match thread_attrs.get(t).copied().flatten() {
                Some(a) => a,
                None => {
                    let name = samples.threads.get(t).map_or("", String::as_str);
                    let a = self.thread_attribute(name);
                    if let Some(slot) = thread_attrs.get_mut(t) {
                        *slot = Some(a);
                    }
                    a
                }
            };
            keys.push((stack, attr));
        }
        for (w, &ty) in samples.weights.iter().enumerate() {
            let mut sums: Vec<((u32, u32), u64)> = Vec::new();
            let mut at: HashMap<(u32, u32), usize> = HashMap::new();
            for (s, &key) in samples.samples.iter().zip(&keys) {
                let v = s.values[w];
                if v == 0 {
                    continue;
                }
                match at.get(&key) {
                    Some(&i) => sums[i].1 = sums[i].1.saturating_add(v),
                    None => {
                        at.insert(key, sums.len());
                        sums.push((key, v));
                    }
                }
            }
            if sums.is_empty() {
                continue;
            }
            let mut p = Msg::default();
            let vt = self.value_type(ty);
            p.msg(field::PROFILE_SAMPLE_TYPE, &vt);
            for ((stack, attr), v) in &sums {
                let mut s = Msg::default();
                s.int(field::SAMPLE_STACK_INDEX, *stack as u64);
                s.packed(field::SAMPLE_ATTRIBUTE_INDICES, &[*attr as u64]);
                s.packed(field::SAMPLE_VALUES, &[(*v).min(i64::MAX as u64)]);
                p.msg(field::PROFILE_SAMPLES, &s);
            }
            p.fixed64(field::PROFILE_TIME_UNIX_NANO, start_unix_ns);
            p.int(field::PROFILE_DURATION_NANO, duration_ns);
            if let Some((period_type, period)) = samples.period {
                let pt = self.value_type(period_type);
                p.msg(field::PROFILE_PERIOD_TYPE, &pt);
                p.int(field::PROFILE_PERIOD, period.max(0) as u64);
            }
            self.profiles.msg(field::SCOPE_PROFILES_PROFILES, &p);
            self.profile_count += 1;
            self.sample_count += sums.len();
        }
    }

    /// The request's bytes (not compressed): `resource` its attributes,
    /// `scope` the instrumentation scope's (name, version).
    pub fn finish(self, resource: &[Attribute], scope: (&str, &str)) -> Vec<u8> {
        let mut out = Vec::new();
        self.write(resource, scope, &mut out)
            .expect("a Vec takes every write");
        out
    }

    /// [`Request::finish`]'s bytes, written to `out` as they are made.
    pub fn write(
        &self,
        resource: &[Attribute],
        (scope_name, scope_version): (&str, &str),
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let mut attrs = Msg::default();
        for a in resource {
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
        let mut scope = Msg::default();
        scope.bytes(field::SCOPE_NAME, scope_name.as_bytes());
        scope.bytes(field::SCOPE_VERSION, scope_version.as_bytes());
        nested(out, field::REQUEST_RESOURCE_PROFILES, |w| {
            put_bytes(w, field::RESOURCE_PROFILES_RESOURCE, &attrs.buf)?;
            nested(w, field::RESOURCE_PROFILES_SCOPE_PROFILES, |w| {
                put_bytes(w, field::SCOPE_PROFILES_SCOPE, &scope.buf)?;
                w.write_all(&self.profiles.buf)
            })
        })?;
        nested(out, field::REQUEST_DICTIONARY, |w| self.write_dictionary(w))
    }

    /// The dictionary's fields (twice per request: counted, then written).
    fn write_dictionary(&self, w: &mut dyn Write) -> io::Result<()> {
        put_bytes(w, field::DICT_MAPPING_TABLE, &[])?;
        // Locations: entry 0 empty, then each (function, line) in index order.
        put_bytes(w, field::DICT_LOCATION_TABLE, &[])?;
        let mut line = Msg::default();
        let mut location = Msg::default();
        for &(function, line_number) in &self.location_list {
            line.buf.clear();
            line.int(field::LINE_FUNCTION_INDEX, u64::from(function));
            if line_number != NO_LINE {
                line.int(field::LINE_LINE, u64::from(line_number));
            }
            location.buf.clear();
            location.msg(field::LOCATION_LINES, &line);
            put_bytes(w, field::DICT_LOCATION_TABLE, &location.buf)?;
        }
        w.write_all(&self.function_table.buf)?;
        put_bytes(w, field::DICT_LINK_TABLE, &[])?;
        for s in &self.strings {
            put_bytes(w, field::DICT_STRING_TABLE, s.as_bytes())?;
        }
        w.write_all(&self.attribute_table.buf)?;
        self.stacks.write(w)
    }
}
