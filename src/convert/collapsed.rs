//! Collapsed stacks: `root;caller;callee count`, one line per call-tree node
//! with a non-zero own weight. The sum of the counts is the sum of every
//! node's own weight: the section's total for the chosen metric.
//!
//! Streamed in a fixed budget: each thread's tree is walked in document
//! order (from the scratch file a snapshot's trees are kept in) and each
//! node's line written from the walk's path as it is reached. Threads are
//! not merged: two threads with one stack write it twice, as the format
//! allows (flamegraph.pl, inferno and speedscope sum repeated stacks). What
//! is held is a string per distinct frame and the current path, never the
//! lines or a tree. A stack deeper than [`MAX_FRAMES`] keeps its top frames
//! under a `[truncated]` root (the agent's own convention), so a
//! pathological 100,000-deep chain cannot make the output quadratic in its
//! depth; those stacks are merged when their top frames agree (found by
//! [`TopFrames`]) and written when [`DEEP_HELD`] frames of them are held,
//! and at the end.
//!
//! With `--frame-types` (async-profiler's `ann`), each frame of a snapshot
//! with frame types ends in async-profiler's suffix for its type
//! (`FrameType::collapsed_suffix`: `_[j]` compiled, `_[i]` inlined, `_[0]`
//! interpreted, `_[1]` C1). A node counts its samples per type but not which
//! types the frames below it had in each, so a line cannot be split by the
//! combination of types its samples ran; each frame gets its node's
//! dominant type (`frameTypes`, the samples through it) and a node's line
//! stays one line, its count whole.

use super::stacks::{Key, TopFrames, MAX_FRAMES, TRUNCATED};
use crate::snapshot::type_counts::dominant;
use crate::snapshot::{CallThread, Metric, Names, NO_LINE};
use profrj_format::frame_types::FrameType;
use profrj_format::names;
use std::collections::HashMap;
use std::io::{self, Write};

/// A frame as the format allows: the name escaped as every writer does
/// (`profrj_format::escape`: no control character, so no line break), and
/// `;`, which separates frames, as `:`.
pub fn frame(name: &str) -> String {
    names::escape(name).replace(';', ":")
}

/// The most frames of merged deep stacks held before they are written.
pub const DEEP_HELD: usize = 1 << 22;

/// Distinct frame texts, by name (and line, and type).
struct Frames<'a> {
    names: &'a Names,
    texts: Vec<String>,
    ids: HashMap<String, u32>,
    of_name: Vec<u32>,
    with_line: HashMap<(u32, u32), u32>,
    /// Frames with a type's suffix: by name, line and type.
    typed: HashMap<(u32, u32, FrameType), u32>,
}

impl<'a> Frames<'a> {
    fn new(names: &'a Names) -> Frames<'a> {
        Frames {
            names,
            texts: Vec::new(),
            ids: HashMap::new(),
            of_name: vec![u32::MAX; names.all().len()],
            with_line: HashMap::new(),
            typed: HashMap::new(),
        }
    }

    fn intern(&mut self, text: String) -> u32 {
        let next = self.texts.len() as u32;
        let texts = &mut self.texts;
        *self.ids.entry(text).or_insert_with_key(|t| {
            texts.push(t.clone());
            next
        })
    }

    fn id(&mut self, name: u32, line: u32) -> u32 {
        if line == NO_LINE {
            if let Some(&f) = self.of_name.get(name as usize).filter(|&&f| f != u32::MAX) {
                return f;
            }
            let f = self.intern(frame(self.names.get(name)));
            if let Some(slot) = self.of_name.get_mut(name as usize) {
                *slot = f;
            }
            return f;
        }
        if let Some(&f) = self.with_line.get(&(name, line)) {
            return f;
        }
        // async-profiler's `lines`: `method:line`.
        let f = self.intern(frame(&format!("{}:{line}", self.names.get(name))));
        self.with_line.insert((name, line), f);
        f
    }

    /// The frame of `name` (and `line`) that ran as `t`: its text with
    /// async-profiler's suffix (none for native, VM and stub frames).
    fn id_typed(&mut self, name: u32, line: u32, t: Option<FrameType>) -> u32 {
        let Some(t) = t.filter(|t| !t.collapsed_suffix().is_empty()) else {
            return self.id(name, line);
        };
        if let Some(&f) = self.typed.get(&(name, line, t)) {
            return f;
        }
        let text = match line {
            NO_LINE => self.names.get(name).to_owned(),
            line => format!("{}:{line}", self.names.get(name)),
        };
        let f = self.intern(frame(&format!("{text}{}", t.collapsed_suffix())));
        self.typed.insert((name, line, t), f);
        f
    }

    fn text(&self, f: u32) -> &[u8] {
        self.texts[f as usize].as_bytes()
    }
}

/// Writes `frames;…;frames count`.
fn line<'a>(
    out: &mut dyn Write,
    buf: &mut Vec<u8>,
    frames: impl Iterator<Item = &'a [u8]>,
    count: u64,
) -> io::Result<()> {
    buf.clear();
    for (k, f) in frames.enumerate() {
        if k > 0 {
            buf.push(b';');
        }
        buf.extend_from_slice(f);
    }
    let _ = writeln!(buf, " {count}");
    out.write_all(buf)
}

/// Merged stacks deeper than [`MAX_FRAMES`], by (thread frame, top frames):
/// their top frames (root first) and summed count.
#[derive(Default)]
struct Deep {
    index: HashMap<(u32, Key), usize>,
    stacks: Vec<(u32, Vec<u32>, u64)>,
    held: usize,
}

impl Deep {
    fn add(&mut self, thread: u32, key: Key, top: &[u32], count: u64) {
        if let Some(&i) = self.index.get(&(thread, key)) {
            let c = &mut self.stacks[i].2;
            *c = c.saturating_add(count);
            return;
        }
        self.index.insert((thread, key), self.stacks.len());
        self.stacks.push((thread, top.to_vec(), count));
        self.held += top.len();
    }

    fn write(&mut self, out: &mut dyn Write, buf: &mut Vec<u8>, f: &Frames) -> io::Result<()> {
        for (thread, top, count) in self.stacks.drain(..) {
            let thread = (thread != u32::MAX).then(|| f.text(thread));
            let cut = std::iter::once(TRUNCATED.as_bytes());
            let frames = top.iter().map(|&x| f.text(x));
            line(out, buf, thread.into_iter().chain(cut).chain(frames), count)?;
        }
        self.index.clear();
        self.held = 0;
        Ok(())
    }
}

pub fn collapsed(
    out: &mut dyn Write,
    names: &Names,
    threads: &[&CallThread],
    metric: Metric,
    thread_frames: bool,
    frame_types: bool,
) -> io::Result<()> {
    let mut f = Frames::new(names);
    let mut deep = Deep::default();
    let mut buf = Vec::new();
    for t in threads {
        let thread = if thread_frames {
            f.intern(frame(&format!("[{}]", t.name)))
        } else {
            u32::MAX
        };
        let mut top = TopFrames::new(MAX_FRAMES);
        // The walk's path: frame ids, root first.
        let mut path: Vec<u32> = Vec::new();
        for n in t.tree.walk() {
            let d = n.depth as usize;
            let id = match frame_types {
                true => f.id_typed(n.name, n.line, dominant(&n.types.through)),
                false => f.id(n.name, n.line),
            };
            path.truncate(d - 1);
            path.push(id);
            let key = top.push(d, u64::from(id));
            let own = metric.own(&n.v);
            if own == 0 {
                continue;
            }
            if d > MAX_FRAMES {
                deep.add(thread, key, &path[d - MAX_FRAMES..], own);
                if deep.held >= DEEP_HELD {
                    deep.write(out, &mut buf, &f)?;
                }
                continue;
            }
            let lead = (thread != u32::MAX).then(|| f.text(thread));
            let frames = path.iter().map(|&x| f.text(x));
            line(out, &mut buf, lead.into_iter().chain(frames), own)?;
        }
    }
    deep.write(out, &mut buf, &f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{parse_bytes, CallKind, MetricName};

    fn metric(kind: CallKind, name: &'static str) -> Metric {
        Metric::of(kind, Some(MetricName(name))).unwrap()
    }

    fn text(names: &Names, threads: &[&CallThread], metric: Metric, thread_frames: bool) -> String {
        let mut out = Vec::new();
        collapsed(&mut out, names, threads, metric, thread_frames, false).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The lines' stacks with their counts summed (a stack two threads
    /// have is written twice), one per line in the order of the stacks.
    fn summed(text: &str) -> String {
        let mut by: std::collections::BTreeMap<&str, u64> = Default::default();
        for l in text.lines() {
            let (stack, n) = l.rsplit_once(' ').unwrap();
            *by.entry(stack).or_default() += n.parse::<u64>().unwrap();
        }
        by.iter().map(|(s, n)| format!("{s} {n}\n")).collect()
    }

    #[test]
    fn lines_merge_threads_and_keep_totals() {
        let xml = r#"<doc><sampler>
          <thread name="a"><profile name="main()" hits="1" elapsed="1">
            <profile name="f()" hits="3" elapsed="5"/><profile name="g;h()" hits="0" elapsed="2"/>
          </profile></thread>
          <thread name="b"><profile name="main()" hits="0" elapsed="0"><profile name="f()" hits="2" elapsed="2"/></profile></thread>
        </sampler></doc>"#;
        let s = parse_bytes(xml.as_bytes()).unwrap();
        let sec = s.calls(CallKind::Sampler).unwrap();
        let threads: Vec<_> = sec.threads.iter().collect();
        let cpu = text(&s.names, &threads, metric(CallKind::Sampler, "cpu"), false);
        // Each thread's lines in its order; repeated stacks summed by readers.
        assert_eq!(cpu, "main() 1\nmain();f() 3\nmain();f() 2\n");
        assert_eq!(summed(&cpu), "main() 1\nmain();f() 5\n");
        let wall = text(&s.names, &threads, metric(CallKind::Sampler, "wall"), true);
        assert_eq!(
            wall,
            "[a];main() 1\n[a];main();f() 5\n[a];main();g:h() 2\n[b];main();f() 2\n"
        );
    }

    /// Each frame ends in its node's dominant type's suffix; a node's line
    /// stays whole; an untyped frame, a native one and a thread get none.
    #[test]
    fn frame_types_add_async_profilers_suffixes() {
        let xml = crate::snapshot::type_counts::tests::TYPED.replace(
            r#"<profile name="b()" hits="2" elapsed="2" cumulated="2" cumulatedElapsed="2"/>"#,
            r#"<profile name="b()" hits="2" elapsed="2" cumulated="2" cumulatedElapsed="2"/>
               <profile name="n()" hits="4" elapsed="4" frameTypes="native:4 c1:1"/>
               <profile name="c1()" hits="1" elapsed="1" frameTypes="c1:1"/>"#,
        );
        let s = parse_bytes(xml.as_bytes()).unwrap();
        let sec = s.calls(CallKind::Sampler).unwrap();
        let threads: Vec<_> = sec.threads.iter().collect();
        let m = metric(CallKind::Sampler, "wall");
        let mut out = Vec::new();
        collapsed(&mut out, &s.names, &threads, m, true, true).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "[t];a()_[0] 1\n[t];a()_[0];b() 2\n[t];a()_[0];n() 4\n\
             [t];a()_[0];c1()_[1] 1\n[t];a()_[0];c()_[j] 3\n"
        );
        // Without the option: today's lines.
        assert_eq!(
            text(&s.names, &threads, m, false),
            "a() 1\na();b() 2\na();n() 4\na();c1() 1\na();c() 3\n"
        );
    }

    #[test]
    fn alloc_stacks_end_in_their_class() {
        use crate::snapshot::test_alloc::alloc;
        let s = alloc();
        let sec = s.calls(CallKind::Alloc).unwrap();
        let threads: Vec<_> = sec.threads.iter().collect();
        let bytes = text(&s.names, &threads, metric(CallKind::Alloc, "bytes"), false);
        assert_eq!(
            summed(&bytes),
            "int[] 100\n\
             p.A.main();p.A.big();byte[] 600\n\
             p.A.main();p.A.small();byte[] 200\n\
             p.A.main();p.A.small();java.lang.String 200\n\
             p.B.run();p.A.big();byte[] 300\n"
        );
        let objects = text(&s.names, &threads, metric(CallKind::Alloc, "objects"), true);
        assert!(
            objects.contains("[worker];p.B.run();p.A.big();byte[] 3\n"),
            "{objects}"
        );
        assert!(objects.contains("[main];int[] 1\n"), "{objects}");
    }
}
