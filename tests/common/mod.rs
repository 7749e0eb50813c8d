//! Shared by the integration tests: builds the agent once, runs real `java`
//! with it on harness programs, and reads snapshots with a real XML parser.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

mod harness;
pub mod heap_readers;
mod jacoco;
mod jmc;
pub mod json;
mod measured;
mod readers;
mod shares;
pub use harness::harness_classes;
#[allow(unused_imports)] // only the tests that expect source lines use it
pub use harness::harness_line;
#[allow(unused_imports)] // only the JaCoCo comparisons use them
pub use jacoco::*;
#[allow(unused_imports)] // only the JFR readers' tests use them
pub use jmc::*;
#[allow(unused_imports)] // only the tests that bound a run's cost use them
pub use measured::*;
#[allow(unused_imports)] // only the reader tests use them
pub use readers::*;
#[allow(unused_imports)] // only the sampler tests use them
pub use shares::*;

/// `target/<profile>` of this test run (the test binary sits in its `deps/`).
pub fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.parent().unwrap().parent().unwrap().to_path_buf()
}

/// Path of libprofrj.so, built (once per test binary) with the same profile
/// as the tests. Cargo's own lock serialises concurrent test binaries.
pub fn agent() -> &'static Path {
    static AGENT: OnceLock<PathBuf> = OnceLock::new();
    AGENT.get_or_init(|| {
        let dir = profile_dir();
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut cmd = Command::new(cargo);
        cmd.args(["build", "-p", "profrj-agent", "--quiet"]);
        if dir.file_name().is_some_and(|n| n == "release") {
            cmd.arg("--release");
        }
        cmd.current_dir(env!("CARGO_MANIFEST_DIR"));
        let status = cmd.status().expect("cannot run cargo to build the agent");
        assert!(status.success(), "building the agent failed");
        let so = dir.join("libprofrj.so");
        assert!(so.is_file(), "{} missing after build", so.display());
        so
    })
}

/// The `java` launcher: $PROFRJ_TEST_JAVA, else $JAVA_HOME/bin/java, else PATH.
pub fn java() -> PathBuf {
    if let Ok(j) = std::env::var("PROFRJ_TEST_JAVA") {
        return PathBuf::from(j);
    }
    if let Ok(home) = std::env::var("JAVA_HOME") {
        let p = Path::new(&home).join("bin/java");
        if p.is_file() {
            return p;
        }
    }
    PathBuf::from("java")
}

/// The JDK's own `java` (JAVA_HOME's, else PATH's), not the runtime under
/// test: the reader libraries (JMC 9, the heap readers) run on it, and
/// javac beside it compiles their programs.
pub fn host_java() -> PathBuf {
    std::env::var("JAVA_HOME")
        .map(|h| Path::new(&h).join("bin/java"))
        .ok()
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("java"))
}

/// A JDK tool (javac, jar) beside the test's `java`, else from JAVA_HOME, else PATH.
pub fn jdk_tool(name: &str) -> PathBuf {
    let beside = java().with_file_name(name);
    if beside.is_file() {
        return beside;
    }
    if let Ok(home) = std::env::var("JAVA_HOME") {
        let p = Path::new(&home).join("bin").join(name);
        if p.is_file() {
            return p;
        }
    }
    PathBuf::from(name)
}

/// A coverage `<method>`'s footprints as (source line, value): -1 no code,
/// 0 never reached, n times run. Empty without line numbers.
pub fn footprints(method: roxmltree::Node) -> Vec<(i64, i64)> {
    let first: i64 = method.attribute("firstline").unwrap().parse().unwrap();
    method
        .children()
        .find(|c| c.has_tag_name("footprints"))
        .and_then(|f| f.text())
        .unwrap_or("")
        .split_whitespace()
        .enumerate()
        .map(|(k, v)| (first + k as i64, v.parse().unwrap()))
        .collect()
}

/// A fresh, empty directory for one test's files.
pub fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("profrj-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

pub struct Run {
    pub output: Output,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn success(&self) -> bool {
        self.output.status.success()
    }
    pub fn assert_success(&self) {
        assert!(
            self.success(),
            "java failed: {:?}\nstdout:\n{}\nstderr:\n{}",
            self.output.status,
            self.stdout,
            self.stderr
        );
    }
}

/// Runs `java -agentpath:libprofrj.so=<options> -cp harness <main> <args>` in `cwd`.
pub fn run_java(cwd: &Path, options: &str, main: &str, args: &[&str]) -> Run {
    run_java_with(cwd, &[], options, main, args)
}

/// As [`run_java`], with extra JVM flags.
pub fn run_java_with(
    cwd: &Path,
    jvm_args: &[&str],
    options: &str,
    main: &str,
    args: &[&str],
) -> Run {
    run_java_env(cwd, &[], jvm_args, options, main, args)
}

/// As [`run_java_with`], with variables added to the JVM's environment.
pub fn run_java_env(
    cwd: &Path,
    env: &[(&str, &str)],
    jvm_args: &[&str],
    options: &str,
    main: &str,
    args: &[&str],
) -> Run {
    run_java_on(cwd, harness_classes(), env, jvm_args, options, main, args)
}

/// As [`run_java_env`], on class path `classes` instead of the harness's.
pub fn run_java_on(
    cwd: &Path,
    classes: &str,
    env: &[(&str, &str)],
    jvm_args: &[&str],
    options: &str,
    main: &str,
    args: &[&str],
) -> Run {
    let agent_arg = if options.is_empty() {
        format!("-agentpath:{}", agent().display())
    } else {
        format!("-agentpath:{}={options}", agent().display())
    };
    let mut command = Command::new(java());
    command
        .current_dir(cwd)
        .arg(agent_arg)
        .arg("-Xmx256m") // jvm_args may override it
        .args(jvm_args)
        .args(["-cp", classes, main])
        .args(args)
        .envs(env.iter().copied());
    default_shutdown_signals(&mut command);
    let output = command.output().expect("cannot start java");
    Run {
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        output,
    }
}

/// Runs `cmd` (a JDK tool, a compiler), asserts it succeeded (its stderr
/// in the message), and answers its stdout.
pub fn stdout_of(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Gives the JVM SIGHUP and SIGINT at their defaults, whatever the test
/// runner was started with: under `nohup` or from a background job they
/// are ignored, the JVM then leaves them so, and `-Xcheck:jni` prints a
/// "Warning: SIGHUP handler expected" block on stdout, which the tests
/// that read the application's stdout exactly would take for the agent's.
pub fn default_shutdown_signals(command: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: between fork and exec, only signal(2), which is
    // async-signal-safe, on the child's own dispositions.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
}

/// Runs harness class `main` with the agent under `options` (plus a
/// snapshot file in a fresh directory) and full bytecode verification;
/// asserts a clean run in which no method was left uninstrumented, and
/// returns the run and the snapshot's text.
pub fn run_verified(name: &str, options: &str, main: &str, args: &[&str]) -> (Run, String) {
    run_verified_with(name, options, &[], main, args)
}

/// `run_verified` with more JVM flags (a collector, say).
pub fn run_verified_with(
    name: &str,
    options: &str,
    jvm_args: &[&str],
    main: &str,
    args: &[&str],
) -> (Run, String) {
    let dir = temp_dir(name);
    let out = dir.join("snapshot.xml");
    let mut flags = vec!["-Xverify:all"];
    flags.extend_from_slice(jvm_args);
    let run = run_java_with(
        &dir,
        &flags,
        &format!("{options},file={}", out.display()),
        main,
        args,
    );
    run.assert_success();
    assert!(!run.stderr.contains("uninstrumented"), "{}", run.stderr);
    let text = read_snapshot(&out);
    (run, text)
}

/// Reads and parses a snapshot; panics with the parser's message if malformed.
pub fn read_snapshot(path: &Path) -> String {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no snapshot at {}: {e}", path.display()));
    if let Err(e) = roxmltree::Document::parse(&text) {
        panic!("snapshot {} is not well-formed XML: {e}", path.display());
    }
    text
}

pub fn attr_u64(n: roxmltree::Node, name: &str) -> u64 {
    let v = n
        .attribute(name)
        .unwrap_or_else(|| panic!("<{}> lacks attribute {name}", n.tag_name().name()));
    v.parse()
        .unwrap_or_else(|_| panic!("attribute {name}={v:?} is not a number"))
}

/// The `<thread>` elements of a section with this name.
pub fn threads<'a, 'i>(
    doc: &'a roxmltree::Document<'i>,
    section: &str,
    name: &str,
) -> Vec<roxmltree::Node<'a, 'i>> {
    doc.root_element()
        .children()
        .filter(|s| s.has_tag_name(section))
        .flat_map(|s| s.children())
        .filter(|t| t.has_tag_name("thread") && t.attribute("name") == Some(name))
        .collect()
}

/// Every `<profile>` node below `n` whose name is `name`, at any depth.
pub fn find_nodes<'a, 'i>(n: roxmltree::Node<'a, 'i>, name: &str) -> Vec<roxmltree::Node<'a, 'i>> {
    n.descendants()
        .filter(|d| d.has_tag_name("profile") && d.attribute("name") == Some(name))
        .collect()
}

/// Sum of an attribute over nodes.
pub fn sum_attr(nodes: &[roxmltree::Node], attr: &str) -> u64 {
    nodes.iter().map(|n| attr_u64(*n, attr)).sum()
}

/// Runs `profrj ARGS` (with this build's agent): exit code, and stdout and
/// stderr together.
pub fn profrj_run(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_profrj"))
        .args(args)
        .env("PROFRJ_AGENT", agent())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// Debian's H2 shell (after `java`) filling a table of 1..=100000 in memory
/// and summing it: its output holds 5000050000. The real-program and
/// crash-hunt tests run it.
pub const H2_SHELL: [&str; 7] = [
    "-cp",
    "/usr/share/java/h2.jar",
    "org.h2.tools.Shell",
    "-url",
    "jdbc:h2:mem:t",
    "-sql",
    "create table t(i int); insert into t select x from system_range(1,100000); select count(*), sum(i) from t",
];

/// The local Maven repository `scripts/test-all` fetches jars into.
pub fn m2() -> PathBuf {
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    Path::new(&home).join(".m2/repository")
}

/// A class path of `jars` (paths inside the Maven repository), each
/// asserted present: a missing one fails the test, never skips it.
pub fn m2_class_path(jars: &[&str]) -> String {
    jars.iter()
        .map(|j| {
            let p = m2().join(j);
            assert!(
                p.is_file(),
                "{} missing: scripts/test-all --install-only fetches it",
                p.display()
            );
            p.display().to_string()
        })
        .collect::<Vec<_>>()
        .join(":")
}

/// Waits (up to `secs` seconds) for a complete snapshot at `path`: one
/// that parses as XML (a snapshot is written in place as it goes).
#[allow(dead_code)] // only the tests that ask a running JVM for a dump use it
pub fn wait_snapshot_for(path: &Path, secs: u64) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    loop {
        if let Ok(t) = std::fs::read_to_string(path) {
            if roxmltree::Document::parse(&t).is_ok() {
                return t;
            }
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no snapshot at {}",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Waits for a harness program's first line, which must be `ready` (it
/// prints that once it runs: the agent started before it, at VMInit).
pub fn await_ready(child: &mut std::process::Child) {
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(child.stdout.as_mut().expect("stdout piped")),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "ready");
}

/// async-profiler 4.5's Linux library, taken out of its Maven Central jar
/// (`scripts/test-all` fetches it) into `dir`: its path.
pub fn async_profiler_library(dir: &Path) -> PathBuf {
    let jar = m2().join("tools/profiler/async-profiler/4.5/async-profiler-4.5.jar");
    assert!(
        jar.is_file(),
        "{} missing: scripts/test-all fetches it",
        jar.display()
    );
    let unzip = Command::new("unzip")
        .arg("-p")
        .arg(&jar)
        .arg("linux-x64/libasyncProfiler.so")
        .output()
        .expect("unzip (scripts/test-all installs it)");
    assert!(unzip.status.success(), "unzip {}", jar.display());
    let so = dir.join("libasyncProfiler.so");
    std::fs::write(&so, unzip.stdout).unwrap();
    so
}
