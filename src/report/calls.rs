//! The call sections' tables: HPROF's "CPU SAMPLES" per method, and for a
//! section whose top frames are classes (alloc), HPROF's "SITES" per class
//! and the method that allocated it. Both as the section's descriptor says:
//! its metrics, units and titles.

use super::{pct, shown, SortBy};
use crate::error::CliError;
use crate::snapshot::{
    method_table, site_table, tree_total, CallSection, CallThread, Metric, Snapshot,
};
use std::fmt::Write as _;

/// `thread "x"` or `all N threads merged`.
fn who(thread: Option<&str>, threads: usize) -> String {
    match thread {
        Some(n) => format!("thread {n:?}"),
        None => format!("all {threads} threads merged"),
    }
}

/// The HPROF-style method table of a call section.
pub fn calls_report(
    snap: &Snapshot,
    sec: &CallSection,
    thread: Option<&str>,
    metric: Metric,
    sort: SortBy,
    top: usize,
) -> Result<String, CliError> {
    let threads = sec.select(thread)?;
    let trees: Vec<_> = threads.iter().map(|t| &t.tree).collect();
    let (mut rows, grand) = method_table(&snap.names, &trees, metric);
    if sort == SortBy::Total {
        rows.sort_by(|a, b| b.total.cmp(&a.total).then(b.own.cmp(&a.own)));
    }
    let desc = sec.desc();
    let unit = metric.unit();
    let title = metric.desc.title;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{title} <{}> {}: total = {grand} {unit}; weight: {}",
        desc.tag,
        who(thread, threads.len()),
        metric.describe()
    );
    // A sites table above already lists the threads.
    if thread.is_some() && desc.class_marker.is_none() {
        for t in &threads {
            let _ = writeln!(out, "  thread {:?}: {}", t.name, thread_facts(sec, t));
        }
    }
    let _ = write!(
        out,
        "{:>4} {:>7} {:>7} {:>12} {:>7} {:>12}",
        "rank", "self", "accum", "count", "total", "count"
    );
    if let Some((head, _)) = desc.count_column {
        let _ = write!(out, " {head:>10}");
    }
    let _ = writeln!(out, "  method");
    let mut accum = 0;
    for (i, r) in rows.iter().filter(|r| r.total > 0).take(top).enumerate() {
        accum = r.own.saturating_add(accum);
        let _ = write!(
            out,
            "{:>4} {:>6.2}% {:>6.2}% {:>12} {:>6.2}% {:>12}",
            i + 1,
            pct(r.own, grand),
            pct(accum, grand),
            r.own,
            pct(r.total, grand),
            r.total
        );
        if desc.count_column.is_some() {
            let _ = write!(out, " {:>10}", r.calls);
        }
        let _ = writeln!(out, "  {}", shown(&r.name));
    }
    let own = if desc.class_marker.is_some() {
        "self: by the method itself, its class frames"
    } else {
        "self: without callees"
    };
    let _ = writeln!(
        out,
        "{title} END ({own}; total: with callees, a recursive method counted once per stack)"
    );
    Ok(out)
}

/// HPROF's SITES table: one row per (class frame, the method below it),
/// heaviest first, every metric of the section; the threads' totals above.
pub fn sites_report(
    snap: &Snapshot,
    sec: &CallSection,
    thread: Option<&str>,
    metric: Metric,
    top: usize,
) -> Result<String, CliError> {
    let desc = sec.desc();
    let threads = sec.select(thread)?;
    let trees: Vec<_> = threads.iter().map(|t| &t.tree).collect();
    let (rows, grand) = site_table(&snap.names, &trees, metric);
    let all: Vec<Metric> = Metric::all(sec.kind).collect();
    // Columns: the weight first, then the others in the section's order.
    let mut cols: Vec<usize> = (0..all.len()).collect();
    let at = all
        .iter()
        .position(|m| *m == metric)
        .expect("the section's");
    cols.retain(|&i| i != at);
    cols.insert(0, at);
    let totals: Vec<String> = cols
        .iter()
        .map(|&i| format!("{} {}", grand[i], all[i].name()))
        .collect();
    let mut out = String::new();
    let mut scope = desc.scope(sec.live).to_owned();
    if let (true, Some(attr)) = (sec.live, desc.live) {
        let _ = write!(scope, " ({attr}=\"true\")");
    }
    let _ = writeln!(
        out,
        "{} <{}> {}, {scope}: {}; ordered by {}",
        desc.sites_title,
        desc.tag,
        who(thread, threads.len()),
        totals.join(", "),
        metric.name()
    );
    for (&(key, what), v) in desc.section_values.iter().zip(&sec.values) {
        if let Some(v) = v {
            let _ = writeln!(out, "  {key} = {v} ({what})");
        }
    }
    // Each thread's totals, heaviest first.
    let mut by_weight: Vec<(u64, &CallThread)> = threads
        .iter()
        .map(|t| (tree_total(&t.tree, metric), *t))
        .collect();
    by_weight.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.name.cmp(&b.1.name)));
    for (_, t) in by_weight.iter().take(top) {
        let facts = thread_facts(sec, t);
        let sep = if facts.is_empty() { "" } else { ": " };
        let _ = writeln!(out, "  thread {:?}{sep}{facts}", t.name);
    }
    if by_weight.len() > top {
        let _ = writeln!(out, "  … {} more threads", by_weight.len() - top);
    }
    let shown_rows: Vec<_> = rows.iter().take(top).collect();
    let width = shown_rows
        .iter()
        .map(|r| shown(&r.class).chars().count())
        .max()
        .unwrap_or(0)
        .clamp(5, 40);
    let _ = write!(out, "{:>4} {:>7} {:>7}", "rank", "self", "accum");
    for &i in &cols {
        let _ = write!(out, " {:>12}", all[i].name());
    }
    let _ = writeln!(out, "  {:width$}  method", "class");
    let mut accum = 0u64;
    for (rank, r) in shown_rows.iter().enumerate() {
        accum = accum.saturating_add(r.values[at]);
        let _ = write!(
            out,
            "{:>4} {:>6.2}% {:>6.2}%",
            rank + 1,
            pct(r.values[at], grand[at]),
            pct(accum, grand[at])
        );
        for &i in &cols {
            let _ = write!(out, " {:>12}", r.values[i]);
        }
        let _ = writeln!(out, "  {:width$}  {}", shown(&r.class), shown(&r.method));
    }
    let _ = writeln!(out, "{} END ({})", desc.sites_title, desc.sites_note);
    Ok(out)
}

/// What the snapshot says of a thread besides its tree.
fn thread_facts(sec: &CallSection, t: &CallThread) -> String {
    let mut facts = Vec::new();
    if let Some(n) = t.virtual_threads {
        facts.push(format!("a group of {n} virtual threads"));
    }
    if let Some(n) = t.ended_threads {
        facts.push(format!("a group of {n} ended threads"));
    }
    if let Some(ns) = t.cpu_time {
        facts.push(format!("CPU {:.3} s", ns as f64 / 1e9));
    }
    if let Some(ns) = t.elapsed_time {
        facts.push(format!("lived {:.3} s while profiled", ns as f64 / 1e9));
    }
    let totals = sec.desc().thread_totals.iter().zip(&t.totals);
    for (&(_, what), v) in totals {
        if let Some(v) = v {
            facts.push(format!("{v} {what}"));
        }
    }
    match t.is_alive {
        Some(true) => facts.push("alive".into()),
        Some(false) => facts.push("ended".into()),
        None => {}
    }
    facts.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::test_alloc::{alloc, live, metric};
    use crate::snapshot::CallKind;

    /// The rows of a table: after its `rank` header, before its END line.
    fn rows(text: &str) -> Vec<Vec<&str>> {
        text.lines()
            .skip_while(|l| !l.starts_with("rank"))
            .skip(1)
            .take_while(|l| !l.contains(" END "))
            .map(|l| l.split_whitespace().collect())
            .collect()
    }

    #[test]
    fn sites_heaviest_first_with_shares_and_thread_totals() {
        let s = alloc();
        let sec = s.calls(CallKind::Alloc).unwrap();
        let text = sites_report(&s, sec, None, metric("bytes"), 10).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "ALLOCATION SITES <alloc> all 2 threads merged, all allocations: \
             1400 bytes, 15 objects, 9 samples; ordered by bytes"
        );
        assert_eq!(
            lines[1],
            "  interval = 1024 (bytes between samples on average)"
        );
        assert!(lines[2].starts_with("  thread \"main\": CPU 0.005 s, lived 0.009 s while profiled, 1100 bytes, 12 objects, 7 samples, ended"), "{text}");
        assert!(lines[3].starts_with("  thread \"worker\": "), "{text}");
        let r = rows(&text);
        assert_eq!(
            r[0],
            [
                "1",
                "64.29%",
                "64.29%",
                "900",
                "4",
                "5",
                "byte[]",
                "p.A.big()"
            ]
        );
        assert_eq!(r[2][6..], ["java.lang.String", "p.A.small()"]);
        assert_eq!(
            r[3][2..],
            ["100.00%", "100", "1", "1", "int[]", "[no", "Java", "frame]"]
        );
        // By objects, one thread, the live variant.
        let s = live();
        let sec = s.calls(CallKind::Alloc).unwrap();
        let text = sites_report(&s, sec, Some("worker"), metric("objects"), 10).unwrap();
        assert!(
            text.starts_with(
                "ALLOCATION SITES <alloc> thread \"worker\", live objects only (live=\"true\"): 3 objects, 300 bytes, 2 samples"
            ),
            "{text}"
        );
        assert_eq!(
            rows(&text),
            [[
                "1",
                "100.00%",
                "100.00%",
                "3",
                "300",
                "2",
                "byte[]",
                "p.A.big()"
            ]]
        );
    }

    #[test]
    fn methods_of_an_alloc_section() {
        let s = alloc();
        let sec = s.calls(CallKind::Alloc).unwrap();
        let text = calls_report(&s, sec, None, metric("bytes"), SortBy::Own, 10).unwrap();
        assert!(
            text.starts_with("ALLOCATING METHODS <alloc> all 2 threads merged: total = 1400 bytes"),
            "{text}"
        );
        let r = rows(&text);
        assert_eq!(
            r[0],
            ["1", "64.29%", "64.29%", "900", "64.29%", "900", "p.A.big()"]
        );
        assert_eq!(r[1][6], "p.A.small()");
        let main = r.iter().find(|r| r[6] == "p.A.main()").unwrap();
        assert_eq!(main[3..6], ["0", "71.43%", "1000"]);
    }
}
