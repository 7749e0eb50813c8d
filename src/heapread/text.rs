//! `profrj report HEAP`: the tables as text, one block per view, each
//! with a head line saying what it counts.

use super::views::{self, Row, Views};
use super::Heap;
use crate::error::CliError;
use crate::selection::SortBy;
use std::fmt::Write as _;
use std::path::Path;

/// The most top retainers shown, whatever `--top` says.
pub const MAX_RETAINERS: usize = 1000;

/// What `report` was asked for.
pub struct Options<'a> {
    pub thread: Option<&'a str>,
    /// Rows per table (`usize::MAX`: all).
    pub top: usize,
    /// `self`: by shallow bytes; `total`: by retained bytes.
    pub sort: SortBy,
    /// Only the class histogram, in one pass (no retained bytes).
    pub histogram: bool,
}

pub fn report(path: &Path, gzip: bool, o: &Options) -> Result<(), CliError> {
    if o.histogram {
        return histogram(path, gzip, o);
    }
    let heap = Heap::read(path, gzip)?;
    let text = render(&heap, path, o)?;
    crate::output::write(None, text.as_bytes())
}

/// Rows of `rows` with their names, sorted as `sort` says (then by name),
/// at most `top`; empty rows left out.
pub fn ranked(
    rows: &[Row],
    names: impl Fn(usize) -> String,
    sort: SortBy,
    top: usize,
) -> Vec<(String, Row)> {
    let mut out: Vec<(String, Row)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.count > 0)
        .map(|(i, r)| (names(i), *r))
        .collect();
    let key = |r: &Row| match sort {
        SortBy::Own => (r.shallow, r.retained),
        SortBy::Total => (r.retained, r.shallow),
    };
    out.sort_by(|a, b| key(&b.1).cmp(&key(&a.1)).then(a.0.cmp(&b.0)));
    out.truncate(top);
    out
}

fn table(out: &mut String, head: &str, what: &str, rows: &[(String, Row)]) {
    let _ = writeln!(out, "{head}");
    let _ = writeln!(
        out,
        "{:>5} {:>12} {:>15} {:>15}  {what}",
        "rank", "objects", "shallow bytes", "retained bytes"
    );
    for (i, (name, r)) in rows.iter().enumerate() {
        let _ = writeln!(
            out,
            "{:>5} {:>12} {:>15} {:>15}  {name}",
            i + 1,
            r.count,
            r.shallow,
            r.retained
        );
    }
    out.push('\n');
}

fn render(h: &Heap, path: &Path, o: &Options) -> Result<String, CliError> {
    let (d, g) = (&h.d, &h.g);
    if let Some(name) = o.thread {
        if !h.keys.threads.iter().any(|t| t == name) {
            return Err(CliError::Usage(format!(
                "no object of the heap dump names thread {name:?} as its allocating thread \
                 (threads: {})",
                if h.keys.threads.is_empty() {
                    "none: the dump has no allocation traces".to_owned()
                } else {
                    h.keys.threads.join(", ")
                }
            )));
        }
    }
    let mut scratch = super::scratch::Scratch::new()?;
    // Each retainer costs a path: `--top 0` (every row) stops at MAX_RETAINERS.
    let retainers = o.top.min(MAX_RETAINERS);
    let v: Views = views::compute(h, o.thread, retainers, &mut scratch)?;
    let objects: u64 = v.by_type.iter().map(|r| r.count).sum();
    let bytes: u64 = v.by_type.iter().map(|r| r.shallow).sum();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "heap dump {}: {}, {}-byte ids; {objects} objects{}, {bytes} bytes (sizes as NetBeans' heap library states them); \
         {} classes; {} objects no GC root reaches; {} references to no object",
        path.display(),
        d.header.format,
        d.id.bytes(),
        o.thread.map_or(String::new(), |t| format!(" allocated by thread {t:?}")),
        d.classes.len(),
        h.tree.unreachable,
        g.dangling,
    );
    out.push('\n');
    let by = match o.sort {
        SortBy::Own => "shallow",
        SortBy::Total => "retained",
    };
    let classes = ranked(&v.by_type, |t| g.type_name(d, t as u32), o.sort, o.top);
    table(
        &mut out,
        &format!(
            "CLASSES by {by} bytes (retained: the bytes the class's objects keep alive together, none counted twice)"
        ),
        "class",
        &classes,
    );
    let _ = writeln!(
        out,
        "TOP RETAINERS: the objects and classes that keep the most bytes alive (dominator tree), each with its shortest path from a GC root"
    );
    let _ = writeln!(
        out,
        "{:>5} {:>15} {:>13}  object",
        "rank", "retained bytes", "shallow bytes"
    );
    for (i, &x) in v.top.iter().enumerate() {
        let _ = writeln!(
            out,
            "{:>5} {:>15} {:>13}  {}",
            i + 1,
            h.tree.retained[x as usize],
            g.shallow[x as usize],
            g.node_name(d, x)
        );
        for line in h.path_lines(x) {
            let _ = writeln!(out, "{:>36}{line}", "");
        }
    }
    out.push('\n');
    if v.traced == 0 {
        let _ = writeln!(
            out,
            "ALLOCATION SITES: none (no object's trace names a frame: a HotSpot dump names no allocation site; profrj's heapdump does)"
        );
        return Ok(out);
    }
    let sites = ranked(&v.by_site, |s| h.keys.sites[s].clone(), o.sort, o.top);
    table(
        &mut out,
        &format!(
            "ALLOCATION SITES by {by} bytes ({} objects with a site)",
            v.traced
        ),
        "site",
        &sites,
    );
    let threads = ranked(&v.by_thread, |s| h.keys.threads[s].clone(), o.sort, o.top);
    table(
        &mut out,
        &format!("ALLOCATING THREADS by {by} bytes"),
        "thread",
        &threads,
    );
    Ok(out)
}

/// `--histogram`: objects and shallow bytes per class, largest first.
fn histogram(path: &Path, gzip: bool, o: &Options) -> Result<(), CliError> {
    if o.thread.is_some() || o.sort == SortBy::Total {
        return Err(CliError::Usage(
            "--histogram counts every object by class in one pass: no --thread, no --sort total \
             (the report without --histogram has both)"
                .into(),
        ));
    }
    let (d, mut rows) = super::histogram::histogram(path, gzip)?;
    rows.sort_by(|a, b| b.2.cmp(&a.2).then(b.1.cmp(&a.1)).then(a.0.cmp(&b.0)));
    let objects: u64 = rows.iter().map(|r| r.1).sum();
    let bytes: u64 = rows.iter().map(|r| r.2).sum();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "heap dump {}: {}, {}-byte ids; {objects} objects, {bytes} bytes (sizes as NetBeans' heap library states them); {} classes\n",
        path.display(),
        d.header.format,
        d.id.bytes(),
        d.classes.len()
    );
    let _ = writeln!(out, "CLASSES by shallow bytes");
    let _ = writeln!(
        out,
        "{:>5} {:>12} {:>15}  class",
        "rank", "objects", "shallow bytes"
    );
    for (i, (name, count, shallow)) in rows.iter().take(o.top).enumerate() {
        let _ = writeln!(out, "{:>5} {count:>12} {shallow:>15}  {name}", i + 1);
    }
    crate::output::write(None, out.as_bytes())
}
