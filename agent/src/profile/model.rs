//! What `profile` hands a snapshot: per thread, the call tree of
//! instrumented calls, each node a method with its calls, its times with
//! and without callees (wall and CPU), the agent's own probe time and the
//! exceptions that left it. Times in ns; children most expensive first.

use super::reported::{Flat, TIMES};
use super::ThreadProfile;
use crate::instrument::registry::MethodInfo;
use crate::model::{CallTrees, Frame, Part, Section, ThreadTree, Unit, Weight};
use crate::threads::ThreadId;
use crate::tsc::ticks_to_ns;
use std::collections::HashMap;
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
    for (thread, flat) in per_thread(profiles, sampled) {
        trees
            .threads
            .push(thread_tree(thread, &flat, methods.len(), &mut unknown));
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
    flat: &Flat,
    known: usize,
    unknown: &mut Vec<u32>,
) -> ThreadTree {
    let mut out = ThreadTree::new(thread, vec![0; WEIGHTS.len()]);
    let children = flat.children();
    let mut stack: Vec<(u32, u32)> = children[0].iter().rev().map(|&c| (c, 1)).collect();
    while let Some((index, depth)) = stack.pop() {
        let m = flat.method[index as usize];
        if m as usize >= known && !unknown.contains(&m) {
            unknown.push(m);
        }
        let mut values = flat.values[index as usize];
        for t in TIMES {
            values[t] = ticks_to_ns(values[t]);
        }
        out.push(m, depth, &values);
        let kids = &children[index as usize];
        stack.extend(kids.iter().rev().map(|&c| (c, depth + 1)));
    }
    out
}

/// The profiles by thread, in the order each thread first appears, the
/// trees of one thread added up (a group of virtual threads has one per
/// carrier), each with its own probe costs taken off.
fn per_thread(profiles: &[Arc<ThreadProfile>], sampled: bool) -> Vec<(Option<ThreadId>, Flat)> {
    let mut out: Vec<(Option<ThreadId>, Flat)> = Vec::new();
    let mut at: HashMap<ThreadId, usize> = HashMap::new();
    for p in profiles {
        let i = match p.thread.as_ref().and_then(|id| at.get(id)) {
            Some(&i) => i,
            None => {
                if let Some(id) = p.thread {
                    at.insert(id, out.len());
                }
                out.push((p.thread, Flat::new()));
                out.len() - 1
            }
        };
        out[i].1.add(&p.tree, p.costs(), sampled);
    }
    for (_, flat) in &mut out {
        flat.finish();
    }
    out
}
