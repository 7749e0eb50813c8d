//! Rewriter throughput on one core, over a directory of class files (e.g. a
//! `jimage extract` of the JDK runtime image):
//!
//!     cargo run --release -p profrj-bytecode --example throughput -- DIR [RUNS]
//!
//! With RUNS (default 1), each measurement is repeated and the fastest run
//! reported: on a shared machine the others only measure the neighbours.
//! Files are read into memory first; only parsing, editing and writing are timed.
//! "edit" inserts `iconst_1; pop` at entry, every line start and every return of
//! every method, as `profrj instrument` does.

use profrj_bytecode::code::Insn;
use profrj_bytecode::edit::{edit_method, probe_everywhere};
use profrj_bytecode::opcodes::*;
use profrj_bytecode::{parse_class, write_class};
use std::time::Instant;

fn marker() -> Vec<Insn> {
    vec![Insn::plain(ICONST_1, &[]), Insn::plain(POP, &[])]
}

fn main() {
    let dir = std::env::args()
        .nth(1)
        .expect("usage: throughput DIR [RUNS]");
    let runs: usize = std::env::args()
        .nth(2)
        .map(|r| r.parse().expect("RUNS: a number"))
        .unwrap_or(1);
    let mut files = Vec::new();
    let mut stack = vec![std::path::PathBuf::from(&dir)];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "class") {
                files.push(std::fs::read(&p).unwrap());
            }
        }
    }
    let mb = files.iter().map(Vec::len).sum::<usize>() as f64 / 1e6;
    let report = |what: &str, secs: f64| {
        println!(
            "{what:<28} {:>6.0} MB/s {:>8.0} classes/s  ({} classes, {mb:.1} MB, {secs:.3} s)",
            mb / secs,
            files.len() as f64 / secs,
            files.len()
        );
    };

    let mut sink = 0usize;
    let mut best = f64::MAX;
    for _ in 0..runs {
        let t = Instant::now();
        for f in &files {
            sink += write_class(&parse_class(f).unwrap()).len();
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    report("read + write (unchanged)", best);

    let mut best = f64::MAX;
    let (mut edited, mut refused) = (0usize, 0usize);
    for _ in 0..runs {
        let t = Instant::now();
        (edited, refused) = (0, 0);
        for f in &files {
            let mut class = parse_class(f).unwrap();
            for i in 0..class.methods.len() {
                let Some(edit) = probe_everywhere(&class, i, &marker(), 1) else {
                    continue;
                };
                match edit_method(&mut class, i, &edit) {
                    Ok(()) => edited += 1,
                    Err(_) => refused += 1,
                }
            }
            sink += write_class(&class).len();
        }
        best = best.min(t.elapsed().as_secs_f64());
    }
    report("read + edit + write", best);
    println!(
        "methods edited {edited}, refused {refused} (checksum {})",
        sink % 7
    );
}
