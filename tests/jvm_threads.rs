//! `jvmthreads`: the JVM's own threads sampled beside the Java threads, on
//! real JVMs, against a harness program that measures its GC workers' CPU
//! time itself (the kernel's per-thread clock): under `event=cpu` the
//! workers' samples are that CPU time in intervals; the compiler threads and
//! the VM thread are there with their kinds; no Java thread is taken for
//! one of the JVM's; `event=wall` leaves them out unless asked; the readers
//! (report, collapsed) show their samples.

mod common;

use common::*;

/// The `event=cpu` interval of these runs.
const INTERVAL_NS: u64 = 5_000_000;
const CPU_OPTIONS: &str = "sampling,event=cpu,interval=5ms,file=g.xml";

/// Parallel GC with exactly two workers, both made at start.
const PARALLEL_2: [&str; 4] = [
    "-XX:+UseParallelGC",
    "-XX:ParallelGCThreads=2",
    "-XX:-UseDynamicNumberOfGCThreads",
    "-Xmx128m",
];

/// GcThreads run under `options`, and its snapshot `g.xml`.
/// `timers`: the program waits for the agent's CPU timers on its GC
/// workers before it measures (`event=cpu` only).
fn gc_run(dir_name: &str, options: &str, timers: bool) -> (Run, String) {
    let dir = temp_dir(dir_name);
    let args: &[&str] = if timers {
        &["1500000", "timers"]
    } else {
        &["1500000"]
    };
    let run = run_java_with(&dir, &PARALLEL_2, options, "profrj.harness.GcThreads", args);
    run.assert_success();
    let xml = read_snapshot(&dir.join("g.xml"));
    (run, xml)
}

/// The sampler's `<thread>`s with `jvmThread`, as (name, kind, node).
fn jvm_threads<'a, 'i>(
    doc: &'a roxmltree::Document<'i>,
) -> Vec<(String, String, roxmltree::Node<'a, 'i>)> {
    sampler_threads(doc)
        .filter_map(|t| {
            let kind = t.attribute("jvmThread")?;
            Some((t.attribute("name").unwrap().to_owned(), kind.to_owned(), t))
        })
        .collect()
}

fn sampler_threads<'a, 'i>(
    doc: &'a roxmltree::Document<'i>,
) -> impl Iterator<Item = roxmltree::Node<'a, 'i>> {
    doc.root_element()
        .children()
        .filter(|s| s.has_tag_name("sampler"))
        .flat_map(|s| s.children())
        .filter(|t| t.has_tag_name("thread"))
}

/// A line `key VALUE…` of the program's output: its words after the key.
fn line<'a>(stdout: &'a str, key: &str) -> Vec<&'a str> {
    let l = stdout
        .lines()
        .find(|l| l.starts_with(&format!("{key} ")))
        .unwrap_or_else(|| panic!("no `{key}` line in:\n{stdout}"));
    l.split(' ').skip(1).collect()
}

/// The GC workers' samples are their CPU time in intervals. The program
/// reads its two workers' CPU (/proc/self/task/TID/schedstat, the kernel's
/// sum_exec_runtime) once the agent's timer on each is armed (it waits for
/// them in /proc/self/timers) and after churning; those timers fire on the
/// same clock, one signal per 5 ms of it (overruns counted), so the samples
/// are exact but for each worker's last unfinished interval and a signal
/// the kernel notices a tick late: 2 intervals per worker either way, plus
/// 5% for what no bound covers. CPU clocks count CPU, not wall time, so a
/// loaded machine changes neither side. Every sample is a hit and sits on
/// the `[jvm_gc]` root frame; the compiler threads and the VM thread are
/// there with their kinds, no JVM thread with more samples than its CPU;
/// no Java thread is among the JVM's.
#[test]
fn gc_workers_samples_are_their_cpu_time_and_every_kind_is_named() {
    let (run, xml) = gc_run("gc-cpu", CPU_OPTIONS, true);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let workers: u64 = line(&run.stdout, "gc-threads")[0].parse().unwrap();
    let gc_cpu: u64 = line(&run.stdout, "gc-cpu-ns")[0].parse().unwrap();
    assert_eq!(workers, 2, "{}", run.stdout);
    let jvm = jvm_threads(&doc);
    let gc: Vec<_> = jvm.iter().filter(|(_, k, _)| k == "gc").collect();
    let names: Vec<&str> = gc.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(
        gc.len(),
        2,
        "Parallel GC's two workers, no other GC thread: {names:?}"
    );
    for (name, _, t) in &gc {
        assert!(
            name.starts_with("GC Thread#") || name.starts_with("ParGC Thread#"),
            "{name}"
        );
        let samples = attr_u64(*t, "cumulatedElapsed");
        assert_eq!(
            attr_u64(*t, "cumulated"),
            samples,
            "{name}: every cpu sample is a hit"
        );
        let root = sum_attr(&find_nodes(*t, "[jvm_gc]"), "cumulatedElapsed");
        assert_eq!(root, samples, "{name}: every sample on [jvm_gc]");
        assert_eq!(
            t.children().filter(|c| c.is_element()).count(),
            1,
            "{name}: one root frame"
        );
    }
    let samples: u64 = gc
        .iter()
        .map(|(_, _, t)| attr_u64(*t, "cumulatedElapsed"))
        .sum();
    let sampled_ns = samples * INTERVAL_NS;
    let slack = 2 * workers * INTERVAL_NS + gc_cpu / 20;
    eprintln!(
        "GC workers: {samples} samples = {} ms sampled, {} ms of CPU measured (± {} ms)",
        sampled_ns / 1_000_000,
        gc_cpu / 1_000_000,
        slack / 1_000_000
    );
    assert!(
        gc_cpu > 200 * INTERVAL_NS,
        "too little GC to measure: {gc_cpu} ns"
    );
    assert!(
        sampled_ns.abs_diff(gc_cpu) <= slack,
        "GC workers sampled {sampled_ns} ns, measured {gc_cpu} ns"
    );
    // Their share of every sample, beside their share of the CPU those
    // samples stand for (the JVM's threads and the Java threads).
    let all: u64 = sampler_threads(&doc)
        .map(|t| attr_u64(t, "cumulatedElapsed"))
        .sum();
    eprintln!(
        "GC share of samples: {:.1}%",
        100.0 * samples as f64 / all as f64
    );

    let compiler: Vec<_> = jvm.iter().filter(|(_, k, _)| k == "compiler").collect();
    assert!(
        compiler
            .iter()
            .any(|(n, _, _)| n == "C2 CompilerThre" || n == "C1 CompilerThre"),
        "a JIT compiler thread named as such: {jvm:?}"
    );
    // No JVM thread has more samples than the CPU it used (its cpuTime,
    // read at the snapshot from the same clock, counts from its start).
    for (name, _, t) in &jvm {
        let sampled = attr_u64(*t, "cumulatedElapsed") * INTERVAL_NS;
        let cpu = attr_u64(*t, "cpuTime");
        assert!(
            sampled <= cpu + 2 * INTERVAL_NS,
            "{name}: sampled {sampled} ns, used {cpu} ns"
        );
    }
    let vm: Vec<_> = jvm.iter().filter(|(_, k, _)| k == "vm").collect();
    assert_eq!(vm.len(), 1, "one VM thread");
    assert_eq!(vm[0].0, "VM Thread");

    // No Java thread is taken for one of the JVM's (its OS name is its Java
    // name cut to 15 bytes), and the Java thread main keeps its samples.
    let java: Vec<String> = sampler_threads(&doc)
        .filter(|t| t.attribute("jvmThread").is_none())
        .map(|t| t.attribute("name").unwrap().to_owned())
        .collect();
    for (name, _, _) in &jvm {
        assert!(
            !name.starts_with("profrj "),
            "the agent's own thread {name}"
        );
        assert!(
            !java.iter().any(|j| j.starts_with(name.as_str())),
            "{name} is a Java thread too ({java:?})"
        );
    }
    let main = threads(&doc, "sampler", "main");
    assert_eq!(main.len(), 1);
    assert!(
        sum_attr(
            &find_nodes(main[0], "profrj.harness.GcThreads.churn()"),
            "cumulated"
        ) > 0,
        "main's own samples"
    );
    assert!(run.stderr.contains("the JVM's threads: "), "{}", run.stderr);

    // The readers: `report` ranks [jvm_gc] with its samples, collapsed
    // stacks carry it as a one-frame stack.
    let dir = temp_dir("gc-cpu-readers");
    let snapshot = dir.join("g.xml");
    std::fs::write(&snapshot, &xml).unwrap();
    let (code, out) = profrj_run(&["report", snapshot.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let gc_row = out
        .lines()
        .find(|l| l.ends_with(" [jvm_gc]"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        gc_row.split_whitespace().any(|w| w == samples.to_string()),
        "{gc_row}"
    );
    let collapsed = dir.join("c.txt");
    let (code, out) = profrj_run(&[
        "convert",
        "--to",
        "collapsed",
        snapshot.to_str().unwrap(),
        "-o",
        collapsed.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    let text = std::fs::read_to_string(&collapsed).unwrap();
    merged_twice_keeps_the_kinds(&dir, &snapshot, samples);
    let in_collapsed: u64 = (text.lines())
        .filter_map(|l| l.strip_prefix("[jvm_gc] "))
        .map(|n| n.parse::<u64>().unwrap())
        .sum();
    assert_eq!(in_collapsed, samples, "{text}");
}

/// `event=wall` leaves the JVM's threads out by default; `jvmthreads=on`
/// counts each in every tick (a hit when its CPU moved), so none has more
/// samples than main (found after it; but for main's last request, which
/// the end of sampling may leave unanswered), the VM thread has hits (it
/// ran the collections' safepoints) and the launcher's waiting thread none;
/// and
/// `jvmthreads=off` leaves them out of `event=cpu`.
#[test]
fn wall_leaves_them_out_unless_asked_and_counts_them_per_tick_when_asked() {
    let (_, xml) = gc_run("gc-wall-default", "sampling,interval=5ms,file=g.xml", false);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert!(jvm_threads(&doc).is_empty(), "event=wall: off by default");

    let (_, xml) = gc_run(
        "gc-cpu-off",
        &format!("{CPU_OPTIONS},jvmthreads=off"),
        false,
    );
    let doc = roxmltree::Document::parse(&xml).unwrap();
    assert!(jvm_threads(&doc).is_empty(), "jvmthreads=off");

    let (_, xml) = gc_run(
        "gc-wall-on",
        "sampling,interval=5ms,jvmthreads=on,file=g.xml",
        false,
    );
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let main = attr_u64(threads(&doc, "sampler", "main")[0], "cumulatedElapsed");
    let jvm = jvm_threads(&doc);
    assert!(jvm.iter().any(|(_, k, _)| k == "gc"), "{jvm:?}");
    let vm = jvm
        .iter()
        .find(|(_, k, _)| k == "vm")
        .expect("the VM thread");
    for (name, k, t) in &jvm {
        let (hits, all) = (attr_u64(*t, "cumulated"), attr_u64(*t, "cumulatedElapsed"));
        // Found at start: sampled at every tick since (a compiler thread
        // may start late, and have none yet).
        let early = k == "gc" || k == "vm";
        assert!(
            hits <= all && all <= main + 2 && (all > 0 || !early),
            "{name}: {hits} hits, {all} samples, main {main}"
        );
    }
    assert!(
        attr_u64(vm.2, "cumulated") > 0,
        "the VM thread ran (safepoints)"
    );
    // The launcher's first thread waits in pthread_join for the whole run:
    // no hit (the signals asking for its samples must not make it look busy).
    let launcher = jvm
        .iter()
        .find(|(n, _, _)| n == "java")
        .expect("the launcher's thread");
    assert!(attr_u64(launcher.2, "cumulated") <= 1, "{:?}", launcher.2);
}

/// `merge` of a snapshot with itself: each JVM thread once, its kind kept,
/// its samples doubled; a `jvmThread` outside the format's words is one
/// clear error.
fn merged_twice_keeps_the_kinds(
    dir: &std::path::Path,
    snapshot: &std::path::Path,
    gc_samples: u64,
) {
    let merged = dir.join("m.xml");
    let s = snapshot.to_str().unwrap();
    let (code, out) = profrj_run(&["merge", s, s, "-o", merged.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}");
    let xml = read_snapshot(&merged);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let gc: Vec<_> = jvm_threads(&doc)
        .into_iter()
        .filter(|(_, k, _)| k == "gc")
        .collect();
    assert_eq!(gc.len(), 2, "the two workers, once each");
    let doubled: u64 = gc
        .iter()
        .map(|(_, _, t)| attr_u64(*t, "cumulatedElapsed"))
        .sum();
    assert_eq!(doubled, 2 * gc_samples);

    let original = std::fs::read_to_string(snapshot).unwrap();
    let bad = dir.join("bad.xml");
    std::fs::write(
        &bad,
        original.replacen(r#"jvmThread="gc""#, r#"jvmThread="gpu""#, 1),
    )
    .unwrap();
    let (code, out) = profrj_run(&["report", bad.to_str().unwrap()]);
    assert_ne!(code, 0, "{out}");
    assert!(
        out.contains(r#"jvmThread="gpu" is not one of gc, compiler, vm, other"#),
        "{out}"
    );
    assert!(!out.contains("panicked"), "{out}");
}

/// With `cstack=dwarf` a GC worker's samples carry its native stack under
/// `[jvm_gc]`: by construction each one runs in HotSpot's thread entry
/// (`thread_native_entry`, every JDK's os_linux.cpp) for its whole life, so
/// every sample's walk that reaches the thread's start passes through it,
/// as a libjvm frame typed `vm`. Walks cut short (a fault, a frame with no
/// rule) are allowed for a tenth.
#[test]
fn with_cstack_a_gc_workers_samples_hold_its_native_stack() {
    let (_run, xml) = gc_run(
        "jvm-threads-cstack",
        "sampling,event=cpu,interval=5ms,cstack=dwarf,file=g.xml",
        false,
    );
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let gc: Vec<_> = jvm_threads(&doc)
        .into_iter()
        .filter(|(_, kind, _)| kind == "gc")
        .collect();
    assert!(!gc.is_empty(), "no GC thread");
    let mut sampled = 0;
    for (name, _, t) in gc {
        let samples = attr_u64(t, "cumulated");
        if samples < 20 {
            continue; // a worker that barely ran says nothing
        }
        sampled += 1;
        let entry = find_nodes(t, "thread_native_entry");
        let through: u64 = sum_attr(&entry, "cumulated");
        assert!(
            through * 10 >= samples * 9,
            "{name}: {through} of {samples} samples through thread_native_entry"
        );
        for n in &entry {
            let types = n.attribute("frameTypes").unwrap_or("");
            assert!(
                types.starts_with("vm:") && !types.contains(' '),
                "{name}: thread_native_entry typed {types:?}"
            );
        }
        assert!(!xml.contains("name=\"_ZN"), "C++ names are demangled");
    }
    assert!(sampled > 0, "no GC worker ran 20 samples' worth");
}
