//! `profrj instrument` on real Debian jars: every method rewritten with marker
//! probes at entry, line starts and returns, then the program run from the
//! rewritten jar with full verification gives the same output as the original.

mod common;

use common::*;
use std::process::Command;

fn instrument(jar: &str, out: &std::path::Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_profrj"))
        .args(["instrument", jar])
        .arg(out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn run_java(cp: &str, verify: bool, args: &[&str]) -> String {
    let mut c = Command::new(java());
    if verify {
        c.arg("-Xverify:all");
    }
    let o = c.args(["-cp", cp]).args(args).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
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
    let report = instrument("/usr/share/java/clojure.jar", &out);
    let (methods, edited, refused) = counts(&report);
    assert!(
        methods > 10_000 && edited == methods && refused == 0,
        "{report}"
    );
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
    assert_eq!(
        plain,
        run_java(&format!("{}:{specs}", out.display()), true, &expr)
    );
    assert!(plain.contains("332833500"));
    // The exception crossed instrumented methods (their catch-all handlers rethrew it).
    assert!(plain.contains("caught Divide by zero"), "{plain}");
}

/// Every class of five real jars, rewritten (entry, line starts, returns,
/// catch-all), defined and linked under -Xverify:all by the JVM's verifier.
#[test]
fn every_class_of_real_jars_passes_the_jvm_verifier_after_rewriting() {
    let dir = temp_dir("inst-verify");
    for jar in ["groovy-all", "clojure", "h2", "jython", "jruby-core"] {
        let original = format!("/usr/share/java/{jar}.jar");
        let out = dir.join(format!("{jar}.jar"));
        instrument(&original, &out);
        let report = run_java(
            harness_classes(),
            true,
            &[
                "profrj.harness.VerifyAll",
                &out.display().to_string(),
                &original,
                "/usr/share/java/spec.alpha.jar",
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
