//! MONITOR TIME from the lock section.

use crate::common::*;
use crate::hprof_text::*;
use std::collections::HashMap;

/// MONITOR TIME from a `<lock>` section: per monitor class, the waits
/// counted and (in ms in the header) the time, as the section has them.
#[test]
fn monitor_time_from_the_lock_section() {
    let (snap, xml) = snapshot("hprof-lock", "lock", "profrj.harness.LockContention");
    let h = convert(&snap, &[]);
    let (total_ms, rows) = &h.cpu["MONITOR TIME"];
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let section = doc
        .root_element()
        .children()
        .find(|c| c.has_tag_name("lock"))
        .unwrap();
    let mut want: HashMap<String, (u64, u64)> = HashMap::new();
    for n in section
        .descendants()
        .filter(|d| d.has_tag_name("profile") && d.attribute("class") == Some("true"))
    {
        let e = want
            .entry(n.attribute("name").unwrap().to_owned())
            .or_default();
        e.0 += attr_u64(n, "time");
        e.1 += attr_u64(n, "count");
    }
    want.retain(|_, v| v.0 > 0 || v.1 > 0);
    let total_ns: u64 = want.values().map(|v| v.0).sum();
    assert_eq!(*total_ms, total_ns / 1_000_000);
    assert!(!rows.is_empty(), "no monitor rows");
    let mut got: HashMap<String, (u64, u64)> = HashMap::new();
    for r in rows {
        let e = got.entry(r.method.clone()).or_default();
        e.1 += r.count;
        // self% of the section's time, to the row's rounding.
        e.0 += (r.self_pct / 100.0 * total_ns as f64) as u64;
        assert!(h.traces.contains_key(&r.trace));
    }
    for (class, (time, count)) in &want {
        let (t, c) = got[class];
        assert_eq!(c, *count, "{class}: waits");
        let off = (t as f64 - *time as f64).abs() / total_ns as f64;
        assert!(
            off < 0.0001 * rows.len() as f64,
            "{class}: {t} vs {time} ns"
        );
    }
}
