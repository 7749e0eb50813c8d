//! CPU TIME and CPU SAMPLES: a profile of ProfileTruth gives its known call
//! counts, a sampler snapshot the sampler section's shares.

use crate::common::*;
use crate::hprof_text::*;
use std::collections::HashMap;

const PROFILE: &str = "profrj.harness.ProfileTruth";

/// Sum of a node attribute per method column, over a section.
fn per_method(xml: &str, section: &str, attr: &str) -> HashMap<String, u64> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let classes = classes(&doc);
    let sec = doc
        .root_element()
        .children()
        .find(|c| c.has_tag_name(section))
        .unwrap();
    let mut out = HashMap::new();
    // Not the section itself (<profile> is both the section's tag and a node's).
    for n in sec
        .descendants()
        .skip(1)
        .filter(|d| d.has_tag_name("profile"))
    {
        *out.entry(method_column(n.attribute("name").unwrap(), &classes))
            .or_default() += attr_u64(n, attr);
    }
    out
}

#[test]
fn cpu_time_counts_are_the_known_calls_and_samples_the_sections_shares() {
    let (snap, xml) = snapshot("hprof-profile", "profile,sampling,interval=1ms", PROFILE);
    // depth 1: one trace per method, its count that method's calls.
    let h = convert(&snap, &["--depth", "1"]);
    let (_, time) = &h.cpu["CPU TIME (ms)"];
    // Per method column (overloads share one).
    let mut counts: HashMap<&str, u64> = HashMap::new();
    for r in time {
        *counts.entry(&r.method).or_default() += r.count;
        assert_eq!(h.traces[&r.trace].len(), 1);
    }
    let calls = |m: &str| counts.get(format!("{PROFILE}{m}").as_str()).copied();
    // Two worker threads; fib(5) 15 times more in the static initialiser.
    assert_eq!(calls(".work"), Some(2));
    assert_eq!(calls(".fib"), Some(2 * 1973 + 15));
    assert_eq!(calls(".outer"), Some(2 * 7));
    assert_eq!(calls(".inner"), Some(2 * 91));
    assert_eq!(calls(".thrower"), Some(2 * 10));
    assert_eq!(calls(".deep"), Some(2 * 3001));
    assert_eq!(calls(".locked"), Some(2 * 4));
    assert_eq!(calls(".lambda$lambdas$0"), Some(2 * 5));
    assert_eq!(calls("$Picky.<init>"), Some(2 * 20));
    assert_eq!(calls("$Lazy.<clinit>"), Some(1));
    // And every method's, from the snapshot itself.
    let want = per_method(&xml, "profile", "count");
    let want: HashMap<&str, u64> = want
        .iter()
        .filter(|(_, &n)| n > 0)
        .map(|(m, &n)| (m.as_str(), n))
        .collect();
    let got: HashMap<&str, u64> = counts.into_iter().filter(|(_, n)| *n > 0).collect();
    assert_eq!(got, want);

    // CPU SAMPLES: the total is the section's RUNNABLE samples; per method
    // (depth 1), its count and share are the section's.
    let (total, samples) = &h.cpu["CPU SAMPLES"];
    let section_total = sum_threads(&xml, "sampler", "cumulated");
    assert_eq!(*total, section_total);
    assert!(section_total > 0, "no RUNNABLE sample");
    let hits = per_method(&xml, "sampler", "hits");
    let frameless = section_total - hits.values().sum::<u64>();
    let mut by_method: HashMap<&str, (u64, f64)> = HashMap::new();
    for r in samples {
        let e = by_method.entry(&r.method).or_default();
        e.0 += r.count;
        e.1 += r.self_pct;
    }
    for (m, (count, share)) in &by_method {
        let want = match *m {
            // HPROF's columns hold no space: the pseudo-frame is spelt with `_`.
            // Samples on no frame, and those under the sampler's own
            // `[no_Java_frame]` (a walk that found none) share the row.
            "[no_Java_frame]" => frameless + hits.get("[no_Java_frame]").copied().unwrap_or(0),
            m => *hits
                .get(m)
                .unwrap_or_else(|| panic!("{m} not in the sampler section: {hits:?}")),
        };
        assert_eq!(*count, want, "{m}");
        let rows = samples.iter().filter(|r| r.method == *m).count() as f64;
        let exact = want as f64 * 100.0 / section_total as f64;
        assert!(
            (share - exact).abs() <= 0.005 * rows + 1e-9,
            "{m}: {share} vs {exact}"
        );
    }
    let listed: u64 = samples.iter().map(|r| r.count).sum();
    assert_eq!(listed, section_total, "every sample is in a row");

    // Default depth 4: the same sums, over traces of up to 4 frames.
    let h = convert(&snap, &[]);
    assert!(h.traces.values().all(|f| f.len() <= 4));
    assert!(h.traces.values().any(|f| f.len() == 4));
    let fib: u64 = h.cpu["CPU TIME (ms)"]
        .1
        .iter()
        .filter(|r| r.method == format!("{PROFILE}.fib"))
        .map(|r| r.count)
        .sum();
    assert_eq!(fib, 2 * 1973 + 15);
    let frames = &h.traces[&h.cpu["CPU TIME (ms)"].1[0].trace];
    assert!(
        frames
            .iter()
            .all(|f| f.ends_with("(ProfileTruth.java:Unknown line)") || f.starts_with("java.")),
        "{frames:?}"
    );
    // The worker threads ended before the snapshot.
    for name in ["truth-1", "truth-2"] {
        let id = h.threads.iter().find(|t| t.1 == name).unwrap().0;
        assert!(h.ended.contains(&id), "THREAD END for {name}");
    }
    // --thread: only that thread's calls.
    let one = convert(&snap, &["--depth", "1", "--thread", "truth-1"]);
    let fib1 = one.cpu["CPU TIME (ms)"]
        .1
        .iter()
        .find(|r| r.method == format!("{PROFILE}.fib"))
        .unwrap()
        .count;
    assert_eq!(fib1, 1973);
    assert_eq!(one.threads.len(), 1);
}
