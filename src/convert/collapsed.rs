//! Collapsed stacks: `root;caller;callee count`, one line per distinct stack
//! with a non-zero own weight. The sum of the counts is the sum of every
//! node's own weight: the section's total for the chosen metric.
//!
//! Streamed: the threads' trees are merged into one tree of frames (threads
//! of one name, or all threads, meet there), whose nodes are then walked
//! depth first, siblings in the order of their frames' text, each stack
//! written from the walk's path as it is reached. What is held is that tree
//! (a node per distinct path, a string per distinct frame), never the lines.
//! A stack deeper than [`MAX_FRAMES`] keeps its top frames under a
//! `[truncated]` root (the agent's own convention), so a pathological
//! 100,000-deep chain cannot make the output quadratic in its depth; those
//! stacks (merged when their top frames agree, found by [`TopFrames`]) come
//! after the others.

use super::stacks::{Key, TopFrames, MAX_FRAMES, TRUNCATED};
use crate::snapshot::{CallThread, Metric, Names, Weighted, NO_LINE};
use profrj_format::names;
use std::collections::HashMap;
use std::io::{self, Write};

/// A frame as the format allows: the name escaped as every writer does
/// (`profrj_format::escape`: no control character, so no line break), and
/// `;`, which separates frames, as `:`.
pub fn frame(name: &str) -> String {
    names::escape(name).replace(';', ":")
}

/// The threads' trees merged: node 0 is the root; with thread frames, its
/// children are the threads.
struct Merged {
    /// Distinct frame texts.
    frames: Vec<String>,
    parent: Vec<u32>,
    frame: Vec<u32>,
    /// Frames below the thread frame (0 for the root and thread nodes).
    depth: Vec<u32>,
    own: Vec<u64>,
}

impl Merged {
    fn build(
        names: &Names,
        threads: &[&CallThread],
        metric: Metric,
        thread_frames: bool,
    ) -> Merged {
        let mut m = Merged {
            frames: Vec::new(),
            parent: vec![u32::MAX],
            frame: vec![u32::MAX],
            depth: vec![0],
            own: vec![0],
        };
        let mut frame_ids: HashMap<String, u32> = HashMap::new();
        let mut intern = |frames: &mut Vec<String>, text: String| {
            let next = frames.len() as u32;
            *frame_ids.entry(text).or_insert_with_key(|t| {
                frames.push(t.clone());
                next
            })
        };
        // Name id -> frame id, filled as names are met.
        let mut of_name: Vec<u32> = vec![u32::MAX; names.all().len()];
        let mut children: HashMap<(u32, u32), u32> = HashMap::new();
        let mut child = |m: &mut Merged, parent: u32, frame: u32, depth: u32| {
            let next = m.parent.len() as u32;
            *children.entry((parent, frame)).or_insert_with(|| {
                m.parent.push(parent);
                m.frame.push(frame);
                m.depth.push(depth);
                m.own.push(0);
                next
            })
        };
        for t in threads {
            let root = if thread_frames {
                let f = intern(&mut m.frames, frame(&format!("[{}]", t.name)));
                child(&mut m, 0, f, 0)
            } else {
                0
            };
            let w = Weighted::new(&t.tree, metric);
            // Where each node of the thread's tree went.
            let mut at = vec![root; t.tree.nodes.len()];
            for (i, n) in t.tree.nodes.iter().enumerate().skip(1) {
                let f = match n.line {
                    NO_LINE => {
                        let slot = &mut of_name[n.name as usize];
                        if *slot == u32::MAX {
                            *slot = intern(&mut m.frames, frame(names.get(n.name)));
                        }
                        *slot
                    }
                    // async-profiler's `lines`: `method:line`.
                    line => intern(
                        &mut m.frames,
                        frame(&format!("{}:{line}", names.get(n.name))),
                    ),
                };
                let node = child(&mut m, at[n.parent as usize], f, n.depth);
                m.own[node as usize] = m.own[node as usize].saturating_add(w.own[i]);
                at[i] = node;
            }
        }
        m
    }

    /// Each node's children, in the order of their frames' text.
    fn children(&self) -> (Vec<u32>, Vec<u32>) {
        let n = self.parent.len();
        let mut start = vec![0u32; n + 1];
        for &p in &self.parent[1..] {
            start[p as usize + 1] += 1;
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut kids = vec![0u32; n - 1];
        for (c, &p) in self.parent.iter().enumerate().skip(1) {
            kids[fill[p as usize] as usize] = c as u32;
            fill[p as usize] += 1;
        }
        for i in 0..n {
            let slice = &mut kids[start[i] as usize..start[i + 1] as usize];
            slice.sort_by(|&a, &b| {
                self.frames[self.frame[a as usize] as usize]
                    .cmp(&self.frames[self.frame[b as usize] as usize])
            });
        }
        (start, kids)
    }

    fn text(&self, node: u32) -> &[u8] {
        self.frames[self.frame[node as usize] as usize].as_bytes()
    }
}

/// Writes `frames;…;frames count`.
fn line<'a>(
    out: &mut dyn Write,
    frames: impl Iterator<Item = &'a [u8]>,
    count: u64,
) -> io::Result<()> {
    for (k, f) in frames.enumerate() {
        if k > 0 {
            out.write_all(b";")?;
        }
        out.write_all(f)?;
    }
    writeln!(out, " {count}")
}

pub fn collapsed(
    out: &mut dyn Write,
    names: &Names,
    threads: &[&CallThread],
    metric: Metric,
    thread_frames: bool,
) -> io::Result<()> {
    let m = Merged::build(names, threads, metric, thread_frames);
    let (start, kids) = m.children();
    // Stacks deeper than MAX_FRAMES, by (thread node, top frames): the
    // first node met, and the summed count.
    let mut deep: HashMap<(u32, Key), (u32, u64)> = HashMap::new();
    let mut top = TopFrames::new(MAX_FRAMES);
    // The path from the root: trie nodes.
    let mut path: Vec<u32> = Vec::new();
    let mut thread = 0u32;
    let mut stack: Vec<u32> = kids[start[0] as usize..start[1] as usize]
        .iter()
        .rev()
        .copied()
        .collect();
    while let Some(node) = stack.pop() {
        let i = node as usize;
        let d = m.depth[i] as usize;
        let level = if d == 0 {
            0
        } else {
            d + usize::from(thread_frames) - 1
        };
        path.truncate(level);
        path.push(node);
        if d == 0 {
            thread = node;
        } else {
            let key = top.push(d, u64::from(m.frame[i]));
            if m.own[i] > 0 && d > MAX_FRAMES {
                let e = deep.entry((thread, key)).or_insert((node, 0));
                e.1 = e.1.saturating_add(m.own[i]);
            } else if m.own[i] > 0 {
                line(out, path.iter().map(|&n| m.text(n)), m.own[i])?;
            }
        }
        stack.extend(kids[start[i] as usize..start[i + 1] as usize].iter().rev());
    }
    let mut deep: Vec<_> = deep.into_iter().collect();
    deep.sort_by_key(|(_, (node, _))| *node);
    for ((thread, _), (node, count)) in deep {
        let mut frames: Vec<u32> = Vec::with_capacity(MAX_FRAMES);
        let mut n = node;
        while frames.len() < MAX_FRAMES {
            frames.push(n);
            n = m.parent[n as usize];
        }
        let thread = (thread != 0).then(|| m.text(thread));
        let cut = std::iter::once(TRUNCATED.as_bytes());
        let frames = frames.iter().rev().map(|&n| m.text(n));
        line(out, thread.into_iter().chain(cut).chain(frames), count)?;
    }
    Ok(())
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
        collapsed(&mut out, names, threads, metric, thread_frames).unwrap();
        String::from_utf8(out).unwrap()
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
        assert_eq!(cpu, "main() 1\nmain();f() 5\n");
        let wall = text(&s.names, &threads, metric(CallKind::Sampler, "wall"), true);
        assert_eq!(
            wall,
            "[a];main() 1\n[a];main();f() 5\n[a];main();g:h() 2\n[b];main();f() 2\n"
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
            bytes,
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
