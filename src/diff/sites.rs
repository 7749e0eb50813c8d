//! The diff of a section whose top frames are classes (alloc): per site —
//! class and the method right below it — how its shares of the section's
//! [`diff_metrics`](crate::snapshot::SectionDesc::diff_metrics) moved,
//! largest change of the weight first.

use super::stable_name;
use crate::error::CliError;
use crate::report::shown;
use crate::snapshot::{site_table, CallSection, Metric, MetricName, Snapshot};
use std::collections::{BTreeSet, HashMap};
use std::fmt::Write as _;

/// A site's (class, method) names, run-specific addresses dropped.
type Site = (String, String);

/// Per site: its share of each metric's total, in %.
type Shares = HashMap<Site, Vec<f64>>;

/// The sites' shares, and each metric's total.
fn shares(
    snap: &Snapshot,
    sec: &CallSection,
    thread: Option<&str>,
    metrics: &[Metric],
) -> Result<(Shares, Vec<u64>), CliError> {
    let threads = sec.select(thread)?;
    let trees: Vec<_> = threads.iter().map(|t| &t.tree).collect();
    let (rows, grand) = site_table(&snap.names, &trees, metrics[0]);
    let all: Vec<Metric> = Metric::all(sec.kind).collect();
    let at: Vec<usize> = metrics
        .iter()
        .map(|m| all.iter().position(|a| a == m).expect("the section's"))
        .collect();
    let mut out: Shares = HashMap::new();
    for r in rows {
        let key = (stable_name(&r.class), stable_name(&r.method));
        let e = out.entry(key).or_insert_with(|| vec![0.0; at.len()]);
        for (x, &i) in e.iter_mut().zip(&at) {
            if grand[i] > 0 {
                *x += r.values[i] as f64 * 100.0 / grand[i] as f64;
            }
        }
    }
    Ok((out, at.iter().map(|&i| grand[i]).collect()))
}

pub fn diff(
    before: &Snapshot,
    b_sec: &CallSection,
    after: &Snapshot,
    a_sec: &CallSection,
    thread: Option<&str>,
    metric: Metric,
    top: usize,
) -> Result<String, CliError> {
    let desc = metric.kind.desc();
    // The weight first, then the section's other compared metrics.
    let mut metrics = vec![metric];
    for &name in desc.diff_metrics {
        let m = Metric::of(metric.kind, Some(MetricName(name)))?;
        if m != metric {
            metrics.push(m);
        }
    }
    let (b, b_total) = shares(before, b_sec, thread, &metrics)?;
    let (a, a_total) = shares(after, a_sec, thread, &metrics)?;
    let mut out = String::new();
    let totals = |t: &[u64]| {
        let parts: Vec<String> = metrics
            .iter()
            .zip(t)
            .map(|(m, v)| format!("{v} {}", m.unit()))
            .collect();
        parts.join(", ")
    };
    let _ = writeln!(
        out,
        "DIFF <{}> {} ({}); before = {}, after = {}",
        desc.tag,
        desc.sites_title.to_lowercase(),
        desc.scope(a_sec.live),
        totals(&b_total),
        totals(&a_total)
    );
    if b_sec.live != a_sec.live {
        let _ = writeln!(
            out,
            "note: before counts {}, after {}: not like for like",
            desc.scope(b_sec.live),
            desc.scope(a_sec.live)
        );
    }
    let _ = writeln!(out, "shares of each snapshot's total; largest change first");
    // Each metric's two columns as wide as their headers.
    let widths: Vec<(usize, usize)> = metrics
        .iter()
        .map(|m| (m.name().len() + 2).max(8))
        .map(|w| (w, (w + 11).max(19)))
        .collect();
    for (m, &(w1, w2)) in metrics.iter().zip(&widths) {
        let head = format!("{} before→after", m.name());
        let _ = write!(out, "{:>w1$} {head:>w2$} ", format!("Δ{}", m.name()));
    }
    let _ = writeln!(out, " class  method");
    let keys: BTreeSet<&Site> = b.keys().chain(a.keys()).collect();
    let none = vec![0.0; metrics.len()];
    let mut rows: Vec<(&Site, &Vec<f64>, &Vec<f64>)> = keys
        .into_iter()
        .map(|k| (k, b.get(k).unwrap_or(&none), a.get(k).unwrap_or(&none)))
        .collect();
    let change = |x: &Vec<f64>, y: &Vec<f64>, i: usize| (y[i] - x[i]).abs();
    rows.sort_by(|p, q| {
        (0..metrics.len())
            .map(|i| change(q.1, q.2, i).total_cmp(&change(p.1, p.2, i)))
            .find(|o| o.is_ne())
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(p.0.cmp(q.0))
    });
    let moved = |r: &&(&Site, &Vec<f64>, &Vec<f64>)| {
        (0..metrics.len()).any(|i| change(r.1, r.2, i) >= 0.005)
    };
    for (site, x, y) in rows.iter().filter(moved).take(top) {
        for (i, &(w1, w2)) in widths.iter().enumerate() {
            let change = format!("{:+.2}%", y[i] - x[i]);
            let shares = format!("{:>8.2}%→{:>8.2}%", x[i], y[i]);
            let _ = write!(out, "{change:>w1$} {shares:>w2$} ");
        }
        let mark = if y[0] > x[0] { "hotter" } else { "colder" };
        let (class, method) = (shown(&site.0), shown(&site.1));
        let _ = writeln!(out, " {class}  {method}  {mark}");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::test_alloc::{alloc, metric, ALLOC};
    use crate::snapshot::{parse_bytes, CallKind};

    /// small()'s String grows from 200 to 1600 bytes (5 to 40 objects).
    #[test]
    fn the_site_that_grew_comes_first() {
        let before = alloc();
        let grown = ALLOC.replace(
            r#""java.lang.String" class="true" bytes="200" objects="5""#,
            r#""java.lang.String" class="true" bytes="1600" objects="40""#,
        );
        let after = parse_bytes(grown.as_bytes()).unwrap();
        let (b, a) = (
            before.calls(CallKind::Alloc).unwrap(),
            after.calls(CallKind::Alloc).unwrap(),
        );
        let text = diff(&before, b, &after, a, None, metric("bytes"), 10).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "DIFF <alloc> allocation sites (all allocations); before = 1400 bytes, 15 objects, \
             after = 2800 bytes, 50 objects"
        );
        // 200 of 1400 bytes -> 1600 of 2800; 5 of 15 objects -> 40 of 50.
        let row: Vec<&str> = lines[3].split_whitespace().collect();
        assert_eq!(
            row,
            [
                "+42.86%",
                "14.29%→",
                "57.14%",
                "+46.67%",
                "33.33%→",
                "80.00%",
                "java.lang.String",
                "p.A.small()",
                "hotter"
            ],
            "{text}"
        );
        assert!(lines[4].contains("byte[]  p.A.big()  colder"), "{text}");
        // Against itself: nothing moved.
        let same = diff(&before, b, &before, b, None, metric("objects"), 10).unwrap();
        assert_eq!(same.lines().count(), 3, "{same}");
        assert!(
            same.lines()
                .nth(2)
                .unwrap()
                .trim_start()
                .starts_with("Δobjects"),
            "{same}"
        );
    }
}
