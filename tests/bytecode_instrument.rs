//! `profrj instrument` on real Debian jars: every method rewritten with marker
//! probes at entry, line starts and returns, in a catch-all handler and (some
//! tests) after every allocation, then the program run from the rewritten jar
//! with full verification gives the same output as the original.

mod common;

use common::*;
use std::process::Command;

/// Every probe kind `profrj instrument` knows.
const ALL_PROBES: &str = "entry,exit,catch,lines,allocations,counters";

fn instrument(jar: &str, out: &std::path::Path) -> String {
    instrument_with(jar, out, None)
}

fn instrument_with(jar: &str, out: &std::path::Path, probes: Option<&str>) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_profrj"))
        .arg("instrument")
        .args(probes.map(|p| format!("--probes={p}")))
        .arg(jar)
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn run_java(cp: &str, verify: bool, args: &[&str]) -> String {
    run_java_err(cp, verify, args).0
}

/// stdout and stderr of a successful run.
fn run_java_err(cp: &str, verify: bool, args: &[&str]) -> (String, String) {
    let mut c = Command::new(java());
    if verify {
        c.arg("-Xverify:all");
    }
    let o = c.args(["-cp", cp]).args(args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// "allocation sites: P probed, S skipped" → (P, S)
fn alloc_counts(report: &str) -> (usize, usize) {
    let line = report
        .lines()
        .find_map(|l| l.strip_prefix("allocation sites: "))
        .unwrap_or_else(|| panic!("no allocation line: {report}"));
    let nums: Vec<usize> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|s| s.parse().ok())
        .collect();
    (nums[0], nums[1])
}

/// "N methods with code: E edited, R refused" → (N, E, R)
fn counts(report: &str) -> (usize, usize, usize) {
    let nums: Vec<usize> = report
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .filter_map(|s| s.parse().ok())
        .collect();
    // classes, MB (two numbers), methods, edited, refused, …
    (nums[3], nums[4], nums[5])
}

#[test]
fn groovy_rewritten_runs_identically_under_full_verification() {
    let dir = temp_dir("inst-groovy");
    let out = dir.join("groovy.jar");
    let report = instrument("/usr/share/java/groovy-all.jar", &out);
    let (methods, edited, refused) = counts(&report);
    assert!(
        methods > 30_000 && edited == methods && refused == 0,
        "{report}"
    );
    let script = [
        "groovy.ui.GroovyMain",
        "-e",
        "def f(n){ n<2?n:f(n-1)+f(n-2) }; println f(20); println([3,1,2].sort().collect{ it*2 })",
    ];
    let plain = run_java("/usr/share/java/groovy-all.jar", false, &script);
    assert_eq!(plain, run_java(&out.display().to_string(), true, &script));
    assert!(plain.contains("6765"));
}

#[test]
fn clojure_rewritten_runs_identically_under_full_verification() {
    let dir = temp_dir("inst-clojure");
    let out = dir.join("clojure.jar");
    let report = instrument_with("/usr/share/java/clojure.jar", &out, Some(ALL_PROBES));
    let (methods, edited, refused) = counts(&report);
    assert!(
        methods > 10_000 && edited == methods && refused == 0,
        "{report}"
    );
    let (probed, _) = alloc_counts(&report);
    assert!(probed > 10_000, "{report}");
    let specs = "/usr/share/java/spec.alpha.jar:/usr/share/java/core.specs.alpha.jar";
    let expr = [
        "clojure.main",
        "-e",
        "(println (reduce + (map #(* % %) (range 1000))) (sort [3 1 2]) (try (/ 1 0) (catch ArithmeticException e (str \"caught \" (.getMessage e)))))",
    ];
    let plain = run_java(
        &format!("/usr/share/java/clojure.jar:{specs}"),
        false,
        &expr,
    );
    // The allocation probe's class (AllocProbe) comes from the harness.
    let probed_cp = format!("{}:{specs}:{}", out.display(), harness_classes());
    let mut args = vec!["-Dprofrj.allocprobe.print=1"];
    args.extend(expr);
    let (rewritten, stderr) = run_java_err(&probed_cp, true, &args);
    assert_eq!(plain, rewritten);
    assert!(plain.contains("332833500"));
    // Clojure's start-up alone allocates far more than 100,000 objects in its
    // own code; each went through the probe (which rejects null).
    let objects: usize = stderr
        .lines()
        .find_map(|l| l.strip_prefix("profrj-alloc-probe: "))
        .and_then(|l| l.split(' ').next()?.parse().ok())
        .unwrap_or_else(|| panic!("no probe count: {stderr}"));
    assert!(objects > 100_000, "{stderr}");
    // The exception crossed instrumented methods (their catch-all handlers rethrew it).
    assert!(plain.contains("caught Divide by zero"), "{plain}");
}

/// Every class of five real jars, rewritten with every probe kind (entry,
/// line starts, returns, catch-all, and `dup; invokestatic alloc(Object)`
/// after each allocation, which the verifier accepts only where a constructed
/// reference is on top of the stack), defined and linked under -Xverify:all
/// by the JVM's verifier.
#[test]
fn every_class_of_real_jars_passes_the_jvm_verifier_after_rewriting() {
    let dir = temp_dir("inst-verify");
    for jar in ["groovy-all", "clojure", "h2", "jython", "jruby-core"] {
        let original = format!("/usr/share/java/{jar}.jar");
        let out = dir.join(format!("{jar}.jar"));
        let rewrite = instrument_with(&original, &out, Some(ALL_PROBES));
        let (methods, edited, refused) = counts(&rewrite);
        let (probed, skipped) = alloc_counts(&rewrite);
        eprintln!("{jar}: {methods} methods, {edited} edited, {refused} refused; allocation sites {probed} probed, {skipped} skipped");
        assert!(
            edited == methods && refused == 0 && probed > 5_000,
            "{rewrite}"
        );
        let report = run_java(
            harness_classes(),
            true,
            &[
                "profrj.harness.VerifyAll",
                &out.display().to_string(),
                &original,
                "/usr/share/java/spec.alpha.jar",
                harness_classes(),
            ],
        );
        let field = |k: &str| -> usize {
            report
                .split_whitespace()
                .find_map(|w| w.strip_prefix(k))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("{report}"))
        };
        let (classes, verified, errors) = (
            field("classes="),
            field("verified="),
            field("rewrite-errors="),
        );
        eprintln!("{jar}: {}", report.lines().next().unwrap_or(""));
        assert_eq!(
            errors, 0,
            "{jar}: rewritten classes fail verification:\n{report}"
        );
        assert!(
            verified * 100 >= classes * 79,
            "{jar}: only {verified} of {classes} could be verified:\n{report}"
        );
    }
}
