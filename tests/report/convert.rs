//! `profrj convert`: collapsed stacks and pprof (decoded by `protoc` against
//! tests/data/profile.proto) keep the snapshot's totals and its stacks' counts.

use crate::common::*;
use crate::snapshots::*;
use std::collections::HashMap;

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
