//! Call-tree sections: per thread a `<thread>` element holding nested
//! `<profile>` nodes, as `<sampler>` has them. Each section kind has a
//! [`Layout`]: the thread's attributes (from the thread table, or the
//! tree's totals) and each node's, in the contract's order, read from the
//! model's weights by name.

use super::XmlWriter;
use crate::escape::{push_attribute, push_number, EscapedNames};
use crate::model::{CallTrees, Snapshot, ThreadTree, Weight};
use profrj_format::calls::{CPU_TIME, IS_ALIVE, NAME, NODE, THREAD};
use profrj_format::sampler::thread::ELAPSED_TIME;
use quick_xml::events::{BytesEnd, BytesStart, Event};
use std::io::{self, Write};

/// One attribute of a `<thread>`.
#[derive(Clone, Copy)]
enum ThreadAttr {
    /// The thread's name (`(unknown)` for a thread the agent could not name).
    Name,
    /// Its CPU time, ns (0 unknown).
    CpuTime,
    /// How long it lived in the session's window, ns.
    Elapsed,
    /// Whether it is alive (an unknown thread is).
    Alive,
    /// A weight's total over the thread: (attribute, weight).
    Total(&'static str, &'static str),
}

/// One figure of a node: (attribute, weight, its total?, divisor).
type NodeAttr = (&'static str, &'static str, bool, u64);

/// How one kind of section is written.
struct Layout {
    thread: &'static [ThreadAttr],
    /// Whether a node carries its method's descriptor (`signature`).
    signature: bool,
    nodes: &'static [NodeAttr],
}

mod names {
    pub use profrj_format::alloc::node as alloc;
    pub use profrj_format::lock::node as lock;
    pub use profrj_format::profile::node as profile;
    pub use profrj_format::sampler::node as sampler;
    pub use profrj_format::sites::node as sites;
}

const SAMPLER: Layout = Layout {
    thread: &[
        ThreadAttr::Name,
        ThreadAttr::Total(names::sampler::CUMULATED, "runnable_samples"),
        ThreadAttr::CpuTime,
        ThreadAttr::Total(names::sampler::CUMULATED_ELAPSED, "samples"),
        ThreadAttr::Elapsed,
        ThreadAttr::Alive,
    ],
    signature: false,
    nodes: &[
        (names::sampler::HITS, "runnable_samples", false, 1),
        (names::sampler::ELAPSED, "samples", false, 1),
        (names::sampler::CUMULATED, "runnable_samples", true, 1),
        (names::sampler::CUMULATED_ELAPSED, "samples", true, 1),
    ],
};

/// Times in µs, as ProfilerJ wrote them.
const US: u64 = 1000;

const PROFILE: Layout = Layout {
    thread: &[ThreadAttr::Name, ThreadAttr::CpuTime, ThreadAttr::Alive],
    signature: true,
    nodes: &[
        (names::profile::COUNT, "calls", false, 1),
        (names::profile::METHOD_ELAPSED, "wall", false, US),
        (names::profile::METHOD, "cpu", false, US),
        (names::profile::CUMULATED_ELAPSED, "wall", true, US),
        (names::profile::CUMULATED, "cpu", true, US),
        (
            names::profile::OVERHEAD_CUMULATED,
            "probe_overhead",
            true,
            US,
        ),
        (names::profile::OVERHEAD_METHOD, "probe_overhead", false, US),
        (names::profile::EXCEPTIONS, "exceptions", false, 1),
    ],
};

const ALLOC: Layout = Layout {
    thread: &[
        ThreadAttr::Name,
        ThreadAttr::CpuTime,
        ThreadAttr::Elapsed,
        ThreadAttr::Alive,
        ThreadAttr::Total(names::alloc::BYTES, "bytes"),
        ThreadAttr::Total(names::alloc::OBJECTS, "objects"),
        ThreadAttr::Total(names::alloc::SAMPLES, "samples"),
    ],
    signature: false,
    nodes: &[
        (names::alloc::BYTES, "bytes", false, 1),
        (names::alloc::OBJECTS, "objects", false, 1),
        (names::alloc::SAMPLES, "samples", false, 1),
        (names::alloc::CUMULATED_BYTES, "bytes", true, 1),
        (names::alloc::CUMULATED_OBJECTS, "objects", true, 1),
        (names::alloc::CUMULATED_SAMPLES, "samples", true, 1),
    ],
};

const LOCK: Layout = Layout {
    thread: &[
        ThreadAttr::Name,
        ThreadAttr::CpuTime,
        ThreadAttr::Elapsed,
        ThreadAttr::Alive,
        ThreadAttr::Total(names::lock::COUNT, "waits"),
        ThreadAttr::Total(names::lock::TIME, "wait_time"),
    ],
    signature: false,
    nodes: &[
        (names::lock::COUNT, "waits", false, 1),
        (names::lock::TIME, "wait_time", false, 1),
        (names::lock::CUMULATED_COUNT, "waits", true, 1),
        (names::lock::CUMULATED_TIME, "wait_time", true, 1),
    ],
};

const SITES: Layout = Layout {
    thread: &[ThreadAttr::Name],
    signature: false,
    nodes: &[
        (names::sites::COUNT, "live", false, 1),
        (names::sites::MAX, "max_live", false, 1),
        (names::sites::ALLOCATED, "allocated", false, 1),
        (names::sites::CUMULATED_COUNT, "live", true, 1),
        (names::sites::CUMULATED_MAX, "max_live", true, 1),
        (names::sites::CUMULATED_ALLOCATED, "allocated", true, 1),
    ],
};

/// The layout of a section named `section`, if ProfilerJ's format has one.
fn layout(section: &str) -> Option<&'static Layout> {
    match section {
        profrj_format::sampler::SECTION => Some(&SAMPLER),
        profrj_format::profile::SECTION => Some(&PROFILE),
        profrj_format::alloc::SECTION => Some(&ALLOC),
        profrj_format::lock::SECTION => Some(&LOCK),
        profrj_format::sites::SECTION => Some(&SITES),
        _ => None,
    }
}

/// A node's figures for a section of no known layout: each weight by its
/// name, a total one as `cumulated` + its name (`bytes`,
/// `cumulatedBytes`), times in ns.
fn generic_attributes(weights: &[Weight]) -> Vec<(String, usize)> {
    let mut own: Vec<(String, usize)> = Vec::new();
    let mut total = Vec::new();
    for (i, w) in weights.iter().enumerate() {
        let name = camel(w.name);
        if w.total {
            let mut c = name.chars();
            let first = c.next().map(|f| f.to_ascii_uppercase());
            total.push((
                format!("cumulated{}{}", first.unwrap_or_default(), c.as_str()),
                i,
            ));
        } else {
            own.push((name, i));
        }
    }
    own.extend(total);
    own
}

/// `max_live` → `maxLive`.
fn camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut up = false;
    for c in name.chars() {
        match c {
            '_' => up = true,
            c if up => {
                out.push(c.to_ascii_uppercase());
                up = false;
            }
            c => out.push(c),
        }
    }
    out
}

/// The index of the weight named `name` (own or total) in `weights`.
fn find(weights: &[Weight], name: &str, total: bool) -> Option<usize> {
    weights
        .iter()
        .position(|w| w.name == name && w.total == total)
}

/// Writes every thread's tree of `trees` (a section named `section`).
pub fn write<W: Write>(
    w: &mut XmlWriter<W>,
    snapshot: &Snapshot,
    section: &str,
    trees: &CallTrees,
) -> io::Result<()> {
    let weights = &trees.weights;
    // (attribute, weight index, divisor) for each node figure.
    let (thread_attrs, signature, figures): (Vec<ThreadAttr>, bool, Vec<(String, usize, u64)>) =
        match layout(section) {
            Some(l) => (
                l.thread.to_vec(),
                l.signature,
                l.nodes
                    .iter()
                    .filter_map(|&(attr, name, total, div)| {
                        find(weights, name, total).map(|i| (attr.to_owned(), i, div))
                    })
                    .collect(),
            ),
            None => (
                vec![
                    ThreadAttr::Name,
                    ThreadAttr::CpuTime,
                    ThreadAttr::Elapsed,
                    ThreadAttr::Alive,
                ],
                false,
                generic_attributes(weights)
                    .into_iter()
                    .map(|(a, i)| (a, i, 1))
                    .collect(),
            ),
        };
    let mut escaped = [EscapedNames::default(), EscapedNames::default()];
    let mut buf = String::with_capacity(256);
    for tree in &trees.threads {
        let el = thread_start(snapshot, tree, &thread_attrs, weights);
        w.write_event(Event::Start(el))?;
        write_nodes(
            w,
            trees,
            tree,
            (signature, &figures),
            &mut escaped,
            &mut buf,
        )?;
        w.write_event(Event::End(BytesEnd::new(THREAD)))?;
    }
    Ok(())
}

/// The `<thread>` start tag.
fn thread_start(
    snapshot: &Snapshot,
    tree: &ThreadTree,
    attrs: &[ThreadAttr],
    weights: &[Weight],
) -> BytesStart<'static> {
    let record = tree.thread.and_then(|t| snapshot.threads.get(t.0 as usize));
    let mut el = BytesStart::new(THREAD);
    for attr in attrs {
        match *attr {
            ThreadAttr::Name => {
                let name = record.map_or("(unknown)", |r| r.name.as_str());
                el.push_attribute((NAME, super::name(name).as_ref()));
            }
            ThreadAttr::CpuTime => {
                let cpu = match record {
                    // A group of virtual threads has no CPU clock of its
                    // own: its CPU time is its calls' (their totals' sum).
                    Some(r) if r.is_group() => group_cpu(tree, weights),
                    r => r.map_or(0, |r| r.cpu_ns),
                };
                el.push_attribute((CPU_TIME, cpu.to_string().as_str()));
            }
            ThreadAttr::Elapsed => {
                let ns = record.map_or(0, |r| r.elapsed_ns(snapshot.window));
                el.push_attribute((ELAPSED_TIME, ns.to_string().as_str()));
            }
            ThreadAttr::Alive => {
                let alive = record.is_none_or(|r| r.is_alive());
                el.push_attribute((IS_ALIVE, profrj_format::boolean(alive)));
            }
            ThreadAttr::Total(key, weight) => {
                let v = find(weights, weight, true).and_then(|i| tree.root.get(i));
                el.push_attribute((key, v.copied().unwrap_or(0).to_string().as_str()));
            }
        }
    }
    super::push_virtual_threads(&mut el, snapshot, tree.thread);
    if let Some(kind) = record.and_then(|r| r.jvm) {
        let name = profrj_format::sampler::thread::JVM_THREAD;
        el.push_attribute((name, kind.name()));
    }
    el
}

/// The CPU time of a group's tree: its outermost calls' total CPU (0
/// where the section weighs no CPU).
fn group_cpu(tree: &ThreadTree, weights: &[Weight]) -> u64 {
    let Some(i) = find(weights, "cpu", true) else {
        return 0;
    };
    (0..tree.nodes.len())
        .filter(|&n| tree.nodes[n].depth == 1)
        .map(|n| tree.values_of(n, weights.len())[i])
        .sum()
}

/// The nodes, nested as the tree is: a node with children is a start tag
/// closed after its last descendant, a leaf an empty element.
fn write_nodes<W: Write>(
    w: &mut XmlWriter<W>,
    trees: &CallTrees,
    tree: &ThreadTree,
    (signature, figures): (bool, &[(String, usize, u64)]),
    [names, descriptors]: &mut [EscapedNames; 2],
    buf: &mut String,
) -> io::Result<()> {
    let n = trees.weights.len();
    let mut open = 0u32;
    let mut texts = tree.texts.iter().peekable();
    for (i, node) in tree.nodes.iter().enumerate() {
        while open >= node.depth {
            w.write_event(Event::End(BytesEnd::new(NODE)))?;
            open -= 1;
        }
        let frame = trees.frames.get(node.frame as usize);
        let text = frame.map_or("", |f| &f.name);
        buf.clear();
        buf.push_str(NODE);
        push_attribute(buf, NAME, names.get(node.frame, text));
        if frame.is_some_and(|f| f.class) {
            push_attribute(buf, profrj_format::alloc::node::CLASS, profrj_format::TRUE);
        }
        if let Some(line) = frame.and_then(|f| f.line) {
            push_number(buf, profrj_format::sampler::node::LINE, line as u64);
        }
        if signature {
            let descriptor = frame.and_then(|f| f.descriptor.as_deref()).unwrap_or("");
            let escaped = descriptors.get(node.frame, descriptor);
            push_attribute(buf, profrj_format::profile::node::SIGNATURE, escaped);
        }
        let values = tree.values_of(i, n);
        for (attr, index, div) in figures {
            push_number(buf, attr, values[*index] / div);
        }
        // Texts come in node order; one of an earlier node (none is
        // expected) is passed over.
        while let Some(t) = texts.next_if(|t| t.node as usize <= i) {
            if t.node as usize == i {
                push_attribute(buf, t.name, &t.value);
            }
        }
        let el = BytesStart::from_content(buf.as_str(), NODE.len());
        let leaf = tree
            .nodes
            .get(i + 1)
            .is_none_or(|next| next.depth <= node.depth);
        if leaf {
            w.write_event(Event::Empty(el))?;
        } else {
            w.write_event(Event::Start(el))?;
            open = node.depth;
        }
    }
    while open > 0 {
        w.write_event(Event::End(BytesEnd::new(NODE)))?;
        open -= 1;
    }
    Ok(())
}
