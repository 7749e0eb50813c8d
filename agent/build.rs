//! Compiles the agent's Java runtime (`java/profrj/runtime/*.java`: the class
//! instrumented code calls and its helpers) with `javac
//! --release 8`, and lists the class files for `include_bytes!` in
//! `$OUT_DIR/runtime_classes.rs`, superclasses first.

use std::path::{Path, PathBuf};
use std::process::Command;

include!("../build/find_javac.rs");

/// Defined in this order: each after the classes it extends.
const CLASSES: [&str; 3] = ["CloneKind", "TypeIds", "Probe"];

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let src = root.join("java/profrj/runtime");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let classes = out.join("runtime-classes");
    println!("cargo:rerun-if-changed=java/profrj/runtime");
    println!("cargo:rerun-if-env-changed=JAVA_HOME");
    let sources: Vec<PathBuf> = CLASSES
        .iter()
        .map(|c| src.join(format!("{c}.java")))
        .collect();
    for s in &sources {
        println!("cargo:rerun-if-changed={}", s.display());
    }
    let _ = std::fs::remove_dir_all(&classes);
    std::fs::create_dir_all(&classes).unwrap();
    let javac = find_javac().unwrap_or_else(|| {
        panic!(
            "\n\nprofrj-agent build: no `javac` found; the agent's Java runtime classes need a JDK\n\
             (8 or newer; Debian: `apt-get install openjdk-17-jdk-headless`) or JAVA_HOME set.\n\n"
        )
    });
    // -g:none: no debug attributes, so the bytes depend on the sources alone.
    let status = Command::new(&javac)
        .args(["--release", "8", "-g:none", "-encoding", "UTF-8", "-d"])
        .arg(&classes)
        .args(&sources)
        .status()
        .unwrap_or_else(|e| panic!("profrj-agent build: cannot run {}: {e}", javac.display()));
    assert!(
        status.success(),
        "profrj-agent build: javac failed on java/profrj/runtime"
    );
    let mut list = String::from("/// (internal name, class-file bytes), each after its superclass.\npub const CLASSES: &[(&str, &[u8])] = &[\n");
    for c in CLASSES {
        let file = classes.join(format!("profrj/runtime/{c}.class"));
        assert!(file.is_file(), "{} missing after javac", file.display());
        list.push_str(&format!(
            "    (\"profrj/runtime/{c}\", include_bytes!({:?})),\n",
            file.display().to_string()
        ));
    }
    list.push_str("];\n");
    std::fs::write(out.join("runtime_classes.rs"), list).unwrap();
}
