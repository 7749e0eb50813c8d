//! Coverage of a real Maven build whose tests run in several forked JVMs
//! (java-test-harness/maven-forks: Surefire with forkCount=2 and
//! reuseForks=false, so each of its three test classes runs in a JVM of its
//! own): one snapshot per test JVM (`file=…/profrj-%p.xml`), each holding
//! exactly the code its test class ran, and the counts summed over the JVMs
//! equal to the counts written beside each line of the project's sources.
//! The agent comes in through Surefire's argLine (`-Dprofrj.agent=`), then
//! through `JAVA_TOOL_OPTIONS`, which Maven's own JVM reads too. The forks'
//! snapshots are summed here, by `profrj merge`, and by the lcov tool.
//!
//! The same project built by Gradle (its build.gradle: `maxParallelForks = 2`,
//! `forkEvery = 1`, the agent on the test task's `jvmArgs`) gives the same
//! three snapshots, checked the same way.
//!
//! Maven runs offline (`-o`): `scripts/test-all --install-only` fetches the
//! plugins and JUnit into ~/.m2; without them the build, and the test, fail.
//! Gradle runs offline too, taking JUnit from ~/.m2 (`mavenLocal()`), with a
//! Gradle user home of its own in the project's copy.

mod common;
#[path = "build_tools/gradle.rs"]
mod gradle;
#[path = "build_tools/lcov.rs"]
mod lcov;
#[path = "build_tools/maven.rs"]
mod maven;
#[path = "build_tools/merge.rs"]
mod merge;
#[path = "build_tools/snapshots.rs"]
mod snapshots;

use common::*;
use gradle::*;
use lcov::lcov_sum;
use maven::*;
use merge::merged;
use snapshots::*;
use std::collections::BTreeMap;
use std::path::Path;

/// Calls of one method by each test class's JVM (test classes not named: 0).
type CallsPerTest = &'static [(&'static str, u64)];

/// Calls of each method of the project's main classes, per test class (the
/// javadoc above each method in the Java sources says which calls).
const CALLS: &[(&str, &str, CallsPerTest)] = &[
    (
        "shop.Basket",
        "<init>",
        &[("BasketTest", 3), ("CheckoutTest", 2)],
    ),
    (
        "shop.Basket",
        "add",
        &[("BasketTest", 3), ("CheckoutTest", 3)],
    ),
    (
        "shop.Basket",
        "total",
        &[("BasketTest", 2), ("CheckoutTest", 2)],
    ),
    (
        "shop.Basket",
        "items",
        &[("BasketTest", 1), ("CheckoutTest", 1)],
    ),
    ("shop.Basket", "clear", &[]),
    ("shop.Pricing", "<init>", &[]),
    (
        "shop.Pricing",
        "discountPercent",
        &[("PricingTest", 3), ("CheckoutTest", 2)],
    ),
    ("shop.Pricing", "discounted", &[("CheckoutTest", 2)]),
    ("shop.Pricing", "grow", &[("PricingTest", 2)]),
];

/// Calls of `class.method` by `test`'s JVM; `None` for every test: all of them.
fn calls(class: &str, method: &str, test: Option<&str>) -> u64 {
    let (_, _, per_test) = CALLS
        .iter()
        .find(|(c, m, _)| *c == class && *m == method)
        .unwrap_or_else(|| panic!("{class}.{method} is not in CALLS"));
    per_test
        .iter()
        .filter(|(t, _)| test.is_none_or(|want| want == *t))
        .map(|(_, n)| n)
        .sum()
}

/// One fork's snapshot against the sources: it holds one test class, whose
/// test methods each ran once; the main classes it loaded are exactly those
/// the test class runs code of; their calls and every footprint are that
/// test class's counts. Answers the test class's simple name and how many
/// test methods ran.
fn check_fork(file: &Path, cov: &Coverage, truth: &Truth) -> (String, usize) {
    let tests: Vec<&str> = cov
        .keys()
        .map(|k| k.class.as_str())
        .filter(|c| c.ends_with("Test"))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert_eq!(tests.len(), 1, "{}: test classes {tests:?}", file.display());
    let test_class = tests[0];
    let test = test_class.strip_prefix("shop.").unwrap().to_owned();
    assert!(TEST_CLASSES.contains(&test.as_str()), "{test}");
    let test_methods = cov
        .iter()
        .filter(|(k, _)| k.class == test_class && k.name != "<init>")
        .inspect(|(k, m)| assert_eq!(m.count, 1, "{test}.{} runs once", k.name))
        .count();
    let init = MethodKey::new(test_class, "<init>", "()V");
    // JUnit 4 makes an instance of the test class per test method.
    assert_eq!(cov[&init].count as usize, test_methods, "{test}.<init>");

    let loaded: Vec<&str> = MAIN_CLASSES
        .iter()
        .copied()
        .filter(|c| cov.keys().any(|k| k.class == *c))
        .collect();
    assert_eq!(loaded, truth.classes_run_by(&test), "{test}'s JVM");
    for (key, method) in cov.iter().filter(|(k, _)| k.class != test_class) {
        let want = calls(&key.class, &key.name, Some(&test));
        assert_eq!(method.count, want, "{test}: {key} calls");
        assert_eq!(
            method.footprints,
            truth.footprints(
                &key.class,
                method.firstline,
                method.footprints.len(),
                Some(&test)
            ),
            "{test}: {key} footprints from line {}",
            method.firstline
        );
    }
    (test, test_methods)
}

/// The main classes' methods summed over the forks equal the sources'
/// counts summed over the test classes; every method with code is there.
fn check_sum(sum: &Coverage, truth: &Truth) {
    let mut lines_seen = 0;
    for (class, name, _) in CALLS {
        let (key, method) = sum
            .iter()
            .find(|(k, _)| k.class == *class && k.name == *name)
            .unwrap_or_else(|| panic!("{class}.{name} in no snapshot"));
        assert_eq!(
            method.count,
            calls(class, name, None),
            "{key} calls, summed"
        );
        let want = truth.footprints(class, method.firstline, method.footprints.len(), None);
        assert_eq!(method.footprints, want, "{key} footprints, summed");
        lines_seen += want.iter().filter(|&&n| n >= 0).count();
    }
    assert_eq!(lines_seen, truth.line_count(), "every annotated line");
}

/// Checks every fork's snapshot, against the build tool's own JUnit XML
/// reports (in `reports`) too, and their sum; answers the sum.
fn check_forks(
    snapshots: &BTreeMap<u32, std::path::PathBuf>,
    truth: &Truth,
    reports: &Path,
) -> Coverage {
    assert_eq!(
        snapshots.len(),
        TEST_CLASSES.len(),
        "one snapshot per test JVM: {snapshots:?}"
    );
    let mut tests_seen = Vec::new();
    let mut sum = Coverage::new();
    for file in snapshots.values() {
        let cov = read_coverage(file);
        let (test, methods) = check_fork(file, &cov, truth);
        assert_eq!(
            methods,
            tests_run(reports, &test),
            "{test}: the test methods that ran in its JVM are those the build tool ran"
        );
        tests_seen.push(test);
        add_coverage(&mut sum, &cov);
    }
    tests_seen.sort();
    let mut all = TEST_CLASSES.map(str::to_owned).to_vec();
    all.sort();
    assert_eq!(tests_seen, all, "each test class in a JVM of its own");
    check_sum(&sum, truth);
    sum
}

/// `profrj merge` of the forks' snapshots, and the `lcov` tool's sum of
/// their `convert --to lcov`, both equal to `sum`, the sources' totals.
fn check_merge_and_lcov(
    snapshots: &BTreeMap<u32, std::path::PathBuf>,
    sum: &Coverage,
    truth: &Truth,
    project: &Path,
) {
    // `profrj merge` of the forks: the same sum, every class and method.
    let all = merged(snapshots.values(), project);
    assert_eq!(&all, sum, "profrj merge of the forks' snapshots");

    // The same sum by the lcov tool, from `convert --to lcov` of each fork.
    let summed = lcov_sum(snapshots.values(), project);
    for class in MAIN_CLASSES {
        let file = format!("{}.java", class.replace('.', "/"));
        let record = &summed[&file];
        assert_eq!(record.lines, truth.summed_lines(class), "lcov -a: {file}");
        for (c, method, _) in CALLS.iter().filter(|(c, _, _)| *c == class) {
            let simple = c.strip_prefix("shop.").unwrap();
            let (_, n) = record
                .calls
                .iter()
                .find(|(name, _)| name.starts_with(&format!("{simple}.{method}(")))
                .unwrap_or_else(|| panic!("lcov -a: no FNDA for {c}.{method}"));
            assert_eq!(*n, calls(c, method, None), "lcov -a: {c}.{method} calls");
        }
    }
}

#[test]
fn surefire_forks_write_a_snapshot_each_that_sum_to_the_sources_counts() {
    let truth = Truth::read();
    let project = copy_project("forks-argline");
    let agent_property = format!("-Dprofrj.agent={}", agent().display());
    let build = run_maven(&project, &[&agent_property], &[]);
    build.assert_success();
    let snapshots = snapshots_in(&project.join("target"));
    let sum = check_forks(&snapshots, &truth, &project.join(SUREFIRE_REPORTS));
    check_merge_and_lcov(&snapshots, &sum, &truth, &project);
}

/// The agent given to every JVM of the build through `JAVA_TOOL_OPTIONS`:
/// the test JVMs write the same snapshots as with argLine, and Maven's own
/// JVM (the `mvn` script execs it, so its pid is the child's) writes one
/// too. `include=shop.*` keeps Maven's own classes out of scope; of the
/// project's, Maven's JVM loads the test classes (Surefire looks for their
/// tests there) and runs none of them, and never loads a main class: its
/// snapshot lists the test classes with every count 0, which adds nothing
/// to a sum.
#[test]
fn java_tool_options_reaches_every_fork_and_mavens_own_jvm() {
    let truth = Truth::read();
    let project = copy_project("forks-tool-options");
    let out = project.join("snapshots");
    std::fs::create_dir(&out).unwrap();
    let options = format!(
        "-agentpath:{}=coverage,include=shop.*,file={}/profrj-%p.xml",
        agent().display(),
        out.display()
    );
    let build = run_maven(&project, &[], &[("JAVA_TOOL_OPTIONS", &options)]);
    build.assert_success();
    assert!(
        build.output.contains("Picked up JAVA_TOOL_OPTIONS"),
        "{}",
        build.output
    );
    let mut snapshots = snapshots_in(&out);
    let maven_own = snapshots
        .remove(&build.pid)
        .unwrap_or_else(|| panic!("no snapshot of Maven's JVM (pid {})", build.pid));
    let maven_cov = read_coverage(&maven_own);
    for (key, method) in &maven_cov {
        let test = key.class.strip_prefix("shop.").unwrap_or("");
        assert!(TEST_CLASSES.contains(&test), "Maven's JVM loaded {key}");
        assert_eq!(method.count, 0, "Maven's JVM ran {key}");
        assert!(method.footprints.iter().all(|&n| n <= 0), "{key}");
    }
    let mut sum = check_forks(&snapshots, &truth, &project.join(SUREFIRE_REPORTS));
    // Summing Maven's own snapshot in too (what merging a directory of
    // snapshots does) leaves the counts as they were; `profrj merge` of
    // all four gives that sum.
    add_coverage(&mut sum, &maven_cov);
    check_sum(&sum, &truth);
    let all = merged(snapshots.values().chain([&maven_own]), &project);
    assert_eq!(all, sum, "profrj merge of every JVM's snapshot");
}

/// The same project built by Gradle (Debian's 4.4.1, on JDK 17) with its
/// build.gradle: `maxParallelForks = 2`, `forkEvery = 1`, the agent on the
/// `test` task's `jvmArgs`. One snapshot per test JVM, each announced on
/// stderr by the agent and holding exactly its test class's counts, as many
/// test methods as Gradle's own JUnit XML report says it ran; their sum,
/// `profrj merge` of them, and `lcov -a` of them equal to the sources'
/// totals. Gradle's own JVM never gets the agent (`jvmArgs` is the test
/// JVMs' command line only), so build/ holds the forks' snapshots alone.
#[test]
fn gradle_forks_each_write_a_snapshot_summed_exactly() {
    let truth = Truth::read();
    let project = copy_project("forks-gradle");
    let build = run_gradle(&project, agent());
    build.assert_success();
    let snapshots = snapshots_in(&project.join("build"));
    // The agent's only lines: one per snapshot (Gradle's test workers print
    // warnings of their own, JDK 17's about their setSecurityManager).
    let mut said: Vec<&str> = build
        .output
        .lines()
        .filter(|l| l.contains("profrj"))
        .collect();
    said.sort();
    let mut written: Vec<String> = snapshots
        .values()
        .map(|p| format!("profrj: snapshot written to {}", p.display()))
        .collect();
    written.sort();
    assert_eq!(said, written, "the agent's lines:\n{}", build.output);
    let sum = check_forks(&snapshots, &truth, &project.join(GRADLE_REPORTS));
    check_merge_and_lcov(&snapshots, &sum, &truth, &project);
}
