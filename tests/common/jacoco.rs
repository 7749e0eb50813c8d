//! Debian's JaCoCo 0.8.6 (libjacoco-java) as the coverage tests run it
//! beside profrj: its agent ships unshaded and without a manifest, so each
//! test makes an agent jar naming the premain class, with its own reader
//! (java-test-harness/jacoco/NAME.java) compiled beside it.

use super::{jdk_tool, stdout_of, temp_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

pub const JACOCO_DIR: &str = "/usr/share/java";
const JARS: [&str; 6] = [
    "org.jacoco.core.jar",
    "org.jacoco.report.jar",
    "asm.jar",
    "asm-commons.jar",
    "asm-tree.jar",
    "asm-analysis.jar",
];

/// JaCoCo's core and report classes and the ASM they need.
pub fn jacoco_class_path() -> String {
    JARS.iter()
        .map(|j| format!("{JACOCO_DIR}/{j}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// The class path of a program run under JaCoCo's agent: the harness, the
/// agent's runtime and its dependencies.
pub fn under_jacoco_class_path(harness: &str) -> String {
    format!(
        "{harness}:{JACOCO_DIR}/org.jacoco.agent.rt.jar:{}",
        jacoco_class_path()
    )
}

/// A fresh directory (`temp` names it) holding `jacocoagent.jar` (JaCoCo's
/// runtime with its premain class named) and `reader`, a Java file of
/// java-test-harness/jacoco, compiled against JaCoCo.
pub fn jacoco_tools_in(temp: &str, reader: &str) -> PathBuf {
    let rt = Path::new(JACOCO_DIR).join("org.jacoco.agent.rt.jar");
    assert!(
        rt.is_file(),
        "{} missing: install Debian's libjacoco-java (scripts/test-all --install-only does)",
        rt.display()
    );
    let dir = temp_dir(temp);
    let src = format!(
        "{}/java-test-harness/jacoco/{reader}.java",
        env!("CARGO_MANIFEST_DIR")
    );
    stdout_of(Command::new(jdk_tool("javac")).arg("-d").arg(&dir).args([
        "-cp",
        &jacoco_class_path(),
        &src,
    ]));
    std::fs::write(
        dir.join("manifest.txt"),
        "Premain-Class: org.jacoco.agent.rt.internal.PreMain\n",
    )
    .unwrap();
    stdout_of(Command::new(jdk_tool("jar")).current_dir(&dir).args([
        "cfm",
        "jacocoagent.jar",
        "manifest.txt",
        &format!("{reader}.class"),
    ]));
    dir
}
