//! What `profile` hands a snapshot: per thread, the call tree of
//! instrumented calls, each node a method with its calls, its times with
//! and without callees (wall and CPU), the agent's own probe time and the
//! exceptions that left it. Times in ns; children most expensive first.

use super::tree::{Node, Tree};
use super::ThreadProfile;
use crate::instrument::registry::MethodInfo;
use crate::model::{CallTrees, Frame, Part, Section, ThreadTree, Unit, Weight};
use crate::threads::ThreadId;
use crate::tsc::ticks_to_ns;
use std::collections::HashMap;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// The weights of a node, in this order.
const WEIGHTS: [Weight; 8] = [
    Weight::own("calls", Unit::Count),
    Weight::own("wall", Unit::Nanoseconds),
    Weight::own("cpu", Unit::Nanoseconds),
    Weight::total("wall", Unit::Nanoseconds),
    Weight::total("cpu", Unit::Nanoseconds),
    Weight::total("probe_overhead", Unit::Nanoseconds),
    Weight::own("probe_overhead", Unit::Nanoseconds),
    Weight::own("exceptions", Unit::Count),
];

/// The `profile` section of `profiles` (every thread that ran a probe),
/// naming methods from `methods` (the rewriter's registry, by id).
pub fn section(profiles: &[Arc<ThreadProfile>], methods: &[MethodInfo], sampled: bool) -> Section {
    Section {
        name: profrj_format::profile::SECTION,
        extra: false,
        attributes: Vec::new(),
        parts: vec![Part::Trees(trees(profiles, methods, sampled))],
    }
}

/// [`section`]'s trees.
pub fn trees(profiles: &[Arc<ThreadProfile>], methods: &[MethodInfo], sampled: bool) -> CallTrees {
    let frames = methods
        .iter()
        .map(|m| Frame {
            name: m.java_name().into(),
            class: false,
            descriptor: Some(m.descriptor.as_str().into()),
            line: None,
        })
        .collect::<Vec<_>>();
    let mut trees = CallTrees {
        weights: WEIGHTS.to_vec(),
        period: None,
        frames,
        threads: Vec::with_capacity(profiles.len()),
    };
    let mut unknown = Vec::new();
    for (thread, tree) in per_thread(profiles) {
        trees.threads.push(thread_tree(
            thread,
            &tree,
            methods.len(),
            sampled,
            &mut unknown,
        ));
    }
    // Methods the registry did not have when it was read (a probe of a class
    // rewritten since): named by their id.
    for m in unknown {
        let id = trees.frames.len();
        trees.frames.resize_with(id.max(m as usize) + 1, || Frame {
            name: "".into(),
            class: false,
            descriptor: Some("".into()),
            line: None,
        });
        trees.frames[m as usize] = Frame {
            name: format!("(method {m})").into(),
            class: false,
            descriptor: Some("".into()),
            line: None,
        };
    }
    trees
}

/// One thread's tree, depth first with an explicit stack (recursion 3,000
/// calls deep must not need 3,000 native frames here).
fn thread_tree(
    thread: Option<ThreadId>,
    tree: &Tree,
    known: usize,
    sampled: bool,
    unknown: &mut Vec<u32>,
) -> ThreadTree {
    let mut out = ThreadTree::new(thread, vec![0; WEIGHTS.len()]);
    let mut stack: Vec<(u32, u32)> = sorted_children(tree, Tree::ROOT)
        .into_iter()
        .rev()
        .map(|c| (c, 1))
        .collect();
    while let Some((index, depth)) = stack.pop() {
        let n = tree.node(index);
        let m = n.method.load(Relaxed);
        if m as usize >= known && !unknown.contains(&m) {
            unknown.push(m);
        }
        let children = sorted_children(tree, index);
        let times = match sampled {
            false => Times::of(n),
            true => Times::scaled(tree, n, &children),
        };
        out.push(m, depth, &values(n, times));
        stack.extend(children.into_iter().rev().map(|c| (c, depth + 1)));
    }
    out
}

/// A thread's tree: one profile's, or a group's, added up.
enum Merged<'a> {
    One(&'a Tree),
    Sum(Tree),
}

impl std::ops::Deref for Merged<'_> {
    type Target = Tree;

    fn deref(&self) -> &Tree {
        match self {
            Merged::One(t) => t,
            Merged::Sum(t) => t,
        }
    }
}

/// The profiles by thread, in the order each thread first appears, the
/// trees of one thread added up: a group of virtual threads has one per
/// carrier that ran it.
fn per_thread(profiles: &[Arc<ThreadProfile>]) -> Vec<(Option<ThreadId>, Merged<'_>)> {
    let mut out: Vec<(Option<ThreadId>, Merged)> = Vec::new();
    let mut at: HashMap<ThreadId, usize> = HashMap::new();
    for p in profiles {
        let Some(&i) = p.thread.as_ref().and_then(|id| at.get(id)) else {
            if let Some(id) = p.thread {
                at.insert(id, out.len());
            }
            out.push((p.thread, Merged::One(&p.tree)));
            continue;
        };
        if let Merged::One(first) = out[i].1 {
            let sum = Tree::new();
            sum.add_tree(first);
            out[i].1 = Merged::Sum(sum);
        }
        if let Merged::Sum(sum) = &out[i].1 {
            if !sum.add_tree(&p.tree) {
                crate::log::error_once(
                    "profile group tree",
                    "profile: a group's call tree is too large to add up; calls are left out",
                );
            }
        }
    }
    out
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

/// A node's values in [`WEIGHTS`]' order, times in ns.
fn values(n: &Node, t: Times) -> [u64; 8] {
    let get = |a: &std::sync::atomic::AtomicU64| a.load(Relaxed);
    let [self_wall, self_cpu, cum_wall, cum_cpu] = t.0.map(ticks_to_ns);
    [
        get(&n.count),
        self_wall,
        self_cpu,
        cum_wall,
        cum_cpu,
        ticks_to_ns(get(&n.overhead_cum)),
        ticks_to_ns(get(&n.overhead_self)),
        get(&n.exceptions),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

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
