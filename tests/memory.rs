//! `memory` mode on real JVMs: live and peak object counts per thread and
//! class against a harness program whose answer is known by construction
//! (MemoryTruth), run with full bytecode verification.

mod common;

use common::*;
use std::collections::HashMap;

const H: &str = "profrj.harness.MemoryTruth";

/// thread name → class → (count, max)
type Rows = HashMap<String, HashMap<String, (u64, u64)>>;

fn rows(text: &str) -> Rows {
    let doc = roxmltree::Document::parse(text).unwrap();
    let section = doc
        .root_element()
        .children()
        .find(|c| c.has_tag_name("memory"))
        .expect("<memory> section");
    let mut out = Rows::new();
    for t in section.children().filter(|c| c.has_tag_name("thread")) {
        let name = t.attribute("name").unwrap().to_owned();
        let mut prev = u64::MAX;
        let classes = out.entry(name.clone()).or_default();
        for m in t.children().filter(|c| c.has_tag_name("memory")) {
            let (count, max) = (attr_u64(m, "count"), attr_u64(m, "max"));
            assert!(count <= max, "{name}: count above max");
            assert!(count <= prev, "{name}: rows not sorted by count");
            prev = count;
            let class = m.attribute("class").unwrap().to_owned();
            assert!(
                classes.insert(class.clone(), (count, max)).is_none(),
                "{name}: {class} listed twice"
            );
        }
    }
    out
}

fn run(name: &str, options: &str) -> Rows {
    run_with(name, options, &[])
}

/// MemoryTruth under `options`, with extra JVM flags (a collector).
fn run_with(name: &str, options: &str, jvm: &[&str]) -> Rows {
    let (run, text) = run_verified_with(name, options, jvm, H, &[]);
    assert!(run.stdout.contains("kept 1000 20000"), "{}", run.stdout);
    rows(&text)
}

fn get(rows: &Rows, thread: &str, class: &str) -> (u64, u64) {
    rows.get(thread)
        .unwrap_or_else(|| panic!("no thread {thread}: {:?}", rows.keys()))
        .get(class)
        .copied()
        .unwrap_or_else(|| panic!("{thread}: no row for {class}: {:?}", rows[thread]))
}

/// The harness's own classes; and, unless the JDK is in scope (whose code
/// on main's thread allocates the same array types), the arrays too.
fn check_truth(rows: &Rows) {
    check_harness_classes(rows);
    let main = |c: &str| get(rows, "main", c);
    assert_eq!(main("long[][]"), (1, 1));
    // 7 kept; 40 dropped one by one: the peak depends on when a GC ran
    // (none between them: 47), never below 8 (7 kept + the one in hand).
    let (count, max) = main("long[]");
    assert_eq!(count, 7);
    assert!((8..=47).contains(&max), "long[] max {max}");
    assert_eq!(main("java.lang.String[][][]"), (1, 1));
    assert_eq!(main("int[]"), (3, 3), "Array.newInstance");
    assert_eq!(
        main("java.lang.String[][]"),
        (3, 3),
        "outer arrays of multianewarray"
    );
}

fn check_harness_classes(rows: &Rows) {
    let main = |c: &str| get(rows, "main", c);
    let k = "profrj.harness.MemoryTruth$";
    assert_eq!(
        main(&format!("{k}Kept")),
        (1020, 1020),
        "1,000 new + 20 reflection"
    );
    assert_eq!(main(&format!("{k}Kept[]")), (1, 1));
    assert_eq!(main(&format!("{k}Dropped")), (0, 500));
    assert_eq!(main(&format!("{k}Dropped[]")), (0, 1));
    assert_eq!(
        main(&format!("{k}Sheep")),
        (20_001, 20_001),
        "dolly + 20,000 clones"
    );
    assert_eq!(main(&format!("{k}Sheep[]")), (1, 1));
    // Two threads allocating one class: a row each, in its own thread.
    assert_eq!(get(rows, "alloc-a", &format!("{k}Shared")), (300, 300));
    assert_eq!(get(rows, "alloc-b", &format!("{k}Shared")), (200, 200));
    assert!(!rows["main"].contains_key(&format!("{k}Shared")));
    let (count, max) = main(&format!("{k}Churn"));
    assert_eq!(count, 0, "Churn");
    assert!((1..=6_000_000).contains(&max), "Churn max {max}");
}

/// Weak references see each GC's frees in its own pause, so a wave freed by
/// one GC is gone before the next wave is made: max 400, not 800 or 1200;
/// and the churn the GCs collected while it ran never counts whole. (With
/// tags, frees arrive after the GC, when the VM posts them.)
fn check_waves(rows: &Rows) {
    let main = |c: &str| get(rows, "main", &format!("profrj.harness.MemoryTruth${c}"));
    assert_eq!(main("Wave"), (0, 400));
    let (_, churn_max) = main("Churn");
    assert!(churn_max < 6_000_000, "no GC freed any Churn while it ran");
}

#[test]
fn live_and_peak_counts_match_the_program() {
    let rows = run("truth", "memory");
    check_truth(&rows);
    check_waves(&rows);
}

/// The serial and parallel collectors clear weak references in their
/// pauses as G1 does; ZGC does not, so there the mode follows objects with
/// JVMTI tags (and `tracker=weak` is refused with a reason).
#[test]
fn every_collector_gives_the_program_counts() {
    for gc in ["-XX:+UseSerialGC", "-XX:+UseParallelGC"] {
        let rows = run_with(&format!("gc{}", &gc[6..]), "memory", &[gc]);
        check_truth(&rows);
        check_waves(&rows);
    }
    // (ZGC is experimental on JDK 11.)
    let zgc = ["-XX:+UnlockExperimentalVMOptions", "-XX:+UseZGC"];
    check_truth(&run_with("gc-zgc", "memory", &zgc));
    let dir = temp_dir("gc-zgc-weak");
    let refused = run_java_with(
        &dir,
        &zgc,
        &format!("memory,tracker=weak,file={}", dir.join("s.xml").display()),
        H,
        &[],
    );
    refused.assert_success();
    assert!(
        refused.stderr.contains("tracker=weak cannot be used") && refused.stderr.contains("ZGC"),
        "{}",
        refused.stderr
    );
}

/// JVMTI tags, on G1 too when asked: the same counts.
#[test]
fn tags_give_the_program_counts() {
    check_truth(&run("tags", "memory,tracker=tags"));
}

/// The report tool reads the agent's own `<memory>` section.
#[test]
fn report_reads_the_memory_section() {
    let (_, text) = run_verified("report", "memory", H, &[]);
    let snap = temp_dir("memory-report").join("mem.xml");
    std::fs::write(&snap, text).unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_profrj"))
        .args(["report", "--section", "memory", "--top", "3"])
        .arg(&snap)
        .output()
        .unwrap();
    assert!(out.status.success());
    let report = String::from_utf8_lossy(&out.stdout);
    let first = report
        .lines()
        .find(|l| l.trim_start().starts_with("1 "))
        .unwrap_or_else(|| panic!("no rank 1 row:\n{report}"));
    assert!(
        first.contains("20001") && first.contains("MemoryTruth$Sheep"),
        "{report}"
    );
}

/// With the JDK in scope, objects made through reflection or cloning are
/// still counted once: at the call site, not again inside the JDK.
#[test]
fn the_jdk_in_scope_counts_nothing_twice() {
    check_harness_classes(&run("jdk", "memory,include=*"));
}

#[test]
fn memory_combines_with_the_other_modes() {
    check_truth(&run("combined", "memory,profile,coverage,sampling"));
}

/// `exclude=` takes a class's allocations out: the program's own classes
/// then show no rows at all.
#[test]
fn scope_selects_the_allocating_code() {
    let rows = run("excluded", "memory,exclude=profrj.harness.*");
    for (thread, classes) in &rows {
        assert!(
            !classes.keys().any(|c| c.starts_with("profrj.harness.")),
            "{thread}: {classes:?}"
        );
    }
}

/// Objects a native method in scope makes with JNI (AllocObject,
/// NewObjectArray) reach the VMObjectAlloc event and are counted for it.
#[test]
fn objects_made_by_jni_are_counted() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let ok = std::process::Command::new(cargo)
        .args(["build", "--release", "--quiet", "--example", "jni_alloc"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap()
        .success();
    assert!(ok, "building examples/jni_alloc.rs failed");
    // Where this test binary's target directory is ($CARGO_TARGET_DIR too).
    let lib = common::profile_dir().join("examples/libjni_alloc.so");
    let (run, text) = run_verified(
        "jni",
        "memory",
        "profrj.harness.JniAlloc",
        &[lib.to_str().unwrap()],
    );
    assert!(run.stdout.contains("made 250"), "{}", run.stdout);
    let rows = rows(&text);
    assert_eq!(
        get(&rows, "main", "profrj.harness.JniAlloc$Item"),
        (250, 250)
    );
    assert_eq!(get(&rows, "main", "java.lang.Object[]"), (1, 1));
}

/// The memory mode's JNI use (a weak reference per object, deleted on the
/// agent thread) passes the JVM's own JNI checks.
#[test]
fn jni_checks_find_nothing_wrong() {
    let dir = temp_dir("xcheck-jni");
    let run = run_java_with(
        &dir,
        &["-Xcheck:jni"],
        &format!("memory,file={}", dir.join("s.xml").display()),
        H,
        &[],
    );
    run.assert_success();
    assert!(run.stdout.contains("kept 1000 20000"), "{}", run.stdout);
    for out in [&run.stdout, &run.stderr] {
        assert!(!out.contains("WARNING in native method"), "{out}");
        assert!(!out.contains("FATAL ERROR in native method"), "{out}");
    }
    check_truth(&rows(&read_snapshot(&dir.join("s.xml"))));
}
