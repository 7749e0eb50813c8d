//! `profrj convert --to hprof` on real snapshots: the CPU TIME counts of a
//! profile of ProfileTruth equal its known call counts, the CPU SAMPLES
//! shares equal the sampler section's, and every block (THREAD, TRACE, CPU
//! SAMPLES, CPU TIME, SITES from <memory> and <alloc>) parses back with the
//! small reader below, every trace a row names being defined.

mod common;

use common::*;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

const PROFILE: &str = "profrj.harness.ProfileTruth";
const MEMORY: &str = "profrj.harness.MemoryTruth";

/// A row of CPU SAMPLES or CPU TIME.
#[derive(Debug)]
struct CpuRow {
    self_pct: f64,
    accum_pct: f64,
    count: u64,
    trace: u64,
    method: String,
}

/// A row of SITES.
#[derive(Debug)]
struct SiteRow {
    self_pct: f64,
    live: (u64, u64),
    allocated: (u64, u64),
    trace: u64,
    class: String,
}

#[derive(Debug, Default)]
struct Hprof {
    threads: Vec<(u64, String)>,
    ended: Vec<u64>,
    traces: HashMap<u64, Vec<String>>,
    /// Block title → (header total, rows).
    cpu: HashMap<String, (u64, Vec<CpuRow>)>,
    /// "ordered by …" → rows.
    sites: Vec<(String, Vec<SiteRow>)>,
}

fn pct(s: &str) -> f64 {
    s.strip_suffix('%').unwrap().parse().unwrap()
}

/// Reads java.hprof.txt as HPROF writes it; panics on any line it does not
/// expect, so every block must parse back.
fn read(text: &str) -> Hprof {
    let mut h = Hprof::default();
    let mut lines = text.lines().peekable();
    let first = lines.next().unwrap();
    assert!(first.starts_with("JAVA PROFILE 1.0.1, created "), "{first}");
    for l in lines.by_ref() {
        if l == "--------" {
            break;
        }
    }
    while let Some(l) = lines.next() {
        if l.is_empty() {
            continue;
        }
        if let Some(rest) = l.strip_prefix("THREAD START (") {
            let id = rest
                .split("id = ")
                .nth(1)
                .unwrap()
                .split(',')
                .next()
                .unwrap();
            let name = rest.split("name=\"").nth(1).unwrap();
            let name = name.rsplit_once("\", group=").unwrap().0;
            assert!(rest.ends_with(')'), "{l}");
            h.threads.push((id.parse().unwrap(), name.to_owned()));
        } else if let Some(rest) = l.strip_prefix("THREAD END (id = ") {
            h.ended
                .push(rest.strip_suffix(')').unwrap().parse().unwrap());
        } else if let Some(rest) = l.strip_prefix("TRACE ") {
            let id: u64 = rest.strip_suffix(':').unwrap().parse().unwrap();
            let mut frames = Vec::new();
            while let Some(f) = lines.next_if(|f| f.starts_with('\t')) {
                frames.push(f[1..].to_owned());
            }
            assert!(!frames.is_empty(), "TRACE {id} without frames");
            assert!(h.traces.insert(id, frames).is_none(), "TRACE {id} twice");
        } else if l.starts_with("CPU SAMPLES BEGIN")
            || l.starts_with("CPU TIME (ms) BEGIN")
            || l.starts_with("MONITOR TIME BEGIN")
        {
            let title = l.split(" BEGIN").next().unwrap().to_owned();
            let monitors = title == "MONITOR TIME";
            let total: u64 = l
                .split("(total = ")
                .nth(1)
                .unwrap()
                .split(')')
                .next()
                .unwrap()
                .trim_end_matches(" ms")
                .parse()
                .unwrap();
            let head = if monitors { "monitor" } else { "method" };
            assert_eq!(
                lines.next().map(String::from),
                Some(format!("rank   self  accum   count trace {head}"))
            );
            let mut rows = Vec::new();
            for r in lines.by_ref() {
                if r == format!("{title} END") {
                    break;
                }
                let w: Vec<&str> = r.split_whitespace().collect();
                // A monitor is its class and "(Java)", as HPROF wrote it.
                let w = match monitors {
                    true => {
                        assert_eq!(w.last(), Some(&"(Java)"), "{r}");
                        w[..w.len() - 1].to_vec()
                    }
                    false => w,
                };
                assert_eq!(w.len(), 6, "{r}");
                assert_eq!(w[0].parse::<usize>().unwrap(), rows.len() + 1, "rank: {r}");
                rows.push(CpuRow {
                    self_pct: pct(w[1]),
                    accum_pct: pct(w[2]),
                    count: w[3].parse().unwrap(),
                    trace: w[4].parse().unwrap(),
                    method: w[5].to_owned(),
                });
            }
            assert!(h.cpu.insert(title, (total, rows)).is_none());
        } else if let Some(rest) = l.strip_prefix("SITES BEGIN (ordered by ") {
            let order = rest.split(')').next().unwrap().to_owned();
            assert_eq!(
                lines.next(),
                Some("          percent          live          alloc'ed  stack class")
            );
            assert_eq!(
                lines.next(),
                Some(" rank   self  accum     bytes objs     bytes  objs trace name")
            );
            let mut rows = Vec::new();
            for r in lines.by_ref() {
                if r == "SITES END" {
                    break;
                }
                let w: Vec<&str> = r.split_whitespace().collect();
                assert!(w.len() >= 9, "{r}");
                assert_eq!(w[0].parse::<usize>().unwrap(), rows.len() + 1, "rank: {r}");
                let n = |i: usize| w[i].parse::<u64>().unwrap();
                rows.push(SiteRow {
                    self_pct: pct(w[1]),
                    live: (n(3), n(4)),
                    allocated: (n(5), n(6)),
                    trace: n(7),
                    class: w[8..].join(" "),
                });
            }
            h.sites.push((order, rows));
        } else {
            panic!("unexpected line: {l:?}");
        }
    }
    // Every trace a row names is defined; shares add up in order.
    let mut named = Vec::new();
    for (_, rows) in h.cpu.values() {
        let mut accum = 0.0;
        for r in rows {
            accum += r.self_pct;
            assert!(
                (accum - r.accum_pct).abs() < 0.02 * rows.len() as f64,
                "{r:?}"
            );
            named.push(r.trace);
        }
    }
    for (_, rows) in &h.sites {
        named.extend(rows.iter().map(|r| r.trace));
    }
    for t in named {
        assert!(h.traces.contains_key(&t), "TRACE {t} is not defined");
    }
    let ids: Vec<u64> = h.threads.iter().map(|t| t.0).collect();
    assert!(h.ended.iter().all(|e| ids.contains(e)));
    h
}

/// `p.C.m(args)` → `p.C.m`; a constructor `p.C(args)` → `p.C.<init>`. A
/// constructor is told by its class being one whose methods the snapshot
/// names (`classes`: a hidden class `Foo$$Lambda$14.0x…` has no capital),
/// else by a capital; the converter's rule, which the harness's names
/// (lowercase methods, uppercase classes) also meet.
fn method_column(name: &str, classes: &HashSet<String>) -> String {
    if !name.contains('(') {
        // No Java method (a pseudo-frame, a stub): one frame, spaces as `_`.
        return name.replace(' ', "_");
    }
    let before = name.split('(').next().unwrap();
    let (prefix, last) = before.rsplit_once('.').unwrap_or(("", before));
    let upper = last.starts_with(|c: char| c.is_uppercase());
    let ctor = !last.starts_with('<')
        && (classes.contains(before) || (!classes.contains(prefix) && upper));
    if ctor {
        format!("{before}.<init>")
    } else {
        before.to_owned()
    }
}

/// Every class whose method a node of the snapshot names (`p.C.m(…)` with
/// `m` lowercase, `<init>`-like or `_`).
fn classes(doc: &roxmltree::Document) -> HashSet<String> {
    let mut out = HashSet::new();
    for n in doc.descendants().filter(|d| d.has_tag_name("profile")) {
        let Some(name) = n.attribute("name") else {
            continue;
        };
        if let Some((prefix, last)) = name.split('(').next().and_then(|b| b.rsplit_once('.')) {
            if last.starts_with(|c: char| c.is_lowercase() || c == '<' || c == '_') {
                out.insert(prefix.to_owned());
            }
        }
    }
    out
}

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

fn convert(snap: &Path, extra: &[&str]) -> Hprof {
    let mut args = vec!["convert", s(snap), "--to", "hprof"];
    args.extend_from_slice(extra);
    read(&profrj_ok(&args))
}

fn snapshot(name: &str, options: &str, main: &str) -> (PathBuf, String) {
    let dir = temp_dir(name);
    let snap = dir.join("snapshot.xml");
    let run = run_java(
        &dir,
        &format!("{options},file={}", snap.display()),
        main,
        &[],
    );
    run.assert_success();
    let xml = read_snapshot(&snap);
    (snap, xml)
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

/// stackcollapse-hprof's stacks (PyPI's hprof2flamegraph, a published
/// HPROF reader): `profrj convert --to hprof` of `snap`, read by it, must
/// give the same stacks and counts as `profrj convert --to collapsed` of the
/// sampler section's RUNNABLE samples, each frame named as HPROF names it
/// (`class.method`, `:LINE` where the snapshot has one; a pseudo-frame
/// `[…]` as it is).
fn stackcollapse_equals_collapsed(snap: &Path, xml: &str) -> usize {
    let dir = snap.parent().unwrap();
    let report = dir.join("java.hprof.txt");
    profrj_ok(&[
        "convert",
        s(snap),
        "--to",
        "hprof",
        "--depth",
        "2048",
        "-o",
        s(&report),
    ]);
    let out = Command::new("python3")
        .args(["-W", "ignore", "-m", "stackcollapse_hprof"])
        .arg(&report)
        .output()
        .expect("python3 with hprof2flamegraph (scripts/test-all installs it)");
    let theirs = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "stackcollapse-hprof failed on our frames: {}\n{theirs}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = roxmltree::Document::parse(xml).unwrap();
    let classes = classes(&doc);
    let hprof_frame = |f: &str| match f.rsplit_once("):") {
        Some((head, line)) if line.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{}:{line}", method_column(&format!("{head})"), &classes))
        }
        _ => method_column(f, &classes),
    };
    let ours = profrj_ok(&[
        "convert",
        s(snap),
        "--to",
        "collapsed",
        "--section",
        "sampler",
        "--metric",
        "cpu",
    ]);
    let mut want: HashMap<String, u64> = HashMap::new();
    for (stack, n) in collapsed_lines(&ours) {
        // HPROF's rows are split at white space: a space in a name is `_`.
        let frames: Vec<String> = stack
            .split(';')
            .map(|f| hprof_frame(f).replace(' ', "_"))
            .collect();
        *want.entry(frames.join(";")).or_default() += n;
    }
    let mut got: HashMap<String, u64> = HashMap::new();
    for line in theirs.lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        *got.entry(stack.to_owned()).or_default() += n.parse::<u64>().unwrap();
    }
    assert_eq!(got, want);
    got.len()
}

/// Issue 29, item 10: every frame is in HPROF's `Class.method(File:LINE)`
/// form, pseudo-frames included, so a published reader parses the report
/// (it crashed on `[unknown_not_Java]`), and the stacks it prints are ours:
/// a real sampled snapshot (stacks cut by the agent's `depth` under
/// `[truncated]`), and one with every kind of frame the converter meets.
#[test]
fn a_published_hprof_reader_reads_every_frame() {
    let dir = temp_dir("hprof-reader");
    let snap = dir.join("deep.xml");
    let run = run_java(
        &dir,
        &format!("sampling,interval=1ms,depth=16,file={}", snap.display()),
        "profrj.harness.DeepStack",
        &["40", "300"],
    );
    run.assert_success();
    let xml = read_snapshot(&snap);
    assert!(
        xml.contains("name=\"[truncated]\""),
        "stacks cut at 16 frames"
    );
    assert!(stackcollapse_equals_collapsed(&snap, &xml) > 0);

    let node = |name: &str, hits: u64, kids: &str| {
        let name = name.replace('<', "&lt;").replace('>', "&gt;");
        format!("<profile name=\"{name}\" hits=\"{hits}\" elapsed=\"{hits}\">{kids}</profile>")
    };
    let frames = [
        "[unknown_not_Java]",
        "[not_walkable_Java]",
        "[GC_active]",
        "m0()",
        "p.Point(int,int)",
        "p.A.f():12",
        "p.A.g(java.lang.String)",
        "p.Foo$$Lambda$16.0x0000000800c03000.run()",
        "p.Outer$Inner.<clinit>()",
        "p.N.read(native)",
    ];
    let mut tree = String::new();
    for (i, f) in frames.iter().enumerate().rev() {
        tree = node(f, i as u64 + 1, &tree);
    }
    let xml = format!(
        "<doc><sampler>\
         <thread name=\"a\" cumulated=\"100\" cumulatedElapsed=\"100\">{tree}{}{}</thread>\
         <thread name=\"b\" cumulated=\"7\" cumulatedElapsed=\"7\">{}</thread>\
         </sampler></doc>",
        node("[truncated]", 0, &node("p.A.f():12", 4, "")),
        node("[unknown_Java]", 3, ""),
        node("p.A.f():12", 2, "")
    );
    let snap = dir.join("frames.xml");
    std::fs::write(&snap, &xml).unwrap();
    // Thread a's 100 samples less the 62 in its tree, and b's 5, have no
    // Java frame: `[no Java frame]`, a frame of its own.
    let ours = profrj_ok(&["convert", s(&snap), "--to", "collapsed", "--metric", "cpu"]);
    assert!(ours.contains("[no Java frame] 43\n"), "{ours}");
    assert_eq!(
        stackcollapse_equals_collapsed(&snap, &xml),
        1 + frames.len() + 3
    );
}
