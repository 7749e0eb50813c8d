//! The `<profile>` section: per thread, the call tree with ProfilerJ's
//! attributes (times in µs; `method*` exclude callees; overhead is the
//! agent's own probe time).

use super::tree::{Node, Tree};
use super::ThreadProfile;
use crate::instrument::registry::MethodInfo;
use crate::snapshot::XmlWriter;
use crate::threads::ThreadRecord;
use crate::tsc::ticks_to_ns;
use crate::xml::{push_attribute, push_number};
use profrj_format::profile::{self as f, node, thread};
use quick_xml::events::{BytesEnd, BytesStart, Event};
use std::io;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

pub fn write_section(
    w: &mut XmlWriter,
    profiles: &[Arc<ThreadProfile>],
    methods: &[MethodInfo],
    threads: &[ThreadRecord],
    sampled: bool,
) -> io::Result<()> {
    w.write_event(Event::Start(BytesStart::new(f::SECTION)))?;
    // Names and descriptors, escaped once per method.
    let mut names: Vec<Option<(String, String)>> = vec![None; methods.len()];
    let mut buf = String::with_capacity(256);
    for p in profiles {
        let record = p.thread.and_then(|id| threads.get(id.0 as usize));
        let mut el = BytesStart::new(f::THREAD);
        el.push_attribute((
            thread::NAME,
            crate::xml::name(record.map_or("(unknown)", |r| r.name.as_str())).as_ref(),
        ));
        el.push_attribute((
            thread::CPU_TIME,
            record.map_or(0, |r| r.cpu_ns).to_string().as_str(),
        ));
        let alive = record.is_none_or(|r| r.is_alive());
        el.push_attribute((thread::IS_ALIVE, profrj_format::boolean(alive)));
        w.write_event(Event::Start(el))?;
        // Depth-first with an explicit stack: recursion 3,000 calls deep must
        // not need 3,000 native frames here.
        let mut stack: Vec<(u32, bool)> = sorted_children(&p.tree, Tree::ROOT)
            .into_iter()
            .rev()
            .map(|c| (c, false))
            .collect();
        while let Some((index, closing)) = stack.pop() {
            if closing {
                w.write_event(Event::End(BytesEnd::new(f::NODE)))?;
                continue;
            }
            let n = p.tree.node(index);
            let m = n.method.load(Relaxed) as usize;
            let (name, sig) = match names.get_mut(m) {
                Some(slot) => slot
                    .get_or_insert_with(|| {
                        let info = &methods[m];
                        (
                            crate::xml::attribute(info.java_name().as_str()),
                            crate::xml::attribute(info.descriptor.as_str()),
                        )
                    })
                    .clone(),
                None => (format!("(method {m})"), String::new()),
            };
            buf.clear();
            let children = sorted_children(&p.tree, index);
            let times = match sampled {
                false => Times::of(n),
                true => Times::scaled(&p.tree, n, &children),
            };
            write_attributes(&mut buf, &name, &sig, n, times);
            let el = BytesStart::from_content(buf.as_str(), f::NODE.len());
            if children.is_empty() {
                w.write_event(Event::Empty(el))?;
            } else {
                w.write_event(Event::Start(el))?;
                stack.push((index, true));
                stack.extend(children.into_iter().rev().map(|c| (c, false)));
            }
        }
        w.write_event(Event::End(BytesEnd::new(f::THREAD)))?;
    }
    w.write_event(Event::End(BytesEnd::new(f::SECTION)))?;
    Ok(())
}

/// Every thread's calls so far as the OTLP model: calls, and wall and CPU
/// time without callees in ns (a snapshot's figures before they are
/// written in µs). Frames are the methods' names, by method id.
pub fn call_trees(
    profiles: &[Arc<ThreadProfile>],
    methods: &[MethodInfo],
    threads: &[ThreadRecord],
    sampled: bool,
) -> profrj_otlp::CallTrees {
    use profrj_otlp::types;
    let threads = profiles
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let name = p.thread.map_or_else(
                || "(unknown)".to_owned(),
                |id| crate::calltree::thread_name(threads, id),
            );
            let mut nodes = Vec::new();
            // Parents first: depth-first with an explicit stack of
            // (node, its model parent).
            let mut stack: Vec<(u32, u32)> = p
                .tree
                .children(Tree::ROOT)
                .into_iter()
                .map(|c| (c, profrj_otlp::ROOT))
                .collect();
            while let Some((index, parent)) = stack.pop() {
                let n = p.tree.node(index);
                let children = p.tree.children(index);
                let t = match sampled {
                    false => Times::of(n),
                    true => Times::scaled(&p.tree, n, &children),
                };
                let me = nodes.len() as u32;
                nodes.push(profrj_otlp::Node {
                    parent,
                    name: n.method.load(Relaxed),
                    own: [
                        n.count.load(Relaxed),
                        ticks_to_ns(t.0[0]),
                        ticks_to_ns(t.0[1]),
                    ],
                });
                stack.extend(children.into_iter().map(|c| (c, me)));
            }
            profrj_otlp::ThreadTree {
                key: p.thread.map_or(1 << 32 | i as u64, |id| id.0 as u64),
                name,
                nodes,
            }
        })
        .collect();
    profrj_otlp::CallTrees {
        weights: &[types::CALLS, types::WALL, types::CPU],
        period: None,
        names: methods.iter().map(|m| m.java_name().into()).collect(),
        threads,
    }
}

/// Children, the most expensive first.
fn sorted_children(tree: &Tree, index: u32) -> Vec<u32> {
    let mut c = tree.children(index);
    c.sort_by_key(|&i| std::cmp::Reverse(tree.node(i).cum_ticks.load(Relaxed)));
    c
}

/// A node's times in ticks: self wall, self CPU, total wall, total CPU.
#[derive(Clone, Copy)]
struct Times([u64; 4]);

impl Times {
    fn of(n: &Node) -> Self {
        let get = |a: &std::sync::atomic::AtomicU64| a.load(Relaxed);
        Times([
            get(&n.self_ticks),
            get(&n.self_cpu),
            get(&n.cum_ticks),
            get(&n.cum_cpu),
        ])
    }

    /// `timing=sampled`: totals are the timed calls' scaled to all calls;
    /// self is the total less the children's totals, at least 0.
    fn scaled(tree: &Tree, n: &Node, children: &[u32]) -> Self {
        let total = |n: &Node| {
            let (count, timed) = (n.count.load(Relaxed), n.timed.load(Relaxed));
            let scale = |v: u64| match timed {
                0 => 0,
                t => (v as u128 * count as u128 / t as u128) as u64,
            };
            (
                scale(n.cum_ticks.load(Relaxed)),
                scale(n.cum_cpu.load(Relaxed)),
            )
        };
        let (wall, cpu) = total(n);
        let (mut kids_wall, mut kids_cpu) = (0u64, 0u64);
        for &c in children {
            let (w, c) = total(tree.node(c));
            kids_wall += w;
            kids_cpu += c;
        }
        Times([
            wall.saturating_sub(kids_wall),
            cpu.saturating_sub(kids_cpu),
            wall,
            cpu,
        ])
    }
}

/// The node's element, `name` and `sig` already escaped.
fn write_attributes(buf: &mut String, name: &str, sig: &str, n: &Node, t: Times) {
    let us = |ticks: u64| ticks_to_ns(ticks) / 1000;
    let get = |a: &std::sync::atomic::AtomicU64| a.load(Relaxed);
    let [self_wall, self_cpu, cum_wall, cum_cpu] = t.0;
    buf.push_str(f::NODE);
    push_attribute(buf, node::NAME, name);
    push_attribute(buf, node::SIGNATURE, sig);
    push_number(buf, node::COUNT, get(&n.count));
    push_number(buf, node::METHOD_ELAPSED, us(self_wall));
    push_number(buf, node::METHOD, us(self_cpu));
    push_number(buf, node::CUMULATED_ELAPSED, us(cum_wall));
    push_number(buf, node::CUMULATED, us(cum_cpu));
    push_number(buf, node::OVERHEAD_CUMULATED, us(get(&n.overhead_cum)));
    push_number(buf, node::OVERHEAD_METHOD, us(get(&n.overhead_self)));
    push_number(buf, node::EXCEPTIONS, get(&n.exceptions));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node's element, pinned (the names are `profrj_format`'s, the order
    /// the contract's; a change here changes the format).
    #[test]
    fn bytes_of_a_node() {
        let n = Node::default();
        n.count.store(3, Relaxed);
        n.exceptions.store(1, Relaxed);
        let mut buf = String::new();
        write_attributes(&mut buf, "p.A.f(int)", "(I)V", &n, Times::of(&n));
        assert_eq!(
            buf,
            "profile name=\"p.A.f(int)\" signature=\"(I)V\" count=\"3\" methodElapsed=\"0\" \
             method=\"0\" cumulatedElapsed=\"0\" cumulated=\"0\" overheadCumulated=\"0\" \
             overheadMethod=\"0\" exceptions=\"1\""
        );
    }

    /// `timing=sampled`: totals scaled from the timed calls to all calls,
    /// self the total less the children's, never below 0.
    #[test]
    fn sampled_times_scale_to_the_count() {
        let t = Tree::new();
        let parent = t.child_of(t.node(Tree::ROOT), 1).unwrap().0;
        let kid = t.child_of(t.node(parent), 2).unwrap().0;
        let set = |i: u32, count, timed, cum| {
            let n = t.node(i);
            n.count.store(count, Relaxed);
            n.timed.store(timed, Relaxed);
            n.cum_ticks.store(cum, Relaxed);
            n.cum_cpu.store(cum / 2, Relaxed);
        };
        set(parent, 64, 2, 100);
        set(kid, 64, 2, 40);
        let p = Times::scaled(&t, t.node(parent), &[kid]);
        assert_eq!(p.0, [1920, 960, 3200, 1600]);
        let k = Times::scaled(&t, t.node(kid), &[]);
        assert_eq!(k.0, [1280, 640, 1280, 640]);
        // Children estimated above the parent: self 0.
        set(kid, 64, 1, 100);
        assert_eq!(Times::scaled(&t, t.node(parent), &[kid]).0[0], 0);
        // Never timed: no times.
        set(kid, 5, 0, 0);
        assert_eq!(Times::scaled(&t, t.node(kid), &[]).0, [0; 4]);
    }
}
