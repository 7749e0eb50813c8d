//! SITES from `<memory>` and `<alloc>` parse back with the counts of the
//! snapshot (MemoryTruth).

use crate::common::*;
use crate::hprof_text::*;
use std::collections::HashMap;

const MEMORY: &str = "profrj.harness.MemoryTruth";

#[test]
fn sites_from_memory_and_alloc_parse_back() {
    let (snap, xml) = snapshot("hprof-memory", "memory,alloc=64k", MEMORY);
    let h = convert(&snap, &[]);
    assert_eq!(
        h.sites.len(),
        2,
        "a SITES block per section (<sites>, <alloc>)"
    );
    // memory's <sites> (not <memory>, which it details): per site and class;
    // per class, live objects summed over sites = <memory>'s counts, and
    // alloc'ed objects = the sites' `allocated`.
    let (order, rows) = &h.sites[0];
    assert_eq!(order, "live objects");
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let section = |tag: &str| {
        doc.root_element()
            .children()
            .find(|c| c.has_tag_name(tag))
            .unwrap()
    };
    let mut live: HashMap<String, u64> = HashMap::new();
    for r in section("memory")
        .descendants()
        .filter(|d| d.has_tag_name("memory") && d.attribute("class").is_some())
    {
        *live
            .entry(r.attribute("class").unwrap().to_owned())
            .or_default() += attr_u64(r, "count");
    }
    let mut allocated: HashMap<String, u64> = HashMap::new();
    for n in section("sites")
        .descendants()
        .filter(|d| d.has_tag_name("profile") && d.attribute("class") == Some("true"))
    {
        *allocated
            .entry(n.attribute("name").unwrap().to_owned())
            .or_default() += attr_u64(n, "allocated");
    }
    let mut got: HashMap<String, (u64, u64)> = HashMap::new();
    for r in rows {
        assert_eq!((r.live.0, r.allocated.0), (0, 0), "no sizes in <sites>");
        let e = got.entry(r.class.clone()).or_default();
        e.0 += r.live.1;
        e.1 += r.allocated.1;
    }
    for (class, &(l, a)) in &got {
        assert_eq!((l, a), (live[class], allocated[class]), "{class}");
    }
    let kept = format!("{MEMORY}$Kept");
    assert_eq!(got[&kept], (1020, 1020), "1,000 new + 20 reflection");
    let churn = format!("{MEMORY}$Churn");
    assert_eq!(got[&churn].1, 6_000_000, "alloc'ed: every one made");
    // Each site's trace is its method and line.
    let clone_site = rows
        .iter()
        .find(|r| r.class == format!("{MEMORY}$Sheep") && r.live.1 == 20_000)
        .unwrap();
    let frames = &h.traces[&clone_site.trace];
    assert_eq!(frames.len(), 1);
    assert!(
        frames[0].starts_with(&format!("{MEMORY}$Sheep.copy(MemoryTruth.java:"))
            && !frames[0].contains("Unknown line"),
        "{frames:?}"
    );
    let total: u64 = rows.iter().map(|r| r.live.1).sum();
    for r in rows {
        let share = r.live.1 as f64 * 100.0 / total as f64;
        assert!((r.self_pct - share).abs() <= 0.005 + 1e-9, "{r:?}");
    }
    // <alloc>: per class, the bytes summed over its stacks are the section's.
    let (order, rows) = &h.sites[1];
    assert_eq!(order, "allocated bytes");
    let alloc = doc
        .root_element()
        .children()
        .find(|c| c.has_tag_name("alloc"))
        .unwrap();
    let mut bytes: HashMap<String, u64> = HashMap::new();
    for n in alloc
        .descendants()
        .filter(|d| d.has_tag_name("profile") && d.attribute("class") == Some("true"))
    {
        *bytes
            .entry(n.attribute("name").unwrap().to_owned())
            .or_default() += attr_u64(n, "bytes");
    }
    let mut got: HashMap<String, u64> = HashMap::new();
    for r in rows {
        assert_eq!(
            r.live,
            (0, 0),
            "an all-allocations section has no live figures"
        );
        *got.entry(r.class.clone()).or_default() += r.allocated.0;
    }
    bytes.retain(|_, b| *b > 0);
    assert_eq!(got, bytes);
    assert!(rows
        .iter()
        .any(|r| r.trace != 300_000 && h.traces[&r.trace].len() <= 4));
    assert!(!h.cpu.contains_key("CPU SAMPLES") && !h.cpu.contains_key("CPU TIME (ms)"));
}
