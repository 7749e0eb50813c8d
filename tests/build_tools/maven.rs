//! The Maven project (java-test-harness/maven-forks): copying it, building
//! it offline, finding its snapshots, and the counts its sources declare.

use crate::common::default_shutdown_signals;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

pub const PROJECT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/java-test-harness/maven-forks");
/// The project's test classes (src/test/java/shop), each run in a JVM of its own.
pub const TEST_CLASSES: [&str; 3] = ["BasketTest", "CheckoutTest", "PricingTest"];
/// The project's main classes (src/main/java/shop), in name order.
pub const MAIN_CLASSES: [&str; 2] = ["shop.Basket", "shop.Pricing"];

/// A fresh copy of the project's sources: each build writes its own target/.
pub fn copy_project(name: &str) -> PathBuf {
    let dir = crate::common::temp_dir(name);
    copy_tree(Path::new(PROJECT), &dir);
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if entry.file_type().unwrap().is_dir() {
            if ["target", "build", ".gradle"].contains(&&*entry.file_name().to_string_lossy()) {
                continue; // a Maven or Gradle build someone ran in the repository
            }
            std::fs::create_dir(&dst).unwrap();
            copy_tree(&src, &dst);
        } else {
            std::fs::copy(&src, &dst).unwrap();
        }
    }
}

/// `tool` on PATH; a missing one fails the test, naming the Debian package
/// that `scripts/test-all --install-only` installs.
pub fn on_path(tool: &str, package: &str) -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!(
                "no `{tool}` on PATH: scripts/test-all --install-only installs Debian's {package}"
            )
        })
}

pub struct Build {
    /// What ran, and what to do when it fails, for the failure's message.
    pub command: &'static str,
    pub hint: &'static str,
    /// The pid of the build tool's own JVM: the `mvn` script execs `java`.
    pub pid: u32,
    pub success: bool,
    /// stdout and stderr together.
    pub output: String,
}

impl Build {
    pub fn assert_success(&self) {
        assert!(
            self.success,
            "{} failed ({}):\n{}",
            self.command, self.hint, self.output
        );
    }
}

/// `mvn -o -q -B ARGS test` in `project`, with `env` added to an
/// environment cleared of the JVM option variables the test runner may
/// carry. The test JVMs run on the JDK under test ($PROFRJ_TEST_JAVA,
/// through Surefire's `jvm`); Maven itself on JAVA_HOME's, whose javac
/// compiles the project.
pub fn run_maven(project: &Path, args: &[&str], env: &[(&str, &str)]) -> Build {
    let mut cmd = Command::new(on_path("mvn", "maven"));
    cmd.current_dir(project).args(["-o", "-q", "-B"]).args(args);
    if let Ok(java) = std::env::var("PROFRJ_TEST_JAVA") {
        cmd.arg(format!("-Djvm={java}"));
    }
    cmd.arg("test");
    for var in [
        "JAVA_TOOL_OPTIONS",
        "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS",
        "MAVEN_OPTS",
    ] {
        cmd.env_remove(var);
    }
    cmd.envs(env.iter().copied());
    let hint = "scripts/test-all --install-only fetches the plugins and JUnit into ~/.m2";
    run_build(cmd, "mvn -o test", hint)
}

/// Runs a build tool's command to its end, its output captured.
pub fn run_build(mut cmd: Command, command: &'static str, hint: &'static str) -> Build {
    default_shutdown_signals(&mut cmd);
    let child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {command}: {e}"));
    let pid = child.id();
    let out = child.wait_with_output().unwrap();
    Build {
        command,
        hint,
        pid,
        success: out.status.success(),
        output: format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    }
}

/// The `profrj-<pid>.xml` files in `dir`, by pid; nothing else may be there.
pub fn snapshots_in(dir: &Path) -> BTreeMap<u32, PathBuf> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let Some(pid) = name
            .strip_prefix("profrj-")
            .and_then(|n| n.strip_suffix(".xml"))
        else {
            continue; // Maven's own directories
        };
        let pid = pid
            .parse()
            .unwrap_or_else(|_| panic!("{name}: not profrj-<pid>.xml"));
        out.insert(pid, path);
    }
    out
}

/// Where Surefire writes its JUnit XML reports, in the project.
pub const SUREFIRE_REPORTS: &str = "target/surefire-reports";

/// How many tests the build tool ran of `test`, by its JUnit XML report
/// (`reports`/TEST-shop.<test>.xml: Surefire and Gradle both write one per
/// test class), asserting none failed or was skipped.
pub fn tests_run(reports: &Path, test: &str) -> usize {
    let path = reports.join(format!("TEST-shop.{test}.xml"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let doc = roxmltree::Document::parse(&text).unwrap();
    let suite = doc.root_element();
    assert_eq!(suite.tag_name().name(), "testsuite", "{}", path.display());
    for bad in ["failures", "errors", "skipped"] {
        assert_eq!(suite.attribute(bad), Some("0"), "{}: {bad}", path.display());
    }
    crate::common::attr_u64(suite, "tests") as usize
}

/// The counts the main classes' sources declare: line → test class → times
/// run (`//= BasketTest=3 CheckoutTest=2`, `//= never`), per class.
pub struct Truth {
    lines: HashMap<(String, i64), HashMap<String, i64>>,
}

impl Truth {
    pub fn read() -> Truth {
        let mut lines = HashMap::new();
        for class in MAIN_CLASSES {
            let file = format!("{PROJECT}/src/main/java/{}.java", class.replace('.', "/"));
            let src = std::fs::read_to_string(&file).unwrap();
            for (i, line) in src.lines().enumerate() {
                let Some((code, spec)) = line.split_once("//=") else {
                    continue;
                };
                if code.trim_start().starts_with(['*', '/']) {
                    continue; // a comment explaining the notation
                }
                let mut per_test = HashMap::new();
                for word in spec.split_whitespace().filter(|w| *w != "never") {
                    let (test, n) = word
                        .split_once('=')
                        .unwrap_or_else(|| panic!("{file}:{}: {word:?}", i + 1));
                    assert!(TEST_CLASSES.contains(&test), "{file}:{}: {test}", i + 1);
                    per_test.insert(test.to_owned(), n.parse().unwrap());
                }
                lines.insert((class.to_owned(), i as i64 + 1), per_test);
            }
        }
        Truth { lines }
    }

    /// The main classes `test` runs code of (so its JVM loads them).
    pub fn classes_run_by(&self, test: &str) -> Vec<&'static str> {
        MAIN_CLASSES
            .into_iter()
            .filter(|c| {
                self.lines
                    .iter()
                    .any(|((class, _), per)| class == c && per.get(test).is_some_and(|&n| n > 0))
            })
            .collect()
    }

    /// The footprints of `len` lines from `first` in `class`: -1 for a line
    /// without code, else its count in `test`'s JVM, or in all of them.
    pub fn footprints(&self, class: &str, first: i64, len: usize, test: Option<&str>) -> Vec<i64> {
        (first..first + len as i64)
            .map(|line| match self.lines.get(&(class.to_owned(), line)) {
                None => -1,
                Some(per) => per
                    .iter()
                    .filter(|(t, _)| test.is_none_or(|want| want == t.as_str()))
                    .map(|(_, n)| n)
                    .sum(),
            })
            .collect()
    }

    /// Every line of `class` that declares a count, with its count summed
    /// over the test classes.
    pub fn summed_lines(&self, class: &str) -> BTreeMap<i64, i64> {
        self.lines
            .iter()
            .filter(|((c, _), _)| c == class)
            .map(|((_, line), per)| (*line, per.values().sum()))
            .collect()
    }

    /// How many lines declare a count.
    pub fn line_count(&self) -> usize {
        self.lines.len()
    }
}
