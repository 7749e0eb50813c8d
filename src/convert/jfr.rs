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
//!
//! A frame's type: `Java` (or `Native`) when the snapshot has no frame
//! types; with them, the node's dominant type, as the JDK names it and as
//! the agent's own recordings write it (`profrj_jfr::schema::frame_type`):
//! `Interpreted`, `JIT compiled` (C1, C2 or a tier not known: JFR does not
//! tell tiers apart), `Inlined`, `Native` (also the JVM's C++ and the
//! kernel: native code), and `Java` for a stub, as the agent writes it.
//! The stack's top frame takes its node's `selfTypes` (the samples with it
//! on top), a caller its `frameTypes`. One stack per node, so a node whose
//! top samples ran two ways is written with the way most ran.

use crate::error::CliError;
use crate::snapshot::type_counts::dominant;
use crate::snapshot::{CallKind, CallSection, Names, Node, Snapshot, NO_LINE};
use profrj_format::frame_types::FrameType;
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
    let sections: Vec<&CallSection> = [CallKind::Sampler, CallKind::Alloc, CallKind::Lock]
        .into_iter()
        .filter_map(|k| snap.calls(k))
        .collect();
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
        for node in t.tree.walk() {
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
    /// Stack keys given (from 1), one per node with an event: the
    /// checkpoint spells them in a second walk, in the same order.
    stacks: u64,
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
            stacks: 0,
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
        for s in sections {
            let d = s.desc();
            let slot = |a: &str| d.slot(a).unwrap_or(0);
            for t in &s.threads {
                thread_key += 1;
                self.pools.thread(
                    thread_key,
                    ThreadEntry {
                        name: t.name.clone(),
                        os_thread_id: 0,
                        java_thread_id: thread_key,
                    },
                );
                let mut path: Vec<PathFrame> = Vec::new();
                for node in t.tree.walk() {
                    path.truncate(node.depth as usize - 1);
                    path.push(path_frame(&node));
                    // Every frame of a stack is named before the pools are
                    // written: a stack's frames are nodes walked before it.
                    self.method(node.name);
                    let v = &node.v.0;
                    let figures = event_figures(s.kind, v, slot);
                    if figures == 0 {
                        continue;
                    }
                    let (stack, class) = self.stack_of(&path);
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
                                .get(node.name)
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

    /// The stack key of the walk's node (the last of `path`; 0: no Java
    /// frame) and, for a class frame, its class's key.
    fn stack_of(&mut self, path: &[PathFrame]) -> (u64, u64) {
        let &(name, _, class_frame, _) = path.last().expect("a node");
        let class = if class_frame {
            let name = self.names.get(name);
            self.pools
                .class(&profrj_jfr::names::internal_type_name(name))
        } else {
            0
        };
        if stack_top(&self.methods, path).is_none() {
            return (0, class);
        }
        self.stacks += 1;
        (self.stacks, class)
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
        let stacks = self.stacks;
        let methods = &self.methods;
        let pools = std::mem::take(&mut self.pools);
        pools.write_checkpoint(w, end, stacks, |w| {
            let mut b = Buf::new();
            let mut frames = Vec::new();
            let mut key = 0u64;
            // The nodes given a stack, in the order write_events gave them.
            let mut each = |path: &[PathFrame]| -> std::io::Result<()> {
                let Some(top) = stack_top(methods, path) else {
                    return Ok(());
                };
                frames.clear();
                let mut truncated = false;
                for (k, &(name, line, _, types)) in path[..=top].iter().rev().enumerate() {
                    if frames.len() == MAX_FRAMES {
                        truncated = true;
                        break;
                    }
                    let fm = methods[name as usize].unwrap_or(FrameMethod {
                        method: 0,
                        native: false,
                        marker: Marker::None,
                    });
                    match fm.marker {
                        Marker::Truncated => truncated = true,
                        Marker::NoFrame => {}
                        Marker::None => frames.push(Frame {
                            method: fm.method,
                            line: match line {
                                NO_LINE => -1,
                                line => i32::try_from(line).unwrap_or(-1),
                            },
                            bci: -1,
                            kind: match types {
                                // The top frame: how it ran when on top.
                                (through, own) if k == 0 => own.or(through),
                                (through, _) => through,
                            }
                            .map_or(
                                if fm.native {
                                    frame_type::NATIVE
                                } else {
                                    frame_type::JAVA
                                },
                                jfr_type,
                            ),
                        }),
                    }
                }
                key += 1;
                b.varint(key);
                schema::encode_stack(&mut b, truncated, &frames);
                if b.len() > 1 << 16 {
                    w.raw(&b.bytes)?;
                    b.clear();
                }
                Ok(())
            };
            for s in sections {
                let d = s.desc();
                let slot = |a: &str| d.slot(a).unwrap_or(0);
                for t in &s.threads {
                    let mut path: Vec<PathFrame> = Vec::new();
                    for node in t.tree.walk() {
                        path.truncate(node.depth as usize - 1);
                        path.push(path_frame(&node));
                        if event_figures(s.kind, &node.v.0, slot) != 0 {
                            each(&path)?;
                        }
                    }
                }
            }
            w.raw(&b.bytes)
        })
    }
}

/// A frame on the walk's path: name, line, whether a class frame, and its
/// node's dominant types (through it, on top).
type PathFrame = (u32, u32, bool, (Option<FrameType>, Option<FrameType>));

fn path_frame(n: &Node) -> PathFrame {
    let types = (dominant(&n.types.through), dominant(&n.types.own));
    (n.name, n.line, n.class, types)
}

/// A type's key in the frame type pool.
fn jfr_type(t: FrameType) -> u64 {
    match t {
        FrameType::Interpreted => frame_type::INTERPRETED,
        FrameType::C1 | FrameType::C2 | FrameType::Jit => frame_type::JIT_COMPILED,
        FrameType::Inlined => frame_type::INLINED,
        FrameType::Native | FrameType::Vm | FrameType::Kernel => frame_type::NATIVE,
        FrameType::Stub => frame_type::JAVA,
    }
}

/// What a node's events count (0: no event, no stack).
fn event_figures(kind: CallKind, v: &[u64], slot: impl Fn(&str) -> usize) -> u64 {
    match kind {
        CallKind::Sampler => v[slot(sampler::node::ELAPSED)],
        CallKind::Alloc => v[slot(alloc::node::BYTES)],
        _ => v[slot(lock::node::COUNT)],
    }
}

/// Where the stack of the walk's node (the last of `path`) starts: the
/// node, or for a class frame its method; `None` for no Java frame (a
/// class frame at the root, the `[no Java frame]` node).
fn stack_top(methods: &[Option<FrameMethod>], path: &[PathFrame]) -> Option<usize> {
    let last = path.len() - 1;
    let top = if path[last].2 {
        last.checked_sub(1)?
    } else {
        last
    };
    let no_frame = methods
        .get(path[top].0 as usize)
        .copied()
        .flatten()
        .is_some_and(|m| m.marker == Marker::NoFrame);
    (!(no_frame && top == 0)).then_some(top)
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
