//! HPROF's blocks after the TRACEs: each block's rows computed from its
//! section (numbers, and a node standing for each trace, the trace ids given
//! in the order the rows name them), then written. SITES from `<memory>`,
//! `<sites>` and `<alloc>`, CPU SAMPLES from `<sampler>`, CPU TIME from
//! `<profile>`, MONITOR TIME from `<lock>`; `mod.rs` says what maps to what.

use super::{method_column, walk, wanted, Ctx, Rep, Traces};
use crate::convert::coverage::escaped;
use crate::convert::stacks::{Key, EMPTY};
use crate::snapshot::{CallKind, CallSection};
use profrj_format::{alloc, lock, profile, sampler, sites};
use std::collections::HashMap;
use std::io::{self, Write};

/// A row of CPU SAMPLES, CPU TIME: its trace, the node standing for it,
/// its weight and count.
pub(super) struct CpuRow {
    trace: u64,
    rep: Option<Rep>,
    weight: u64,
    count: u64,
}

/// A row of SITES or MONITOR TIME: its trace, its class, its figures.
pub(super) struct SiteRow<'a> {
    trace: u64,
    class: &'a str,
    v: Site,
}

/// One block of the report, its rows computed and traces numbered.
pub(super) enum Block<'a> {
    Cpu {
        title: &'static str,
        total: u64,
        shown_total: u64,
        rows: Vec<CpuRow>,
    },
    Sites {
        order: &'static str,
        by: usize,
        total: u64,
        rows: Vec<SiteRow<'a>>,
    },
    Monitors {
        total: u64,
        rows: Vec<SiteRow<'a>>,
    },
}

impl<'a> Block<'a> {
    /// Every block the snapshot has, in HPROF's order, their traces
    /// numbered in `traces`.
    pub(super) fn all(ctx: &Ctx<'a>, traces: &mut Traces) -> Vec<Block<'a>> {
        BLOCKS.iter().filter_map(|b| b(ctx, traces)).collect()
    }

    pub(super) fn write(&self, ctx: &Ctx, out: &mut dyn Write) -> io::Result<()> {
        match self {
            Block::Cpu {
                title,
                total,
                shown_total,
                rows,
            } => write_cpu(ctx, out, title, *total, *shown_total, rows),
            Block::Sites {
                order,
                by,
                total,
                rows,
            } => write_sites(ctx, out, order, *by, *total, rows),
            Block::Monitors { total, rows } => write_monitors(ctx, out, *total, rows),
        }
    }
}

/// A block's rows, given the trace ids; `None` when the snapshot lacks its
/// section.
type MakeBlock = for<'a> fn(&Ctx<'a>, &mut Traces) -> Option<Block<'a>>;

/// The blocks after the TRACEs, in HPROF's order.
const BLOCKS: [MakeBlock; 6] = [
    sites_memory,
    sites_exact,
    sites_alloc,
    cpu_samples,
    cpu_time,
    monitor_time,
];

/// Per trace of a call section: its representative and figures (summed).
type Rows = HashMap<Key, (Option<Rep>, [u64; 2])>;

/// Sums two node figures (by attribute) per trace over the wanted threads.
fn per_trace(ctx: &Ctx, sec: &CallSection, attrs: [&str; 2]) -> Rows {
    let slots = attrs.map(|a| sec.desc().slot(a).expect("the section's attribute"));
    let mut rows: Rows = HashMap::new();
    for (t, thread) in sec.threads.iter().enumerate() {
        if !wanted(ctx, &thread.name) {
            continue;
        }
        let nodes = ctx.nodes(sec.kind, t);
        walk(ctx, nodes, |i, key| {
            let v = nodes[i].v.0;
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
    rows
}

/// `self` and `accum` of a row, in %.
fn percent(part: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        part as f64 * 100.0 / total as f64
    }
}

/// The rows of a CPU block, largest first (then by trace), numbered.
fn cpu_rows(traces: &mut Traces, rows: Rows) -> Vec<CpuRow> {
    let mut rows: Vec<_> = rows.into_iter().collect();
    // By weight, then count; ties in a stable order (the rep's place).
    rows.sort_by(|a, b| {
        b.1 .1[0]
            .cmp(&a.1 .1[0])
            .then(b.1 .1[1].cmp(&a.1 .1[1]))
            .then_with(|| rep_order(a.1 .0).cmp(&rep_order(b.1 .0)))
    });
    rows.into_iter()
        .map(|(key, (rep, [weight, count]))| CpuRow {
            trace: traces.id(key, rep),
            rep,
            weight,
            count,
        })
        .collect()
}

fn write_cpu(
    ctx: &Ctx,
    out: &mut dyn Write,
    title: &str,
    total: u64,
    shown_total: u64,
    rows: &[CpuRow],
) -> io::Result<()> {
    writeln!(out, "{title} BEGIN (total = {shown_total}) {}", ctx.date)?;
    writeln!(out, "rank   self  accum   count trace method")?;
    let mut accum = 0u64;
    for (rank, r) in rows.iter().enumerate() {
        accum = accum.saturating_add(r.weight);
        writeln!(
            out,
            "{:>4} {:>5.2}% {:>5.2}% {:>7} {} {}",
            rank + 1,
            percent(r.weight, total),
            percent(accum, total),
            r.count,
            r.trace,
            method_column(ctx, r.rep)
        )?;
    }
    writeln!(out, "{title} END")
}

fn rep_order(rep: Option<Rep>) -> (usize, usize, u32) {
    rep.map_or((0, 0, 0), |r| (r.kind as usize, r.thread + 1, r.node))
}

/// CPU SAMPLES from `<sampler>`: RUNNABLE samples (`hits`) per trace.
fn cpu_samples<'a>(ctx: &Ctx<'a>, traces: &mut Traces) -> Option<Block<'a>> {
    let sec = ctx.snap.calls(CallKind::Sampler)?;
    let mut rows = per_trace(ctx, sec, [sampler::node::HITS, sampler::node::HITS]);
    // One figure: the samples are both weight and count.
    rows.retain(|_, r| r.1[0] > 0);
    let total = rows.values().fold(0u64, |a, r| a.saturating_add(r.1[0]));
    Some(Block::Cpu {
        title: "CPU SAMPLES",
        total,
        shown_total: total,
        rows: cpu_rows(traces, rows),
    })
}

/// CPU TIME (ms) from `<profile>`: own CPU µs (`method`) and calls (`count`).
fn cpu_time<'a>(ctx: &Ctx<'a>, traces: &mut Traces) -> Option<Block<'a>> {
    let sec = ctx.snap.calls(CallKind::Profile)?;
    let rows = per_trace(ctx, sec, [profile::node::METHOD, profile::node::COUNT]);
    let total = rows.values().fold(0u64, |a, r| a.saturating_add(r.1[0]));
    Some(Block::Cpu {
        title: "CPU TIME (ms)",
        total,
        shown_total: total.saturating_add(500) / 1000,
        rows: cpu_rows(traces, rows),
    })
}

/// One SITES row: live bytes, live objs, alloc'ed bytes, alloc'ed objs.
type Site = [u64; 4];

/// A site before its trace is numbered: (trace key, rep, class, figures).
type RawSite<'a> = (Key, Option<Rep>, &'a str, Site);

fn sites_block<'a>(
    traces: &mut Traces,
    order: &'static str,
    by: usize,
    mut rows: Vec<RawSite<'a>>,
) -> Block<'a> {
    rows.retain(|r| r.3.iter().any(|&v| v > 0));
    rows.sort_by(|a, b| {
        b.3[by]
            .cmp(&a.3[by])
            .then_with(|| b.3.cmp(&a.3))
            .then_with(|| a.2.cmp(b.2))
            .then_with(|| rep_order(a.1).cmp(&rep_order(b.1)))
    });
    let total = rows.iter().fold(0u64, |a, r| a.saturating_add(r.3[by]));
    let rows = numbered(traces, rows);
    Block::Sites {
        order,
        by,
        total,
        rows,
    }
}

/// Sorted rows with their traces numbered, in order.
fn numbered<'a>(traces: &mut Traces, rows: Vec<RawSite<'a>>) -> Vec<SiteRow<'a>> {
    rows.into_iter()
        .map(|(key, rep, class, v)| SiteRow {
            trace: traces.id(key, rep),
            class,
            v,
        })
        .collect()
}

fn write_sites(
    ctx: &Ctx,
    out: &mut dyn Write,
    order: &str,
    by: usize,
    total: u64,
    rows: &[SiteRow],
) -> io::Result<()> {
    crate::hprof_text::sites_head(out, order, &ctx.date)?;
    let mut accum = 0u64;
    for (rank, r) in rows.iter().enumerate() {
        let v = r.v;
        accum = accum.saturating_add(v[by]);
        writeln!(
            out,
            "{:>5} {:>5.2}% {:>5.2}% {:>9} {:>4} {:>9} {:>5} {} {}",
            rank + 1,
            percent(v[by], total),
            percent(accum, total),
            v[0],
            v[1],
            v[2],
            v[3],
            r.trace,
            escaped(r.class)
        )?;
    }
    writeln!(out, "SITES END")
}

/// SITES from `<memory>`: per class, threads merged, no stack (trace
/// 300000): live objs = `count`, alloc'ed objs = `max`; no sizes. Only
/// without `<sites>`, which has the same objects by site.
fn sites_memory<'a>(ctx: &Ctx<'a>, traces: &mut Traces) -> Option<Block<'a>> {
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
        .map(|(c, v)| (EMPTY, None, c, v))
        .collect();
    Some(sites_block(traces, "live objects", 1, rows))
}

/// SITES from `<sites>` (memory's, exact): per (method and line, class),
/// live objs = `count`, alloc'ed objs = `allocated`; no sizes.
fn sites_exact<'a>(ctx: &Ctx<'a>, traces: &mut Traces) -> Option<Block<'a>> {
    let sec = ctx.snap.calls(CallKind::Sites)?;
    let d = sec.desc();
    let count = d.slot(sites::node::COUNT).expect("sites' count");
    let allocated = d.slot(sites::node::ALLOCATED).expect("sites' allocated");
    let rows = class_sites(ctx, sec, |v| [0, v[count], 0, v[allocated]]);
    Some(sites_block(traces, "live objects", 1, rows))
}

/// SITES from `<alloc>`: per (stack below the class frame, class).
fn sites_alloc<'a>(ctx: &Ctx<'a>, traces: &mut Traces) -> Option<Block<'a>> {
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
    Some(sites_block(traces, order, by, rows))
}

/// MONITOR TIME from `<lock>`: per (stack below the monitor's class frame,
/// monitor class), `self`/`accum` of the time waited, `count` the contended
/// acquisitions; the header's total in ms. The `monitor` column is the
/// class and ` (Java)`, as HPROF wrote a Java object's monitor.
fn monitor_time<'a>(ctx: &Ctx<'a>, traces: &mut Traces) -> Option<Block<'a>> {
    let sec = ctx.snap.calls(CallKind::Lock)?;
    let d = sec.desc();
    let time = d.slot(lock::node::TIME).expect("lock's time");
    let count = d.slot(lock::node::COUNT).expect("lock's count");
    let mut rows = class_sites(ctx, sec, |v| [v[time], v[count], 0, 0]);
    rows.retain(|r| r.3[0] > 0 || r.3[1] > 0);
    rows.sort_by(|a, b| {
        (b.3[0], b.3[1])
            .cmp(&(a.3[0], a.3[1]))
            .then_with(|| a.2.cmp(b.2))
            .then_with(|| rep_order(a.1).cmp(&rep_order(b.1)))
    });
    let total = rows.iter().fold(0u64, |a, r| a.saturating_add(r.3[0]));
    let rows = numbered(traces, rows);
    Some(Block::Monitors { total, rows })
}

fn write_monitors(ctx: &Ctx, out: &mut dyn Write, total: u64, rows: &[SiteRow]) -> io::Result<()> {
    writeln!(
        out,
        "MONITOR TIME BEGIN (total = {} ms) {}",
        total / 1_000_000,
        ctx.date
    )?;
    writeln!(out, "rank   self  accum   count trace monitor")?;
    let mut accum = 0u64;
    for (rank, r) in rows.iter().enumerate() {
        accum = accum.saturating_add(r.v[0]);
        writeln!(
            out,
            "{:>4} {:>5.2}% {:>5.2}% {:>7} {} {} (Java)",
            rank + 1,
            percent(r.v[0], total),
            percent(accum, total),
            r.v[1],
            r.trace,
            escaped(r.class)
        )?;
    }
    writeln!(out, "MONITOR TIME END")
}

/// The SITES rows of a section of class frames: per (stack below the
/// class frame, class), `figures` of each class frame's values summed.
fn class_sites<'a>(
    ctx: &Ctx<'a>,
    sec: &CallSection,
    figures: impl Fn(&[u64]) -> Site,
) -> Vec<RawSite<'a>> {
    let mut sites: HashMap<(Key, u32), (Option<Rep>, Site)> = HashMap::new();
    for (t, thread) in sec.threads.iter().enumerate() {
        if !wanted(ctx, &thread.name) {
            continue;
        }
        let nodes = ctx.nodes(sec.kind, t);
        // The key of each node's path, for its class frames' children.
        let mut keys: Vec<Key> = vec![EMPTY; nodes.len()];
        walk(ctx, nodes, |i, key| {
            keys[i] = key;
            let n = &nodes[i];
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
        .map(|((key, class), (rep, v))| (key, rep, ctx.snap.names.get(class), v))
        .collect()
}
