//! HPROF's blocks after the TRACEs: SITES from `<memory>`, `<sites>` and
//! `<alloc>`, CPU SAMPLES from `<sampler>`, CPU TIME from `<profile>`,
//! MONITOR TIME from `<lock>`; `mod.rs` says what maps to what. Each block
//! in a fixed budget: its section's nodes go to an external sort by trace
//! (figures summed, the first node kept as the trace's representative),
//! the traces to a second one by rank, and the rows, ranked, are written as
//! text to a scratch file as their trace ids are given (`traces.rs`).

use super::traces::{rep, Numbering, SORT_BUDGET};
use super::{method_column, walk, wanted, Ctx};
use crate::convert::coverage::escaped;
use crate::convert::stacks::{Key, EMPTY};
use crate::snapshot::{CallKind, CallSection};
use crate::sort::Sorter;
use profrj_format::{alloc, lock, profile, sampler, sites};
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;

/// A block's text, in a scratch file until it is written.
pub struct Text {
    file: File,
    len: u64,
}

impl Text {
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut buf = vec![0u8; 1 << 16];
        let mut at = 0u64;
        while at < self.len {
            let n = buf.len().min((self.len - at) as usize);
            self.file.read_exact_at(&mut buf[..n], at)?;
            out.write_all(&buf[..n])?;
            at += n as u64;
        }
        Ok(())
    }
}

/// Where a block's text is written.
struct TextOut {
    out: BufWriter<File>,
    len: u64,
    line: String,
}

impl TextOut {
    fn new() -> io::Result<TextOut> {
        let mut scratch = crate::scratch::Scratch::new().map_err(io::Error::from)?;
        let (_, f) = scratch.raw("block").map_err(io::Error::from)?;
        Ok(TextOut {
            out: BufWriter::with_capacity(1 << 16, f),
            len: 0,
            line: String::new(),
        })
    }

    fn put(&mut self, args: std::fmt::Arguments) -> io::Result<()> {
        use std::fmt::Write as _;
        self.line.clear();
        let _ = self.line.write_fmt(args);
        self.out.write_all(self.line.as_bytes())?;
        self.len += self.line.len() as u64;
        Ok(())
    }

    fn finish(self) -> io::Result<Text> {
        let file = self.out.into_inner().map_err(|e| e.into_error())?;
        Ok(Text {
            file,
            len: self.len,
        })
    }
}

/// Every block the snapshot has, in HPROF's order.
pub(super) fn all(ctx: &Ctx, num: &mut Numbering) -> io::Result<Vec<Text>> {
    let mut blocks = Vec::new();
    if ctx.snap.calls(CallKind::Sites).is_none() {
        if let Some(b) = sites_memory(ctx)? {
            blocks.push(b);
        }
    }
    if let Some(sec) = ctx.snap.calls(CallKind::Sites) {
        let d = sec.desc();
        let count = d.slot(sites::node::COUNT).expect("sites' count");
        let allocated = d.slot(sites::node::ALLOCATED).expect("sites' allocated");
        let rank = Rank::Sites("live objects", 1);
        blocks.push(class_sites(ctx, num, sec, rank, |v| {
            [0, v[count], 0, v[allocated]]
        })?);
    }
    if let Some(sec) = ctx.snap.calls(CallKind::Alloc) {
        let d = sec.desc();
        let bytes = d.slot(alloc::node::BYTES).expect("alloc's bytes");
        let objects = d.slot(alloc::node::OBJECTS).expect("alloc's objects");
        let live = sec.live;
        let rank = if live {
            Rank::Sites("live bytes", 0)
        } else {
            Rank::Sites("allocated bytes", 2)
        };
        blocks.push(class_sites(ctx, num, sec, rank, |v| {
            let (b, o) = (v[bytes], v[objects]);
            if live {
                [b, o, b, o]
            } else {
                [0, 0, b, o]
            }
        })?);
    }
    if let Some(sec) = ctx.snap.calls(CallKind::Sampler) {
        // One figure: the samples are both weight and count.
        let attrs = [sampler::node::HITS, sampler::node::HITS];
        blocks.push(cpu(ctx, num, sec, attrs, "CPU SAMPLES", |t| t)?);
    }
    if let Some(sec) = ctx.snap.calls(CallKind::Profile) {
        // Own CPU µs (`method`) and calls (`count`); the header in ms.
        let attrs = [profile::node::METHOD, profile::node::COUNT];
        let ms = |t: u64| t.saturating_add(500) / 1000;
        blocks.push(cpu(ctx, num, sec, attrs, "CPU TIME (ms)", ms)?);
    }
    if let Some(sec) = ctx.snap.calls(CallKind::Lock) {
        let d = sec.desc();
        let time = d.slot(lock::node::TIME).expect("lock's time");
        let count = d.slot(lock::node::COUNT).expect("lock's count");
        blocks.push(class_sites(ctx, num, sec, Rank::Monitors, |v| {
            [v[time], v[count], 0, 0]
        })?);
    }
    Ok(blocks)
}

/// A trace key as bytes.
fn key_bytes(k: Key) -> [u8; 20] {
    let mut b = [0u8; 20];
    b[..8].copy_from_slice(&k.0.to_be_bytes());
    b[8..16].copy_from_slice(&k.1.to_be_bytes());
    b[16..].copy_from_slice(&k.2.to_be_bytes());
    b
}

fn be(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// `self` and `accum` of a row, in %.
fn percent(part: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        part as f64 * 100.0 / total as f64
    }
}

/// CPU SAMPLES, CPU TIME: per trace, two node figures (by attribute)
/// summed over the wanted threads; largest weight first, then count, ties
/// in the order of the nodes standing for the traces.
fn cpu(
    ctx: &Ctx,
    num: &mut Numbering,
    sec: &CallSection,
    attrs: [&str; 2],
    title: &str,
    shown: impl Fn(u64) -> u64,
) -> io::Result<Text> {
    let slots = attrs.map(|a| sec.desc().slot(a).expect("the section's attribute"));
    // [weight, count | representative, its name]
    let mut traces = Sorter::new(4, crate::sort::budget(SORT_BUDGET))
        .map_err(io::Error::from)?
        .min_tail(2);
    for (t, thread) in sec.threads.iter().enumerate() {
        if !wanted(ctx, &thread.name) {
            continue;
        }
        walk(ctx, &thread.tree, |i, key, n| {
            let v = n.v.0;
            if slots.iter().all(|&s| v[s] == 0) {
                return Ok(());
            }
            let r = if key == EMPTY { 0 } else { rep(t, i) };
            let figures = [v[slots[0]], v[slots[1]], r, u64::from(n.name)];
            traces.push(&key_bytes(key), &figures)
        })?;
    }
    let mut traces = traces.finish()?;
    let mut ranked = Sorter::new(1, crate::sort::budget(SORT_BUDGET)).map_err(io::Error::from)?;
    let mut total = 0u64;
    while let Some((_, v)) = traces.next_record()? {
        total = total.saturating_add(v[0]);
        let mut k = [0u8; 24];
        k[..8].copy_from_slice(&(!v[0]).to_be_bytes());
        k[8..16].copy_from_slice(&(!v[1]).to_be_bytes());
        k[16..].copy_from_slice(&v[2].to_be_bytes());
        ranked.push(&k, &[v[3]])?;
    }
    drop(traces);
    let mut ranked = ranked.finish()?;
    let mut out = TextOut::new()?;
    out.put(format_args!(
        "{title} BEGIN (total = {}) {}\n",
        shown(total),
        ctx.date
    ))?;
    out.put(format_args!("rank   self  accum   count trace method\n"))?;
    let (mut accum, mut rank) = (0u64, 0u64);
    while let Some((k, v)) = ranked.next_record()? {
        let (weight, count, r) = (!be(k, 0), !be(k, 8), be(k, 16));
        let trace = num.id(sec.kind, r)?;
        accum = accum.saturating_add(weight);
        rank += 1;
        let name = (r != 0).then_some(v[0] as u32);
        out.put(format_args!(
            "{:>4} {:>5.2}% {:>5.2}% {:>7} {} {}\n",
            rank,
            percent(weight, total),
            percent(accum, total),
            count,
            trace,
            method_column(ctx, name)
        ))?;
    }
    out.put(format_args!("{title} END\n"))?;
    out.finish()
}

/// How a table of class frames is ranked and written.
#[derive(Clone, Copy)]
enum Rank {
    /// SITES ordered by (what, the column of it).
    Sites(&'static str, usize),
    /// MONITOR TIME.
    Monitors,
}

/// One SITES row: live bytes, live objs, alloc'ed bytes, alloc'ed objs.
type Site = [u64; 4];

/// The rows of a section of class frames: per (stack below the class
/// frame, class), `figures` of each class frame's values summed, ranked:
/// SITES by the column `by`, then all columns, then class, then the order
/// of the nodes standing for the traces; MONITOR TIME by time and count,
/// then class and that order.
fn class_sites(
    ctx: &Ctx,
    num: &mut Numbering,
    sec: &CallSection,
    rank: Rank,
    figures: impl Fn(&[u64]) -> Site,
) -> io::Result<Text> {
    // key: (the stack's trace, class); [figures | representative]
    let mut sites = Sorter::new(5, crate::sort::budget(SORT_BUDGET))
        .map_err(io::Error::from)?
        .min_tail(1);
    for (t, thread) in sec.threads.iter().enumerate() {
        if !wanted(ctx, &thread.name) {
            continue;
        }
        // The key and index of each node on the walk's path.
        let mut path: Vec<(Key, u32)> = Vec::new();
        walk(ctx, &thread.tree, |i, key, n| {
            let d = n.depth as usize;
            path.truncate(d - 1);
            path.push((key, i));
            if !n.class {
                return Ok(());
            }
            let (key, r) = match d {
                1 => (EMPTY, 0),
                _ if path[d - 2].0 == EMPTY => (EMPTY, 0),
                _ => (path[d - 2].0, rep(t, path[d - 2].1)),
            };
            let mut k = [0u8; 24];
            k[..20].copy_from_slice(&key_bytes(key));
            k[20..].copy_from_slice(&n.name.to_be_bytes());
            let f = figures(&n.v.0);
            sites.push(&k, &[f[0], f[1], f[2], f[3], r])
        })?;
    }
    let mut sites = sites.finish()?;
    let by = match rank {
        Rank::Sites(_, by) => by,
        Rank::Monitors => 0,
    };
    let mut ranked = Sorter::new(6, crate::sort::budget(SORT_BUDGET)).map_err(io::Error::from)?;
    let mut total = 0u64;
    let mut k = Vec::new();
    while let Some((key, v)) = sites.next_record()? {
        let keep = match rank {
            Rank::Sites(..) => v[..4].iter().any(|&x| x > 0),
            Rank::Monitors => v[0] > 0 || v[1] > 0,
        };
        if !keep {
            continue;
        }
        total = total.saturating_add(v[by]);
        let class = u32::from_be_bytes(key[20..24].try_into().expect("a class"));
        let order: Vec<u64> = match rank {
            Rank::Sites(..) => vec![v[by], v[0], v[1], v[2], v[3]],
            Rank::Monitors => vec![v[0], v[1]],
        };
        k.clear();
        for x in order {
            k.extend_from_slice(&(!x).to_be_bytes());
        }
        // The class's name sorts as text (a 0 ends it), then the rep.
        k.extend_from_slice(ctx.snap.names.get(class).as_bytes());
        k.push(0);
        k.extend_from_slice(&v[4].to_be_bytes());
        ranked.push(&k, &[v[0], v[1], v[2], v[3], u64::from(class), v[4]])?;
    }
    drop(sites);
    let mut ranked = ranked.finish()?;
    let mut out = TextOut::new()?;
    match rank {
        Rank::Sites(order, _) => {
            let mut head = Vec::new();
            crate::hprof_text::sites_head(&mut head, order, &ctx.date)?;
            out.put(format_args!("{}", String::from_utf8_lossy(&head)))?;
        }
        Rank::Monitors => {
            out.put(format_args!(
                "MONITOR TIME BEGIN (total = {} ms) {}\n",
                total / 1_000_000,
                ctx.date
            ))?;
            out.put(format_args!("rank   self  accum   count trace monitor\n"))?;
        }
    }
    let (mut accum, mut n) = (0u64, 0u64);
    while let Some((_, v)) = ranked.next_record()? {
        let trace = num.id(sec.kind, v[5])?;
        let class = ctx.snap.names.get(v[4] as u32);
        accum = accum.saturating_add(v[by]);
        n += 1;
        site_row(
            &mut out,
            rank,
            n,
            [v[0], v[1], v[2], v[3]],
            total,
            accum,
            trace,
            class,
        )?;
    }
    out.put(format_args!(
        "{}\n",
        match rank {
            Rank::Sites(..) => "SITES END",
            Rank::Monitors => "MONITOR TIME END",
        }
    ))?;
    out.finish()
}

#[allow(clippy::too_many_arguments)]
fn site_row(
    out: &mut TextOut,
    rank: Rank,
    n: u64,
    v: Site,
    total: u64,
    accum: u64,
    trace: u64,
    class: &str,
) -> io::Result<()> {
    match rank {
        Rank::Sites(_, by) => out.put(format_args!(
            "{:>5} {:>5.2}% {:>5.2}% {:>9} {:>4} {:>9} {:>5} {} {}\n",
            n,
            percent(v[by], total),
            percent(accum, total),
            v[0],
            v[1],
            v[2],
            v[3],
            trace,
            escaped(class)
        )),
        Rank::Monitors => out.put(format_args!(
            "{:>4} {:>5.2}% {:>5.2}% {:>7} {} {} (Java)\n",
            n,
            percent(v[0], total),
            percent(accum, total),
            v[1],
            trace,
            escaped(class)
        )),
    }
}

/// SITES from `<memory>`: per class, threads merged, no stack (trace
/// 300000): live objs = `count`, alloc'ed objs = `max`; no sizes. Only
/// without `<sites>`, which has the same objects by site.
fn sites_memory(ctx: &Ctx) -> io::Result<Option<Text>> {
    let Some(mem) = ctx.snap.memory.as_ref() else {
        return Ok(None);
    };
    let mut by_class: HashMap<&str, Site> = HashMap::new();
    for t in mem.threads.iter().filter(|t| wanted(ctx, &t.name)) {
        for r in &t.rows {
            let e = by_class.entry(r.class.as_str()).or_default();
            e[1] = e[1].saturating_add(r.count);
            e[3] = e[3].saturating_add(r.max.max(r.count));
        }
    }
    let mut rows: Vec<(&str, Site)> = by_class
        .into_iter()
        .filter(|(_, v)| v.iter().any(|&x| x > 0))
        .collect();
    rows.sort_by(|a, b| {
        b.1[1]
            .cmp(&a.1[1])
            .then_with(|| b.1.cmp(&a.1))
            .then_with(|| a.0.cmp(b.0))
    });
    let total = rows.iter().fold(0u64, |a, r| a.saturating_add(r.1[1]));
    let mut out = TextOut::new()?;
    let mut head = Vec::new();
    crate::hprof_text::sites_head(&mut head, "live objects", &ctx.date)?;
    out.put(format_args!("{}", String::from_utf8_lossy(&head)))?;
    let mut accum = 0u64;
    let rank = Rank::Sites("live objects", 1);
    for (i, (class, v)) in rows.iter().enumerate() {
        accum = accum.saturating_add(v[1]);
        site_row(
            &mut out,
            rank,
            i as u64 + 1,
            *v,
            total,
            accum,
            super::EMPTY_TRACE,
            class,
        )?;
    }
    out.put(format_args!("SITES END\n"))?;
    out.finish().map(Some)
}
