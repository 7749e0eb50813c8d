//! The crash hunt: signal sampling at its highest rate (`interval=100us`),
//! every walk recovery on (stubs, compiled entries and exits, threads in the
//! VM), under `-Xcheck:jni`, on each real program of the suite (Debian's H2,
//! groovy, jython, jruby and clojure), run with `java` directly so that
//! `PROFRJ_TEST_JAVA` picks the JVM: scripts/test-all runs it on JDK 11, 17,
//! 21 and 25. Each program computes a number known by arithmetic, which its
//! output must hold; no JNI check may complain, no crash, a snapshot that
//! parses, and at most 2% of the main thread's samples in failed walks.
//! H2 and groovy run a second time without `-Xcheck:jni`, where the agent's
//! fault guard stands in front of HotSpot's SIGSEGV handler (HotSpot's
//! checker would warn of it): the programs' own faults, which HotSpot
//! handles (implicit null checks, stack banging), must still reach it.

mod common;

use common::*;
use std::process::Command;

/// (name, arguments after `java`, what its output must contain).
fn programs() -> Vec<(&'static str, Vec<String>, &'static str)> {
    let groovy_cp = [
        "groovy-2.4.21",
        "antlr",
        "asm",
        "asm-commons",
        "asm-tree",
        "asm-util",
        "asm-analysis",
    ]
    .map(|j| format!("/usr/share/groovy/lib/{j}.jar"))
    .join(":");
    let args = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    vec![
        (
            "h2",
            args(&H2_SHELL),
            // 1 + … + 100000
            "5000050000",
        ),
        (
            "groovy",
            [
                args(&["-cp"]),
                vec![groovy_cp],
                args(&[
                    "groovy.ui.GroovyMain",
                    "-e",
                    "def f(n){ n<2?n:f(n-1)+f(n-2) }; println f(22)",
                ]),
            ]
            .concat(),
            // Fibonacci 22
            "17711",
        ),
        (
            "jython",
            args(&[
                "-jar",
                "/usr/share/java/jython.jar",
                "-c",
                "print(sum(i*i for i in range(200000)))",
            ]),
            // sum of i² for i < n = (n-1)n(2n-1)/6
            "2666646666700000",
        ),
        (
            "jruby",
            args(&[
                "-cp",
                "/usr/share/jruby/lib/jruby.jar",
                "org.jruby.Main",
                "-e",
                "puts (1..200000).map{|i| i*i}.sum",
            ]),
            "2666686666700000",
        ),
        (
            "clojure",
            args(&[
                "-cp",
                "/usr/share/java/clojure-1.11.jar",
                "clojure.main",
                "-e",
                "(println (reduce + (map #(* % %) (range 300000))))",
            ]),
            "8999955000050000",
        ),
    ]
}

/// Samples of the main thread in failed walks: the roots named as a
/// failure (`[unknown_Java]`…), not `[no_Java_frame]` (a thread with no
/// Java frame at all, the JVM starting or ending) nor `[truncated]`.
fn failed_share(doc: &roxmltree::Document) -> (u64, u64) {
    let main = threads(doc, "sampler", "main");
    assert_eq!(main.len(), 1, "one main thread");
    let total = attr_u64(main[0], "cumulatedElapsed");
    let failed = main[0]
        .children()
        .filter(|n| n.has_tag_name("profile"))
        .filter(|n| {
            let name = n.attribute("name").unwrap();
            name.starts_with('[') && name != "[no_Java_frame]" && name != "[truncated]"
        })
        .map(|n| attr_u64(n, "cumulatedElapsed"))
        .sum();
    (failed, total)
}

#[test]
fn sampling_every_100us_under_check_jni_never_hurts_a_real_program() {
    let dir = temp_dir("crash-hunt");
    let mut failures = Vec::new();
    let unchecked = programs()
        .into_iter()
        .filter(|p| p.0 == "h2" || p.0 == "groovy")
        .map(|(name, args, answer)| (name, args, answer, false));
    let runs = programs()
        .into_iter()
        .map(|(name, args, answer)| (name, args, answer, true))
        .chain(unchecked);
    for (name, args, answer, checked) in runs {
        let name = if checked {
            name.to_string()
        } else {
            format!("{name}-guarded")
        };
        let snap = dir.join(format!("{name}.xml"));
        let out = Command::new(java())
            .current_dir(&dir)
            .env_remove("JAVA_TOOL_OPTIONS")
            .args(checked.then_some("-Xcheck:jni"))
            .arg(format!(
                "-agentpath:{}=sampling,interval=100us,file={}",
                agent().display(),
                snap.display()
            ))
            .args(&args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run java for {name}: {e}"));
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        let guard = if checked {
            "faults in a walk not caught under -Xcheck:jni"
        } else {
            "faults in a walk caught"
        };
        let complaint = [
            "WARNING in native method",
            "FATAL ERROR",
            "profrj: bug",
            "hs_err",
        ]
        .into_iter()
        .find(|w| stderr.contains(w) || stdout.contains(w))
        .or((!stderr.contains(guard)).then_some("the fault guard's state"));
        if !out.status.success() || !stdout.contains(answer) || complaint.is_some() {
            failures.push(format!(
                "{name}: {:?}, answer {answer} {}, complaint {complaint:?}\nstdout:\n{stdout}\nstderr:\n{stderr}",
                out.status,
                if stdout.contains(answer) { "printed" } else { "missing" },
            ));
            continue;
        }
        let xml = read_snapshot(&snap);
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let (failed, total) = failed_share(&doc);
        let summary = stderr
            .lines()
            .find(|l| l.contains("ticks every"))
            .unwrap_or("");
        eprintln!("{name}: {failed} of {total} main-thread samples in failed walks; {summary}");
        if total < 1000 || failed as f64 > 0.02 * total as f64 {
            failures.push(format!(
                "{name}: {failed} of {total} main-thread samples in failed walks (at most 2% of at least 1000)\n{summary}"
            ));
        }
    }
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("hs_err"))
        .map(|e| e.path())
        .collect();
    assert!(leftovers.is_empty(), "crash logs: {leftovers:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
