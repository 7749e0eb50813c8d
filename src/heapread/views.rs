//! What the report and the diff show, summed over the dominator tree:
//! per class, per allocation site and per allocating thread, the objects,
//! their shallow bytes and their retained bytes; and the top retainers.
//!
//! A group's retained bytes are NetBeans' "retained size by class": the
//! retained bytes of its objects that no other object of the same group
//! dominates, so no byte is counted twice. One depth-first walk of the
//! dominator tree (an explicit stack) keeps, per group, how many of the
//! walk's ancestors belong to it.

use super::dominators::NONE;
use super::graph::Graph;
use super::load::Dump;
use super::objects;
use super::scratch::Scratch;
use super::Heap;
use crate::error::CliError;
use std::collections::{BinaryHeap, HashMap};

/// Objects, shallow bytes, retained bytes.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Row {
    pub count: u64,
    pub shallow: u64,
    pub retained: u64,
}

/// Each trace serial's allocation site and thread (dense indexes).
pub struct Keys {
    by_trace: HashMap<u32, (u32, u32)>,
    pub sites: Vec<String>,
    pub threads: Vec<String>,
}

/// A frame's class, method, source file (empty if none) and line (or
/// HPROF's negative codes).
pub struct FrameParts {
    pub class: String,
    pub method: String,
    pub file: String,
    pub line: i32,
}

pub fn frame_parts(d: &Dump, frame: u64) -> Option<FrameParts> {
    let f = d.frames.get(&frame)?;
    let class = d
        .serials
        .get(&f.class_serial)
        .and_then(|id| d.class_index.get(id))
        .map_or_else(|| "<unknown>".into(), |&c| d.class_name(c));
    let file = if f.source == 0 {
        String::new()
    } else {
        d.text(f.source)
    };
    Some(FrameParts {
        class,
        method: d.text(f.method_name),
        file,
        line: f.line,
    })
}

/// A trace's site: its innermost frame, as `pkg.Cls.method(File.java:12)`.
fn site_name(d: &Dump, frame: u64) -> String {
    let Some(f) = frame_parts(d, frame) else {
        return format!("<frame 0x{frame:x}>");
    };
    let file = if f.file.is_empty() {
        "Unknown Source".to_owned()
    } else {
        f.file
    };
    let place = match f.line {
        l if l > 0 => format!("{file}:{l}"),
        -2 => "compiled method".into(),
        -3 => "native method".into(),
        _ => file,
    };
    format!("{}.{}({place})", f.class, f.method)
}

/// A thread serial's name: its START_THREAD's, else its Thread object's
/// `name`, else `thread N`.
fn thread_name(d: &Dump, g: &Graph, serial: u32) -> String {
    if let Some(&name) = d.thread_names.get(&serial) {
        return d.text(name);
    }
    let named = d
        .thread_objects
        .get(&serial)
        .and_then(|&id| g.node(id))
        .and_then(|v| objects::field(d, g, v, "name")?.object())
        .and_then(|id| objects::string(d, g, g.node(id)?));
    named.unwrap_or_else(|| format!("thread {serial}"))
}

impl Keys {
    /// The sites and threads of the traces that have frames (HotSpot's
    /// own traces are threads' stacks, named by no object but serial 1,
    /// which has none).
    pub fn new(d: &Dump, g: &Graph) -> Keys {
        let mut k = Keys {
            by_trace: HashMap::new(),
            sites: Vec::new(),
            threads: Vec::new(),
        };
        let mut sites: HashMap<String, u32> = HashMap::new();
        let mut threads: HashMap<String, u32> = HashMap::new();
        let mut serials: Vec<(&u32, &super::load::TraceInfo)> = d.traces.iter().collect();
        serials.sort_by_key(|s| *s.0);
        for (&serial, t) in serials {
            if t.frame == 0 {
                continue;
            }
            let site = site_name(d, t.frame);
            let s = *sites.entry(site.clone()).or_insert_with(|| {
                k.sites.push(site);
                k.sites.len() as u32 - 1
            });
            let name = thread_name(d, g, t.thread);
            let th = *threads.entry(name.clone()).or_insert_with(|| {
                k.threads.push(name);
                k.threads.len() as u32 - 1
            });
            k.by_trace.insert(serial, (s, th));
        }
        k
    }

    /// Object `v`'s (site, thread), if its trace names them.
    pub fn of(&self, g: &Graph, v: u32) -> Option<(u32, u32)> {
        self.by_trace.get(&g.trace[v as usize]).copied()
    }
}

/// The report's tables.
pub struct Views {
    pub by_type: Vec<Row>,
    pub by_site: Vec<Row>,
    pub by_thread: Vec<Row>,
    /// The objects (class objects too) of most retained bytes, largest first.
    pub top: Vec<u32>,
    /// Objects whose trace names a site.
    pub traced: u64,
}

/// Sums the tables; `thread`: only the objects allocated by threads of
/// that name; `top`: how many top retainers.
pub fn compute(
    h: &Heap,
    thread: Option<&str>,
    top: usize,
    scratch: &mut Scratch,
) -> Result<Views, CliError> {
    let (g, t, keys) = (&h.g, &h.tree, &h.keys);
    let wanted = |v: u32| -> bool {
        match thread {
            None => true,
            Some(name) => keys
                .of(g, v)
                .is_some_and(|(_, th)| keys.threads[th as usize] == name),
        }
    };
    let mut v = Views {
        by_type: vec![Row::default(); g.types() as usize],
        by_site: vec![Row::default(); keys.sites.len()],
        by_thread: vec![Row::default(); keys.threads.len()],
        top: Vec::new(),
        traced: 0,
    };
    // Objects and shallow bytes: every object, reachable or not.
    for x in 0..g.n as u32 {
        if !wanted(x) {
            continue;
        }
        let size = g.shallow[x as usize];
        if let Some(ty) = g.histogram_type(x) {
            let row = &mut v.by_type[ty as usize];
            row.count += 1;
            row.shallow += size;
        }
        if let Some((s, th)) = keys.of(g, x) {
            v.traced += 1;
            for row in [&mut v.by_site[s as usize], &mut v.by_thread[th as usize]] {
                row.count += 1;
                row.shallow += size;
            }
        }
    }
    let total = g.n + 1;
    // The dominator tree's children lists.
    let mut child_at = scratch.array::<u32>("dom-child-at", total + 1)?;
    let parent = |x: usize| Some(t.idom[x] as usize).filter(|_| t.idom[x] != NONE);
    for x in 0..g.n {
        if let Some(p) = parent(x) {
            child_at[p + 1] += 1;
        }
    }
    for i in 1..=total {
        child_at[i] += child_at[i - 1];
    }
    let mut child = scratch.array::<u32>("dom-child", child_at[total] as usize)?;
    let mut fill = scratch.array::<u32>("dom-fill", total)?;
    fill.copy_from_slice(&child_at[..total]);
    for x in 0..g.n {
        let Some(p) = parent(x) else { continue };
        child[fill[p] as usize] = x as u32;
        fill[p] += 1;
    }
    drop(fill);
    let mut active_type = vec![0u32; v.by_type.len()];
    let mut active_site = vec![0u32; v.by_site.len()];
    let mut active_thread = vec![0u32; v.by_thread.len()];
    let mut stack_node = scratch.array::<u32>("dom-stack-node", total)?;
    let mut stack_pos = scratch.array::<u32>("dom-stack-pos", total)?;
    let mut best: BinaryHeap<std::cmp::Reverse<(u64, u32)>> = BinaryHeap::new();
    stack_node[0] = g.n as u32;
    stack_pos[0] = child_at[g.n];
    let mut depth = 0usize;
    // Entering adds to each group of the node the first time the walk is in
    // it; leaving takes the node out of its groups.
    let groups = |x: u32| -> (Option<u32>, Option<(u32, u32)>) {
        if !wanted(x) {
            return (None, None);
        }
        (g.histogram_type(x), keys.of(g, x))
    };
    loop {
        let x = stack_node[depth] as usize;
        let pos = stack_pos[depth];
        if pos == child_at[x + 1] {
            let (ty, st) = groups(x as u32);
            if x != g.n {
                if let Some(ty) = ty {
                    active_type[ty as usize] -= 1;
                }
                if let Some((s, th)) = st {
                    active_site[s as usize] -= 1;
                    active_thread[th as usize] -= 1;
                }
            }
            if depth == 0 {
                break;
            }
            depth -= 1;
            continue;
        }
        stack_pos[depth] = pos + 1;
        let y = child[pos as usize];
        let r = t.retained[y as usize];
        let (ty, st) = groups(y);
        if wanted(y) {
            best.push(std::cmp::Reverse((r, y)));
            if best.len() > top {
                best.pop();
            }
        }
        let enter = |row: &mut Row, active: &mut u32| {
            if *active == 0 {
                row.retained += r;
            }
            *active += 1;
        };
        if let Some(ty) = ty {
            enter(&mut v.by_type[ty as usize], &mut active_type[ty as usize]);
        }
        if let Some((s, th)) = st {
            enter(&mut v.by_site[s as usize], &mut active_site[s as usize]);
            enter(
                &mut v.by_thread[th as usize],
                &mut active_thread[th as usize],
            );
        }
        depth += 1;
        stack_node[depth] = y;
        stack_pos[depth] = child_at[y as usize];
    }
    let mut top: Vec<(u64, u32)> = best.into_iter().map(|r| r.0).collect();
    top.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    v.top = top.into_iter().map(|(_, x)| x).collect();
    Ok(v)
}
