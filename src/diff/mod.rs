//! `profrj diff BEFORE AFTER`: per method, how its share of the profile moved
//! between two snapshots — own (self) share and share with callees (total) —
//! largest change first; for a section of class frames (alloc), per site
//! (`sites.rs`). Shares, not raw counts, so runs of different lengths compare.

use crate::error::CliError;
mod sites;

use crate::selection::Selection;
use crate::snapshot::{
    method_table, read_file, CallKind, CallSection, MethodRow, Metric, Snapshot,
};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// The earlier snapshot.
    before: PathBuf,
    /// The later snapshot.
    after: PathBuf,
    #[command(flatten)]
    select: Selection<CallKind>,
    /// Rows to show (0: all).
    #[arg(long, default_value_t = 20)]
    top: usize,
    /// Heap dumps: order by growth of shallow bytes (self) or retained bytes (total).
    #[arg(long, value_enum, default_value_t)]
    sort: crate::report::SortBy,
}

/// A lambda's or hidden class's name carries an address that differs from
/// run to run (`Foo$$Lambda$16.0x00007f…run()`, JDK 21 `Foo$$Lambda/0x…`):
/// dropped, so the same code has the same name in both snapshots.
pub fn stable_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let b = name.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if (b[i] == b'.' || b[i] == b'/') && name[i + 1..].starts_with("0x") {
            let mut j = i + 3;
            while j < b.len() && b[j].is_ascii_hexdigit() {
                j += 1;
            }
            if j > i + 3 {
                i = j;
                continue;
            }
        }
        if name[i..].starts_with("$$Lambda$") {
            let mut j = i + 9;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            out.push_str("$$Lambda");
            i = j;
            continue;
        }
        let c = name[i..].chars().next().expect("in bounds");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

pub struct Change {
    pub name: String,
    pub own: (f64, f64),
    pub total: (f64, f64),
}

impl Change {
    pub fn magnitude(&self) -> f64 {
        (self.own.1 - self.own.0)
            .abs()
            .max((self.total.1 - self.total.0).abs())
    }
}

/// Per method name: (self share, total share), in %.
type Shares = HashMap<String, (f64, f64)>;

fn shares(snap: &Snapshot, sec: &CallSection, args: &Args) -> Result<(Shares, u64), CliError> {
    let metric = Metric::of(sec.kind, args.select.metric)?;
    let threads = sec.select(args.select.thread())?;
    let trees: Vec<_> = threads.iter().map(|t| &t.tree).collect();
    let (rows, grand) = method_table(&snap.names, &trees, metric);
    let mut by_name: Shares = HashMap::new();
    let share = |v: u64| {
        if grand == 0 {
            0.0
        } else {
            v as f64 * 100.0 / grand as f64
        }
    };
    for MethodRow {
        name, own, total, ..
    } in rows
    {
        let e = by_name.entry(stable_name(&name)).or_default();
        e.0 += share(own);
        e.1 += share(total);
    }
    Ok((by_name, grand))
}

pub fn changes(before: &Shares, after: &Shares) -> Vec<Change> {
    let mut names: Vec<&String> = before.keys().chain(after.keys()).collect();
    names.sort();
    names.dedup();
    let mut out: Vec<Change> = names
        .into_iter()
        .map(|n| {
            let b = before.get(n).copied().unwrap_or_default();
            let a = after.get(n).copied().unwrap_or_default();
            Change {
                name: n.clone(),
                own: (b.0, a.0),
                total: (b.1, a.1),
            }
        })
        .collect();
    out.sort_by(|x, y| {
        y.magnitude()
            .total_cmp(&x.magnitude())
            .then(x.name.cmp(&y.name))
    });
    out
}

pub fn run(args: Args) -> Result<(), CliError> {
    let heaps = (
        crate::heap::sniff(&args.before),
        crate::heap::sniff(&args.after),
    );
    if let (Some(ga), Some(gb)) = heaps {
        crate::report::heap_only(&args.select)?;
        let opts = crate::heapread::text::Options {
            thread: args.select.thread(),
            top: if args.top == 0 { usize::MAX } else { args.top },
            sort: args.sort,
            histogram: false,
        };
        return crate::heapread::diff((&args.before, ga), (&args.after, gb), &opts);
    }
    if heaps.0.is_some() != heaps.1.is_some() {
        return Err(CliError::Usage(
            "diff compares two heap dumps or two snapshots, not one of each".into(),
        ));
    }
    let before = read_file(&args.before)?;
    let after = read_file(&args.after)?;
    // The section both have, unless named.
    let kind = match args.select.section {
        Some(k) => k,
        None => *before
            .call_kinds()
            .iter()
            .find(|&&k| after.calls(k).is_some())
            .ok_or_else(|| {
                CliError::Usage(format!(
                    "the snapshots have no call section in common ({})",
                    crate::snapshot::call_tags("or")
                ))
            })?,
    };
    let missing = |p: &std::path::Path| {
        CliError::Input(format!("{}: no <{}> section", p.display(), kind.tag()))
    };
    let b_sec = before.calls(kind).ok_or_else(|| missing(&args.before))?;
    let a_sec = after.calls(kind).ok_or_else(|| missing(&args.after))?;
    let metric = Metric::of(kind, args.select.metric)?;
    let top = if args.top == 0 { usize::MAX } else { args.top };
    let out = if kind.desc().class_marker.is_some() {
        let thread = args.select.thread();
        sites::diff(&before, b_sec, &after, a_sec, thread, metric, top)?
    } else {
        methods_diff(&before, b_sec, &after, a_sec, &args, metric, top)?
    };
    crate::output::write(None, out.as_bytes())
}

fn methods_diff(
    before: &Snapshot,
    b_sec: &CallSection,
    after: &Snapshot,
    a_sec: &CallSection,
    args: &Args,
    metric: Metric,
    top: usize,
) -> Result<String, CliError> {
    let (b, b_total) = shares(before, b_sec, args)?;
    let (a, a_total) = shares(after, a_sec, args)?;
    let unit = metric.unit();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "DIFF <{}> weight: {}; before = {b_total} {unit}, after = {a_total} {unit}",
        metric.kind.tag(),
        metric.describe()
    );
    let _ = writeln!(
        out,
        "shares of each snapshot's total; largest change first\n{:>8} {:>17} {:>8} {:>17}  method",
        "Δself", "self before→after", "Δtotal", "total before→after"
    );
    for c in changes(&b, &a)
        .iter()
        .filter(|c| c.magnitude() >= 0.005)
        .take(top)
    {
        let _ = writeln!(
            out,
            "{:>+7.2}% {:>7.2}%→{:>7.2}% {:>+7.2}% {:>7.2}%→{:>7.2}%  {}{}",
            c.own.1 - c.own.0,
            c.own.0,
            c.own.1,
            c.total.1 - c.total.0,
            c.total.0,
            c.total.1,
            crate::report::shown(&c.name),
            if c.total.1 > c.total.0 {
                "  hotter"
            } else {
                "  colder"
            }
        );
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hidden_class_addresses_are_dropped() {
        assert_eq!(
            stable_name("p.C$$Lambda$16.0x00007fa054001c00.run()"),
            "p.C$$Lambda.run()"
        );
        assert_eq!(
            stable_name("p.C$$Lambda/0x0000a1.run()"),
            "p.C$$Lambda.run()"
        );
        assert_eq!(stable_name("p.C.m(0x)"), "p.C.m(0x)");
        assert_eq!(stable_name("é.x()"), "é.x()");
    }

    #[test]
    fn largest_change_first() {
        let b: HashMap<String, (f64, f64)> =
            [("a".into(), (10.0, 75.0)), ("b".into(), (5.0, 25.0))].into();
        let a: HashMap<String, (f64, f64)> =
            [("a".into(), (10.0, 25.0)), ("c".into(), (60.0, 75.0))].into();
        let c = changes(&b, &a);
        assert_eq!(c[0].name, "c");
        assert_eq!(c[1].name, "a");
        assert_eq!(c[2].name, "b");
    }
}
