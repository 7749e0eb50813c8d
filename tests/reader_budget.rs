//! Issue 44: every snapshot reader runs in a fixed memory budget, whatever
//! the number of distinct stacks. A snapshot of 600,000 stacks (41 MB) is
//! made here, and each command's peak RSS (wait4's ru_maxrss) must stay
//! under [`BOUND`] with the sorters held to `PROFRJ_SORT_MEMORY` = 4 MiB
//! (measured: 6 to 15 MB). The readers that held a tree of the snapshot
//! took 49 MB (pprof) to 130 MB (otlp) on it and fail. Memory, not time, is
//! asserted; scripts/reader-budget measures both on 0.25 to 1 GB.

mod common;

use common::*;
use std::io::Write;
use std::process::Command;

/// The most resident memory a reader may take on this input (bytes).
const BOUND: i64 = 32 << 20;
/// Nodes of the snapshot, each a distinct stack.
const NODES: usize = 600_000;

/// A sampler section of six threads (two pairs sharing a name, which the
/// flame page merges), each a random tree over 2,000 frame names: `NODES` nodes, deterministic.
fn snapshot(path: &std::path::Path) {
    let mut w = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut seed = 44u64;
    let mut next = move |n: u64| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) % n
    };
    writeln!(w, "<doc><sampler>").unwrap();
    let threads = ["main", "pool-1", "pool-1", "worker", "pool-2", "pool-2"];
    for name in threads {
        writeln!(
            w,
            "<thread name=\"{name}\" cumulated=\"0\" cumulatedElapsed=\"0\">"
        )
        .unwrap();
        // Depth-first: a node's children are drawn when it is entered; the
        // open path's depths say when to close.
        let mut open = 0usize;
        let mut made = 0usize;
        let mut pending: Vec<usize> = vec![0];
        while let Some(depth) = pending.pop() {
            if made == NODES / threads.len() {
                break;
            }
            while open > depth {
                writeln!(w, "</profile>").unwrap();
                open -= 1;
            }
            made += 1;
            let base = next(2_000 - 8);
            let hits = next(4);
            write!(
                w,
                "<profile name=\"com.example.pkg{}.Class{}.method{}()\" hits=\"{hits}\" elapsed=\"{}\">",
                base % 17,
                base / 17,
                base % 7,
                hits + next(2)
            )
            .unwrap();
            open += 1;
            let kids = if depth > 40 { 0 } else { next(4) as usize };
            for _ in 0..kids {
                pending.push(depth + 1);
            }
        }
        for _ in 0..open {
            writeln!(w, "</profile>").unwrap();
        }
        writeln!(w, "</thread>").unwrap();
    }
    writeln!(w, "</sampler></doc>").unwrap();
}

#[test]
fn readers_memory_does_not_grow_with_distinct_stacks() {
    let dir = temp_dir("budget");
    let snap = dir.join("big.xml");
    snapshot(&snap);
    let size = std::fs::metadata(&snap).unwrap().len();
    let out = dir.join("out");
    let (snap, out) = (s(&snap), s(&out));
    let html = format!("{out}.html");
    let commands: Vec<Vec<&str>> = vec![
        vec!["report", snap],
        vec!["report", snap, "--style", "xprof"],
        vec!["convert", snap, "--to", "collapsed", "-o", out],
        vec!["convert", snap, "--to", "pprof", "-o", out],
        vec!["convert", snap, "--to", "hprof", "-o", out],
        vec!["convert", snap, "--to", "otlp", "-o", out],
        vec!["convert", snap, "--to", "jfr", "-o", out],
        vec!["flame", snap, "-o", &html],
        vec!["diff", snap, snap],
        vec!["merge", snap, snap, "-o", out],
    ];
    let mut over = Vec::new();
    for args in &commands {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_profrj"));
        cmd.args(args)
            .env("PROFRJ_SORT_MEMORY", (4 << 20).to_string());
        let run = run_measured(&mut cmd);
        let what = args
            .iter()
            .map(|a| a.rsplit('/').next().unwrap())
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(
            run.code,
            0,
            "profrj {what}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        let rss = run.max_rss_kib * 1024;
        eprintln!(
            "profrj {what} on {} MB, {NODES} stacks: peak RSS {:.1} MB",
            size / 1_000_000,
            rss as f64 / 1e6
        );
        if rss > BOUND {
            over.push(format!("{what}: {:.1} MB", rss as f64 / 1e6));
        }
    }
    assert!(over.is_empty(), "over {} MB: {over:?}", BOUND as f64 / 1e6);
}
