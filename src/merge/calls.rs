//! The call-tree sections summed over snapshots: `<sampler>`, `<profile>`,
//! `<alloc>` and `<lock>`. A thread is known by its name: the threads of
//! one name (in one JVM or several) become one thread, as the agent's
//! `ended=fold` folds ended threads; their nodes are summed path by path
//! (the same frames from the root: method, signature, line, class frame),
//! their totals (`cpuTime`, `cumulated`, …) summed, `isAlive` true if any
//! was, `jvmThread` the first input's that had one. `<sites>` is left out (`max`, a peak, does not sum).
//!
//! Each node is a record of an external sorter keyed by its section, its
//! thread and its path, the frames as ids of 4 big-endian bytes: a node's
//! key is a prefix of its callees', and the keys of a subtree sort before
//! those of its next sibling, so the sorted records are the merged trees in
//! depth-first order, written as they come. The frames are interned once
//! over all inputs (what is held, with the thread names).
//!
//! A sampler node's frame types (`frameTypes`, `selfTypes`) are summed
//! with its figures, type by type.
//!
//! A sampler thread's samples without a Java frame (the reader's
//! `[no Java frame]` node) are not written: the thread's totals, summed,
//! still count them, and a reader gives them back the same way.

use super::{attr, Warnings};
use crate::error::CliError;
use crate::snapshot::{
    CallKind, Node, SectionDesc, Snapshot, MAX_THREAD_TOTALS, MAX_VALUES, NONE, NO_JAVA_FRAME,
    NO_LINE,
};
use crate::sort::{budget, Merged, Sorter};
use profrj_format::{calls, sampler};
use std::collections::HashMap;
use std::io::{self, Write};

/// The kinds merged, in the order written.
const KINDS: [CallKind; 4] = [
    CallKind::Sampler,
    CallKind::Profile,
    CallKind::Alloc,
    CallKind::Lock,
];

/// A thread record's numbers: each optional total as (sum, inputs that
/// had it): cpuTime, elapsedTime, virtualThreads, endedThreads, the
/// section's totals; then isAlive (inputs alive, inputs that said).
const T_CPU: usize = 0;
const T_ELAPSED: usize = 2;
const T_VIRTUAL: usize = 4;
const T_ENDED: usize = 6;
const T_TOTALS: usize = 8;
const T_ALIVE: usize = T_TOTALS + 2 * MAX_THREAD_TOTALS;
/// A node record's numbers: its values, then its `frameTypes` and its
/// `selfTypes` counts, a slot per type.
const N_TYPES: usize = MAX_VALUES;
const N_SELF_TYPES: usize = N_TYPES + TYPES;
const NODE_WIDTH: usize = N_SELF_TYPES + TYPES;
const TYPES: usize = profrj_format::frame_types::ALL.len();
/// A record's numbers: a thread's or a node's, the more.
const WIDTH: usize = if T_ALIVE + 2 > NODE_WIDTH {
    T_ALIVE + 2
} else {
    NODE_WIDTH
};

/// One frame: what makes two nodes of one path the same.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Frame {
    name: String,
    signature: Option<String>,
    line: u32,
    class: bool,
}

/// A section's attributes, per input that had it.
#[derive(Default)]
struct SectionSeen {
    inputs: usize,
    live: Vec<bool>,
    live_rules: Vec<Option<String>>,
    values: Vec<Vec<Option<u64>>>,
}

pub struct CallsMerge {
    sorter: Sorter,
    frames: Vec<Frame>,
    frame_ids: HashMap<Frame, u32>,
    threads: Vec<String>,
    thread_ids: HashMap<String, u32>,
    /// The threads of the JVM itself (`jvmThread`), by thread id: the
    /// first input's kind for a name.
    jvm_threads: HashMap<u32, crate::snapshot::JvmThread>,
    sections: HashMap<CallKind, SectionSeen>,
}

impl CallsMerge {
    pub fn new() -> Result<CallsMerge, CliError> {
        Ok(CallsMerge {
            sorter: Sorter::new(WIDTH, budget(32 << 20))?,
            frames: Vec::new(),
            frame_ids: HashMap::new(),
            threads: Vec::new(),
            thread_ids: HashMap::new(),
            jvm_threads: HashMap::new(),
            sections: HashMap::new(),
        })
    }

    fn frame_id(&mut self, f: Frame) -> u32 {
        if let Some(&i) = self.frame_ids.get(&f) {
            return i;
        }
        let i = self.frames.len() as u32;
        self.frames.push(f.clone());
        self.frame_ids.insert(f, i);
        i
    }

    fn thread_id(&mut self, name: &str) -> u32 {
        if let Some(&i) = self.thread_ids.get(name) {
            return i;
        }
        let i = self.threads.len() as u32;
        self.threads.push(name.to_owned());
        self.thread_ids.insert(name.to_owned(), i);
        i
    }

    /// Adds one input's call sections.
    pub fn add(&mut self, snap: &Snapshot, warn: &mut Warnings) -> io::Result<()> {
        for sec in &snap.call_sections {
            if !KINDS.contains(&sec.kind) {
                *warn.dropped.entry(sec.kind.tag()).or_default() += 1;
                continue;
            }
            let seen = self.sections.entry(sec.kind).or_default();
            seen.inputs += 1;
            seen.live.push(sec.live);
            seen.live_rules.push(sec.live_rule.clone());
            seen.values.push(sec.values.clone());
            let kind = kind_byte(sec.kind);
            for t in &sec.threads {
                let mut key = vec![kind];
                let thread = self.thread_id(&t.name);
                if let Some(k) = t.jvm_thread {
                    self.jvm_threads.entry(thread).or_insert(k);
                }
                key.extend_from_slice(&thread.to_be_bytes());
                let mut v = [0u64; WIDTH];
                let mut opt = |at: usize, x: Option<u64>| {
                    if let Some(x) = x {
                        v[at] = x;
                        v[at + 1] = 1;
                    }
                };
                opt(T_CPU, t.cpu_time);
                opt(T_ELAPSED, t.elapsed_time);
                opt(T_VIRTUAL, t.virtual_threads);
                opt(T_ENDED, t.ended_threads);
                for (i, &x) in t.totals.iter().enumerate() {
                    opt(T_TOTALS + 2 * i, x);
                }
                opt(T_ALIVE, t.is_alive.map(u64::from));
                self.sorter.push(&key, &v)?;
                let thread_len = key.len();
                for n in t.tree.walk() {
                    self.add_node(snap, &mut key, thread_len, &n)?;
                }
            }
        }
        Ok(())
    }

    fn add_node(
        &mut self,
        snap: &Snapshot,
        key: &mut Vec<u8>,
        thread_len: usize,
        n: &Node,
    ) -> io::Result<()> {
        let name = snap.names.get(n.name);
        let depth = n.depth as usize;
        if depth == 1 && name == NO_JAVA_FRAME {
            // Its descendants (none) and itself stay out; the path stack
            // is reset by the next node's depth.
            key.truncate(thread_len);
            return Ok(());
        }
        let frame = Frame {
            name: name.to_owned(),
            signature: (n.signature != NONE).then(|| snap.names.get(n.signature).to_owned()),
            line: n.line,
            class: n.class,
        };
        let id = self.frame_id(frame);
        key.truncate(thread_len + 4 * (depth - 1));
        key.extend_from_slice(&id.to_be_bytes());
        let mut v = [0u64; WIDTH];
        v[..MAX_VALUES].copy_from_slice(&n.v.0);
        v[N_TYPES..N_SELF_TYPES].copy_from_slice(&n.types.through);
        v[N_SELF_TYPES..NODE_WIDTH].copy_from_slice(&n.types.own);
        self.sorter.push(key, &v)
    }

    pub fn finish(self, warn: &mut Warnings) -> Result<SortedCalls, CliError> {
        let mut sections = Vec::new();
        for kind in KINDS {
            let Some(seen) = self.sections.get(&kind) else {
                continue;
            };
            let desc = kind.desc();
            // An attribute all inputs agree on is kept; one they differ
            // on is left out (the figures are estimates scaled by it
            // already: `interval`), with a warning.
            let mut values = Vec::new();
            for (i, &(key, _)) in desc.section_values.iter().enumerate() {
                let first = seen.values[0].get(i).copied().flatten();
                // What one JVM's censuses cost: no figure of the merge.
                if profrj_format::sites::JVM_FACTS.contains(&key) {
                    values.push((key, None));
                    continue;
                }
                if seen
                    .values
                    .iter()
                    .all(|v| v.get(i).copied().flatten() == first)
                {
                    values.push((key, first));
                } else {
                    warn.section_attributes.push(format!(
                        "<{}> {key} differs between the inputs: left out",
                        desc.tag
                    ));
                    values.push((key, None));
                }
            }
            let live = match desc.live {
                Some(key) if seen.live.iter().all(|&l| l == seen.live[0]) => {
                    let rule = live_rule(desc, &seen.live_rules, warn);
                    Some((key, seen.live[0], rule))
                }
                Some(key) => {
                    warn.section_attributes.push(format!(
                        "<{}> {key} differs between the inputs: the figures mix live and all objects; left out",
                        desc.tag
                    ));
                    None
                }
                None => None,
            };
            sections.push((kind, values, live));
        }
        let merged = self
            .sorter
            .finish()
            .map_err(|e| CliError::Output(format!("merge's scratch file: {e}")))?;
        Ok(SortedCalls {
            merged: Some(merged),
            frames: self.frames,
            threads: self.threads,
            jvm_threads: self.jvm_threads,
            sections,
        })
    }
}

fn kind_byte(k: CallKind) -> u8 {
    KINDS.iter().position(|&x| x == k).expect("merged kind") as u8
}

/// A section's kind, its numeric attributes, and `live` with its rule:
/// what every input agreed on.
type SectionAttrs = (
    CallKind,
    Vec<(&'static str, Option<u64>)>,
    Option<(&'static str, bool, Option<(&'static str, String)>)>,
);

/// The live rule the inputs share (with its attribute), or none: a rule
/// they differ on is left out with a warning (the live counts then mix
/// objects alive at a GC of the snapshot's and at a program's last GC).
fn live_rule(
    desc: &SectionDesc,
    rules: &[Option<String>],
    warn: &mut Warnings,
) -> Option<(&'static str, String)> {
    let key = desc.live_rule?;
    let first = rules.first()?.clone();
    if rules.iter().any(|r| *r != first) {
        warn.section_attributes.push(format!(
            "<{}> {key} differs between the inputs: left out",
            desc.tag
        ));
        return None;
    }
    Some((key, first?))
}

pub struct SortedCalls {
    merged: Option<Merged>,
    frames: Vec<Frame>,
    threads: Vec<String>,
    jvm_threads: HashMap<u32, crate::snapshot::JvmThread>,
    sections: Vec<SectionAttrs>,
}

impl SortedCalls {
    pub fn write(&mut self, w: &mut dyn Write) -> io::Result<()> {
        let mut open_kind: Option<u8> = None;
        let mut open_thread: Option<u32> = None;
        // Depth of the open path (nodes open below the thread).
        let mut depth = 0usize;
        let Some(mut merged) = self.merged.take() else {
            return Ok(());
        };
        while let Some((key, v)) = merged.next_record()? {
            if key.len() < 5 || (key.len() - 5) % 4 != 0 {
                return Err(io::Error::other("a malformed call-tree record"));
            }
            let kind = key[0];
            let thread = u32::from_be_bytes(key[1..5].try_into().expect("4"));
            let path = &key[5..];
            if path.is_empty() {
                // A thread: everything open closes.
                close_nodes(w, depth, 0)?;
                depth = 0;
                if open_thread.is_some() {
                    writeln!(w, "  </{}>", calls::THREAD)?;
                }
                if open_kind != Some(kind) {
                    if let Some(k) = open_kind {
                        writeln!(w, " </{}>", KINDS[k as usize].tag())?;
                    }
                    self.open_section(w, kind)?;
                    open_kind = Some(kind);
                }
                self.write_thread(w, KINDS[kind as usize], thread, v)?;
                open_thread = Some(thread);
                continue;
            }
            let d = path.len() / 4;
            close_nodes(w, depth, d - 1)?;
            let id = u32::from_be_bytes(path[path.len() - 4..].try_into().expect("4"));
            self.write_node(w, KINDS[kind as usize], d, id, v)?;
            depth = d;
        }
        close_nodes(w, depth, 0)?;
        if open_thread.is_some() {
            writeln!(w, "  </{}>", calls::THREAD)?;
        }
        if let Some(k) = open_kind {
            writeln!(w, " </{}>", KINDS[k as usize].tag())?;
        }
        Ok(())
    }

    fn open_section(&self, w: &mut dyn Write, kind: u8) -> io::Result<()> {
        let kind = KINDS[kind as usize];
        write!(w, " <{}", kind.tag())?;
        if let Some((_, values, live)) = self.sections.iter().find(|s| s.0 == kind) {
            for (key, v) in values {
                if let Some(v) = v {
                    write!(w, r#" {key}="{v}""#)?;
                }
            }
            if let Some((key, l, rule)) = live {
                write!(w, r#" {key}="{}""#, profrj_format::boolean(*l))?;
                if let Some((key, rule)) = rule {
                    write!(w, r#" {key}="{}""#, attr(rule))?;
                }
            }
        }
        writeln!(w, ">")
    }

    fn write_thread(
        &self,
        w: &mut dyn Write,
        kind: CallKind,
        thread: u32,
        v: &[u64],
    ) -> io::Result<()> {
        let name = self.threads.get(thread as usize).map_or("", String::as_str);
        let name = profrj_format::names::escape(name);
        write!(
            w,
            r#"  <{} {}="{}""#,
            calls::THREAD,
            calls::NAME,
            attr(&name)
        )?;
        let opt = |w: &mut dyn Write, key: &str, at: usize| -> io::Result<()> {
            if v[at + 1] > 0 {
                write!(w, r#" {key}="{}""#, v[at])?;
            }
            Ok(())
        };
        opt(w, calls::CPU_TIME, T_CPU)?;
        opt(w, sampler::thread::ELAPSED_TIME, T_ELAPSED)?;
        opt(w, calls::VIRTUAL_THREADS, T_VIRTUAL)?;
        opt(w, calls::ENDED_THREADS, T_ENDED)?;
        for (i, &(key, _)) in kind.desc().thread_totals.iter().enumerate() {
            opt(w, key, T_TOTALS + 2 * i)?;
        }
        if v[T_ALIVE + 1] > 0 {
            write!(
                w,
                r#" {}="{}""#,
                calls::IS_ALIVE,
                profrj_format::boolean(v[T_ALIVE] > 0)
            )?;
        }
        if let Some(k) = self.jvm_threads.get(&thread) {
            write!(w, r#" {}="{}""#, sampler::thread::JVM_THREAD, k.name())?;
        }
        writeln!(w, ">")
    }

    fn write_node(
        &self,
        w: &mut dyn Write,
        kind: CallKind,
        depth: usize,
        id: u32,
        v: &[u64],
    ) -> io::Result<()> {
        let desc = kind.desc();
        let f = self
            .frames
            .get(id as usize)
            .ok_or_else(|| io::Error::other("a frame id out of range"))?;
        let indent = " ".repeat(depth + 2);
        let name = profrj_format::names::escape(&f.name);
        write!(
            w,
            r#"{indent}<{} {}="{}""#,
            calls::NODE,
            calls::NAME,
            attr(&name)
        )?;
        if let (Some(key), Some(sig)) = (desc.signature, &f.signature) {
            let sig = profrj_format::names::escape(sig);
            write!(w, r#" {key}="{}""#, attr(&sig))?;
        }
        if f.line != NO_LINE {
            write!(w, r#" {}="{}""#, sampler::node::LINE, f.line)?;
        }
        if let (Some(key), true) = (desc.class_marker, f.class) {
            write!(w, r#" {key}="{}""#, profrj_format::TRUE)?;
        }
        for (key, x) in desc.node_values.iter().zip(v) {
            write!(w, r#" {key}="{x}""#)?;
        }
        for (key, counts) in [
            (sampler::node::FRAME_TYPES, &v[N_TYPES..N_SELF_TYPES]),
            (sampler::node::SELF_TYPES, &v[N_SELF_TYPES..NODE_WIDTH]),
        ] {
            let pairs: Vec<_> = profrj_format::frame_types::ALL
                .into_iter()
                .zip(counts.iter().copied())
                .collect();
            let text = profrj_format::frame_types::write(&pairs);
            if !text.is_empty() {
                write!(w, r#" {key}="{text}""#)?;
            }
        }
        writeln!(w, ">")
    }
}

/// Closes the open nodes from `from` down to `to` deep.
fn close_nodes(w: &mut dyn Write, from: usize, to: usize) -> io::Result<()> {
    for d in (to + 1..=from).rev() {
        writeln!(w, "{}</{}>", " ".repeat(d + 2), calls::NODE)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::parse_bytes;

    fn merged(inputs: &[&str]) -> (String, Warnings) {
        let mut m = CallsMerge::new().unwrap();
        let mut warn = Warnings::default();
        for xml in inputs {
            m.add(&parse_bytes(xml.as_bytes()).unwrap(), &mut warn)
                .unwrap();
        }
        let mut sorted = m.finish(&mut warn).unwrap();
        let mut out = Vec::new();
        sorted.write(&mut out).unwrap();
        (String::from_utf8(out).unwrap(), warn)
    }

    /// Frame types sum type by type, as the figures do; a node without
    /// any keeps none.
    #[test]
    fn frame_types_sum() {
        let a = r#"<doc><sampler><thread name="main" cumulated="3" cumulatedElapsed="3">
            <profile name="A.a()" hits="1" elapsed="1" cumulated="3" cumulatedElapsed="3" frameTypes="interpreted:3" selfTypes="interpreted:1">
              <profile name="B.b()" hits="2" elapsed="2" cumulated="2" cumulatedElapsed="2"/>
            </profile></thread></sampler></doc>"#;
        let b = r#"<doc><sampler><thread name="main" cumulated="5" cumulatedElapsed="5">
            <profile name="A.a()" hits="0" elapsed="0" cumulated="5" cumulatedElapsed="5" frameTypes="c2:4 interpreted:1">
              <profile name="B.b()" hits="5" elapsed="5" cumulated="5" cumulatedElapsed="5"/>
            </profile></thread></sampler></doc>"#;
        let (xml, _) = merged(&[a, b]);
        assert!(
            xml.contains(r#"<profile name="A.a()" hits="1" elapsed="1" cumulated="8" cumulatedElapsed="8" frameTypes="interpreted:4 c2:4" selfTypes="interpreted:1">"#),
            "{xml}"
        );
        assert!(
            xml.contains(
                r#"<profile name="B.b()" hits="7" elapsed="7" cumulated="7" cumulatedElapsed="7">"#
            ),
            "{xml}"
        );
    }

    /// Threads of one name merge; paths sum node by node; samples without
    /// a Java frame stay in the thread's totals (and come back as the
    /// reader's node); a section attribute that differs is left out.
    #[test]
    fn threads_paths_totals_and_attributes() {
        let a = r#"<doc><sampler><thread name="main" cumulated="10" cumulatedElapsed="12" cpuTime="5" isAlive="false">
            <profile name="A.a()" hits="1" elapsed="1" cumulated="8" cumulatedElapsed="8">
              <profile name="B.b()" hits="7" elapsed="7" cumulated="7" cumulatedElapsed="7"/>
            </profile></thread></sampler>
            <alloc interval="512"><thread name="t" bytes="10" objects="1" samples="1">
              <profile name="A.a()" cumulatedBytes="10" cumulatedObjects="1" cumulatedSamples="1">
                <profile name="int[]" class="true" bytes="10" objects="1" samples="1" cumulatedBytes="10" cumulatedObjects="1" cumulatedSamples="1"/>
              </profile></thread></alloc></doc>"#;
        let b = r#"<doc><sampler><thread name="main" cumulated="3" cumulatedElapsed="3" cpuTime="2" isAlive="true">
            <profile name="A.a()" hits="0" elapsed="0" cumulated="3" cumulatedElapsed="3">
              <profile name="C.c()" hits="3" elapsed="3" cumulated="3" cumulatedElapsed="3"/>
            </profile></thread></sampler>
            <alloc interval="1024"><thread name="t" bytes="20" objects="2" samples="1">
              <profile name="A.a()" cumulatedBytes="20" cumulatedObjects="2" cumulatedSamples="1">
                <profile name="int[]" class="true" bytes="20" objects="2" samples="1" cumulatedBytes="20" cumulatedObjects="2" cumulatedSamples="1"/>
              </profile></thread></alloc></doc>"#;
        let (xml, warn) = merged(&[a, b]);
        assert_eq!(
            warn.section_attributes.len(),
            1,
            "{:?}",
            warn.section_attributes
        );
        let snap = parse_bytes(format!("<doc>{xml}</doc>").as_bytes()).unwrap();
        let s = snap.calls(CallKind::Sampler).unwrap();
        assert_eq!(s.threads.len(), 1);
        let t = &s.threads[0];
        assert_eq!((t.cpu_time, t.is_alive), (Some(7), Some(true)));
        assert_eq!(s.thread_total(t, calls::CUMULATED), Some(13));
        let nodes = t.tree.nodes();
        let node = |name: &str| {
            nodes
                .iter()
                .find(|n| snap.names.get(n.name) == name)
                .unwrap_or_else(|| panic!("no {name}"))
        };
        assert_eq!(s.value(node("A.a()"), calls::CUMULATED), 11);
        assert_eq!(s.value(node("B.b()"), sampler::node::HITS), 7);
        assert_eq!(s.value(node("C.c()"), sampler::node::HITS), 3);
        // 13 RUNNABLE samples, 1 + 7 + 3 with a frame: 2 without.
        assert_eq!(s.value(node(NO_JAVA_FRAME), sampler::node::HITS), 2);
        let al = snap.calls(CallKind::Alloc).unwrap();
        assert_eq!(al.values, vec![None]);
        let class = al.threads[0].tree.nodes().into_owned();
        let int = class.iter().find(|n| n.class).unwrap();
        assert_eq!(al.value(int, profrj_format::alloc::node::BYTES), 30);
        assert_eq!((al.live, al.live_rule.as_deref()), (false, None));
    }

    /// `<alloc live liveRule>`: a rule every input shares is kept, one they
    /// differ on left out with a warning.
    #[test]
    fn a_live_rule_is_kept_where_the_inputs_agree() {
        let doc = |rule: &str| {
            format!(
                r#"<doc><alloc interval="512" live="true" liveRule="{rule}"><thread name="t" bytes="10" objects="1" samples="1">
                  <profile name="int[]" class="true" bytes="10" objects="1" samples="1" cumulatedBytes="10" cumulatedObjects="1" cumulatedSamples="1"/>
                  </thread></alloc></doc>"#
            )
        };
        let (gc, last) = (doc("gc"), doc("lastGc"));
        let (xml, warn) = merged(&[&gc, &gc]);
        assert!(
            warn.section_attributes.is_empty(),
            "{:?}",
            warn.section_attributes
        );
        let snap = parse_bytes(format!("<doc>{xml}</doc>").as_bytes()).unwrap();
        let al = snap.calls(CallKind::Alloc).unwrap();
        assert_eq!((al.live, al.live_rule.as_deref()), (true, Some("gc")));
        let (xml, warn) = merged(&[&gc, &last]);
        assert_eq!(
            warn.section_attributes.len(),
            1,
            "{:?}",
            warn.section_attributes
        );
        assert!(!xml.contains("liveRule"), "{xml}");
    }
}
