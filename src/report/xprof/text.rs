//! The text of `report --style xprof`, laid out as HotSpot's
//! `fprofiler.cpp` printed it: a row is `%5.1f%% %5d ` (share, ticks in
//! code), ` + %5d ` (ticks in native code) and the method from column 25;
//! a section's title right-aligns its name in 11 columns after two spaces.
//! Trailing spaces (HotSpot filled titles to column 55) are left out.

use super::flat::{Flat, Kind, Ticks};
use super::Summary;
use crate::report::{pct, shown};
use crate::snapshot::{CallThread, Names};
use std::fmt::Write as _;

/// The column method names start at.
const METHOD_COLUMN: usize = 25;

/// A section's name in its title, and its total row's.
fn titles(k: Kind) -> (&'static str, &'static str) {
    match k {
        Kind::Interpreted => ("Interpreted", "Total interpreted"),
        Kind::Compiled => ("Compiled", "Total compiled"),
        Kind::Stub => ("Stub", "Total stub"),
        Kind::RuntimeStub => ("Runtime stub", "Total runtime stubs"),
        Kind::Unknown => ("Type unknown", "Total type unknown"),
    }
}

/// `line` padded to the method column (one space at least), then `label`.
fn to_column(out: &mut String, mut line: String, label: &str) {
    let pad = METHOD_COLUMN.saturating_sub(line.len()).max(1);
    line.extend(std::iter::repeat_n(' ', pad));
    let _ = writeln!(out, "{line}{label}");
}

fn method_row(out: &mut String, t: Ticks, of: u64, label: &str) {
    let line = format!(
        "{:5.1}% {:5}  + {:5} ",
        pct(t.total(), of),
        t.code,
        t.native
    );
    to_column(out, line, label);
}

/// A row of ticks without a native part (thread-local, global summary).
fn ticks_row(out: &mut String, ticks: u64, of: u64, label: &str) {
    to_column(out, format!("{:5.1}% {:5}", pct(ticks, of), ticks), label);
}

/// The line a snapshot without frame types starts with.
pub fn untyped_note(out: &mut String) {
    let _ = writeln!(
        out,
        "(no frame types in this snapshot (no frameTypes/selfTypes: an agent that did not record \
         them, or a recording without them): Java methods' ticks are under \"{}\", frame type \
         not recorded; `native` methods, stubs and synthetic frames are told by their names)",
        titles(Kind::Unknown).0
    );
}

/// One thread's profile: header, the sections it has ticks in, the
/// thread-local ticks.
pub fn flat_profile(out: &mut String, names: &Names, t: &CallThread, flat: &Flat, top: usize) {
    let secs = t.elapsed_time.map_or(String::new(), |ns| {
        format!(" of {:.2} secs", ns as f64 / 1e9)
    });
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "Flat profile{secs} ({} total ticks): {}",
        flat.total,
        shown(&t.name)
    );
    let _ = writeln!(out);
    for k in Kind::ALL {
        let mut rows: Vec<(&str, Ticks)> = flat
            .rows
            .iter()
            .filter(|((kind, _), _)| *kind == k)
            .map(|(&(_, m), &t)| (names.get(m), t))
            .collect();
        if rows.is_empty() {
            continue;
        }
        rows.sort_by(|a, b| b.1.total().cmp(&a.1.total()).then(a.0.cmp(b.0)));
        let (title, total_title) = titles(k);
        to_column(out, format!("  {title:>11} + native"), "Method");
        let mut sum = Ticks::default();
        for (_, ticks) in &rows {
            sum.code = sum.code.saturating_add(ticks.code);
            sum.native = sum.native.saturating_add(ticks.native);
        }
        for (name, ticks) in rows.iter().take(top) {
            method_row(out, *ticks, flat.total, &shown(name));
        }
        let label = match rows.len() > top {
            true => format!("{total_title} (including elided)"),
            false => total_title.to_owned(),
        };
        method_row(out, sum, flat.total, &label);
        let _ = writeln!(out);
    }
    if !flat.thread_local.is_empty() {
        let mut local: Vec<(String, u64)> = flat
            .thread_local
            .iter()
            .map(|(l, &ticks)| (l.label(names), ticks))
            .collect();
        local.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        let _ = writeln!(out, "  Thread-local ticks:");
        for (label, ticks) in local {
            ticks_row(out, ticks, flat.total, &shown(&label));
        }
        let _ = writeln!(out);
    }
}

/// The global summary: every thread's samples, Java's and the JVM's; the
/// rows under "Received ticks" add up to it (those with none are left
/// out, as -Xprof did).
pub fn global_summary(out: &mut String, s: &Summary) {
    let secs = s.elapsed_ns.map_or(String::new(), |ns| {
        format!(" of {:.2} seconds", ns as f64 / 1e9)
    });
    let _ = writeln!(out, "Global summary{secs}:");
    ticks_row(out, s.received, s.received, "Received ticks");
    for (ticks, label) in [
        (s.java, "Java threads"),
        (s.gc, "Received GC ticks"),
        (s.compiler, "Compilation"),
        (s.vm, "Other VM operations"),
        (s.other, "Other JVM threads"),
    ] {
        if ticks > 0 {
            ticks_row(out, ticks, s.received, label);
        }
    }
}
