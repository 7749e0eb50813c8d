//! The same project (java-test-harness/maven-forks) built by Gradle: its
//! build.gradle forks a fresh test JVM per test class, at most two at a
//! time, and gives each the agent when `-Pprofrj.agent=` is set.

use crate::maven::{on_path, run_build, Build};
use std::path::Path;
use std::process::Command;

/// Where Gradle's `test` task writes its JUnit XML reports, in the project.
pub const GRADLE_REPORTS: &str = "build/test-results/test";

/// The JDK Debian's Gradle 4.4.1 is known to run on; JAVA_HOME's otherwise.
const JDK17: &str = "/usr/lib/jvm/java-17-openjdk-amd64";

/// `gradle --no-daemon --offline -q test -Pprofrj.agent=AGENT` in
/// `project`. Nothing of the user's Gradle is read or written: its user
/// home (caches, init scripts, gradle.properties) and the project cache are
/// directories of the project's copy. No daemon: the build's JVMs end with
/// the build. The test JVMs run on Gradle's own JDK (17).
pub fn run_gradle(project: &Path, agent: &Path) -> Build {
    let mut cmd = Command::new(on_path("gradle", "gradle"));
    cmd.current_dir(project)
        .args(["--no-daemon", "--offline", "-q", "-g"])
        .arg(project.join("gradle-user-home"))
        .arg("--project-cache-dir")
        .arg(project.join("gradle-project-cache"))
        .arg("test")
        .arg(format!("-Pprofrj.agent={}", agent.display()));
    if Path::new(JDK17).is_dir() {
        cmd.env("JAVA_HOME", JDK17);
    }
    for var in [
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "JAVA_OPTS",
        "GRADLE_OPTS",
        "GRADLE_USER_HOME",
    ] {
        cmd.env_remove(var);
    }
    let hint = "Debian's Gradle 4.4.1 on JDK 17, offline: scripts/test-all --install-only \
                installs it and puts JUnit 4.13.2 and hamcrest-core 1.3 into ~/.m2";
    run_build(cmd, "gradle --offline test", hint)
}
