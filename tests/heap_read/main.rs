//! `profrj report HEAP` and `profrj diff A B` on dumps of HeapRetain, whose
//! dominator tree is known by construction (its Javadoc): exact retained
//! sizes, shortest paths, the leak's growth between two dumps; and every
//! class's count beside hprof-slurp's and NetBeans', every shallow size and
//! the harness's retained sizes beside NetBeans' (`tests/common/heap_readers.rs`).
//!
//! `report.rs`: one dump; `diff.rs`: two; `agent.rs`: profrj's own dump,
//! whose objects name their allocation site and thread; `prof.rs`: the JDK
//! 1.1 `-prof` file from a snapshot and a dump.

mod agent;
// tests/common/, shared with the other test binaries.
#[path = "../common/mod.rs"]
mod common;
mod diff;
mod flame;
mod prof;
mod report;

use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

pub const MAIN: &str = "profrj.harness.HeapRetain";
// HeapRetain's constants.
pub const N: u64 = 300;
pub const ARRAY_LEN: u64 = 1000;
pub const SHARED_LEN: u64 = 5000;
pub const K: u64 = 40;
pub const LEAK_LEN: u64 = 16;
pub const ROUNDS: u64 = 3;

/// Sizes as NetBeans' heap library states them for 8-byte ids: an
/// instance's field bytes plus 16, an array's elements plus 24.
pub fn long_array(len: u64) -> u64 {
    24 + 8 * len
}

/// HeapRetain's two dumps (`a.hprof` before the leak's rounds, `b.hprof`
/// after), made once per test binary.
pub fn dumps() -> &'static (PathBuf, PathBuf) {
    static DUMPS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    DUMPS.get_or_init(|| {
        let dir = temp_dir("heap-read-retain");
        let out = stdout_of(
            Command::new(java())
                .args(["-Xmx64m", "-cp", harness_classes(), MAIN])
                .arg(&dir)
                .arg(ROUNDS.to_string()),
        );
        assert_eq!(out.trim(), "done", "HeapRetain: {out}");
        (dir.join("a.hprof"), dir.join("b.hprof"))
    })
}

/// objects, shallow bytes, retained bytes.
pub type Row = (u64, u64, u64);

/// A top retainer: retained, shallow, the object, its path's lines.
#[derive(Debug)]
pub struct Retainer {
    pub retained: u64,
    pub shallow: u64,
    pub object: String,
    pub path: Vec<String>,
}

/// What `profrj report` printed.
#[derive(Debug, Default)]
pub struct Report {
    pub head: String,
    pub classes: BTreeMap<String, Row>,
    pub retainers: Vec<Retainer>,
    pub sites: BTreeMap<String, Row>,
    pub threads: BTreeMap<String, Row>,
}

/// Runs `profrj report DUMP ARGS…` (asserting success) and parses it.
pub fn report(dump: &Path, args: &[&str]) -> Report {
    let mut all = vec!["report", dump.to_str().unwrap()];
    all.extend(args);
    let (code, text) = profrj_run(&all);
    assert_eq!(code, 0, "profrj report: {text}");
    parse_report(&text)
}

fn parse_report(text: &str) -> Report {
    let mut r = Report::default();
    let mut block = "";
    for line in text.lines() {
        if r.head.is_empty() {
            r.head = line.to_owned();
            continue;
        }
        for (prefix, name) in [
            ("CLASSES", "classes"),
            ("TOP RETAINERS", "retainers"),
            ("ALLOCATION SITES", "sites"),
            ("ALLOCATING THREADS", "threads"),
        ] {
            if line.starts_with(prefix) {
                block = name;
            }
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| w.get(i).and_then(|t| t.parse::<u64>().ok());
        if line.starts_with(' ') && w.first() == Some(&"rank") || line.trim().is_empty() {
            continue;
        }
        match block {
            "classes" | "sites" | "threads" if num(0).is_some() => {
                let row = (num(1).unwrap(), num(2).unwrap(), num(3).unwrap());
                let to = match block {
                    "classes" => &mut r.classes,
                    "sites" => &mut r.sites,
                    _ => &mut r.threads,
                };
                to.insert(w[4..].join(" "), row);
            }
            // Path lines are indented past the numbers.
            "retainers" if line.starts_with(&" ".repeat(36)) => {
                r.retainers
                    .last_mut()
                    .unwrap()
                    .path
                    .push(line.trim().to_owned());
            }
            "retainers" if num(0).is_some() && num(2).is_some() => {
                r.retainers.push(Retainer {
                    retained: num(1).unwrap(),
                    shallow: num(2).unwrap(),
                    object: w[3..].join(" "),
                    path: Vec::new(),
                });
            }
            _ => {}
        }
    }
    r
}
