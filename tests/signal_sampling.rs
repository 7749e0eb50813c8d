//! The signal sampler (SIGPROF + AsyncGetCallTrace) on real JVMs, against
//! harness programs whose answer is known by construction: its rate under
//! more busy threads than cores, no safepoint bias, RUNNABLE-but-idle threads
//! without hits, `event=cpu`, and no harm to the JVM at high rates.
//! Sampling figures are checked within stated tolerances.

mod common;

use common::*;
use std::collections::HashMap;

/// The tests that measure a rate or a share run one at a time: two JVMs
/// busy at once on a 2-core machine would starve each other's samplers.
fn exclusive() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}

/// Self hits per frame name over a thread's tree.
fn self_hits(thread: roxmltree::Node) -> HashMap<String, u64> {
    let mut m = HashMap::new();
    for n in thread.descendants().filter(|n| n.has_tag_name("profile")) {
        *m.entry(n.attribute("name").unwrap().to_owned())
            .or_default() += attr_u64(n, "hits");
    }
    m
}

fn one<'a, 'i>(doc: &'a roxmltree::Document<'i>, name: &str) -> roxmltree::Node<'a, 'i> {
    let t = threads(doc, "sampler", name);
    assert_eq!(t.len(), 1, "expected one thread {name}");
    t[0]
}

/// 16 busy threads on a 2-core machine: each one is counted in ≥ 90% of the
/// 10 ms samples its lifetime calls for, with a real stack (in its own code,
/// not a synthetic frame) in ≥ 90% (less what a delayed sampler cannot make up for at its
/// end); a thread blocked in accept() (RUNNABLE to Java) has no hit.
#[test]
fn sixteen_busy_threads_each_get_their_samples_and_an_idle_acceptor_no_hit() {
    let _one_at_a_time = exclusive();
    let dir = temp_dir("busy16");
    let run = run_java_with(
        &dir,
        &["-Dbusy.dump"],
        "sampling,interval=10ms,file=b-%n.xml",
        "profrj.harness.BusyThreads",
        &["16", "3000"],
    );
    run.assert_success();
    let xml = read_snapshot(&dir.join("b-2.xml"));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    // A loaded machine delays the sampler; a late tick makes up for the
    // intervals it missed (`made_up`, at most `largest` at once), for the
    // threads still alive: a thread that ends during such a delay loses up to
    // `largest` + 1 of its last intervals. A delay over a second is taken
    // for a stopped JVM and not made up (`paused`).
    let ticks = sampler_ticks(&run.stderr);
    let made_up = ticks.made_up;
    let lost = ticks.largest + 1.0 + ticks.paused;
    for line in run.stdout.lines() {
        let (name, lived) = line.split_once(" lived-ns=").expect("busy line");
        let expected = lived.parse::<f64>().unwrap() / 10e6;
        let t = one(&doc, name);
        let counted = attr_u64(t, "cumulatedElapsed") as f64;
        // A real stack is one in the thread's own code: its body or spin()
        // below it. Not spin() alone: where C2 inlines spin() into the body's
        // loop, the JIT's debug information gives some of spin()'s
        // instructions the body's scope (JDK 11 under load: up to 13% of a
        // thread's samples in the body, none of them synthetic).
        let stacked = sum_attr(
            &find_nodes(t, "profrj.harness.BusyThreads.lambda$main$1()"),
            "cumulatedElapsed",
        ) as f64;
        let in_spin = sum_attr(
            &find_nodes(t, "profrj.harness.BusyThreads.spin()"),
            "cumulatedElapsed",
        );
        eprintln!(
            "{name}: {counted} samples ({stacked} in its body, {in_spin} in spin, {} hits) of {expected:.0} called for",
            attr_u64(t, "cumulated")
        );
        assert!(
            counted >= 0.9 * expected - lost,
            "{name}: {counted} of {expected:.0} ({lost} may be lost to a delayed sampler)"
        );
        // The agent counts the thread from ThreadStart to ThreadEnd, longer
        // than the thread's own measure inside run() (on 2 loaded cores a
        // started thread can wait 100 ms before it runs): never more than
        // one sample per interval of the life the snapshot gives it, but for
        // the intervals late ticks made up for (the first one after a thread
        // starts may stand for slots from before).
        let life = attr_u64(t, "elapsedTime") as f64 / 10e6;
        assert!(
            counted <= life.ceil() + 2.0 + made_up,
            "{name}: {counted} samples in {life:.1} intervals of its life ({made_up} made up in all)"
        );
        assert!(
            stacked >= 0.9 * expected - lost,
            "{name}: {stacked} with a stack in its body of {expected:.0}"
        );
    }
    let acceptor = one(&doc, "acceptor");
    // A signal into accept() would break it on JDK 11 (EINTR read as a time-out).
    assert_eq!(
        acceptor.attribute("isAlive"),
        Some("true"),
        "accept() still waits"
    );
    // Between a snapshot taken once it waits in accept() and the last one,
    // it earns no hit: it never runs. (Before, while it started, it did run.)
    let early = read_snapshot(&dir.join("b-1.xml"));
    let early = roxmltree::Document::parse(&early).unwrap();
    let before = one(&early, "acceptor");
    assert_eq!(
        attr_u64(acceptor, "cumulated"),
        attr_u64(before, "cumulated"),
        "the waiting acceptor earned a hit"
    );
    assert!(
        attr_u64(acceptor, "cumulatedElapsed") >= attr_u64(before, "cumulatedElapsed") + 250,
        "the acceptor is counted while it waits"
    );
    assert!(
        attr_u64(acceptor, "cumulatedElapsed") > 250,
        "the acceptor is still counted"
    );
    assert!(
        acceptor
            .descendants()
            .any(|n| n.attribute("name").is_some_and(|s| s.contains("accept"))),
        "the acceptor's stack shows accept()"
    );
    assert!(
        run.stderr
            .contains("stacks from SIGPROF + AsyncGetCallTrace"),
        "{}",
        run.stderr
    );
}

/// A helper the JIT inlines into a loop, with no safepoint poll of its own,
/// holds 80% of the CPU by construction: signal stacks show it within ±8
/// points (or four standard deviations of the samples, if more). Sampled on
/// main's own CPU time (`event=cpu`), which that 80% is a share of: a
/// wall-clock sample on a loaded machine sees main where it was last
/// descheduled, so its samples are neither independent nor of CPU time.
#[test]
fn an_inlined_helper_gets_its_share() {
    let _one_at_a_time = exclusive();
    let dir = temp_dir("inlined");
    let run = run_java(
        &dir,
        "sampling,event=cpu,interval=5ms,file=i.xml",
        "profrj.harness.InlinedHelper",
        &["4000"],
    );
    run.assert_success();
    let xml = read_snapshot(&dir.join("i.xml"));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let hits = self_hits(one(&doc, "main"));
    let helper = hits
        .get("profrj.harness.InlinedHelper.helper()")
        .copied()
        .unwrap_or(0) as f64;
    let looping = hits
        .get("profrj.harness.InlinedHelper.run()")
        .copied()
        .unwrap_or(0) as f64;
    let share = 100.0 * helper / (helper + looping);
    let tolerance = binomial_tolerance(80.0, helper + looping, 8.0);
    eprintln!(
        "helper {helper}, loop {looping}: helper share {share:.1}% (expected 80% ± {tolerance:.1})"
    );
    assert!(helper + looping > 50.0, "too few samples");
    assert!(
        (share - 80.0).abs() <= tolerance,
        "helper share {share:.1}%, expected 80% ± {tolerance:.1}"
    );
}

/// `event=cpu`: per-thread CPU timers, so each thread's samples follow its own
/// CPU time (one per 10 ms of it, within two intervals and 2%, at load too), and a
/// sleeping thread gets none.
#[test]
fn cpu_event_samples_follow_each_threads_cpu_time() {
    let _one_at_a_time = exclusive();
    let dir = temp_dir("cpuevent");
    let run = run_java(
        &dir,
        "sampling,event=cpu,interval=10ms,file=c.xml",
        "profrj.harness.CpuThreads",
        &[],
    );
    run.assert_success();
    let xml = read_snapshot(&dir.join("c.xml"));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    for name in ["cpu-1", "cpu-2", "cpu-3"] {
        let t = one(&doc, name);
        let samples = attr_u64(t, "cumulatedElapsed") as f64;
        let expected = attr_u64(t, "cpuTime") as f64 / 10e6;
        eprintln!("{name}: {samples} samples for {expected:.1} intervals of CPU");
        // Exact to what a thread runs before its ThreadStart and the
        // remainder of its last interval, however late the kernel's
        // signals come (docs/SNAPSHOT.md, `event=cpu`).
        assert!(
            (samples - expected).abs() <= 2.0 + 0.02 * expected,
            "{name}: {samples} vs {expected:.1}; the agent said: {}",
            run.stderr
        );
        assert_eq!(
            attr_u64(t, "cumulated"),
            attr_u64(t, "cumulatedElapsed"),
            "every cpu sample is a hit"
        );
        assert!(
            sum_attr(
                &find_nodes(t, "profrj.harness.BusyThreads.spin()"),
                "cumulated"
            ) as f64
                >= 0.8 * samples,
            "{name}: most CPU samples are in spin(); where they went (top frames by hits): {}",
            top_frames(t)
        );
    }
    assert_eq!(
        attr_u64(one(&doc, "idle"), "cumulatedElapsed"),
        0,
        "idle: no CPU, no sample"
    );
}

/// `stacks=jvmti` keeps the handshake sampler: still right on code whose
/// methods are not inlined (CpuSplit's 3:1, within 5 points or four
/// standard deviations of the samples: see `common::shares`).
#[test]
fn jvmti_stacks_remain_available() {
    let _one_at_a_time = exclusive();
    let dir = temp_dir("jvmtistacks");
    let run = run_java(
        &dir,
        "sampling,stacks=jvmti,interval=2ms,file=s.xml",
        "profrj.harness.CpuSplit",
        &["2000"],
    );
    run.assert_success();
    assert!(
        run.stderr.contains("stacks from JVMTI (stacks=jvmti)"),
        "{}",
        run.stderr
    );
    let xml = read_snapshot(&dir.join("s.xml"));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let main = one(&doc, "main");
    let heavy = sum_attr(
        &find_nodes(main, "profrj.harness.CpuSplit.heavy()"),
        "cumulated",
    ) as f64;
    let light = sum_attr(
        &find_nodes(main, "profrj.harness.CpuSplit.light()"),
        "cumulated",
    ) as f64;
    assert!(heavy + light > 100.0, "too few samples: {heavy} + {light}");
    let share = 100.0 * heavy / (heavy + light);
    let tolerance = share_tolerance(75.0, heavy + light, &run.stderr, 5.0);
    eprintln!("jvmti stacks: heavy {heavy} light {light}: heavy share {share:.1}% (expected 75% ± {tolerance:.1})");
    assert!(
        (share - 75.0).abs() <= tolerance,
        "heavy share {share:.1}%, expected 75% ± {tolerance:.1}"
    );
}

/// Bad values for the new options name the option and the valid values.
#[test]
fn bad_event_and_stacks_values_are_refused() {
    let dir = temp_dir("badevent");
    for (opt, valid) in [("event=heap", "wall, cpu"), ("stacks=gdb", "async, jvmti")] {
        let run = run_java(&dir, opt, "profrj.harness.Hello", &[]);
        assert!(!run.success());
        assert!(run.stderr.contains(valid), "{opt}: {}", run.stderr);
    }
    let run = run_java(&dir, "event=cpu,stacks=jvmti", "profrj.harness.Hello", &[]);
    assert!(
        run.stderr.contains("event=cpu needs stacks from signals"),
        "{}",
        run.stderr
    );
}

/// (main class, JVM flags, arguments, expected stdout lines or none).
type StressCase = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    &'static [&'static str],
);

/// The signal sampler at 100 µs under checked JNI: hundreds of short-lived
/// threads, a 9,000-frame recursion (on an 8 MB stack: the default 1 MB one
/// overflows at ~9,500 frames without any agent), recursion into
/// StackOverflowError and back, and a collector kept busy. The JVM runs to
/// the end, nothing but `profrj:` lines reach stderr, nothing at all reaches
/// stdout but the program's own lines, and the snapshots parse. Each way of
/// walking native frames (`cstack=`) in turn: they walk through the VM's
/// own code in all these cases (thread start and exit, stack banging,
/// exceptions, the collector's safepoints).
#[test]
fn high_rate_sampling_never_hurts_the_jvm() {
    let _one_at_a_time = exclusive();
    for cstack in ["no", "fp", "dwarf"] {
        high_rate_sampling_with(cstack);
    }
}

fn high_rate_sampling_with(cstack: &str) {
    let cases: [StressCase; 4] = [
        ("profrj.harness.ManyThreads", &[], &["400"], &["joined 400"]),
        (
            "profrj.harness.DeepStack",
            &["-Xss8m"],
            &["9000", "1500"],
            &[],
        ),
        (
            "profrj.harness.StackOverflowLoop",
            &[],
            &["1500"],
            &["overflows=some"],
        ),
        ("profrj.harness.AllocBench", &[], &["2", "3000000"], &[]),
    ];
    for (main, jvm_args, args, stdout_lines) in cases {
        let dir = temp_dir(&format!("rate-{main}-{cstack}"));
        let mut flags = vec!["-Xcheck:jni", "-Xmx64m"];
        flags.extend_from_slice(jvm_args);
        let run = run_java_with(
            &dir,
            &flags,
            &format!("sampling,interval=100us,cstack={cstack},file=r.xml"),
            main,
            args,
        );
        run.assert_success();
        for line in run.stderr.lines() {
            assert!(
                line.starts_with("profrj:"),
                "{main} cstack={cstack}: foreign stderr line {line:?}"
            );
        }
        if !stdout_lines.is_empty() {
            let own: Vec<&str> = run.stdout.lines().collect();
            assert_eq!(own, stdout_lines, "{main} cstack={cstack}: stdout");
        }
        assert!(!run.stdout.contains("WARNING"), "{main}: {}", run.stdout);
        let xml = read_snapshot(&dir.join("r.xml"));
        roxmltree::Document::parse(&xml).unwrap();
        assert!(run.stderr.contains("stacks from signals"), "{}", run.stderr);
        // HotSpot would warn on stdout that its SIGSEGV handler moved.
        assert!(
            run.stderr
                .contains("faults in a walk not caught under -Xcheck:jni"),
            "{}",
            run.stderr
        );
    }
}

/// A fault inside a walk ends that walk, never the JVM. Made on purpose:
/// with `PROFRJ_TEST_WALK_FAULT=4`, every 4th walk reads an unmapped page
/// just before AsyncGetCallTrace; the agent's fault handler, in front of
/// HotSpot's, resumes the thread after the walk. The program overflows its
/// stack again and again, faults HotSpot itself handles (its stack guard
/// pages): those must still reach HotSpot, or the JVM would die of them.
/// The run ends normally, a quarter of the walks count under
/// `[walk_fault]`, the rest keep their stacks.
/// With native frames walked (`cstack=`) or not.
#[test]
fn a_fault_in_a_walk_ends_the_walk_not_the_jvm() {
    let _one_at_a_time = exclusive();
    for cstack in ["no", "fp", "dwarf"] {
        a_fault_in_a_walk_with(cstack);
    }
}

fn a_fault_in_a_walk_with(cstack: &str) {
    let dir = temp_dir(&format!("walk-fault-{cstack}"));
    let run = run_java_env(
        &dir,
        &[("PROFRJ_TEST_WALK_FAULT", "4")],
        &[],
        &format!("sampling,event=cpu,interval=1ms,cstack={cstack},file=f.xml"),
        "profrj.harness.StackOverflowLoop",
        &["1500"],
    );
    run.assert_success();
    assert_eq!(run.stdout.trim(), "overflows=some");
    assert!(
        run.stderr.contains("faults in a walk caught"),
        "{}",
        run.stderr
    );
    let xml = read_snapshot(&dir.join("f.xml"));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let main = one(&doc, "main");
    let hits = self_hits(main);
    let faulted = hits.get("[walk_fault]").copied().unwrap_or(0);
    // Stacks deeper than the depth limit do not reach main(): count the
    // thread's samples that are not the faulted ones.
    let walked = attr_u64(main, "cumulated") - faulted;
    eprintln!("[walk_fault] {faulted}, walked {walked}");
    assert!(faulted > 0, "no walk faulted: {}", run.stderr);
    assert!(
        walked > faulted,
        "the other walks keep their stacks: {walked} walked, {faulted} faulted"
    );
}

/// With `profile` beside `sampling`, the probes' own frames
/// (`profrj.runtime.Probe.enter(native)`, …) never top a sampled stack: their
/// samples count in the instrumented method that called them.
/// With native frames too (`cstack=`): the probes' native code is the
/// agent's own as well.
#[test]
fn the_agents_own_frames_are_folded_into_their_callers() {
    let _one_at_a_time = exclusive();
    for cstack in ["no", "dwarf"] {
        own_frames_folded_with(cstack);
    }
}

fn own_frames_folded_with(cstack: &str) {
    let dir = temp_dir(&format!("ownframes-{cstack}"));
    let run = run_java(
        &dir,
        &format!("sampling,profile,interval=1ms,cstack={cstack},file=p.xml"),
        "profrj.harness.CpuSplit",
        &["1500"],
    );
    run.assert_success();
    let xml = read_snapshot(&dir.join("p.xml"));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let sampler = doc
        .root_element()
        .children()
        .find(|n| n.has_tag_name("sampler"))
        .expect("no <sampler>");
    let own: Vec<&str> = sampler
        .descendants()
        .filter_map(|n| n.attribute("name"))
        .filter(|n| {
            n.starts_with("profrj.runtime.")
                || n.starts_with("profrj::")
                || n.starts_with("profrj_")
        })
        .collect();
    assert!(
        own.is_empty(),
        "cstack={cstack}: agent frames in sampled stacks: {own:?}"
    );
    // Enough samples in heavy() for the check above to mean something:
    // counted whatever main's state (a hit needs main to have run since the
    // last tick, which load 10 on 2 cores makes rare: ~1 in 5).
    let main = one(&doc, "main");
    let in_heavy = sum_attr(
        &find_nodes(main, "profrj.harness.CpuSplit.heavy()"),
        "cumulatedElapsed",
    );
    assert!(
        in_heavy > 300,
        "cstack={cstack}: {in_heavy} samples in heavy()"
    );
}

/// An application that takes SIGPROF over while the agent samples with it
/// (sun.misc.Signal here; a native profiling library would do the same):
/// the agent notices at its next tick, says so, and walks stacks with JVMTI
/// from then on, so the application's handler is not run per sample.
#[test]
fn an_application_that_takes_sigprof_over_is_left_alone() {
    let _one_at_a_time = exclusive();
    let dir = temp_dir("ownsprof");
    let run = run_java(
        &dir,
        "sampling,interval=1ms,file=p.xml",
        "profrj.harness.OwnsProf",
        &["late", "1500"],
    );
    run.assert_success();
    assert!(
        run.stderr
            .contains("the application replaced profrj's SIGPROF handler; no more signals"),
        "{}",
        run.stderr
    );
    let handled: u64 = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("prof-handled="))
        .expect("prof-handled line")
        .parse()
        .unwrap();
    // A signal already on its way when the handler changed may reach it.
    assert!(
        handled <= 2,
        "the application's handler ran {handled} times"
    );
    let xml = read_snapshot(&dir.join("p.xml"));
    let doc = roxmltree::Document::parse(&xml).unwrap();
    // 2 s of spin() at 1 ms, 1.5 s of it after the handler changed: sampling
    // goes on with JVMTI. Counted by what a loaded machine cannot take away:
    // the JVMTI walks made (observations, ~1,000 at rest, 88 at load 10 on
    // JDK 11, when the sampler ticked 323 times in 2 s; a sampler thread
    // that gets no core for over a second counts that gap as a pause, not
    // as samples, so the samples' sum can fall far below 1,500 at load), and
    // spin()'s share of main's samples (every sample counts,
    // cumulatedElapsed: a hit needs main to have run since the last tick).
    let main = one(&doc, "main");
    let spin = sum_attr(
        &find_nodes(main, "profrj.harness.BusyThreads.spin()"),
        "cumulatedElapsed",
    );
    let all: u64 = main
        .attribute("cumulatedElapsed")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let jvmti_walks: u64 = run
        .stderr
        .lines()
        .find(|l| l.starts_with("profrj: sampling:"))
        .and_then(|l| {
            let head = &l[..l.find(" walked with JVMTI")?];
            head.rsplit(|c: char| !c.is_ascii_digit())
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0);
    assert!(
        jvmti_walks >= 30 && spin as f64 >= 0.5 * all as f64,
        "sampling goes on with JVMTI: {jvmti_walks} JVMTI walks (>= 30), spin() {spin} of main's {all} samples (>= 50%)\n{}",
        run.stderr
    );
}

/// The five frames with the most own hits below `t`, for failure messages.
fn top_frames(t: roxmltree::Node) -> String {
    let mut hits: std::collections::HashMap<&str, u64> = std::collections::HashMap::new();
    for n in t.descendants().filter(|n| n.has_tag_name("profile")) {
        *hits.entry(n.attribute("name").unwrap_or("?")).or_default() += attr_u64(n, "hits");
    }
    let mut v: Vec<_> = hits.into_iter().filter(|e| e.1 > 0).collect();
    v.sort_by_key(|e| std::cmp::Reverse(e.1));
    v.truncate(5);
    format!("{v:?}")
}
