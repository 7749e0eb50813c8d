//! Reading results: `profrj report`, `convert`, `diff` and `flame` on
//! snapshots the agent wrote from harness programs whose answer is known
//! (CpuSplit: heavy() takes 75% of main's CPU; CpuRatio: a chosen split;
//! ProfileTruth: exact call counts). The pprof output is decoded with
//! `protoc` against tests/data/profile.proto, the flame page is loaded in
//! headless Chromium. Both tools are required (`.ci/run` installs them). The
//! helpers that read each command's output are in `common/readers.rs`.

mod common;

use common::*;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

const SPLIT: &str = "profrj.harness.CpuSplit";
const TRUTH: &str = "profrj.harness.ProfileTruth";

/// One sampled CpuSplit run (2 ms interval, 4 s: start-up is a small part of
/// main's samples), shared by the tests.
fn split_snapshot() -> &'static PathBuf {
    static SNAP: OnceLock<PathBuf> = OnceLock::new();
    SNAP.get_or_init(|| {
        let dir = temp_dir("report-split");
        let snap = dir.join("split.xml");
        run_java(
            &dir,
            &format!("sampling,interval=2ms,file={}", snap.display()),
            SPLIT,
            &["4000"],
        )
        .assert_success();
        read_snapshot(&snap);
        snap
    })
}

/// A method's share of a thread's RUNNABLE samples in a sampler snapshot, in
/// percent: `attr` (`hits` for its own, `cumulated` with its callees)
/// summed over its nodes, of the thread's `cumulated`. The readers must
/// show exactly this (the sampler's own accuracy is tested in sampling.rs).
fn snapshot_share(snap: &std::path::Path, thread: &str, method: &str, attr: &str) -> f64 {
    let xml = read_snapshot(snap);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let t = threads(&doc, "sampler", thread)[0];
    100.0 * sum_attr(&find_nodes(t, method), attr) as f64 / attr_u64(t, "cumulated") as f64
}

/// The readers print shares with two decimals.
fn assert_shown(shown: f64, want: f64, what: &str) {
    assert!(
        (shown - want).abs() <= 0.005 + 1e-9,
        "{what}: shown {shown}%, the snapshot says {want:.4}%"
    );
}

/// One ProfileTruth run in profile mode.
fn truth_snapshot() -> &'static PathBuf {
    static SNAP: OnceLock<PathBuf> = OnceLock::new();
    SNAP.get_or_init(|| {
        let dir = temp_dir("report-truth");
        let snap = dir.join("truth.xml");
        run_java(
            &dir,
            &format!("profile,file={}", snap.display()),
            TRUTH,
            &[],
        )
        .assert_success();
        read_snapshot(&snap);
        snap
    })
}

#[test]
fn report_puts_the_hot_method_on_top_with_its_share() {
    let snap = split_snapshot();
    let by_self = profrj_ok(&["report", s(snap), "--thread", "main", "--top", "0"]);
    eprintln!("{by_self}");
    let lines: Vec<&str> = by_self.lines().collect();
    assert!(
        lines[0].starts_with("CPU SAMPLES <sampler> thread \"main\""),
        "{by_self}"
    );
    assert!(lines[1].contains("thread \"main\": CPU "), "{by_self}");
    assert!(lines[1].contains("ended"), "{by_self}");
    assert_eq!(
        lines[2].split_whitespace().collect::<Vec<_>>(),
        ["rank", "self", "accum", "count", "total", "count", "method"]
    );
    // unit() is where main's CPU goes (self), under heavy() and light();
    // each share is the snapshot's.
    let rows = table_rows(&by_self);
    let unit = format!("{SPLIT}.unit()");
    assert!(rows[0].ends_with(&format!("  {unit}")), "{by_self}");
    let want = snapshot_share(snap, "main", &unit, "hits");
    assert_shown(
        percent(rows[0].split_whitespace().nth(1).unwrap()),
        want,
        "unit() self",
    );
    for method in ["heavy", "light"] {
        let name = format!("{SPLIT}.{method}()");
        let row = report_row(&by_self, &name);
        let want = snapshot_share(snap, "main", &name, "cumulated");
        eprintln!("{method}(): {} of main's RUNNABLE samples", row[4]);
        assert_shown(percent(row[4]), want, &format!("{method}() total"));
    }

    // By total: main() on top (100%), then unit(), then heavy().
    let by_total = profrj_ok(&[
        "report",
        s(snap),
        "--thread",
        "main",
        "--sort",
        "total",
        "--top",
        "3",
    ]);
    let rows = table_rows(&by_total);
    assert!(rows[0].ends_with(&format!("{SPLIT}.main()")), "{by_total}");
    assert!(rows[2].ends_with(&format!("{SPLIT}.heavy()")), "{by_total}");

    // All threads merged: the count column adds up to the header's total.
    let all = profrj_ok(&["report", s(snap), "--top", "0"]);
    let total: u64 = all
        .lines()
        .next()
        .unwrap()
        .split("total = ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let counted: u64 = table_rows(&all)
        .iter()
        .map(|l| l.split_whitespace().nth(3).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, counted, "{all}");
    // Every RUNNABLE sample the agent counted, those without a Java frame too.
    let xml = std::fs::read_to_string(snap).unwrap();
    assert_eq!(total, sum_threads(&xml, "sampler", "cumulated"));
}

#[test]
fn collapsed_stacks_keep_the_snapshot_totals() {
    let snap = split_snapshot();
    let xml = std::fs::read_to_string(snap).unwrap();
    let cpu = collapsed_lines(&profrj_ok(&["convert", s(snap), "--to", "collapsed"]));
    let wall = collapsed_lines(&profrj_ok(&[
        "convert",
        s(snap),
        "--to",
        "collapsed",
        "--metric",
        "wall",
    ]));
    let (hits, elapsed) = (
        sum_nodes(&xml, "sampler", "hits"),
        sum_nodes(&xml, "sampler", "elapsed"),
    );
    eprintln!(
        "collapsed: {} cpu stacks, {} wall stacks; hits {hits}, elapsed {elapsed}",
        cpu.len(),
        wall.len()
    );
    // Every sample of the snapshot: those on a stack, and those the agent
    // counted for a thread without a Java frame (one "[no Java frame]" stack).
    let frameless = |m: &HashMap<String, u64>| m.get("[no Java frame]").copied().unwrap_or(0);
    assert_eq!(cpu.values().sum::<u64>() - frameless(&cpu), hits);
    assert_eq!(wall.values().sum::<u64>() - frameless(&wall), elapsed);
    assert_eq!(
        cpu.values().sum::<u64>(),
        sum_threads(&xml, "sampler", "cumulated")
    );
    assert_eq!(
        wall.values().sum::<u64>(),
        sum_threads(&xml, "sampler", "cumulatedElapsed")
    );
    // The heavy stack has exactly the snapshot's count.
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let main = &threads(&doc, "sampler", "main")[0];
    let heavy = &find_nodes(*main, &format!("{SPLIT}.heavy()"))[0];
    let unit = heavy.children().find(|c| c.is_element()).unwrap();
    let stack = format!("{SPLIT}.main();{SPLIT}.heavy();{SPLIT}.unit()");
    assert_eq!(cpu[&stack], attr_u64(unit, "hits"));

    // One thread, with thread frames.
    let main_only = collapsed_lines(&profrj_ok(&[
        "convert",
        s(snap),
        "--to",
        "collapsed",
        "--thread",
        "main",
        "--thread-frames",
    ]));
    assert!(main_only.keys().all(|k| k.starts_with("[main];")));
    assert_eq!(
        main_only.values().sum::<u64>(),
        attr_u64(*main, "cumulated")
    );

    // Profile mode: calls and times round-trip too.
    let truth = truth_snapshot();
    let txml = std::fs::read_to_string(truth).unwrap();
    for (metric, attr) in [
        ("calls", "count"),
        ("cpu", "method"),
        ("wall", "methodElapsed"),
    ] {
        let c = collapsed_lines(&profrj_ok(&[
            "convert",
            s(truth),
            "--to",
            "collapsed",
            "--metric",
            metric,
        ]));
        assert_eq!(
            c.values().sum::<u64>(),
            sum_nodes(&txml, "profile", attr),
            "{metric}"
        );
    }
}

#[test]
fn pprof_decodes_with_the_proto_definition_and_keeps_totals() {
    let snap = split_snapshot();
    let xml = std::fs::read_to_string(snap).unwrap();
    let dir = temp_dir("report-pprof");
    let pb = dir.join("split.pb.gz");
    profrj_ok(&["convert", s(snap), "--to", "pprof", "-o", s(&pb)]);
    let d = parse_decoded(&protoc_decode(&pb));
    assert_eq!(d.strings[0], "");
    let types: Vec<(&str, &str)> = d
        .sample_types
        .iter()
        .map(|&(t, u)| (d.strings[t].as_str(), d.strings[u].as_str()))
        .collect();
    assert_eq!(types, [("samples", "count"), ("runnable_samples", "count")]);
    assert_eq!(d.strings[d.default_sample_type], "runnable_samples");
    let sum = |i: usize| d.samples.iter().map(|s| s.0[i]).sum::<u64>();
    eprintln!(
        "pprof: {} samples, {} functions",
        d.samples.len(),
        d.functions.len()
    );
    assert_eq!(sum(0), sum_threads(&xml, "sampler", "cumulatedElapsed"));
    assert_eq!(sum(1), sum_threads(&xml, "sampler", "cumulated"));
    // The heavy stack, leaf first: unit, heavy, main.
    let name_of = |loc: u64| d.strings[d.functions[&loc]].clone();
    let heavy_runnable: u64 = d
        .samples
        .iter()
        .filter(|s| {
            s.1.iter()
                .any(|&l| name_of(l) == format!("{SPLIT}.heavy()"))
        })
        .map(|s| s.0[1])
        .sum();
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let main = threads(&doc, "sampler", "main")[0];
    let all_heavy: u64 = threads(&doc, "sampler", "main")
        .iter()
        .map(|t| sum_attr(&find_nodes(*t, &format!("{SPLIT}.heavy()")), "cumulated"))
        .sum();
    assert_eq!(heavy_runnable, all_heavy);
    assert!(all_heavy > 0 && attr_u64(main, "cumulated") > all_heavy);

    // Profile mode: calls, wall and CPU microseconds.
    let truth = truth_snapshot();
    let txml = std::fs::read_to_string(truth).unwrap();
    let pb = dir.join("truth.pb.gz");
    profrj_ok(&[
        "convert",
        s(truth),
        "--to",
        "pprof",
        "-o",
        s(&pb),
        "--metric",
        "calls",
    ]);
    let d = parse_decoded(&protoc_decode(&pb));
    let types: Vec<(&str, &str)> = d
        .sample_types
        .iter()
        .map(|&(t, u)| (d.strings[t].as_str(), d.strings[u].as_str()))
        .collect();
    assert_eq!(
        types,
        [
            ("calls", "count"),
            ("wall", "microseconds"),
            ("cpu", "microseconds")
        ]
    );
    assert_eq!(d.strings[d.default_sample_type], "calls");
    for (i, attr) in ["count", "methodElapsed", "method"].iter().enumerate() {
        let got: u64 = d.samples.iter().map(|s| s.0[i]).sum();
        assert_eq!(got, sum_nodes(&txml, "profile", attr), "{attr}");
    }
    // fib(int): 1973 calls on each worker, 15 in <clinit> on main.
    let fib: u64 = d
        .samples
        .iter()
        .filter(|s| d.strings[d.functions[&s.1[0]]] == format!("{TRUTH}.fib(int)"))
        .map(|s| s.0[0])
        .sum();
    assert_eq!(fib, 2 * 1973 + 15);
}

#[test]
fn profile_report_shows_exact_calls() {
    let truth = truth_snapshot();
    let r = profrj_ok(&[
        "report",
        s(truth),
        "--section",
        "profile",
        "--metric",
        "calls",
        "--top",
        "0",
    ]);
    eprintln!("{}", r.lines().take(8).collect::<Vec<_>>().join("\n"));
    assert!(r.starts_with("METHOD PROFILE <profile> all"), "{r}");
    // Columns: rank self accum count total count calls method.
    let fib = report_row(&r, &format!("{TRUTH}.fib(int)"));
    assert_eq!(fib[6], (2 * 1973 + 15).to_string());
    let deep = report_row(&r, &format!("{TRUTH}.deep(int)"));
    assert_eq!(deep[6], "6002");
    let inner = report_row(&r, &format!("{TRUTH}.inner(int,int)"));
    assert_eq!(inner[6], "182");
    // One worker thread: half of those.
    let one = profrj_ok(&[
        "report",
        s(truth),
        "--section",
        "profile",
        "--metric",
        "calls",
        "--thread",
        "truth-1",
        "--top",
        "0",
    ]);
    assert_eq!(report_row(&one, &format!("{TRUTH}.fib(int)"))[6], "1973");
    // Wall time: nap() holds the sleeper's 300 ms.
    let wall = profrj_ok(&[
        "report",
        s(truth),
        "--section",
        "profile",
        "--metric",
        "wall",
        "--thread",
        "sleeper",
        "--sort",
        "total",
    ]);
    let nap = report_row(&wall, &format!("{TRUTH}.nap()"));
    assert!(nap[5].parse::<u64>().unwrap() >= 299_000, "{wall}");
    // The sampler has no calls: refused with a reason.
    let out = profrj(&["report", s(truth), "--section", "sampler"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no <sampler> section"));
}

#[test]
fn diff_names_the_method_that_got_hotter() {
    let dir = temp_dir("report-diff");
    let mut snaps = Vec::new();
    for (name, a, b) in [("before.xml", "3", "1"), ("after.xml", "1", "3")] {
        let snap = dir.join(name);
        run_java(
            &dir,
            &format!("sampling,interval=2ms,file={}", snap.display()),
            "profrj.harness.CpuRatio",
            &["2000", a, b],
        )
        .assert_success();
        snaps.push(snap);
    }
    // The before snapshot's hot method, on top of its report.
    let before = profrj_ok(&["report", s(&snaps[0]), "--thread", "main", "--top", "3"]);
    let top = table_rows(&before)[0];
    assert!(top.ends_with("profrj.harness.CpuRatio.alpha()"), "{before}");
    let alpha_name = "profrj.harness.CpuRatio.alpha()";
    let beta_name = "profrj.harness.CpuRatio.beta()";
    let share = percent(top.split_whitespace().nth(1).unwrap());
    eprintln!("before: alpha {share}% of main (75% by construction)");
    assert_shown(
        share,
        snapshot_share(&snaps[0], "main", alpha_name, "hits"),
        "alpha",
    );

    let diff = profrj_ok(&["diff", s(&snaps[0]), s(&snaps[1]), "--thread", "main"]);
    eprintln!("{diff}");
    let rows: Vec<&str> = diff.lines().skip(3).collect();
    let beta = rows
        .iter()
        .position(|l| l.contains("CpuRatio.beta()"))
        .unwrap();
    let alpha = rows
        .iter()
        .position(|l| l.contains("CpuRatio.alpha()"))
        .unwrap();
    assert!(
        beta < 2 && alpha < 2,
        "the two changed methods come first:\n{diff}"
    );
    assert!(
        rows[beta].ends_with("hotter") && rows[alpha].ends_with("colder"),
        "{diff}"
    );
    let delta = percent(
        rows[beta]
            .split_whitespace()
            .next()
            .unwrap()
            .trim_start_matches('+'),
    );
    // beta: 25% -> 75% of main by construction; the diff shows the change
    // the two snapshots hold (each share rounded, so within two roundings).
    let want = snapshot_share(&snaps[1], "main", beta_name, "hits")
        - snapshot_share(&snaps[0], "main", beta_name, "hits");
    assert!(
        (delta - want).abs() <= 0.01 + 1e-9,
        "beta: the diff shows {delta:+}%, the snapshots {want:+.4}%\n{diff}"
    );
}

#[test]
fn flame_page_in_headless_chromium() {
    let snap = split_snapshot();
    let dir = temp_dir("report-flame");
    let page = dir.join("split.html");
    profrj_ok(&["flame", s(snap), "-o", s(&page)]);
    let html = std::fs::read_to_string(&page).unwrap();
    for remote in ["http://", "https://", "//cdn", "<link", "src=\""] {
        assert!(
            !html.contains(remote),
            "the page must be self-contained: {remote}"
        );
    }
    let url = format!("file://{}", page.display());
    let heavy_name = format!("{SPLIT}.heavy()");
    let heavy_path = format!("{SPLIT}.main();{heavy_name}");

    // Thread main: heavy()'s frame holds 75% of the width.
    let dom = chromium(&["--dump-dom", &format!("{url}#thread=main")]);
    let fs = frames(&dom);
    assert!(fs.len() > 5, "no frames drawn: {dom}");
    let heavy = fs
        .iter()
        .find(|f| f["path"] == heavy_path)
        .unwrap_or_else(|| panic!("no frame for {heavy_path}"));
    let share: f64 = heavy["data-share"].parse().unwrap();
    eprintln!("flame: heavy() share {share}%, width {}%", width(heavy));
    let want = snapshot_share(snap, "main", &heavy_name, "cumulated");
    assert_shown(share, want, "heavy() frame");
    assert!((width(heavy) - share).abs() < 0.01);
    assert!(fs.iter().all(|f| !f["class"].contains("match")));
    assert!(dom.contains("<option value=\"main\""), "thread selector");
    assert!(
        dom.contains(&format!("<tr data-name=\"{SPLIT}.unit()\"")),
        "top-methods table"
    );

    // Zoomed on heavy(): its frame spans the whole width, its caller too (faded).
    let zoom = format!(
        "{url}#thread=main&zoom={}",
        heavy_path
            .replace(';', "%3B")
            .replace('(', "%28")
            .replace(')', "%29")
    );
    let fs = frames(&chromium(&["--dump-dom", &zoom]));
    let heavy = fs.iter().find(|f| f["path"] == heavy_path).unwrap();
    assert_eq!(width(heavy), 100.0);
    assert!(heavy["class"].contains("zoomed"));
    assert!(
        fs.iter().all(|f| !f["path"].contains("light()")),
        "light() is outside the zoom"
    );
    // Its callee: its share of heavy() (heavy() has a few samples of its own).
    let unit = fs
        .iter()
        .find(|f| f["path"] == format!("{heavy_path};{SPLIT}.unit()"))
        .unwrap();
    let of_heavy = |f: &HashMap<String, String>| f["data-total"].parse::<f64>().unwrap();
    let expect = of_heavy(unit) * 100.0 / of_heavy(heavy);
    assert!(
        (width(unit) - expect).abs() < 0.001,
        "{} vs {expect}",
        width(unit)
    );

    // Search: frames whose name contains "heavy" are highlighted, others not;
    // in the all-threads view.
    let dom = chromium(&["--dump-dom", &format!("{url}#thread=all&search=heavy")]);
    let fs = frames(&dom);
    let matched: Vec<_> = fs.iter().filter(|f| f["class"].contains("match")).collect();
    assert!(!matched.is_empty());
    assert!(matched.iter().all(|f| f["data-name"].contains("heavy")));
    assert!(fs
        .iter()
        .filter(|f| f["data-name"].contains("heavy"))
        .all(|f| f["class"].contains("match")));
    assert!(dom.contains("data-matched=\""), "search summary");

    // A screenshot (docs/flame.png is one of these).
    let png = dir.join("flame.png");
    chromium(&[
        "--hide-scrollbars",
        &format!("--screenshot={}", png.display()),
        "--window-size=1200,800",
        &format!("{url}#thread=main&search=heavy"),
    ]);
    let bytes = std::fs::read(&png).expect("no screenshot");
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "screenshot {}",
        bytes.len()
    );
}

#[test]
fn malformed_and_truncated_snapshots_fail_with_line_and_column() {
    let snap = split_snapshot();
    let xml = std::fs::read_to_string(snap).unwrap();
    let dir = temp_dir("report-broken");
    // Cut inside an attribute, about line 11.
    let line11 = xml.match_indices('\n').nth(9).unwrap().0 + 1;
    let cut_at = line11 + xml[line11..].find("name=\"").unwrap() + 8;
    let cut_line = xml[..cut_at].matches('\n').count() + 1;
    let truncated = dir.join("truncated.xml");
    std::fs::write(&truncated, &xml[..cut_at]).unwrap();
    // A wrong closing tag on line 5.
    let mut lines: Vec<&str> = xml.lines().collect();
    let bad_line = "  </sampler>";
    lines.insert(4, bad_line);
    let mismatched = dir.join("mismatched.xml");
    std::fs::write(&mismatched, lines.join("\n")).unwrap();
    // A clean cut between elements: the open ones are named.
    let cut_clean = xml.match_indices('\n').nth(5).unwrap().0 + 1;
    let unclosed = dir.join("unclosed.xml");
    std::fs::write(&unclosed, &xml[..cut_clean]).unwrap();

    for (file, line, what) in [
        (&truncated, cut_line, "malformed XML"),
        (&mismatched, 5, "malformed XML"),
        (&unclosed, 7, "truncated snapshot"),
    ] {
        for cmd in [
            vec!["report", s(file)],
            vec!["convert", s(file), "--to", "collapsed"],
            vec!["flame", s(file), "-o", s(&dir.join("x.html"))],
        ] {
            let out = profrj(&cmd);
            let err = String::from_utf8_lossy(&out.stderr);
            eprintln!("{cmd:?}: {err}");
            assert!(!out.status.success(), "{cmd:?} succeeded");
            assert_eq!(out.status.code(), Some(1));
            assert!(
                err.contains(&format!("{}: line {line}, column ", file.display())),
                "{err}"
            );
            assert!(err.contains(what), "{err}");
            assert!(out.stdout.is_empty());
        }
    }
    assert!(!dir.join("x.html").exists());
    let out = profrj(&["report", s(&dir.join("missing.xml"))]);
    assert!(!out.status.success());
}

/// Memory and coverage written by hand from the format's examples (the agent
/// does not write `<memory>` yet; real `<coverage>` snapshots are below):
/// the report tables and the page's.
#[test]
fn memory_and_coverage_tables() {
    let dir = temp_dir("report-memcov");
    let snap = dir.join("mc.xml");
    std::fs::write(
        &snap,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<doc>
<memory>
  <thread name="main"><memory class="java.lang.String" count="120" max="400"/><memory class="pkg.Node" count="30" max="31"/></thread>
  <thread name="worker"><memory class="java.lang.String" count="5" max="50"/></thread>
</memory>
<coverage>
  <class name="pkg.Main" source="Main.java">
    <method name="main" signature="([Ljava/lang/String;)V" firstline="5" count="1"><footprints>1 1 -1 0 1 </footprints></method>
    <method name="unused" signature="()V" firstline="12" count="0"><footprints>0 0 </footprints></method>
  </class>
  <class name="pkg.Util" source="Util.java">
    <method name="f" signature="(I)I" firstline="3" count="9"><footprints>9 9 </footprints></method>
  </class>
</coverage>
</doc>
"#,
    )
    .unwrap();
    let mem = profrj_ok(&["report", s(&snap)]);
    assert!(
        mem.starts_with("LIVE OBJECTS <memory> all 2 threads merged: 155 objects"),
        "{mem}"
    );
    let row = report_row(&mem, "java.lang.String");
    assert_eq!((row[1], row[4]), ("125", "450"), "{mem}");
    let worker = profrj_ok(&[
        "report",
        s(&snap),
        "--section",
        "memory",
        "--thread",
        "worker",
    ]);
    assert_eq!(report_row(&worker, "java.lang.String")[1], "5");
    let cov = profrj_ok(&["report", s(&snap), "--section", "coverage"]);
    assert!(cov.contains("lines 5/8 (62.5%), methods run 2/3"), "{cov}");
    let first = cov.lines().nth(3).unwrap();
    assert!(
        first.ends_with("pkg.Main (Main.java)") && first.contains("3/6"),
        "{cov}"
    );

    let page = dir.join("mc.html");
    profrj_ok(&["flame", s(&snap), "-o", s(&page)]);
    let dom = chromium(&["--dump-dom", &format!("file://{}", page.display())]);
    assert!(
        dom.contains("<tr data-class=\"java.lang.String\">"),
        "{dom}"
    );
    assert!(
        dom.contains("<tr data-class=\"pkg.Main\" data-covered=\"50.0\">"),
        "{dom}"
    );
    assert!(
        dom.contains("<tr data-class=\"pkg.Util\" data-covered=\"100.0\">"),
        "{dom}"
    );
    assert!(!dom.contains("class=\"frame"));
}

/// The page's own handlers: a script added to a copy of the page clicks a
/// frame, types a search, hovers and picks a thread, as a person would, and
/// writes what it saw into the DOM that Chromium dumps.
#[test]
fn flame_page_reacts_to_clicks_typing_hover_and_thread_choice() {
    let snap = split_snapshot();
    let dir = temp_dir("report-flame-ui");
    let page = dir.join("split.html");
    profrj_ok(&["flame", s(snap), "-o", s(&page)]);
    let html = std::fs::read_to_string(&page).unwrap();
    let driver = format!(
        r#"<script>
window.addEventListener("load", function () {{
  var out = {{}};
  function frame(path) {{
    var fs = document.querySelectorAll(".frame"), byId = {{}};
    for (var i = 0; i < fs.length; i++) byId[fs[i].getAttribute("data-id")] = fs[i];
    for (var j = 0; j < fs.length; j++) {{
      var names = [];
      for (var n = fs[j]; n && n.getAttribute("data-parent") !== ""; n = byId[n.getAttribute("data-parent")]) names.push(n.getAttribute("data-name"));
      if (names.reverse().join(";") === path) return fs[j];
    }}
    return null;
  }}
  function w(f) {{ return f ? f.getAttribute("style").match(/width:([0-9.]+)%/)[1] : "none"; }}
  function done() {{ document.body.setAttribute("data-ui", JSON.stringify(out)); }}
  var heavy = "{SPLIT}.main();{SPLIT}.heavy()";
  frame(heavy).dispatchEvent(new MouseEvent("mousemove", {{ bubbles: true, clientX: 50, clientY: 50 }}));
  out.tip = document.getElementById("tip").textContent;
  frame(heavy).click();
  setTimeout(function () {{
    out.hashAfterClick = decodeURIComponent(location.hash);
    out.widthAfterClick = w(frame(heavy));
    var search = document.getElementById("search");
    search.value = "light";
    search.dispatchEvent(new Event("input"));
    setTimeout(function () {{
      out.hashAfterTyping = decodeURIComponent(location.hash);
      out.matches = document.querySelectorAll(".frame.match").length;
      document.getElementById("reset").click();
      setTimeout(function () {{
        out.hashAfterReset = decodeURIComponent(location.hash);
        out.lightMatched = frame("{SPLIT}.main();{SPLIT}.light()").className;
        var sel = document.getElementById("thread");
        sel.value = "burner";
        sel.dispatchEvent(new Event("change"));
        setTimeout(function () {{
          out.hashAfterThread = decodeURIComponent(location.hash);
          out.rootAfterThread = document.querySelector(".frame").getAttribute("data-name");
          done();
        }}, 100);
      }}, 100);
    }}, 400);
  }}, 100);
}});
</script>
</body>"#
    );
    let driven = dir.join("driven.html");
    std::fs::write(&driven, html.replacen("</body>", &driver, 1)).unwrap();
    let dom = chromium(&[
        "--virtual-time-budget=5000",
        "--dump-dom",
        &format!("file://{}#thread=main", driven.display()),
    ]);
    let ui = dom
        .split("data-ui=\"")
        .nth(1)
        .unwrap_or_else(|| panic!("the driver did not finish: {dom}"));
    let ui = ui[..ui.find('"').unwrap()]
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    eprintln!("{ui}");
    let heavy_path = format!("{SPLIT}.main();{SPLIT}.heavy()");
    assert!(
        ui.contains(&format!("\"tip\":\"{SPLIT}.heavy()total ")),
        "hover: {ui}"
    );
    assert!(
        ui.contains(&format!(
            "\"hashAfterClick\":\"#thread=main&zoom={heavy_path}\""
        )),
        "{ui}"
    );
    assert!(ui.contains("\"widthAfterClick\":\"100.0000\""), "{ui}");
    assert!(
        ui.contains(&format!(
            "\"hashAfterTyping\":\"#thread=main&search=light&zoom={heavy_path}\""
        )),
        "{ui}"
    );
    // Zoomed on heavy(), nothing named light is drawn.
    assert!(ui.contains("\"matches\":0"), "{ui}");
    assert!(
        ui.contains("\"hashAfterReset\":\"#thread=main&search=light\""),
        "{ui}"
    );
    assert!(ui.contains("\"lightMatched\":\"frame  match\""), "{ui}");
    assert!(
        ui.contains("\"hashAfterThread\":\"#thread=burner&search=light\""),
        "{ui}"
    );
    assert!(ui.contains("\"rootAfterThread\":\"burner\""), "{ui}");
}

// --- coverage snapshots the agent wrote -------------------------------------

const COV: &str = "profrj.harness.CoverageTruth";
const COV_IDLE: &str = "profrj.harness.CoverageTruth$Idle";

/// Runs CoverageTruth (classes from `classpath`) under `options,file=…` and
/// returns the snapshot's path and text.
fn coverage_run(name: &str, options: &str, classpath: &str) -> (PathBuf, String) {
    let dir = temp_dir(name);
    let snap = dir.join("cov.xml");
    let out = Command::new(java())
        .current_dir(&dir)
        .arg(format!(
            "-agentpath:{}={options},file={}",
            agent().display(),
            snap.display()
        ))
        .args(["-Xverify:all", "-Xmx256m", "-cp", classpath, COV])
        .output()
        .expect("cannot start java");
    assert!(
        out.status.success(),
        "java failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = read_snapshot(&snap);
    (snap, text)
}

/// Per class, as the snapshot says with no help from profrj's reader:
/// (lines covered, lines with code, methods run, methods). A line in several
/// methods (a lambda on its enclosing method's line) counts once.
fn coverage_truth_from_xml(xml: &str) -> std::collections::BTreeMap<String, [u64; 4]> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let mut out = std::collections::BTreeMap::new();
    for class in doc.descendants().filter(|n| n.has_tag_name("class")) {
        let mut lines: HashMap<i64, bool> = HashMap::new();
        let (mut run, mut methods) = (0, 0);
        for m in class.children().filter(|c| c.has_tag_name("method")) {
            methods += 1;
            run += (attr_u64(m, "count") > 0) as u64;
            for (line, v) in footprints(m) {
                if v >= 0 {
                    *lines.entry(line).or_default() |= v > 0;
                }
            }
        }
        let covered = lines.values().filter(|&&c| c).count() as u64;
        out.insert(
            class.attribute("name").unwrap().to_owned(),
            [covered, lines.len() as u64, run, methods],
        );
    }
    out
}

/// Summed over the classes of CoverageTruth.java (CoverageTruth and its
/// nested classes).
fn file_totals(want: &std::collections::BTreeMap<String, [u64; 4]>) -> [u64; 4] {
    want.iter()
        .filter(|(k, _)| *k == COV || k.starts_with(&format!("{COV}$")))
        .fold([0; 4], |mut t, (_, c)| {
            for i in 0..4 {
                t[i] += c[i];
            }
            t
        })
}

/// CoverageTruth.java's (lines covered, lines with code) from the `//= N` comments
/// beside its lines (`name=N` after N: another method on that line).
fn coverage_truth_from_source() -> (u64, u64) {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/java-test-harness/src/profrj/harness/CoverageTruth.java"
    ))
    .unwrap();
    let (mut covered, mut lines) = (0, 0);
    for line in src.lines() {
        let Some((code, spec)) = line.split_once("//=") else {
            continue;
        };
        if code.trim_start().starts_with(['*', '/']) {
            continue; // the class comment explaining the notation
        }
        let spec = spec.split("//").next().unwrap();
        let ran = spec.split_whitespace().any(|w| {
            let n = w.rsplit('=').next().unwrap();
            n.parse::<i64>().unwrap() > 0
        });
        lines += 1;
        covered += ran as u64;
    }
    (covered, lines)
}

fn pct1(part: u64, whole: u64) -> String {
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

/// The `report --section coverage` row of a class: its columns.
fn coverage_row<'a>(report: &'a str, class: &str) -> Vec<&'a str> {
    let row = report
        .lines()
        .find(|l| l.split_whitespace().nth(4) == Some(class))
        .unwrap_or_else(|| panic!("no row for {class} in\n{report}"));
    row.split_whitespace().collect()
}

/// A real `coverage` snapshot of CoverageTruth: the report's and the page's
/// per-class figures equal those worked out from the snapshot (and, for
/// CoverageTruth, from the `//=` comments of its source); least covered
/// first; a total row; `report` alone shows coverage.
#[test]
fn coverage_report_and_page_on_a_real_snapshot() {
    let (snap, xml) = coverage_run("report-cov", "coverage", harness_classes());
    let want = coverage_truth_from_xml(&xml);
    eprintln!("{want:?}");
    let (covered, lines) = coverage_truth_from_source();
    assert_eq!(
        file_totals(&want)[..2],
        [covered, lines],
        "snapshot vs //= comments (the file's classes)"
    );
    assert!(covered < lines, "CoverageTruth has lines that never run");
    assert_eq!(want[COV][2..], [14, 15], "every method but neverCalled ran");
    assert_eq!(want[COV_IDLE], [0, 2, 0, 2], "Idle: listed with zeros");

    let report = profrj_ok(&["report", s(&snap), "--section", "coverage", "--top", "0"]);
    eprintln!("{report}");
    let sum = want.values().fold([0; 4], |mut t, c| {
        for i in 0..4 {
            t[i] += c[i];
        }
        t
    });
    assert!(
        report.starts_with(&format!(
            "COVERAGE <coverage>: {} classes, lines {}/{} ({}), methods run {}/{}\n",
            want.len(),
            sum[0],
            sum[1],
            pct1(sum[0], sum[1]),
            sum[2],
            sum[3]
        )),
        "{report}"
    );
    for (class, [c, l, r, m]) in &want {
        let row = coverage_row(&report, class);
        assert_eq!(row[1], pct1(*c, *l), "{class}: {report}");
        assert_eq!(row[2], format!("{c}/{l}"), "{class}: {report}");
        assert_eq!(row[3], format!("{r}/{m}"), "{class}: {report}");
        assert_eq!(row.get(5), Some(&"(CoverageTruth.java)"), "{report}");
        assert!(!row.iter().any(|w| w.contains("&lt;")), "{report}");
    }
    // Least covered first: Idle (0%) is first, shares never go down.
    let rows: Vec<Vec<&str>> = table_rows(&report)
        .into_iter()
        .map(|l| l.split_whitespace().collect())
        .filter(|r: &Vec<&str>| r[0].parse::<u32>().is_ok())
        .collect();
    assert_eq!(rows.len(), want.len(), "{report}");
    assert_eq!(rows[0][4], COV_IDLE, "{report}");
    let shares: Vec<f64> = rows.iter().map(|r| percent(r[1])).collect();
    assert!(shares.windows(2).all(|w| w[0] <= w[1]), "{report}");
    let total = report
        .lines()
        .find(|l| l.contains(&format!("total ({} classes)", want.len())))
        .unwrap_or_else(|| panic!("no total row: {report}"));
    let total: Vec<_> = total.split_whitespace().collect();
    assert_eq!(
        total[..3],
        [
            pct1(sum[0], sum[1]).as_str(),
            &format!("{}/{}", sum[0], sum[1]),
            &format!("{}/{}", sum[2], sum[3])
        ],
        "{report}"
    );

    // A snapshot holding only <coverage>: `report` shows it, with no note.
    let out = profrj(&["report", s(&snap), "--top", "0"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), report);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // The page: no flame graph, the coverage table with the same figures.
    let page = snap.with_extension("html");
    profrj_ok(&["flame", s(&snap), "-o", s(&page)]);
    let dom = chromium(&["--dump-dom", &format!("file://{}", page.display())]);
    assert!(!dom.contains("class=\"frame"));
    assert!(dom.contains("no call tree in this snapshot"), "{dom}");
    let table = &dom[dom.find("<table id=\"coverage\">").expect("coverage table")..];
    let table = &table[..table.find("</table>").unwrap()];
    for (class, [c, l, r, m]) in &want {
        let start = table
            .find(&format!(
                "<tr data-class=\"{class}\" data-covered=\"{}\">",
                pct1(*c, *l).trim_end_matches('%')
            ))
            .unwrap_or_else(|| panic!("{class} row: {table}"));
        let row = &table[start..];
        let row = &row[..row.find("</tr>").unwrap()];
        assert!(
            row.contains(&format!("<td>{c}/{l}</td><td>{r}/{m}</td>")),
            "{row}"
        );
    }
    assert!(
        table.find(&format!("data-class=\"{COV_IDLE}\""))
            < table.find(&format!("data-class=\"{COV}\"")),
        "least covered first: {table}"
    );
    assert!(
        table.contains(&format!(
            "<tr class=\"total\" data-covered=\"{}\">",
            pct1(sum[0], sum[1]).trim_end_matches('%')
        )),
        "{table}"
    );
    assert!(
        table.contains(&format!(
            "<td>{}/{}</td><td>{}/{}</td>",
            sum[0], sum[1], sum[2], sum[3]
        )),
        "{table}"
    );
}

/// CoverageTruth compiled with `javac -g:none`: every method has
/// `firstline="-1"` and empty footprints. The report keeps the calls (methods
/// run) and says the lines are unknown instead of failing or claiming 0%.
#[test]
fn coverage_of_classes_without_line_numbers() {
    let dir = temp_dir("report-cov-nolines");
    let classes = dir.join("classes");
    let javac = jdk_tool("javac");
    let status = Command::new(&javac)
        .args(["-g:none", "--release", "11", "-d"])
        .arg(&classes)
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/java-test-harness/src/profrj/harness/CoverageTruth.java"
        ))
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", javac.display()));
    assert!(status.success());
    let (snap, xml) = coverage_run("report-cov-nolines-run", "coverage", s(&classes));
    assert!(xml.contains("firstline=\"-1\""), "{xml}");
    let want = coverage_truth_from_xml(&xml);
    assert_eq!(want[COV], [0, 0, 14, 15]);

    let report = profrj_ok(&["report", s(&snap)]);
    eprintln!("{report}");
    let all = want.values().fold([0; 4], |mut t, c| {
        for i in 0..4 {
            t[i] += c[i];
        }
        t
    });
    assert!(
        report.contains(&format!("lines 0/0 (-), methods run {}/{}", all[2], all[3])),
        "{report}"
    );
    let row = coverage_row(&report, COV);
    assert_eq!(row[1..4], ["-", "0/0", "14/15"], "{report}");
    assert_eq!(row[5..], ["[no", "line", "numbers]"], "{report}");
    // Without lines, fewer methods run first: Idle (0/2) before CoverageTruth.
    assert_eq!(coverage_row(&report, COV_IDLE)[0], "1", "{report}");
    assert!(report.contains("javac -g:none"), "{report}");

    let page = snap.with_extension("html");
    profrj_ok(&["flame", s(&snap), "-o", s(&page)]);
    let dom = chromium(&["--dump-dom", &format!("file://{}", page.display())]);
    assert!(
        dom.contains(&format!("<tr data-class=\"{COV}\" data-covered=\"-\">")),
        "{dom}"
    );
}

/// A snapshot with several sections: `report` picks sampler, then profile,
/// then memory, then coverage, and names the others on stderr.
#[test]
fn report_without_section_picks_in_the_documented_order() {
    let (snap, xml) = coverage_run(
        "report-cov-all",
        "coverage,profile,sampling,interval=1ms",
        harness_classes(),
    );
    let out = profrj(&["report", s(&snap)]);
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stdout.contains(" <sampler> "), "{stdout}");
    assert_eq!(
        stderr.trim_end(),
        "profrj: showing <sampler>; the snapshot also has: --section profile, --section coverage"
    );
    // By calls: loop(int)'s three calls take tens of microseconds of CPU,
    // and the probes' CPU clock (wall time between reads of the thread's
    // clock, never run backwards: tsc.rs) can stand still through them on a
    // loaded machine; a row of 0 is not listed (seen in CI).
    let profile = profrj_ok(&[
        "report",
        s(&snap),
        "--section",
        "profile",
        "--metric",
        "calls",
    ]);
    assert!(profile.contains(&format!("{COV}.loop(int)")), "{profile}");
    let cov = profrj_ok(&["report", s(&snap), "--section", "coverage"]);
    let want = coverage_truth_from_xml(&xml);
    let row = coverage_row(&cov, COV);
    assert_eq!(
        row[2],
        format!("{}/{}", want[COV][0], want[COV][1]),
        "{cov}"
    );
    let (covered, lines) = coverage_truth_from_source();
    assert_eq!(file_totals(&want)[..2], [covered, lines]);
}

/// Issue 18, finding 7: a 2,048-deep chain (weight at every level) opens in
/// headless Chromium with a DOM linear in its frames: frames carry ids, not
/// their paths (which made 139 MB of attributes and took 21 s).
#[test]
fn a_deep_chain_opens_with_a_linear_dom() {
    let dir = temp_dir("report-flame-deep");
    let n = 2048;
    let mut xml =
        String::from("<doc><sampler><thread name=\"main\" cumulated=\"1\" cumulatedElapsed=\"1\">");
    for i in 0..n {
        xml.push_str(&format!(
            "<profile name=\"pkg.Deep.level{i}()\" hits=\"1\" elapsed=\"1\" cumulated=\"{0}\" cumulatedElapsed=\"{0}\">",
            n - i
        ));
    }
    for _ in 0..n {
        xml.push_str("</profile>");
    }
    xml.push_str("</thread></sampler></doc>");
    let snap = dir.join("deep.xml");
    std::fs::write(&snap, xml).unwrap();
    let page = dir.join("deep.html");
    profrj_ok(&["flame", s(&snap), "-o", s(&page)]);
    let t = std::time::Instant::now();
    let dom = chromium(&[
        "--dump-dom",
        &format!("file://{}#thread=main", page.display()),
    ]);
    let took = t.elapsed();
    let drawn = frames(&dom);
    eprintln!(
        "deep chain: {} frames drawn, DOM {} bytes, Chromium {took:?}",
        drawn.len(),
        dom.len()
    );
    assert!(
        drawn.len() >= 1000,
        "the chain is drawn: {} frames",
        drawn.len()
    );
    assert!(
        dom.len() < 4 << 20,
        "DOM of {} bytes is not linear in the frames",
        dom.len()
    );
    let deepest = drawn.iter().max_by_key(|f| f["path"].len()).unwrap();
    assert!(deepest["path"].starts_with("pkg.Deep.level0();pkg.Deep.level1()"));
}

/// `--section/--thread/--metric` are one set of flags for every reading
/// command: each command's help names every call section and metric (made
/// from the section table), and `--thread` selects in each, `flame` too.
#[test]
fn every_reading_command_takes_the_same_selection() {
    let dir = temp_dir("selection");
    let snap = dir.join("two.xml");
    std::fs::write(
        &snap,
        "<doc><sampler>\
         <thread name=\"alpha-thread\" cumulated=\"3\" cumulatedElapsed=\"3\">\
         <profile name=\"p.A.f()\" hits=\"3\" elapsed=\"3\" cumulated=\"3\" cumulatedElapsed=\"3\"/></thread>\
         <thread name=\"beta-thread\" cumulated=\"2\" cumulatedElapsed=\"2\">\
         <profile name=\"p.B.g()\" hits=\"2\" elapsed=\"2\" cumulated=\"2\" cumulatedElapsed=\"2\"/></thread>\
         </sampler></doc>",
    )
    .unwrap();
    for cmd in ["report", "flame", "convert", "diff"] {
        let help = profrj_ok(&[cmd, "--help"]);
        for word in [
            "--section",
            "--thread",
            "--metric",
            "sampler",
            "profile",
            "alloc",
        ] {
            assert!(help.contains(word), "{cmd} --help lacks {word}:\n{help}");
        }
        for metric in ["cpu", "wall", "calls", "bytes", "objects", "samples"] {
            assert!(help.contains(metric), "{cmd} --help lacks {metric}");
        }
    }
    let p = s(&snap);
    let report = profrj_ok(&["report", p, "--thread", "beta-thread"]);
    assert!(
        report.contains("p.B.g()") && !report.contains("p.A.f()"),
        "{report}"
    );
    let folded = profrj_ok(&[
        "convert",
        p,
        "--to",
        "collapsed",
        "--thread",
        "alpha-thread",
    ]);
    assert_eq!(folded, "p.A.f() 3\n");
    let diff = profrj_ok(&["diff", p, p, "--thread", "alpha-thread", "--metric", "wall"]);
    assert!(
        diff.contains("before = 3 samples, after = 3 samples"),
        "{diff}"
    );
    let html = dir.join("two.html");
    profrj_ok(&["flame", p, "--thread", "beta-thread", "-o", s(&html)]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("p.B.g()") && !page.contains("p.A.f()"));
    assert!(!page.contains("alpha-thread"));
    let out = profrj(&["flame", p, "--thread", "nobody", "-o", s(&html)]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no thread named \"nobody\""));
}
