//! The readers on `<alloc>` snapshots the agent wrote from AllocSites, whose
//! answer is known: bigSite's `byte[6000]` take 74.9% of the bytes,
//! smallSite's `byte[2000]` 25.1%, half of the objects each; with `live`,
//! keptSite's arrays are the ones still reachable. Sampled, so within
//! tolerances (shares ±5 points); where a reader passes the snapshot's
//! figures on, they must match the XML exactly. pprof is decoded with
//! `protoc`, the flame page loaded in headless Chromium.

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

const MAIN: &str = "profrj.harness.AllocSites";
const BIG: &str = "profrj.harness.AllocSites.bigSite()";
const SMALL: &str = "profrj.harness.AllocSites.smallSite()";
const KEPT: &str = "profrj.harness.AllocSites.keptSite()";
/// bigSite's share of the two sites' bytes: 6016 / (6016 + 2016).
const BIG_SHARE: f64 = 74.9;

/// AllocSites under `options` (and `args`), into a fresh directory.
fn run(name: &str, options: &str, args: &[&str]) -> PathBuf {
    let dir = temp_dir(name);
    let snap = dir.join("alloc.xml");
    run_java(
        &dir,
        &format!("{options},file={}", snap.display()),
        MAIN,
        args,
    )
    .assert_success();
    read_snapshot(&snap);
    snap
}

/// One run at a 64 KiB interval (some 24,000 samples), shared.
fn snapshot() -> &'static PathBuf {
    static SNAP: OnceLock<PathBuf> = OnceLock::new();
    SNAP.get_or_init(|| run("alloc-readers", "alloc=64k", &[]))
}

/// One `live` run: keptSite's arrays stay reachable, the rest is garbage.
fn live_snapshot() -> &'static PathBuf {
    static SNAP: OnceLock<PathBuf> = OnceLock::new();
    SNAP.get_or_init(|| run("alloc-readers-live", "alloc=64k,live", &["live"]))
}

fn xml(p: &Path) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// Sum of a node attribute over the class frames right below `method`.
fn site_sum(xml: &str, method: &str, attr: &str) -> u64 {
    let doc = roxmltree::Document::parse(xml).unwrap();
    doc.descendants()
        .filter(|n| {
            n.attribute("class") == Some("true")
                && n.parent().and_then(|p| p.attribute("name")) == Some(method)
        })
        .map(|n| attr_u64(n, attr))
        .sum()
}

fn near(got: f64, want: f64, points: f64, what: &str) {
    assert!(
        (got - want).abs() <= points,
        "{what}: {got:.2}%, expected {want:.1}% ± {points}"
    );
}

/// The sites table: rank, self, accum, bytes, objects, samples, class, method.
#[test]
fn report_ranks_sites_by_bytes() {
    let snap = snapshot();
    let text = xml(snap);
    let out = profrj_ok(&["report", s(snap)]);
    eprintln!("{out}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("ALLOCATION SITES <alloc> all 1 threads merged, all allocations: "),
        "{out}"
    );
    assert!(lines[0].ends_with("; ordered by bytes"), "{out}");
    assert_eq!(
        lines[1],
        "  interval = 65536 (bytes between samples on average)"
    );
    assert!(lines[2].starts_with("  thread \"main\": CPU "), "{out}");
    assert!(lines[2].contains(" bytes, "), "{out}");
    assert_eq!(
        lines[3].split_whitespace().collect::<Vec<_>>(),
        ["rank", "self", "accum", "bytes", "objects", "samples", "class", "method"]
    );
    let rows = table_rows(&out);
    let top: Vec<&str> = rows[0].split_whitespace().collect();
    assert_eq!(top[6..], ["byte[]", BIG], "{out}");
    near(percent(top[1]), BIG_SHARE, 5.0, "bigSite's bytes");
    // The figures are the snapshot's, summed.
    assert_eq!(top[3], site_sum(&text, BIG, "bytes").to_string());
    assert_eq!(top[4], site_sum(&text, BIG, "objects").to_string());
    let second: Vec<&str> = rows[1].split_whitespace().collect();
    assert_eq!(second[6..], ["byte[]", SMALL], "{out}");
    near(
        percent(second[1]),
        100.0 - BIG_SHARE,
        5.0,
        "smallSite's bytes",
    );
    assert!(
        percent(second[2]) > 99.0,
        "the two sites hold the bytes: {out}"
    );
    // Then the methods: bigSite allocated its bytes itself.
    let methods = &out[out
        .find("ALLOCATING METHODS <alloc>")
        .expect("methods table")..];
    let big = report_row(methods, BIG);
    near(percent(big[1]), BIG_SHARE, 5.0, "bigSite's self");

    // By objects: one each per round.
    let by_objects = profrj_ok(&["report", s(snap), "--metric", "objects", "--top", "2"]);
    let rows = table_rows(&by_objects);
    for row in &rows[..2] {
        let cols: Vec<&str> = row.split_whitespace().collect();
        near(percent(cols[1]), 50.0, 5.0, cols[7]);
    }
}

#[test]
fn report_of_live_objects() {
    let snap = live_snapshot();
    let out = profrj_ok(&["report", s(snap), "--section", "alloc"]);
    eprintln!("{out}");
    assert!(
        out.lines()
            .next()
            .unwrap()
            .contains(", live objects only (live=\"true\"): "),
        "{out}"
    );
    let top: Vec<&str> = table_rows(&out)[0].split_whitespace().collect();
    assert_eq!(top[6..], ["byte[]", KEPT], "{out}");
    assert!(percent(top[1]) >= 90.0, "{out}");
}

#[test]
fn collapsed_stacks_split_three_to_one() {
    let snap = snapshot();
    let text = xml(snap);
    let stack = |site: &str| format!("{MAIN}.main();{site};byte[]");
    let bytes = collapsed_lines(&profrj_ok(&["convert", s(snap), "--to", "collapsed"]));
    let (big, small) = (bytes[&stack(BIG)], bytes[&stack(SMALL)]);
    eprintln!("collapsed: bigSite {big} bytes, smallSite {small}");
    near(
        100.0 * big as f64 / (big + small) as f64,
        BIG_SHARE,
        5.0,
        "bigSite",
    );
    assert_eq!(big, site_sum(&text, BIG, "bytes"));
    assert_eq!(
        bytes.values().sum::<u64>(),
        sum_nodes(&text, "alloc", "bytes")
    );
    let objects = collapsed_lines(&profrj_ok(&[
        "convert",
        s(snap),
        "--to",
        "collapsed",
        "--section",
        "alloc",
        "--metric",
        "objects",
    ]));
    let (big, small) = (objects[&stack(BIG)], objects[&stack(SMALL)]);
    near(
        100.0 * big as f64 / (big + small) as f64,
        50.0,
        5.0,
        "objects",
    );
    assert_eq!(
        objects.values().sum::<u64>(),
        sum_nodes(&text, "alloc", "objects")
    );
}

/// (type, unit) pairs, the default type, and each value's sum.
fn decoded_types(d: &Decoded) -> (Vec<(&str, &str)>, &str) {
    let types = d
        .sample_types
        .iter()
        .map(|&(t, u)| (d.strings[t].as_str(), d.strings[u].as_str()))
        .collect();
    (types, d.strings[d.default_sample_type].as_str())
}

#[test]
fn pprof_has_go_heap_profile_types() {
    let snap = snapshot();
    let text = xml(snap);
    let dir = temp_dir("alloc-pprof");
    let pb = dir.join("alloc.pb.gz");
    profrj_ok(&["convert", s(snap), "--to", "pprof", "-o", s(&pb)]);
    let d = parse_decoded(&protoc_decode(&pb));
    let (types, default) = decoded_types(&d);
    assert_eq!(
        types,
        [("alloc_objects", "count"), ("alloc_space", "bytes")]
    );
    assert_eq!(default, "alloc_space");
    let sum = |i: usize| d.samples.iter().map(|s| s.0[i]).sum::<u64>();
    assert_eq!(sum(0), sum_nodes(&text, "alloc", "objects"));
    assert_eq!(sum(1), sum_nodes(&text, "alloc", "bytes"));
    // Leaf first: the class, then the site.
    let name = |loc: u64| d.strings[d.functions[&loc]].as_str();
    let site = |m: &str| -> u64 {
        d.samples
            .iter()
            .filter(|s| name(s.1[0]) == "byte[]" && name(s.1[1]) == m)
            .map(|s| s.0[1])
            .sum()
    };
    let (big, small) = (site(BIG), site(SMALL));
    near(
        100.0 * big as f64 / (big + small) as f64,
        BIG_SHARE,
        5.0,
        "pprof bigSite",
    );

    // live: Go's in-use names; --metric objects picks the default.
    let pb = dir.join("live.pb.gz");
    profrj_ok(&[
        "convert",
        s(live_snapshot()),
        "--to",
        "pprof",
        "-o",
        s(&pb),
        "--metric",
        "objects",
    ]);
    let d = parse_decoded(&protoc_decode(&pb));
    let (types, default) = decoded_types(&d);
    assert_eq!(
        types,
        [("inuse_objects", "count"), ("inuse_space", "bytes")]
    );
    assert_eq!(default, "inuse_objects");
}

#[test]
fn flame_page_marks_class_frames() {
    let snap = snapshot();
    let dir = temp_dir("alloc-flame");
    let page = dir.join("alloc.html");
    profrj_ok(&["flame", s(snap), "-o", s(&page)]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(r#""section":"alloc","metric":"bytes","unit":"bytes""#));
    // The data: byte[] is listed among the class frames.
    let names = &html[html.find(r#""names":["#).unwrap() + 9..];
    // Up to the classes: a name may hold `]` (byte[]), never `],"`.
    let names: Vec<&str> = names[..names.find(r#"],"classes""#).unwrap()]
        .split(r#"",""#)
        .collect();
    let byte_array = names.iter().position(|n| n.trim_matches('"') == "byte[]");
    let classes = &html[html.find(r#""classes":["#).unwrap() + 11..];
    let classes: Vec<usize> = classes[..classes.find(']').unwrap()]
        .split(',')
        .map(|i| i.parse().unwrap())
        .collect();
    assert!(classes.contains(&byte_array.unwrap()), "{classes:?}");
    // The page: byte[] above bigSite is a class frame with bigSite's share.
    let url = format!("file://{}#thread=main", page.display());
    let dom = chromium(&["--dump-dom", &url]);
    let fs = frames(&dom);
    let path = format!("{MAIN}.main();{BIG};byte[]");
    let f = fs
        .iter()
        .find(|f| f["path"] == path)
        .unwrap_or_else(|| panic!("no frame {path}"));
    assert!(f["class"].split_whitespace().any(|c| c == "class"), "{f:?}");
    let share: f64 = f["data-share"].parse().unwrap();
    near(share, BIG_SHARE, 5.0, "the flame's byte[] frame");
    let site = fs
        .iter()
        .find(|f| f["path"] == format!("{MAIN}.main();{BIG}"));
    assert!(!site.unwrap()["class"].contains("class"), "a method frame");
    assert!(
        dom.contains("data-kind=\"class\""),
        "the table marks classes"
    );
}

/// keptSite's arrays in the second run only: the diff's top site, hotter by
/// its share of the objects (40,000 of 440,000).
#[test]
fn diff_finds_the_new_site() {
    let before = snapshot();
    let after = run("alloc-readers-kept", "alloc=64k", &["live"]);
    let out = profrj_ok(&["diff", s(before), s(&after), "--metric", "objects"]);
    eprintln!("{out}");
    assert!(
        out.starts_with("DIFF <alloc> allocation sites (all allocations); "),
        "{out}"
    );
    let top: Vec<&str> = out.lines().nth(3).unwrap().split_whitespace().collect();
    assert_eq!(top[6..], ["byte[]", KEPT, "hotter"], "{out}");
    near(
        percent(top[0].trim_start_matches('+')),
        9.1,
        3.0,
        "keptSite's objects",
    );
    assert_eq!(top[1], "0.00%→", "{out}");
}

/// With the sampler and profile beside it: every reader still picks the
/// sampler first, and `--section alloc` reaches the allocations.
#[test]
fn beside_other_sections() {
    let snap = run("alloc-readers-mixed", "sampling,profile,alloc=64k", &[]);
    let out = profrj(&["report", s(&snap)]);
    assert!(out.status.success());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        stderr.trim_end(),
        "profrj: showing <sampler>; the snapshot also has: --section profile, --section alloc"
    );
    let report = profrj_ok(&["report", s(&snap), "--section", "alloc"]);
    let top: Vec<&str> = table_rows(&report)[0].split_whitespace().collect();
    assert_eq!(top[6..], ["byte[]", BIG], "{report}");
    let page = snap.with_extension("html");
    profrj_ok(&["flame", s(&snap), "-o", s(&page)]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(r#""section":"sampler""#));
    profrj_ok(&["flame", s(&snap), "--section", "alloc", "-o", s(&page)]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains(r#""section":"alloc""#));
    // A metric the section lacks is refused, naming those it has.
    let out = profrj(&[
        "convert",
        s(&snap),
        "--to",
        "collapsed",
        "--section",
        "alloc",
        "--metric",
        "cpu",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains("the <alloc> section has no metric cpu: use --metric objects"),
        "{err}"
    );
}
