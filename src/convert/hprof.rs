//! A snapshot as HPROF's `java.hprof.txt` (the text report of
//! `-agentlib:hprof`, as JDK 5–8 wrote it with `thread=n`): a header,
//! `THREAD START`/`THREAD END`, the `TRACE`s the blocks refer to, then one
//! block per section the snapshot has — SITES from memory's `<sites>` (or
//! `<memory>`) and from `<alloc>`, CPU SAMPLES from `<sampler>`, CPU TIME
//! (ms) from `<profile>`, MONITOR TIME from `<lock>`.
//!
//! What is mapped to what (README, "convert --to hprof", says it too):
//! - A TRACE is a stack's top `depth` frames (HPROF's `depth`, 4 unless
//!   `--depth`), innermost first; nodes whose top frames agree share one, and
//!   their figures add up, as HPROF's own traces merge deeper stacks. Threads
//!   are merged (HPROF's `thread=n`). `TRACE 300000` is `<empty>`: samples
//!   without a Java frame, and sites with no stack.
//! - A frame is `class.method(File.java:LINE)`, LINE the node's `line` (the
//!   agent's `lines` option) or `Unknown line`; the file is the class's `source` in `<coverage>` when
//!   the snapshot has it, else the outer class's name + `.java`. A
//!   constructor (`p.C(...)` in the snapshot) is `p.C.<init>`; the agent's
//!   pseudo-frames (`[unknown_Java]`…) are written as they are.
//! - Threads: the n-th thread of a name in one section is the n-th of that
//!   name in another; ids from 200001 in order of first appearance. No
//!   object address or group is known: `obj=0`, `group=""`. `THREAD END`
//!   for a thread whose `isAlive` is false.
//! - CPU SAMPLES: a trace's RUNNABLE samples (`hits`), HPROF's rule.
//! - CPU TIME (ms): self = a trace's own CPU time (`method`) over the total;
//!   count = its calls (`count`); the header's total in ms.
//! - SITES from `<memory>` (no stacks, no sizes): one row per class, threads
//!   merged, trace 300000; live objs = `count`, alloc'ed objs = `max` (the
//!   most alive at once: a lower bound of allocations); bytes 0; ordered by
//!   live objects. SITES from `<alloc>`: one row per (stack, class); a
//!   `live` section fills both live and alloc'ed columns (those objects were
//!   allocated), an all-allocations one the alloc'ed columns (live 0);
//!   ordered by the bytes it has.
//! - Every row with a non-zero figure is listed (HPROF's `cutoff` is 0).
//!
//! Time and memory stay linear in the snapshot: a node's trace is found by a
//! rolling hash of its top frames (two 61-bit polynomial hashes and the
//! length), so no trace is spelled out until it is printed, and `depth` is
//! capped at [`MAX_FRAMES`].

use super::collapsed::MAX_FRAMES;
use super::coverage::{default_source, one_line};
use crate::snapshot::{CallKind, CallSection, Snapshot, Tree, NONE, NO_JAVA_FRAME, NO_LINE};
use profrj_format::{alloc, lock, profile, sampler, sites};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// HPROF's default `depth`.
pub const DEFAULT_DEPTH: usize = 4;
/// HPROF's first thread id and its empty trace (then 300001, …).
pub const FIRST_THREAD: u64 = 200_001;
pub const EMPTY_TRACE: u64 = 300_000;

pub struct Options<'a> {
    /// Frames per TRACE (capped at [`MAX_FRAMES`]).
    pub depth: usize,
    /// Only the threads of this name.
    pub thread: Option<&'a str>,
    /// When the snapshot was written, seconds since the epoch (the dates).
    pub created: u64,
}

/// A trace's identity: two hashes of its frames and their number.
type Key = (u64, u64, u32);
const EMPTY: Key = (0, 0, 0);
const P: u64 = (1 << 61) - 1;
const BASES: [u64; 2] = [0x1f3d_5b79_a2c4_e6f1 % P, 0x0b5d_1e2f_9a8c_7d63 % P];

fn mulmod(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) % P as u128) as u64
}

/// The node whose path's top frames a trace is: (section, thread, node).
#[derive(Clone, Copy)]
struct Rep {
    kind: CallKind,
    thread: usize,
    node: u32,
}

/// What every block reads.
struct Ctx<'a> {
    snap: &'a Snapshot,
    opts: &'a Options<'a>,
    depth: usize,
    date: String,
    /// BASES^k for k up to depth.
    pow: Vec<[u64; 2]>,
    /// Class names known for certain (of frames that are surely methods).
    classes: HashSet<&'a str>,
    /// Class → `SourceFile`, from `<coverage>`.
    sources: HashMap<&'a str, &'a str>,
    /// The name id of `[no Java frame]`, if any.
    no_frame: Option<u32>,
}

/// Trace ids, given as the blocks first print them.
#[derive(Default)]
struct Traces {
    ids: HashMap<Key, u64>,
    printed: Vec<(u64, Rep)>,
}

impl Traces {
    fn id(&mut self, key: Key, rep: Option<Rep>) -> u64 {
        let Some(rep) = rep.filter(|_| key != EMPTY) else {
            return EMPTY_TRACE;
        };
        let next = EMPTY_TRACE + 1 + self.ids.len() as u64;
        *self.ids.entry(key).or_insert_with(|| {
            self.printed.push((next, rep));
            next
        })
    }
}

/// One block of the report: its text, given the trace ids.
type Block = fn(&Ctx, &mut Traces) -> Option<String>;

/// The blocks after the TRACEs, in HPROF's order, each `None` when the
/// snapshot lacks its section.
const BLOCKS: [Block; 6] = [
    sites_memory,
    sites_exact,
    sites_alloc,
    cpu_samples,
    cpu_time,
    monitor_time,
];

pub fn hprof(snap: &Snapshot, opts: &Options) -> Result<String, String> {
    if snap.call_sections.is_empty() && snap.memory.is_none() {
        let tags: Vec<String> = CallKind::ALL
            .iter()
            .map(|k| format!("<{}>", k.tag()))
            .collect();
        return Err(format!(
            "the snapshot has no {} or <{}> section: nothing for HPROF's blocks",
            tags.join(", "),
            profrj_format::memory::SECTION
        ));
    }
    let depth = opts.depth.min(MAX_FRAMES);
    let mut pow = vec![[1u64, 1u64]];
    for k in 1..=depth {
        let p = pow[k - 1];
        pow.push([mulmod(p[0], BASES[0]), mulmod(p[1], BASES[1])]);
    }
    let mut classes = HashSet::new();
    for name in snap.names.all() {
        if let Some((prefix, last)) = name.split('(').next().and_then(|b| b.rsplit_once('.')) {
            if last.starts_with(|c: char| c.is_lowercase() || c == '<' || c == '_') {
                classes.insert(prefix);
            }
        }
    }
    let sources = snap.coverage.as_ref().map_or_else(HashMap::new, |c| {
        c.classes
            .iter()
            .filter_map(|c| Some((c.name.as_str(), c.source.as_deref()?)))
            .collect()
    });
    let ctx = Ctx {
        snap,
        opts,
        depth,
        date: ctime(opts.created),
        pow,
        classes,
        sources,
        no_frame: snap
            .names
            .all()
            .iter()
            .position(|n| n == NO_JAVA_FRAME)
            .map(|i| i as u32),
    };
    let threads = threads(&ctx)?;
    let mut traces = Traces::default();
    let blocks: Vec<String> = BLOCKS.iter().filter_map(|b| b(&ctx, &mut traces)).collect();
    let mut out = header(&ctx);
    out.push_str(&threads);
    let _ = writeln!(out, "TRACE {EMPTY_TRACE}:\n\t<empty>");
    for (id, rep) in &traces.printed {
        let _ = writeln!(out, "TRACE {id}:");
        for f in frames(&ctx, *rep) {
            let _ = writeln!(out, "\t{f}");
        }
    }
    for b in blocks {
        out.push_str(&b);
    }
    Ok(out)
}

fn header(ctx: &Ctx) -> String {
    format!(
        "JAVA PROFILE 1.0.1, created {}\n\
         \n\
         Written by profrj {} (profrj convert --to hprof) from a snapshot, in the\n\
         layout of HPROF's java.hprof.txt with depth={}, thread=n, cutoff=0.\n\
         \n\
         THREAD START, THREAD END  the snapshot's threads (ids from {FIRST_THREAD}).\n\
         TRACE         a stack's top frames, innermost first; the call trees carry\n\
         \x20             no line numbers. TRACE {EMPTY_TRACE} is the empty stack.\n\
         SITES         from <memory> (live objects per class; no sizes: bytes 0)\n\
         \x20             and from <alloc> (estimated bytes and objects per stack\n\
         \x20             and class).\n\
         CPU SAMPLES   from <sampler>: samples of RUNNABLE threads per TRACE.\n\
         CPU TIME      from <profile>: own CPU time per TRACE; count = calls.\n\
         \n\
         --------\n\
         \n",
        ctx.date,
        env!("CARGO_PKG_VERSION"),
        ctx.depth
    )
}

/// Is this thread of a section wanted (`--thread`)?
fn wanted(ctx: &Ctx, name: &str) -> bool {
    match ctx.opts.thread {
        None => true,
        Some(n) => n == name,
    }
}

/// THREAD START for every thread of every section, THREAD END for those
/// that ended; the n-th thread of a name is the same in every section.
fn threads(ctx: &Ctx) -> Result<String, String> {
    // Per section, its wanted threads: (name, isAlive).
    let mut sections: Vec<Vec<(&str, Option<bool>)>> = Vec::new();
    for sec in &ctx.snap.call_sections {
        let names = sec.threads.iter().filter(|t| wanted(ctx, &t.name));
        sections.push(names.map(|t| (t.name.as_str(), t.is_alive)).collect());
    }
    if let Some(mem) = &ctx.snap.memory {
        let names = mem.threads.iter().filter(|t| wanted(ctx, &t.name));
        sections.push(names.map(|t| (t.name.as_str(), None)).collect());
    }
    // (name, n-th of that name) → index in `list` of (name, ended).
    let mut ids: HashMap<(&str, usize), usize> = HashMap::new();
    let mut list: Vec<(&str, bool)> = Vec::new();
    for names in sections {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (name, alive) in names {
            let n = seen.entry(name).or_insert(0);
            let key = (name, *n);
            *n += 1;
            let i = *ids.entry(key).or_insert_with(|| {
                list.push((name, false));
                list.len() - 1
            });
            if alive == Some(false) {
                list[i].1 = true;
            }
        }
    }
    if let (Some(n), true) = (ctx.opts.thread, list.is_empty()) {
        return Err(format!("no thread named {n:?} in the snapshot"));
    }
    let mut out = String::new();
    for (i, (name, _)) in list.iter().enumerate() {
        let _ = writeln!(
            out,
            "THREAD START (obj=0, id = {}, name=\"{}\", group=\"\")",
            FIRST_THREAD + i as u64,
            one_line(name)
        );
    }
    for (i, _) in list.iter().enumerate().filter(|(_, t)| t.1) {
        let _ = writeln!(out, "THREAD END (id = {})", FIRST_THREAD + i as u64);
    }
    Ok(out)
}

/// Visits every node of a tree (in document order) with its trace key: the
/// hash of its path's top `depth` frames. A root `[no Java frame]` node's
/// trace is the empty one.
fn walk(ctx: &Ctx, tree: &Tree, mut f: impl FnMut(usize, Key)) {
    // prefix[k]: the hashes of the path's first k frames.
    let mut prefix: Vec<[u64; 2]> = vec![[0, 0]];
    for (i, n) in tree.nodes.iter().enumerate().skip(1) {
        let d = n.depth as usize;
        prefix.truncate(d);
        let last = prefix[d - 1];
        // A frame is its name and line (with the agent's `lines`).
        let v = (u64::from(n.name) + 1 + (u64::from(n.line) << 32)) % P;
        prefix.push([
            (mulmod(last[0], BASES[0]) + v) % P,
            (mulmod(last[1], BASES[1]) + v) % P,
        ]);
        if d == 1 && ctx.no_frame == Some(n.name) {
            f(i, EMPTY);
            continue;
        }
        f(i, key(ctx, &prefix, d));
    }
}

/// The key of the path's top frames, the path being `prefix[..=d]`.
fn key(ctx: &Ctx, prefix: &[[u64; 2]], d: usize) -> Key {
    let w = d.min(ctx.depth);
    if w == 0 {
        return EMPTY;
    }
    let (top, base, p) = (prefix[d], prefix[d - w], ctx.pow[w]);
    (
        (top[0] + P - mulmod(base[0], p[0])) % P,
        (top[1] + P - mulmod(base[1], p[1])) % P,
        w as u32,
    )
}

/// A trace's frames, innermost first.
fn frames(ctx: &Ctx, rep: Rep) -> Vec<String> {
    let Some(sec) = ctx.snap.calls(rep.kind) else {
        return Vec::new();
    };
    let tree = &sec.threads[rep.thread].tree;
    let mut out = Vec::new();
    let mut i = rep.node;
    while i != 0 && i != NONE && out.len() < ctx.depth {
        let n = &tree.nodes[i as usize];
        out.push(frame(ctx, ctx.snap.names.get(n.name), n.line));
        i = n.parent;
    }
    out
}

/// A frame's (class, method), or `None` for a pseudo-frame (`[…]`).
fn split<'a>(ctx: &Ctx, name: &'a str) -> Option<(&'a str, &'a str)> {
    if name.starts_with('[') {
        return None;
    }
    let before = name.split('(').next().unwrap_or(name);
    let upper = |s: &str| s.starts_with(|c: char| c.is_uppercase());
    match before.rsplit_once('.') {
        Some((prefix, last)) => {
            let ctor = !last.starts_with('<')
                && (ctx.classes.contains(before) || (!ctx.classes.contains(prefix) && upper(last)));
            Some(if ctor {
                (before, "<init>")
            } else {
                (prefix, last)
            })
        }
        None if upper(before) => Some((before, "<init>")),
        None => Some(("", before)),
    }
}

/// `class.method(File.java:Unknown line)`, or with the line: the node's
/// `line` (the agent's `lines`), or that of a frame named `…():12`
/// (`<sites>`).
fn frame(ctx: &Ctx, name: &str, node_line: u32) -> String {
    let (name, line) = match name.rsplit_once("):") {
        Some((head, l)) if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) => {
            (&name[..head.len() + 1], l.to_owned())
        }
        _ if node_line != NO_LINE => (name, node_line.to_string()),
        _ => (name, "Unknown line".to_owned()),
    };
    let Some((class, method)) = split(ctx, name) else {
        return one_line(name);
    };
    let file = match ctx.sources.get(class) {
        Some(s) => s.to_string(),
        None => {
            // A hidden class's address (`Foo$$Lambda$16.0x…`) is no file's.
            let named = class.split(".0x").next().unwrap_or(class);
            default_source(named.rsplit('.').next().unwrap_or(named))
        }
    };
    one_line(&format!("{class}.{method}({file}:{line})"))
}

/// The `method` column: `class.method`, or `<empty>`.
fn method_column(ctx: &Ctx, rep: Option<Rep>) -> String {
    let Some(rep) = rep else {
        return "<empty>".into();
    };
    let Some(sec) = ctx.snap.calls(rep.kind) else {
        return "<empty>".into();
    };
    let n = &sec.threads[rep.thread].tree.nodes[rep.node as usize];
    let name = ctx.snap.names.get(n.name);
    match split(ctx, name) {
        Some((c, m)) if !c.is_empty() => one_line(&format!("{c}.{m}")),
        Some((_, m)) => one_line(m),
        None => one_line(name),
    }
}

/// Per trace of a call section: its representative and figures (summed).
struct Rows {
    rows: HashMap<Key, (Option<Rep>, [u64; 2])>,
}

/// Sums two node figures (by attribute) per trace over the wanted threads.
fn per_trace(ctx: &Ctx, sec: &CallSection, attrs: [&str; 2]) -> Rows {
    let slots = attrs.map(|a| sec.desc().slot(a).expect("the section's attribute"));
    let mut rows: HashMap<Key, (Option<Rep>, [u64; 2])> = HashMap::new();
    for (t, thread) in sec.threads.iter().enumerate() {
        if !wanted(ctx, &thread.name) {
            continue;
        }
        let tree = &thread.tree;
        walk(ctx, tree, |i, key| {
            let v = tree.nodes[i].v.0;
            if slots.iter().all(|&s| v[s] == 0) {
                return;
            }
            let rep = (key != EMPTY).then_some(Rep {
                kind: sec.kind,
                thread: t,
                node: i as u32,
            });
            let e = rows.entry(key).or_insert((rep, [0, 0]));
            for (k, &s) in slots.iter().enumerate() {
                e.1[k] = e.1[k].saturating_add(v[s]);
            }
        });
    }
    Rows { rows }
}

/// `self` and `accum` of a row, in %.
fn percent(part: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        part as f64 * 100.0 / total as f64
    }
}

/// The rows of a CPU block, largest first (then by trace).
fn cpu_block(
    ctx: &Ctx,
    traces: &mut Traces,
    title: &str,
    rows: Rows,
    total: u64,
    shown_total: u64,
) -> String {
    let mut rows: Vec<_> = rows.rows.into_iter().collect();
    // By weight, then count; ties in a stable order (the rep's place).
    rows.sort_by(|a, b| {
        b.1 .1[0]
            .cmp(&a.1 .1[0])
            .then(b.1 .1[1].cmp(&a.1 .1[1]))
            .then_with(|| rep_order(a.1 .0).cmp(&rep_order(b.1 .0)))
    });
    let mut out = format!("{title} BEGIN (total = {shown_total}) {}\n", ctx.date);
    out.push_str("rank   self  accum   count trace method\n");
    let mut accum = 0u64;
    for (rank, (key, (rep, [weight, count]))) in rows.into_iter().enumerate() {
        accum = accum.saturating_add(weight);
        let id = traces.id(key, rep);
        let _ = writeln!(
            out,
            "{:>4} {:>5.2}% {:>5.2}% {:>7} {id} {}",
            rank + 1,
            percent(weight, total),
            percent(accum, total),
            count,
            method_column(ctx, rep)
        );
    }
    let _ = writeln!(out, "{title} END");
    out
}

fn rep_order(rep: Option<Rep>) -> (usize, usize, u32) {
    rep.map_or((0, 0, 0), |r| (r.kind as usize, r.thread + 1, r.node))
}

/// CPU SAMPLES from `<sampler>`: RUNNABLE samples (`hits`) per trace.
fn cpu_samples(ctx: &Ctx, traces: &mut Traces) -> Option<String> {
    let sec = ctx.snap.calls(CallKind::Sampler)?;
    let mut rows = per_trace(ctx, sec, [sampler::node::HITS, sampler::node::HITS]);
    // One figure: the samples are both weight and count.
    rows.rows.retain(|_, r| r.1[0] > 0);
    let total = rows
        .rows
        .values()
        .fold(0u64, |a, r| a.saturating_add(r.1[0]));
    Some(cpu_block(ctx, traces, "CPU SAMPLES", rows, total, total))
}

/// CPU TIME (ms) from `<profile>`: own CPU µs (`method`) and calls (`count`).
fn cpu_time(ctx: &Ctx, traces: &mut Traces) -> Option<String> {
    let sec = ctx.snap.calls(CallKind::Profile)?;
    let rows = per_trace(ctx, sec, [profile::node::METHOD, profile::node::COUNT]);
    let total = rows
        .rows
        .values()
        .fold(0u64, |a, r| a.saturating_add(r.1[0]));
    let ms = total.saturating_add(500) / 1000;
    Some(cpu_block(ctx, traces, "CPU TIME (ms)", rows, total, ms))
}

/// One SITES row: live bytes, live objs, alloc'ed bytes, alloc'ed objs.
type Site = [u64; 4];

fn sites_block(
    ctx: &Ctx,
    traces: &mut Traces,
    order: &str,
    by: usize,
    mut rows: Vec<(Key, Option<Rep>, String, Site)>,
) -> String {
    rows.retain(|r| r.3.iter().any(|&v| v > 0));
    rows.sort_by(|a, b| {
        b.3[by]
            .cmp(&a.3[by])
            .then_with(|| b.3.cmp(&a.3))
            .then_with(|| a.2.cmp(&b.2))
            .then_with(|| rep_order(a.1).cmp(&rep_order(b.1)))
    });
    let total = rows.iter().fold(0u64, |a, r| a.saturating_add(r.3[by]));
    let mut out = format!("SITES BEGIN (ordered by {order}) {}\n", ctx.date);
    out.push_str("          percent          live          alloc'ed  stack class\n");
    out.push_str(" rank   self  accum     bytes objs     bytes  objs trace name\n");
    let mut accum = 0u64;
    for (rank, (key, rep, class, v)) in rows.into_iter().enumerate() {
        accum = accum.saturating_add(v[by]);
        let id = traces.id(key, rep);
        let _ = writeln!(
            out,
            "{:>5} {:>5.2}% {:>5.2}% {:>9} {:>4} {:>9} {:>5} {id} {}",
            rank + 1,
            percent(v[by], total),
            percent(accum, total),
            v[0],
            v[1],
            v[2],
            v[3],
            one_line(&class)
        );
    }
    out.push_str("SITES END\n");
    out
}

/// SITES from `<memory>`: per class, threads merged, no stack (trace
/// 300000): live objs = `count`, alloc'ed objs = `max`; no sizes. Only
/// without `<sites>`, which has the same objects by site.
fn sites_memory(ctx: &Ctx, traces: &mut Traces) -> Option<String> {
    if ctx.snap.calls(CallKind::Sites).is_some() {
        return None;
    }
    let mem = ctx.snap.memory.as_ref()?;
    let mut by_class: HashMap<&str, Site> = HashMap::new();
    for t in mem.threads.iter().filter(|t| wanted(ctx, &t.name)) {
        for r in &t.rows {
            let e = by_class.entry(r.class.as_str()).or_default();
            e[1] = e[1].saturating_add(r.count);
            e[3] = e[3].saturating_add(r.max.max(r.count));
        }
    }
    let rows = by_class
        .into_iter()
        .map(|(c, v)| (EMPTY, None, c.to_owned(), v))
        .collect();
    Some(sites_block(ctx, traces, "live objects", 1, rows))
}

/// SITES from `<sites>` (memory's, exact): per (method and line, class),
/// live objs = `count`, alloc'ed objs = `allocated`; no sizes.
fn sites_exact(ctx: &Ctx, traces: &mut Traces) -> Option<String> {
    let sec = ctx.snap.calls(CallKind::Sites)?;
    let d = sec.desc();
    let count = d.slot(sites::node::COUNT).expect("sites' count");
    let allocated = d.slot(sites::node::ALLOCATED).expect("sites' allocated");
    let rows = class_sites(ctx, sec, |v| [0, v[count], 0, v[allocated]]);
    Some(sites_block(ctx, traces, "live objects", 1, rows))
}

/// SITES from `<alloc>`: per (stack below the class frame, class).
fn sites_alloc(ctx: &Ctx, traces: &mut Traces) -> Option<String> {
    let sec = ctx.snap.calls(CallKind::Alloc)?;
    let d = sec.desc();
    let bytes = d.slot(alloc::node::BYTES).expect("alloc's bytes");
    let objects = d.slot(alloc::node::OBJECTS).expect("alloc's objects");
    let live = sec.live;
    let rows = class_sites(ctx, sec, |v| {
        let (b, o) = (v[bytes], v[objects]);
        if live {
            [b, o, b, o]
        } else {
            [0, 0, b, o]
        }
    });
    let (order, by) = if live {
        ("live bytes", 0)
    } else {
        ("allocated bytes", 2)
    };
    Some(sites_block(ctx, traces, order, by, rows))
}

/// MONITOR TIME from `<lock>`: per (stack below the monitor's class frame,
/// monitor class), `self`/`accum` of the time waited, `count` the contended
/// acquisitions; the header's total in ms. The `monitor` column is the
/// class and ` (Java)`, as HPROF wrote a Java object's monitor.
fn monitor_time(ctx: &Ctx, traces: &mut Traces) -> Option<String> {
    let sec = ctx.snap.calls(CallKind::Lock)?;
    let d = sec.desc();
    let time = d.slot(lock::node::TIME).expect("lock's time");
    let count = d.slot(lock::node::COUNT).expect("lock's count");
    let mut rows = class_sites(ctx, sec, |v| [v[time], v[count], 0, 0]);
    rows.retain(|r| r.3[0] > 0 || r.3[1] > 0);
    rows.sort_by(|a, b| {
        (b.3[0], b.3[1])
            .cmp(&(a.3[0], a.3[1]))
            .then_with(|| a.2.cmp(&b.2))
            .then_with(|| rep_order(a.1).cmp(&rep_order(b.1)))
    });
    let total = rows.iter().fold(0u64, |a, r| a.saturating_add(r.3[0]));
    let mut out = format!(
        "MONITOR TIME BEGIN (total = {} ms) {}\n",
        total / 1_000_000,
        ctx.date
    );
    out.push_str("rank   self  accum   count trace monitor\n");
    let mut accum = 0u64;
    for (rank, (key, rep, class, v)) in rows.into_iter().enumerate() {
        accum = accum.saturating_add(v[0]);
        let id = traces.id(key, rep);
        let _ = writeln!(
            out,
            "{:>4} {:>5.2}% {:>5.2}% {:>7} {id} {} (Java)",
            rank + 1,
            percent(v[0], total),
            percent(accum, total),
            v[1],
            one_line(&class)
        );
    }
    out.push_str("MONITOR TIME END\n");
    Some(out)
}

/// The SITES rows of a section of class frames: per (stack below the
/// class frame, class), `figures` of each class frame's values summed.
fn class_sites(
    ctx: &Ctx,
    sec: &CallSection,
    figures: impl Fn(&[u64]) -> Site,
) -> Vec<(Key, Option<Rep>, String, Site)> {
    let mut sites: HashMap<(Key, u32), (Option<Rep>, Site)> = HashMap::new();
    for (t, thread) in sec.threads.iter().enumerate() {
        if !wanted(ctx, &thread.name) {
            continue;
        }
        let tree = &thread.tree;
        // The key of each node's path, for its class frames' children.
        let mut keys: Vec<Key> = vec![EMPTY; tree.nodes.len()];
        walk(ctx, tree, |i, key| {
            keys[i] = key;
            let n = &tree.nodes[i];
            if !n.class {
                return;
            }
            let parent = n.parent as usize;
            let (key, rep) = if parent == 0 || keys[parent] == EMPTY {
                (EMPTY, None)
            } else {
                let rep = Rep {
                    kind: sec.kind,
                    thread: t,
                    node: n.parent,
                };
                (keys[parent], Some(rep))
            };
            let e = sites.entry((key, n.name)).or_insert((rep, [0; 4]));
            for (sum, v) in e.1.iter_mut().zip(figures(&n.v.0)) {
                *sum = sum.saturating_add(v);
            }
        });
    }
    sites
        .into_iter()
        .map(|((key, class), (rep, v))| (key, rep, ctx.snap.names.get(class).to_owned(), v))
        .collect()
}

/// `Wed Nov 25 15:40:45 2026` (C's ctime, UTC) for seconds since the epoch.
pub fn ctime(secs: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let days = secs / 86_400;
    let rem = secs % 86_400;
    // Howard Hinnant's civil_from_days.
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} {year}",
        DAYS[(days % 7) as usize],
        MONTHS[(month - 1) as usize],
        day,
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::parse_bytes;

    fn opts(depth: usize) -> Options<'static> {
        Options {
            depth,
            thread: None,
            created: 1_795_621_245,
        }
    }

    #[test]
    fn dates_as_ctime() {
        assert_eq!(ctime(0), "Thu Jan 01 00:00:00 1970");
        assert_eq!(ctime(1_795_621_245), "Wed Nov 25 15:40:45 2026");
        assert_eq!(ctime(951_782_400), "Tue Feb 29 00:00:00 2000");
    }

    #[test]
    fn samples_merge_into_traces_of_depth() {
        let xml = r#"<doc><sampler>
          <thread name="a" isAlive="false"><profile name="p.A.main()" hits="1" elapsed="1">
            <profile name="p.A.f()" hits="3" elapsed="5"><profile name="p.A(native)" hits="2" elapsed="2"/></profile>
          </profile></thread>
          <thread name="b" cumulated="5" cumulatedElapsed="5"><profile name="q.B.run()" hits="0" elapsed="0"><profile name="p.A.f()" hits="2" elapsed="2"/></profile></thread>
        </sampler></doc>"#;
        let s = parse_bytes(xml.as_bytes()).unwrap();
        let text = hprof(&s, &opts(1)).unwrap();
        assert!(text.starts_with("JAVA PROFILE 1.0.1, created Wed Nov 25 15:40:45 2026\n"));
        assert!(text.contains("THREAD START (obj=0, id = 200001, name=\"a\", group=\"\")\n"));
        assert!(text.contains("THREAD START (obj=0, id = 200002, name=\"b\", group=\"\")\n"));
        assert!(text.contains("THREAD END (id = 200001)\n"));
        assert!(!text.contains("THREAD END (id = 200002)"));
        // depth 1: f() under main and under run() is one trace (5 samples);
        // b's 3 samples without a frame are the empty trace.
        let block = text.split("CPU SAMPLES BEGIN").nth(1).unwrap();
        let want = " (total = 11) Wed Nov 25 15:40:45 2026\n\
                    rank   self  accum   count trace method\n   \
                    1 45.45% 45.45%       5 300001 p.A.f\n   \
                    2 27.27% 72.73%       3 300000 <empty>\n   \
                    3 18.18% 90.91%       2 300002 p.A.<init>\n   \
                    4  9.09% 100.00%       1 300003 p.A.main\n\
                    CPU SAMPLES END\n";
        assert_eq!(block, want);
        assert!(text.contains("TRACE 300001:\n\tp.A.f(A.java:Unknown line)\nTRACE 300002:\n\tp.A.<init>(A.java:Unknown line)\n"));
        // depth 4: f() under main and under run() differ.
        let text = hprof(&s, &opts(4)).unwrap();
        assert!(text.contains(
            "\tp.A.<init>(A.java:Unknown line)\n\tp.A.f(A.java:Unknown line)\n\tp.A.main(A.java:Unknown line)\n"
        ));
        assert!(text.contains("\tp.A.f(A.java:Unknown line)\n\tq.B.run(B.java:Unknown line)\n"));
    }

    #[test]
    fn a_snapshot_without_its_sections_is_refused() {
        let s = parse_bytes(b"<doc><coverage/></doc>").unwrap();
        let err = hprof(&s, &opts(4)).unwrap_err();
        assert!(err.contains("<memory>"), "{err}");
    }

    #[test]
    fn alloc_sites_per_stack_and_class() {
        let s = crate::snapshot::test_alloc::alloc();
        let text = hprof(&s, &opts(4)).unwrap();
        let block = text.split("SITES BEGIN").nth(1).unwrap();
        assert!(
            block.starts_with(" (ordered by allocated bytes)"),
            "{block}"
        );
        // p.A.big() allocates byte[] under main (600) and under B.run (300).
        assert!(block.contains("        0    0       600     1 "), "{block}");
        assert!(block.contains(" 300000 int[]\n"), "{block}");
        assert!(!text.contains("CPU SAMPLES BEGIN"), "no sampler section");
    }
}
