//! `convert --to jfr`: a snapshot's call trees as a JFR recording, so JDK
//! Mission Control's and IntelliJ's hot-method, allocation and lock views
//! show the numbers `profrj report` shows. One chunk, streamed to the file:
//! the events as the trees are walked, then the metadata and the constant
//! pools (stack traces written from the trees again, not held).
//!
//! Per call-tree node with figures of its own (a distinct stack of a thread):
//! - `<sampler>`: its `hits` as that many `jdk.ExecutionSample` events
//!   (JMC counts events; JFR's sample has no weight), state
//!   `STATE_RUNNABLE`, and its other samples (`elapsed - hits`) as one
//!   `profiler.WallClockSample` carrying their number (`STATE_SLEEPING`);
//! - `<alloc>`: one `jdk.ObjectAllocationSample` whose `weight` is the
//!   node's bytes, with `allocationSize` = bytes / objects (so profrj reads
//!   the objects back), the class frame as `objectClass`;
//! - `<lock>`: its `count` waits as that many `jdk.JavaMonitorEnter` (or
//!   `jdk.ThreadPark` for a `java.util.concurrent` class) events whose
//!   durations add up to its `time`.
//!
//! Events are spread evenly over the snapshot's longest thread life, ending
//! at the snapshot file's modification time. Frames: the snapshot's names
//! taken apart (`pkg.Cls.m()`: class `pkg/Cls`, method `m`; `pkg.Cls()`, a
//! name whose last part starts with a capital, a constructor; `(native)` a
//! native frame; a name without a class, `[GC_active]`, a method of no
//! class), descriptor `()V`, no bytecode index (the trees have none), the
//! node's `line` as the frame's `lineNumber` when the snapshot has lines
//! (the agent's `lines`), else -1;
//! `[truncated]` sets the stack's `truncated`, `[no Java frame]` is an event
//! without a stack. A stack keeps its top [`MAX_FRAMES`] frames.

use crate::error::CliError;
use crate::snapshot::{CallKind, CallSection, CallThread, Names, Snapshot, NO_LINE};
use profrj_format::{alloc, lock, sampler};
use profrj_jfr::encode::Buf;
use profrj_jfr::schema::{self, events, frame_type, thread_state, Frame, Pools, ThreadEntry};
use profrj_jfr::{ChunkWriter, Start};
use std::io::{BufWriter, Write};
use std::path::Path;

const MAX_FRAMES: usize = 2048;
/// The most events repeated for counts (samples, waits): beyond it the
/// snapshot's counts are not a real profile's, and the file would be huge.
const MAX_EVENTS: u64 = 200_000_000;
const TICKS_PER_SECOND: u64 = 1_000_000_000;

/// A frame's method, taken apart once per name.
#[derive(Clone, Copy)]
struct FrameMethod {
    method: u64,
    native: bool,
    /// `[truncated]` / `[no Java frame]`: not a frame.
    marker: Marker,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Marker {
    None,
    Truncated,
    NoFrame,
}

pub fn jfr(snap: &Snapshot, out: &Path, modified_ns: u64) -> Result<(), CliError> {
    // The stack pool spells out each stack from the node standing for it:
    // the trees are loaded.
    let loaded: Vec<CallSection> = [CallKind::Sampler, CallKind::Alloc, CallKind::Lock]
        .into_iter()
        .filter_map(|k| snap.calls(k))
        .map(|s| {
            let mut s = s.clone();
            for t in &mut s.threads {
                t.tree = t.tree.loaded();
            }
            s
        })
        .collect();
    let sections: Vec<&CallSection> = loaded.iter().collect();
    if sections.is_empty() {
        return Err(CliError::Input(
            "--to jfr writes the <sampler>, <alloc> and <lock> sections; the snapshot has none"
                .into(),
        ));
    }
    for k in snap.call_kinds() {
        if !matches!(k, CallKind::Sampler | CallKind::Alloc | CallKind::Lock) {
            eprintln!(
                "profrj: <{}> has no JFR event and is left out of the recording",
                k.tag()
            );
        }
    }
    let total = sections.iter().map(|s| events_of(s)).sum::<u64>();
    if total > MAX_EVENTS {
        return Err(CliError::Input(format!(
            "the snapshot's counts make {total} events (more than {MAX_EVENTS}): refused"
        )));
    }
    let span_ns = sections
        .iter()
        .flat_map(|s| s.threads.iter())
        .filter_map(|t| t.elapsed_time)
        .max()
        .filter(|&e| e > 0)
        .unwrap_or(1_000_000_000);
    let start_nanos = modified_ns.saturating_sub(span_ns);
    crate::safe_fs::write_file_atomically(out, |file| {
        let start = Start {
            nanos: start_nanos,
            ticks: start_nanos,
            ticks_per_second: TICKS_PER_SECOND,
        };
        let mut w = ChunkWriter::new(BufWriter::with_capacity(1 << 16, &mut *file), start)?;
        let mut c = Converter::new(&snap.names, start_nanos, span_ns, total);
        c.write_events(&mut w, &sections)?;
        c.finish(&mut w, &sections, modified_ns)?;
        w.finish(span_ns)?.flush()
    })
}

/// Events a section makes (samples and waits repeated).
fn events_of(s: &CallSection) -> u64 {
    let d = s.desc();
    let slot = |a: &str| d.slot(a).unwrap_or(0);
    let mut n = 0u64;
    for t in &s.threads {
        for node in t.tree.nodes().iter().skip(1) {
            let v = &node.v.0;
            n = n.saturating_add(match s.kind {
                CallKind::Sampler => {
                    let hits = v[slot(sampler::node::HITS)];
                    let all = v[slot(sampler::node::ELAPSED)];
                    hits + u64::from(all > hits)
                }
                CallKind::Alloc => u64::from(v[slot(alloc::node::BYTES)] > 0),
                _ => v[slot(lock::node::COUNT)],
            });
        }
    }
    n
}

struct Converter<'a> {
    names: &'a Names,
    pools: Pools,
    /// Per name id: its method, once looked at.
    methods: Vec<Option<FrameMethod>>,
    /// Per stack key (from 1): (section, thread, node).
    stacks: Vec<(usize, usize, u32)>,
    start: u64,
    span: u64,
    total: u64,
    written: u64,
}

impl<'a> Converter<'a> {
    fn new(names: &'a Names, start: u64, span: u64, total: u64) -> Self {
        Converter {
            names,
            pools: Pools::default(),
            methods: vec![None; names.all().len()],
            stacks: Vec::new(),
            start,
            span,
            total: total.max(1),
            written: 0,
        }
    }

    /// The next event's time: events evenly over the span.
    fn tick(&mut self) -> u64 {
        let t = self.start + (self.written as u128 * self.span as u128 / self.total as u128) as u64;
        self.written += 1;
        t
    }

    fn method(&mut self, name: u32) -> FrameMethod {
        if let Some(m) = self.methods.get(name as usize).copied().flatten() {
            return m;
        }
        let text = self.names.get(name);
        let m = match text {
            "[truncated]" => FrameMethod {
                method: 0,
                native: false,
                marker: Marker::Truncated,
            },
            crate::snapshot::NO_JAVA_FRAME => FrameMethod {
                method: 0,
                native: false,
                marker: Marker::NoFrame,
            },
            _ => {
                let (class, method, native) = split_frame(text);
                let class = self.pools.class(&class.replace('.', "/"));
                FrameMethod {
                    // No descriptor is known; `()V` is one the JDK's `jfr
                    // print` can take apart (it fails on none).
                    method: self.pools.method(class, &method, "()V", 0),
                    native,
                    marker: Marker::None,
                }
            }
        };
        if let Some(slot) = self.methods.get_mut(name as usize) {
            *slot = Some(m);
        }
        m
    }

    fn write_events<W: Write + std::io::Seek>(
        &mut self,
        w: &mut ChunkWriter<W>,
        sections: &[&CallSection],
    ) -> std::io::Result<()> {
        let mut thread_key = 0u64;
        for (si, s) in sections.iter().enumerate() {
            let d = s.desc();
            let slot = |a: &str| d.slot(a).unwrap_or(0);
            for (ti, t) in s.threads.iter().enumerate() {
                thread_key += 1;
                self.pools.thread(
                    thread_key,
                    ThreadEntry {
                        name: t.name.clone(),
                        os_thread_id: 0,
                        java_thread_id: thread_key,
                    },
                );
                for (ni, node) in t.tree.nodes().iter().enumerate().skip(1) {
                    let v = &node.v.0;
                    let figures = match s.kind {
                        CallKind::Sampler => v[slot(sampler::node::ELAPSED)],
                        CallKind::Alloc => v[slot(alloc::node::BYTES)],
                        _ => v[slot(lock::node::COUNT)],
                    };
                    if figures == 0 {
                        continue;
                    }
                    let (stack, class) = self.stack_of(si, ti, t, ni as u32);
                    match s.kind {
                        CallKind::Sampler => {
                            let hits = v[slot(sampler::node::HITS)].min(figures);
                            for _ in 0..hits {
                                let at = self.tick();
                                w.event(|b| {
                                    events::execution_sample(
                                        b,
                                        at,
                                        thread_key,
                                        stack,
                                        thread_state::RUNNABLE,
                                    )
                                })?;
                            }
                            if figures > hits {
                                let at = self.tick();
                                let n = (figures - hits).min(u32::MAX as u64) as u32;
                                let ids = (thread_key, stack, thread_state::SLEEPING);
                                w.event(|b| events::wall_clock_sample(b, at, ids, n, 0))?;
                            }
                        }
                        CallKind::Alloc => {
                            let objects = v[slot(alloc::node::OBJECTS)];
                            let size = figures.checked_div(objects).unwrap_or(0);
                            let at = self.tick();
                            let ids = (thread_key, stack, class);
                            w.event(|b| events::allocation_sample(b, at, ids, figures, size))?;
                        }
                        _ => {
                            let time = v[slot(lock::node::TIME)];
                            let park = self
                                .names
                                .get(t.tree.nodes()[ni].name)
                                .starts_with("java.util.concurrent.");
                            for k in 0..figures {
                                // Durations add up to the node's time.
                                let d = time / figures + u64::from(k < time % figures);
                                let at = self.tick();
                                let ids = (thread_key, stack, class);
                                w.event(|b| {
                                    if park {
                                        events::thread_park(b, (at, d), ids, 0)
                                    } else {
                                        events::monitor_enter(b, (at, d), ids, 0, 0)
                                    }
                                })?;
                            }
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The stack key of a node (0: no Java frame) and, for a class frame,
    /// its class's key; names met on the way get their methods.
    fn stack_of(&mut self, si: usize, ti: usize, t: &CallThread, node: u32) -> (u64, u64) {
        let nodes = t.tree.nodes();
        let mut n = node;
        let mut class = 0;
        if nodes[n as usize].class {
            let name = self.names.get(nodes[n as usize].name);
            class = self
                .pools
                .class(&profrj_jfr::names::internal_type_name(name));
            n = nodes[n as usize].parent;
        }
        if n == 0 {
            return (0, class);
        }
        let first = self.method(nodes[n as usize].name);
        if first.marker == Marker::NoFrame && nodes[n as usize].parent == 0 {
            return (0, class);
        }
        // The methods of the frames kept, named now (the pools are written
        // before the stacks).
        let mut m = nodes[n as usize].parent;
        for _ in 1..=MAX_FRAMES {
            if m == 0 {
                break;
            }
            self.method(nodes[m as usize].name);
            m = nodes[m as usize].parent;
        }
        self.stacks.push((si, ti, n));
        (self.stacks.len() as u64, class)
    }

    /// The metadata and the constant pools, stack traces walked again.
    fn finish<W: Write + std::io::Seek>(
        &mut self,
        w: &mut ChunkWriter<W>,
        sections: &[&CallSection],
        end: u64,
    ) -> std::io::Result<()> {
        let info = events::RecordingInfo {
            id: 1,
            name: "profrj convert".into(),
            destination: String::new(),
            start_millis: self.start / 1_000_000,
            duration_millis: self.span / 1_000_000,
        };
        let at = self.start;
        w.event(|b| events::active_recording(b, at, &info))?;
        w.metadata(&schema::metadata_event(self.start))?;
        let stacks = std::mem::take(&mut self.stacks);
        let methods = &self.methods;
        let pools = std::mem::take(&mut self.pools);
        pools.write_checkpoint(w, end, stacks.len() as u64, |w| {
            let mut b = Buf::new();
            let mut frames = Vec::new();
            for (key, &(si, ti, node)) in stacks.iter().enumerate() {
                let nodes = sections[si].threads[ti].tree.nodes();
                frames.clear();
                let mut truncated = false;
                let mut n = node;
                while n != 0 {
                    if frames.len() == MAX_FRAMES {
                        truncated = true;
                        break;
                    }
                    let fm = methods[nodes[n as usize].name as usize].unwrap_or(FrameMethod {
                        method: 0,
                        native: false,
                        marker: Marker::None,
                    });
                    match fm.marker {
                        Marker::Truncated => truncated = true,
                        Marker::NoFrame => {}
                        Marker::None => frames.push(Frame {
                            method: fm.method,
                            line: match nodes[n as usize].line {
                                NO_LINE => -1,
                                line => i32::try_from(line).unwrap_or(-1),
                            },
                            bci: -1,
                            kind: if fm.native {
                                frame_type::NATIVE
                            } else {
                                frame_type::JAVA
                            },
                        }),
                    }
                    n = nodes[n as usize].parent;
                }
                b.varint(key as u64 + 1);
                schema::encode_stack(&mut b, truncated, &frames);
                if b.len() > 1 << 16 {
                    w.raw(&b.bytes)?;
                    b.clear();
                }
            }
            w.raw(&b.bytes)
        })
    }
}

/// (class, method, native) of a frame named as the sampler names it.
fn split_frame(text: &str) -> (String, String, bool) {
    let (head, args) = match text.find('(') {
        Some(i) => (&text[..i], &text[i..]),
        None => (text, ""),
    };
    let native = args == "(native)";
    if head.starts_with('[') || !head.contains('.') {
        return (String::new(), head.to_owned(), native);
    }
    let (class, last) = head.rsplit_once('.').expect("has a dot");
    if last.starts_with(|c: char| c.is_uppercase()) || last.starts_with("0x") {
        // `pkg.Cls()`, or a hidden class's `pkg.Cls$$Lambda$7.0x0123()`: a
        // constructor.
        return (head.to_owned(), "<init>".into(), native);
    }
    (class.to_owned(), last.to_owned(), native)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_taken_apart() {
        let s = |t: &str| split_frame(t);
        assert_eq!(s("p.C.m()"), ("p.C".into(), "m".into(), false));
        assert_eq!(s("p.C.m(native)"), ("p.C".into(), "m".into(), true));
        assert_eq!(
            s("p.Outer$Inner()"),
            ("p.Outer$Inner".into(), "<init>".into(), false)
        );
        assert_eq!(
            s("p.C.<clinit>()"),
            ("p.C".into(), "<clinit>".into(), false)
        );
        assert_eq!(s("[GC_active]"), ("".into(), "[GC_active]".into(), false));
        assert_eq!(
            s("p.C$$Lambda$7.0x0123()"),
            ("p.C$$Lambda$7.0x0123".into(), "<init>".into(), false)
        );
    }
}
