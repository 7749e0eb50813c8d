//! `profrj diff A.hprof B.hprof`: what grew between two heap dumps, by
//! class, by allocation site and by retaining path, with the objects and
//! bytes on both sides. Classes and sites are matched by name; retainers
//! by the shape of their shortest path from a GC root (each step's field
//! and the type it reaches: addresses differ between dumps, paths do not).
//! Both graphs stay mapped while the paths of one dump's largest
//! retainers are looked for in the other.

use super::text::{ranked, Options};
use super::views::{self, Row};
use super::Heap;
use crate::error::CliError;
use crate::selection::SortBy;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// Retainers compared per dump.
const RETAINERS: usize = 200;

/// A path's steps: (field or root kind, type reached).
type Steps = Vec<(String, String)>;

/// One dump's rows by name: classes, sites, retaining paths (and each
/// path's steps, to find it in the other dump).
#[derive(Default)]
struct Side {
    classes: HashMap<String, Row>,
    sites: HashMap<String, Row>,
    paths: HashMap<String, Row>,
    steps: Vec<(String, Steps)>,
}

fn side(h: &Heap, o: &Options) -> Result<Side, CliError> {
    let mut scratch = super::scratch::Scratch::new()?;
    let v = views::compute(h, o.thread, RETAINERS, &mut scratch)?;
    let all = usize::MAX;
    let named = |rows: Vec<(String, Row)>| -> HashMap<String, Row> {
        let mut m = HashMap::new();
        for (k, r) in rows {
            add(m.entry(k).or_default(), r);
        }
        m
    };
    let mut s = Side {
        classes: named(ranked(
            &v.by_type,
            |t| h.g.type_name(&h.d, t as u32),
            o.sort,
            all,
        )),
        sites: named(ranked(&v.by_site, |i| h.keys.sites[i].clone(), o.sort, all)),
        paths: HashMap::new(),
        steps: Vec::new(),
    };
    for &x in &v.top {
        let Some(steps) = h.path_steps(x) else {
            continue;
        };
        let key = signature(&steps);
        add(s.paths.entry(key.clone()).or_default(), node_row(h, x));
        s.steps.push((key, steps));
    }
    Ok(s)
}

fn node_row(h: &Heap, x: u32) -> Row {
    Row {
        count: 1,
        shallow: h.g.shallow[x as usize],
        retained: h.tree.retained[x as usize],
    }
}

fn signature(steps: &Steps) -> String {
    let parts: Vec<String> = steps
        .iter()
        .map(|(how, ty)| format!("{how} {ty}"))
        .collect();
    parts.join(" ")
}

/// The retainers of `from` that are not among `to`'s largest: looked for
/// in `to`'s dump by their path, so a retainer that grew into the top
/// shows what it was before (or 0 where the path leads nowhere).
fn complete(to: &mut Side, h: &Heap, from: &Side) {
    for (key, steps) in &from.steps {
        if to.paths.contains_key(key) {
            continue;
        }
        let row = h.resolve(steps).map(|x| node_row(h, x)).unwrap_or_default();
        to.paths.insert(key.clone(), row);
    }
}

fn add(to: &mut Row, r: Row) {
    to.count += r.count;
    to.shallow += r.shallow;
    to.retained += r.retained;
}

/// Both dumps' rows of one view, largest growth first (shallow bytes for
/// `--sort self`, retained for `total`), at most `top`, unchanged rows
/// left out.
fn grown(
    a: &HashMap<String, Row>,
    b: &HashMap<String, Row>,
    sort: SortBy,
    top: usize,
) -> Vec<(String, Row, Row)> {
    let mut names: Vec<&String> = a.keys().chain(b.keys()).collect();
    names.sort();
    names.dedup();
    let mut rows: Vec<(String, Row, Row)> = names
        .into_iter()
        .map(|n| {
            let get = |m: &HashMap<String, Row>| m.get(n).copied().unwrap_or_default();
            (n.clone(), get(a), get(b))
        })
        .filter(|(_, x, y)| x != y)
        .collect();
    let growth = |x: &Row, y: &Row| -> (i128, i128) {
        let d = |p: u64, q: u64| q as i128 - p as i128;
        match sort {
            SortBy::Own => (d(x.shallow, y.shallow), d(x.count, y.count)),
            SortBy::Total => (d(x.retained, y.retained), d(x.count, y.count)),
        }
    };
    rows.sort_by(|p, q| {
        growth(&q.1, &q.2)
            .cmp(&growth(&p.1, &p.2))
            .then(p.0.cmp(&q.0))
    });
    rows.truncate(top);
    rows
}

fn table(out: &mut String, head: &str, what: &str, rows: &[(String, Row, Row)]) {
    let _ = writeln!(out, "{head}");
    let _ = writeln!(
        out,
        "{:>10} {:>10} {:>+10} {:>13} {:>13} {:>+13} {:>14} {:>14} {:>+14}  {what}",
        "objects A",
        "objects B",
        "change",
        "shallow A",
        "shallow B",
        "change",
        "retained A",
        "retained B",
        "change"
    );
    for (name, a, b) in rows {
        let d = |p: u64, q: u64| q as i128 - p as i128;
        let _ = writeln!(
            out,
            "{:>10} {:>10} {:>+10} {:>13} {:>13} {:>+13} {:>14} {:>14} {:>+14}  {name}",
            a.count,
            b.count,
            d(a.count, b.count),
            a.shallow,
            b.shallow,
            d(a.shallow, b.shallow),
            a.retained,
            b.retained,
            d(a.retained, b.retained)
        );
    }
    out.push('\n');
}

pub fn diff(a: (&Path, bool), b: (&Path, bool), o: &Options) -> Result<(), CliError> {
    let ha = Heap::read(a.0, a.1)?;
    let hb = Heap::read(b.0, b.1)?;
    let mut sa = side(&ha, o)?;
    let mut sb = side(&hb, o)?;
    complete(&mut sa, &ha, &sb);
    complete(&mut sb, &hb, &sa);
    let by = match o.sort {
        SortBy::Own => "shallow",
        SortBy::Total => "retained",
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "heap dumps A {} and B {}: what grew, by {by} bytes{}\n",
        a.0.display(),
        b.0.display(),
        o.thread.map_or(String::new(), |t| format!(
            " (objects allocated by thread {t:?})"
        ))
    );
    table(
        &mut out,
        "CLASSES",
        "class",
        &grown(&sa.classes, &sb.classes, o.sort, o.top),
    );
    if !sa.sites.is_empty() || !sb.sites.is_empty() {
        table(
            &mut out,
            "ALLOCATION SITES",
            "site",
            &grown(&sa.sites, &sb.sites, o.sort, o.top),
        );
    }
    table(
        &mut out,
        &format!("RETAINING PATHS (each dump's {RETAINERS} largest retainers, found by path in the other; objects: retainers on that path)"),
        "path from a GC root",
        &grown(&sa.paths, &sb.paths, SortBy::Total, o.top),
    );
    crate::output::write(None, out.as_bytes())
}
