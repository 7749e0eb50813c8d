//! The scripts in `scripts/` parse, and the benchmarks share `scripts/lib/`
//! (issue 30): every script passes its interpreter's syntax check (`bash -n`,
//! or Python's `compile`), and a benchmark that has been moved onto the
//! library neither defines its own copy of what the library holds (tool
//! discovery, building, peer lookup, medians) nor forgets to load it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Benchmarks not on `scripts/lib/`: `memory-many-core` stays self-contained
/// on purpose (it runs on a bare many-core machine from the kit that
/// `many-core-kit.sh` carries there, without the repository or cargo).
/// Every other benchmark must use the library.
const NOT_YET_ON_THE_LIBRARY: &[&str] = &["memory-many-core"];

/// What a Python benchmark must not define again: it is in `benchlib.py`.
const PYTHON_COPIES: &[&str] = &[
    "def tool(",
    "def build(",
    "def compile_harness(",
    "def median(",
    "def median_or_none(",
    "def async_profiler(",
    "def jdks(",
];

/// What a shell benchmark must not define again: it is in `common.sh`.
const SHELL_COPIES: &[&str] = &["median()", "jdk_tool()", "build_all()"];

fn scripts_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts")
}

/// Every regular file in `scripts/` and `scripts/lib/`.
fn scripts() -> Vec<PathBuf> {
    let mut all = Vec::new();
    for dir in [scripts_dir(), scripts_dir().join("lib")] {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                all.push(path);
            }
        }
    }
    all.sort();
    all
}

fn is_python(path: &Path, text: &str) -> bool {
    path.extension().is_some_and(|e| e == "py") || text.starts_with("#!/usr/bin/env python3")
}

fn is_shell(path: &Path, text: &str) -> bool {
    path.extension().is_some_and(|e| e == "sh")
        || text.starts_with("#!/usr/bin/env bash")
        || text.starts_with("#!/bin/bash")
        || text.starts_with("#!/bin/sh")
}

#[test]
fn every_script_parses() {
    let (mut python, mut shell) = (Vec::new(), Vec::new());
    for path in scripts() {
        let text = std::fs::read_to_string(&path).unwrap();
        if is_python(&path, &text) {
            python.push(path);
        } else if is_shell(&path, &text) {
            shell.push(path);
        } else {
            panic!("{}: neither a shell nor a Python script", path.display());
        }
    }
    // One interpreter for every Python script: compile() checks the syntax
    // without writing a .pyc beside the script, and names the file it fails on.
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys\nfor p in sys.argv[1:]: compile(open(p).read(), p, 'exec')",
        ])
        .args(&python)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "a Python script does not parse:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for path in &shell {
        let out = Command::new("bash")
            .arg("-n")
            .arg(path)
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "{} does not parse:\n{}",
            path.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    assert!(
        python.len() + shell.len() >= 20,
        "only {python:?} and {shell:?} found"
    );
}

#[test]
fn benchmarks_share_the_library() {
    let mut on_library = Vec::new();
    for path in scripts() {
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let is_bench = name == "bench" || name.ends_with("-bench");
        if !is_bench || NOT_YET_ON_THE_LIBRARY.contains(&name.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let (loads, copies) = if is_python(&path, &text) {
            (text.contains("import benchlib"), PYTHON_COPIES)
        } else {
            (text.contains("lib/common.sh"), SHELL_COPIES)
        };
        assert!(loads, "scripts/{name} does not load scripts/lib/");
        for copy in copies {
            let own = text.lines().any(|l| l.trim_start().starts_with(copy));
            assert!(
                !own,
                "scripts/{name} defines `{copy}` again: use scripts/lib/ instead"
            );
        }
        on_library.push(name);
    }
    assert!(
        on_library.len() >= 11,
        "only {on_library:?} found on the library"
    );
}
