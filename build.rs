//! Compiles the Java programs in `java-test-harness/` with `javac`, so the
//! integration tests (and `scripts/`) have real classes to profile.
//! The class directory is exported to the crate as `HARNESS_CLASSES`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let src = root.join("java-test-harness/src");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("harness-classes");
    println!("cargo:rerun-if-changed=java-test-harness/src");
    println!("cargo:rerun-if-env-changed=JAVA_HOME");

    let mut sources = Vec::new();
    collect_java(&src, &mut sources);
    sources.sort();
    for s in &sources {
        println!("cargo:rerun-if-changed={}", s.display());
    }
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();

    let javac = find_javac().unwrap_or_else(|| {
        panic!(
            "\n\nprofrj build: no `javac` found. The test harness needs a JDK (17 or newer).\n\
             Install one (Debian: `apt-get install openjdk-17-jdk-headless`) or set JAVA_HOME.\n\n"
        )
    });
    // -g: full debug info (line numbers, local variables), as a real build would have.
    // --release 11 keeps the harness runnable on every JDK the matrix uses.
    let status = Command::new(&javac)
        .args(["-g", "-encoding", "UTF-8", "--release", "11", "-d"])
        .arg(&out)
        .args(&sources)
        .status()
        .unwrap_or_else(|e| panic!("profrj build: cannot run {}: {e}", javac.display()));
    assert!(
        status.success(),
        "profrj build: javac failed on java-test-harness/src"
    );
    println!("cargo:rustc-env=HARNESS_CLASSES={}", out.display());
}

fn collect_java(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect_java(&p, out);
        } else if p.extension().is_some_and(|x| x == "java") {
            out.push(p);
        }
    }
}

include!("build/find_javac.rs");
