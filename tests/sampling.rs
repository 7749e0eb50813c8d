//! `sampling` mode on real JVMs, checked against harness programs whose answer
//! is known by construction (see java-test-harness/src/profrj/harness/).

mod common;

use common::*;
use std::path::PathBuf;
use std::sync::OnceLock;

/// One CpuSplit run at 1 ms (about 3,000 samples of main), shared by the tests below.
fn cpu_split() -> &'static (Run, String) {
    static RUN: OnceLock<(Run, String)> = OnceLock::new();
    RUN.get_or_init(|| {
        let dir = temp_dir("cpusplit");
        let run = run_java(
            &dir,
            "sampling,interval=1ms,file=split.xml",
            "profrj.harness.CpuSplit",
            &["3000"],
        );
        run.assert_success();
        let xml = read_snapshot(&dir.join("split.xml"));
        (run, xml)
    })
}

fn doc() -> roxmltree::Document<'static> {
    roxmltree::Document::parse(&cpu_split().1).unwrap()
}

fn one_thread<'a, 'i>(doc: &'a roxmltree::Document<'i>, name: &str) -> roxmltree::Node<'a, 'i> {
    let t = threads(doc, "sampler", name);
    assert_eq!(
        t.len(),
        1,
        "expected one thread named {name}, got {}",
        t.len()
    );
    t[0]
}

/// heavy() and light() share main's CPU 3:1 by construction, and a hit is a
/// sample of a thread that ran since the last one: 75%, within 5 points or
/// four standard deviations of the samples the counts rest on (fewer when a
/// loaded machine delays the sampler: see `common::shares`).
#[test]
fn cpu_split_ratio_is_three_to_one() {
    let (run, _) = cpu_split();
    let doc = doc();
    let main = one_thread(&doc, "main");
    let heavy = sum_attr(
        &find_nodes(main, "profrj.harness.CpuSplit.heavy()"),
        "cumulated",
    );
    let light = sum_attr(
        &find_nodes(main, "profrj.harness.CpuSplit.light()"),
        "cumulated",
    );
    assert!(
        heavy + light > 100,
        "too few runnable samples: heavy {heavy} light {light}"
    );
    let share = heavy as f64 / (heavy + light) as f64 * 100.0;
    let tolerance = share_tolerance(75.0, (heavy + light) as f64, &run.stderr, 5.0);
    eprintln!(
        "heavy {heavy} light {light}: heavy share {share:.1}% (expected 75% ± {tolerance:.1})"
    );
    assert!(
        (share - 75.0).abs() <= tolerance,
        "heavy share {share:.1}% is not 75% ± {tolerance:.1} (heavy {heavy}, light {light})"
    );
}

#[test]
fn sleeping_thread_has_elapsed_hits_and_no_runnable_hits() {
    let doc = doc();
    let sleeper = one_thread(&doc, "sleeper");
    assert_eq!(
        sleeper.attribute("isAlive"),
        Some("true"),
        "the daemon sleeper is alive at VM exit"
    );
    // JDK 17: Thread.sleep is native; JDK 21+: Thread.sleep0.
    let sleep_leaves: Vec<_> = sleeper
        .descendants()
        .filter(|n| n.has_tag_name("profile"))
        .filter(|n| {
            n.attribute("name")
                .is_some_and(|s| s.starts_with("java.lang.Thread.sleep") && s.ends_with("(native)"))
        })
        .collect();
    assert!(
        !sleep_leaves.is_empty(),
        "no Thread.sleep native frame in sleeper; its frames with samples: {:?}",
        sleeper
            .descendants()
            .filter(|n| n.has_tag_name("profile") && attr_u64(*n, "elapsed") > 0)
            .map(|n| (n.attribute("name").unwrap_or("?"), attr_u64(n, "elapsed")))
            .collect::<Vec<_>>()
    );
    let elapsed = sum_attr(&sleep_leaves, "elapsed");
    assert!(
        elapsed > 1000,
        "sleeper should be seen sleeping in most of ~3000 samples, got {elapsed}"
    );
    // The state and the stack are two reads: a sample can catch the thread
    // RUNNABLE as it enters or leaves the native sleep (seen once on JDK 21
    // in ~3000 samples). As for `cumulated` below, allow two.
    assert!(
        sum_attr(&sleep_leaves, "hits") <= 2,
        "a sleeping thread is RUNNABLE only in passing: {}",
        sum_attr(&sleep_leaves, "hits")
    );
    assert!(
        attr_u64(sleeper, "cumulated") <= 2,
        "sleeper runnable samples: {}",
        attr_u64(sleeper, "cumulated")
    );
}

#[test]
fn ended_threads_are_present_with_exact_times() {
    let doc = doc();
    let napper = one_thread(&doc, "napper");
    assert_eq!(napper.attribute("isAlive"), Some("false"));
    // Its own life, not the VM's: at least its 500 ms sleep, and seconds
    // shorter than the sleeper's, which lives from start-up to the end of
    // main's 3 s (a loaded machine stretches both, the napper's by the delay
    // to start it and to wake it, not by seconds).
    let elapsed_ms = attr_u64(napper, "elapsedTime") as f64 / 1e6;
    let sleeper_ms = attr_u64(one_thread(&doc, "sleeper"), "elapsedTime") as f64 / 1e6;
    assert!(
        elapsed_ms >= 500.0 && elapsed_ms + 1000.0 < sleeper_ms,
        "napper slept 500 ms, elapsedTime {elapsed_ms} ms (the sleeper's {sleeper_ms} ms)"
    );
    assert!(
        attr_u64(napper, "cpuTime") < 50_000_000,
        "napper CPU {} ns",
        attr_u64(napper, "cpuTime")
    );

    let burner = one_thread(&doc, "burner");
    assert_eq!(burner.attribute("isAlive"), Some("false"));
    let own: u64 = cpu_split()
        .0
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("burner-cpu-ns="))
        .expect("burner did not report its CPU time")
        .trim()
        .parse()
        .unwrap();
    let ours = attr_u64(burner, "cpuTime");
    assert!(own >= 200_000_000, "burner burns 200 ms CPU");
    // The agent reads CPU time in ThreadEnd, a little after the thread's own last read.
    assert!(
        ours >= own && ours - own < 30_000_000,
        "burner cpuTime {ours} vs its own {own}"
    );
}

#[test]
fn threads_are_told_apart_by_identity_not_name() {
    let doc = doc();
    let twins = threads(&doc, "sampler", "twin");
    assert_eq!(twins.len(), 2, "two threads named twin must be two entries");
    for t in twins {
        assert_eq!(t.attribute("isAlive"), Some("false"));
        let ms = attr_u64(t, "elapsedTime") / 1_000_000;
        assert!(
            (100..1500).contains(&ms),
            "twin slept 100 ms, elapsedTime {ms} ms"
        );
    }
}

#[test]
fn every_thread_and_node_has_the_spec_attributes_and_consistent_counts() {
    let doc = doc();
    let sampler = doc
        .root_element()
        .children()
        .find(|n| n.has_tag_name("sampler"))
        .expect("no <sampler>");
    let mut nodes = 0;
    for t in sampler.children().filter(|n| n.is_element()) {
        assert!(t.has_tag_name("thread"));
        for a in [
            "name",
            "cumulated",
            "cpuTime",
            "cumulatedElapsed",
            "elapsedTime",
            "isAlive",
        ] {
            assert!(t.attribute(a).is_some(), "thread lacks {a}");
        }
        assert!(attr_u64(t, "cumulated") <= attr_u64(t, "cumulatedElapsed"));
        check_children(t, "cumulated", "cumulated", None);
        check_children(t, "cumulatedElapsed", "cumulatedElapsed", None);
        for n in t.descendants().filter(|n| n.has_tag_name("profile")) {
            nodes += 1;
            for a in ["name", "hits", "elapsed", "cumulated", "cumulatedElapsed"] {
                assert!(n.attribute(a).is_some(), "node lacks {a}");
            }
            assert!(attr_u64(n, "hits") <= attr_u64(n, "elapsed"));
            assert!(attr_u64(n, "cumulated") <= attr_u64(n, "cumulatedElapsed"));
            check_children(n, "cumulated", "cumulated", Some("hits"));
            check_children(n, "cumulatedElapsed", "cumulatedElapsed", Some("elapsed"));
        }
    }
    assert!(nodes > 10);
    assert!(
        threads(&doc, "sampler", "profrj sampler").is_empty(),
        "the sampler must not sample itself"
    );
}

/// `own >= self + sum(children's child_attr)` at `n`.
fn check_children(n: roxmltree::Node, own: &str, child_attr: &str, self_attr: Option<&str>) {
    let kids: u64 = n
        .children()
        .filter(|c| c.has_tag_name("profile"))
        .map(|c| attr_u64(c, child_attr))
        .sum();
    let me = self_attr.map(|a| attr_u64(n, a)).unwrap_or(0);
    assert!(
        attr_u64(n, own) >= me + kids,
        "{own} {} < {me} + children {kids} at {:?}",
        attr_u64(n, own),
        n.attribute("name")
    );
}

#[test]
fn deep_stacks_are_truncated_and_marked() {
    let dir = temp_dir("deep");
    let run = run_java(
        &dir,
        "sampling,interval=2ms,depth=8,file=deep.xml",
        "profrj.harness.DeepStack",
        &["100", "600"],
    );
    run.assert_success();
    let xml = read_snapshot(&dir.join("deep.xml"));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let main = one_thread(&doc, "main");
    let truncated = find_nodes(main, "[truncated]");
    assert_eq!(truncated.len(), 1, "one [truncated] root in main");
    assert!(
        truncated[0].parent() == Some(main),
        "[truncated] hangs off the thread"
    );
    assert!(attr_u64(truncated[0], "cumulatedElapsed") > 50);
    for n in main.descendants().filter(|n| n.has_tag_name("profile")) {
        let depth = n.ancestors().filter(|a| a.has_tag_name("profile")).count();
        assert!(
            depth <= 9,
            "node {:?} at depth {depth} > 8 frames + [truncated]",
            n.attribute("name")
        );
    }
}

#[test]
fn bad_options_stop_the_jvm_with_a_message_naming_them() {
    let dir = temp_dir("badopts");
    for (opts, expect) in [
        ("sampling,bogus", "unknown option 'bogus'"),
        ("interval=10", "bad value for interval"),
        ("depth=0", "bad value for depth"),
        ("sampling,file", "quote"),
    ] {
        let run = run_java(&dir, opts, "profrj.harness.Hello", &[]);
        assert!(!run.success(), "{opts}: the JVM must not start");
        assert!(
            !run.stdout.contains("hello from the harness"),
            "{opts}: program ran"
        );
        assert!(
            run.stderr.contains(expect),
            "{opts}: stderr lacks {expect:?}:\n{}",
            run.stderr
        );
        assert!(
            run.stderr.contains("valid options: start,") && run.stderr.contains("file=PATH"),
            "{opts}: no valid-option list:\n{}",
            run.stderr
        );
    }
}

#[test]
fn help_prints_the_table_and_the_program_runs() {
    let dir = temp_dir("help");
    let run = run_java(&dir, "help", "profrj.harness.Hello", &[]);
    run.assert_success();
    assert!(run.stdout.contains("hello from the harness"));
    for o in [
        "sampling",
        "file=PATH",
        "interval=DURATION",
        "depth=N",
        "10ms",
        "2048",
        "profrj-%p.xml",
    ] {
        assert!(run.stderr.contains(o), "help lacks {o}:\n{}", run.stderr);
    }
    let files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert!(
        files.is_empty(),
        "help alone must not profile, found {files:?}"
    );
}

#[test]
fn default_file_name_uses_the_pid() {
    let dir = temp_dir("default");
    let run = run_java(&dir, "", "profrj.harness.Hello", &[]);
    run.assert_success();
    let files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    let f = &files[0];
    assert!(f.starts_with("profrj-") && f.ends_with(".xml"), "{f}");
    assert!(
        f["profrj-".len()..f.len() - 4].parse::<u32>().is_ok(),
        "{f}"
    );
    read_snapshot(&dir.join(f));
}

#[test]
fn unwritable_snapshot_path_is_reported_and_the_program_still_runs() {
    let dir = temp_dir("unwritable");
    let run = run_java(
        &dir,
        "file=/nonexistent-profrj-dir/x.xml",
        "profrj.harness.Hello",
        &[],
    );
    run.assert_success();
    assert!(run.stdout.contains("hello from the harness"));
    assert!(
        run.stderr.contains("not writable"),
        "no early warning:\n{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("cannot write snapshot to /nonexistent-profrj-dir/x.xml"),
        "{}",
        run.stderr
    );
}

#[test]
fn hundreds_of_threads_under_checked_jni() {
    let dir = temp_dir("many");
    let run = run_java_with(
        &dir,
        &["-Xcheck:jni"],
        "sampling,interval=1ms,ended=keep,file=many.xml",
        "profrj.harness.ManyThreads",
        &["300"],
    );
    run.assert_success();
    let warnings: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.contains("WARNING") || l.contains("FATAL"))
        .collect();
    assert!(warnings.is_empty(), "checked JNI complained: {warnings:?}");
    let xml = read_snapshot(&dir.join("many.xml"));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    for i in 0..300 {
        let t = threads(&doc, "sampler", &format!("many-{i}"));
        assert_eq!(t.len(), 1, "many-{i}");
        assert_eq!(t[0].attribute("isAlive"), Some("false"));
    }
}

/// A panic inside a JVM callback (injected) is caught at the FFI boundary: the
/// JVM runs on, the failure is reported once, and the snapshot is still written.
#[test]
fn a_panic_in_a_callback_never_reaches_the_jvm() {
    for (callback, thread_in_snapshot) in [("ThreadStart", "burner"), ("sampler thread", "main")] {
        let dir = temp_dir(&format!("panic-{}", callback.replace(' ', "-")));
        let output = std::process::Command::new(java())
            .current_dir(&dir)
            .env("PROFRJ_INJECT_PANIC", callback)
            .arg(format!("-agentpath:{}=file=p.xml", agent().display()))
            .args(["-cp", harness_classes(), "profrj.harness.CpuSplit", "300"])
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{callback}: JVM failed: {stderr}");
        assert!(String::from_utf8_lossy(&output.stdout).contains("burner-cpu-ns="));
        assert!(
            stderr.contains(&format!("fault injected into {callback}")),
            "{stderr}"
        );
        let reported = format!("internal error in {callback}");
        assert_eq!(
            stderr.matches(&reported).count(),
            1,
            "reported once: {stderr}"
        );
        let xml = read_snapshot(&dir.join("p.xml"));
        let doc = roxmltree::Document::parse(&xml).unwrap();
        assert!(
            !threads(&doc, "sampler", thread_in_snapshot).is_empty(),
            "{callback}: {thread_in_snapshot} missing"
        );
    }
}

/// A program alternating A and B in 5 ms slots locked to the clock: a sampler
/// firing at a fixed 10 ms rate would see only one of them. Each sample lands
/// at a random point of its interval, so both show, about half each (within
/// four standard deviations of the samples: see `common::shares`) — on a
/// loaded machine, within the kernel tick's bias besides: the program's
/// thread then runs from ticks, where its samples are taken, and ticks fall
/// on a few points of the 10 ms cycle (`tick_bias_points`: at HZ=250, 40%
/// or 60% is the truth; a load-10 run saw 35.2% of 213 samples). A sampler
/// in lockstep would still see 0% or 100%.
#[test]
fn periodic_work_is_not_aliased() {
    let dir = temp_dir("periodic");
    let run = run_java(
        &dir,
        "sampling,file=p.xml",
        "profrj.harness.Periodic",
        &["3000"],
    );
    run.assert_success();
    let xml = read_snapshot(&dir.join("p.xml"));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let main = one_thread(&doc, "main");
    let a = sum_attr(
        &find_nodes(main, "profrj.harness.Periodic.phaseA()"),
        "cumulated",
    );
    let b = sum_attr(
        &find_nodes(main, "profrj.harness.Periodic.phaseB()"),
        "cumulated",
    );
    assert!(a + b > 100, "too few samples: {a} + {b}");
    let share = a as f64 * 100.0 / (a + b) as f64;
    // ~300 samples on an idle machine: 12 points is 4 standard deviations.
    let tolerance = share_tolerance(50.0, (a + b) as f64, &run.stderr, 12.0) + tick_bias_points();
    eprintln!(
        "phase A share {share:.1}% of {} samples (expected 50% ± {tolerance:.1})",
        a + b
    );
    // A sampler in lockstep with the slots would see 0% or 100%.
    assert!(
        (share - 50.0).abs() <= tolerance.min(45.0),
        "phase A share {share:.1}% (A {a}, B {b}), expected 50% ± {tolerance:.1}"
    );
}
