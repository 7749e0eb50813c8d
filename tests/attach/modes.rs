//! Modes started by an attach: alloc beside sampling, the instrumenting
//! modes (profile, coverage, memory and its stamps, trace) on the classes
//! already loaded, and every mode starting again after any other.

use crate::common::*;
use crate::target::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// `alloc` through attach, beside `sampling` (`start,alloc`): a dump holds both
/// sections, and the allocation sites split as AllocSites builds them (bigSite
/// 74.9% of the two sites' bytes, ±5 points).
#[test]
fn attached_alloc_beside_sampling_finds_the_sites() {
    let mut t = Target::start_main("attach-alloc", &[], "profrj.harness.AllocTarget");
    let pid = t.pid.to_string();
    let snap = t.path("a.xml");
    let opts = format!("start,sampling,alloc=64k,file={}", snap.display());
    let (code, out) = profrj_run(&["attach", &pid, &opts]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("alloc"), "{out}");
    std::thread::sleep(Duration::from_millis(1500));
    let (code, out) = profrj_run(&["dump", &pid]);
    assert_eq!(code, 0, "{out}");
    let xml = wait_snapshot_any(&snap);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let sections: Vec<&str> = doc
        .root_element()
        .children()
        .filter(|n| n.is_element())
        .map(|n| n.tag_name().name())
        .collect();
    assert_eq!(sections, ["sampler", "alloc"]);
    let bytes = |site: &str| -> f64 {
        doc.descendants()
            .filter(|n| {
                n.attribute("class") == Some("true")
                    && n.parent().and_then(|p| p.attribute("name")) == Some(site)
            })
            .map(|n| attr_u64(n, "bytes") as f64)
            .sum()
    };
    let big = bytes("profrj.harness.AllocSites.bigSite()");
    let small = bytes("profrj.harness.AllocSites.smallSite()");
    let share = 100.0 * big / (big + small);
    assert!(
        (share - 74.9).abs() <= 5.0,
        "bigSite {share:.1}% ({big} / {small})"
    );
    t.finish();
}

/// Instrumenting modes started in a running JVM: the classes already loaded
/// are retransformed, so their next calls are counted (profile), their lines
/// too (coverage), and the memory section is written (after the GC it forces).
#[test]
fn late_attach_instruments_loaded_classes() {
    let mut t = Target::start("late-instrument", &[]);
    let pid = t.pid.to_string();
    let snap = t.path("late.xml");
    let opts = format!("profile,coverage,memory,file={}", snap.display());
    let (code, out) = profrj_run(&["attach", &pid, &opts]);
    assert_eq!(code, 0, "{out}");
    // The instrumenting modes, in the registry's order.
    assert!(out.contains("profile+memory+coverage"), "{out}");
    std::thread::sleep(Duration::from_millis(500));
    let (code, out) = profrj_run(&["dump", &pid]);
    assert_eq!(code, 0, "{out}");
    let xml = read_snapshot(&snap);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let main = threads(&doc, "profile", "main");
    assert_eq!(main.len(), 1, "main in <profile>");
    let calls = sum_attr(
        &find_nodes(main[0], "profrj.harness.CpuSplit.heavy()"),
        "count",
    );
    assert!(calls > 0, "heavy() calls after the attach");
    let heavy = doc
        .descendants()
        .filter(|n| {
            n.has_tag_name("class") && n.attribute("name") == Some("profrj.harness.CpuSplit")
        })
        .flat_map(|c| c.children())
        .find(|m| m.has_tag_name("method") && m.attribute("name") == Some("heavy"))
        .expect("CpuSplit.heavy in <coverage>");
    assert!(attr_u64(heavy, "count") > 0);
    assert!(doc
        .root_element()
        .children()
        .any(|c| c.has_tag_name("memory")));
    let stderr = t.finish();
    assert!(!stderr.contains("uninstrumented"), "{stderr}");
}

/// `memory` attached to a running JVM: a class loaded before cannot get a
/// stamp field (a weak reference per object), one loaded after does, and so
/// does a later subclass of an earlier class (it declares its own). Exact
/// counts either way. A later session retransforms the stamped classes
/// (another mode's probes): they keep their field, or the VM would refuse.
#[test]
fn attached_memory_stamps_classes_loaded_after_it() {
    let mut t = Target::start_main("late-stamps", &[], "profrj.harness.LateClasses");
    let pid = t.pid.to_string();
    let snap = t.path("m.xml");
    let opts = format!("memory,file={}", snap.display());
    let (code, out) = profrj_run(&["attach", &pid, &opts]);
    assert_eq!(code, 0, "{out}");
    std::fs::write(t.path("go"), b"").unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !t.path("made").exists() {
        assert!(Instant::now() < deadline, "the objects were not made");
        std::thread::sleep(Duration::from_millis(20));
    }
    let (code, out) = profrj_run(&["stop", &pid]);
    assert_eq!(code, 0, "{out}");
    let xml = wait_snapshot_any(&snap);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let row = |class: &str| {
        let main = threads(&doc, "memory", "main");
        let r = main[0]
            .children()
            .find(|r| r.attribute("class") == Some(class))
            .unwrap_or_else(|| panic!("no {class} row: {xml}"));
        (attr_u64(r, "count"), attr_u64(r, "max"))
    };
    let k = "profrj.harness.LateClasses$";
    assert_eq!(row(&format!("{k}Before")), (70, 70));
    assert_eq!(row(&format!("{k}After")), (30, 30));
    assert_eq!(row(&format!("{k}AfterChild")), (20, 20));
    let opts = format!("profile,file={}", t.path("p.xml").display());
    let (code, out) = profrj_run(&["attach", &pid, &opts]);
    assert_eq!(code, 0, "{out}");
    let stderr = t.finish();
    assert!(stderr.contains("2 classes given a stamp field"), "{stderr}");
    assert!(!stderr.contains("cannot retransform"), "{stderr}");
    assert!(!stderr.contains("uninstrumented"), "{stderr}");
}

/// `trace` started in a running JVM: the loaded classes are retransformed
/// with its probes, and a dump ends the first trace file, a whole document
/// with the calls made since (a call entered before the attach leaves no
/// exit).
#[test]
fn attached_trace_writes_a_document_at_a_dump() {
    let mut t = Target::start("attach-trace", &[]);
    let pid = t.pid.to_string();
    let template = t.path("t-%n.xml");
    let opts = format!(
        "trace={},file={}",
        template.display(),
        t.path("s.xml").display()
    );
    let (code, out) = profrj_run(&["attach", &pid, &opts]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("trace"), "{out}");
    std::thread::sleep(Duration::from_millis(700));
    let (code, out) = profrj_run(&["dump", &pid]);
    assert_eq!(code, 0, "{out}");
    let text = std::fs::read_to_string(t.path("t-1.xml")).expect("the first trace file");
    let doc = roxmltree::Document::parse(&text).expect("a whole XML document");
    assert_eq!(doc.root_element().tag_name().name(), "TRACE");
    let heavy = doc
        .descendants()
        .find(|n| n.has_tag_name("methodDef") && n.attribute("name") == Some("heavy"))
        .and_then(|n| n.attribute("methodId"))
        .expect("CpuSplit.heavy defined");
    let of = |name: &str| {
        doc.descendants()
            .filter(|n| n.has_tag_name(name) && n.attribute("methodIdRef") == Some(heavy))
            .filter_map(|n| n.attribute("ticket"))
            .collect::<Vec<_>>()
    };
    let (entries, exits) = (of("methodEntry"), of("methodExit"));
    assert!(!entries.is_empty(), "heavy() calls after the attach");
    assert!(
        exits.iter().all(|x| entries.contains(x)),
        "every exit has its entry"
    );
    let stderr = t.finish();
    assert!(!stderr.contains("uninstrumented"), "{stderr}");
}

/// The elements below `n` whose `attr` is `value`.
fn named<'a, 'i>(
    n: roxmltree::Node<'a, 'i>,
    attr: &str,
    value: &str,
) -> Vec<roxmltree::Node<'a, 'i>> {
    n.descendants()
        .filter(|d| d.attribute(attr) == Some(value))
        .collect()
}

/// What each mode's section must hold from EveryMode for the rotation: real
/// data, not just the element. `snap` is the dump's text, `trace` the trace
/// file a dump of a `trace` session ended.
fn assert_mode_data(mode: &str, snap: &str, trace: Option<&Path>) {
    let doc = roxmltree::Document::parse(snap).unwrap();
    let section = |tag: &str| {
        doc.root_element()
            .children()
            .find(|n| n.has_tag_name(tag))
            .unwrap_or_else(|| panic!("{mode}: no <{tag}> section"))
    };
    match mode {
        "sampling" => {
            let main = threads(&doc, "sampler", "main");
            assert!(!find_nodes(main[0], HOT).is_empty(), "{mode}: {HOT}");
        }
        "profile" => {
            let main = threads(&doc, "profile", "main");
            assert!(sum_attr(&find_nodes(main[0], HOT), "count") > 0, "{mode}");
        }
        "memory" => {
            let kept = named(section("memory"), "class", "profrj.harness.EveryMode$Kept");
            assert!(sum_attr(&kept, "count") > 0, "{mode}: Kept alive");
        }
        "coverage" => {
            let class = named(section("coverage"), "name", "profrj.harness.CpuSplit");
            let heavy = class[0]
                .children()
                .find(|m| m.attribute("name") == Some("heavy"))
                .expect("coverage: CpuSplit.heavy");
            assert!(attr_u64(heavy, "count") > 0, "{mode}: heavy() ran");
        }
        "alloc" => {
            let bytes = named(section("alloc"), "name", "byte[]");
            assert!(sum_attr(&bytes, "bytes") > 0, "{mode}: byte[] sampled");
        }
        // alloc's option: a dump while the program runs keeps its own GC.
        "live" => assert_eq!(section("alloc").attribute("liveRule"), Some("gc")),
        "lock" => {
            let gate = named(section("lock"), "name", "profrj.harness.EveryMode$Gate");
            assert!(sum_attr(&gate, "count") > 0, "{mode}: waits on the Gate");
        }
        "trace" => {
            let path = trace.expect("a trace file");
            let text = std::fs::read_to_string(path)
                .unwrap_or_else(|e| panic!("{mode}: {}: {e}", path.display()));
            let doc = roxmltree::Document::parse(&text).expect("a whole trace document");
            assert!(
                doc.descendants()
                    .any(|n| n.has_tag_name("methodDef") && n.attribute("name") == Some("heavy")),
                "{mode}: heavy() traced"
            );
            assert!(
                doc.descendants().any(|n| n.has_tag_name("methodEntry")),
                "{mode}: calls traced"
            );
        }
        _ => unreachable!("{mode}"),
    }
}

/// Every mode can be started, stopped and started again on one JVM, in any
/// order and together, after the agent was loaded at start-up with
/// `sampling` (issue 29, item 5: `alloc` failed with
/// JVMTI_ERROR_MUST_POSSESS_CAPABILITY after any other session). Each
/// session's dump holds its modes' sections with data.
#[test]
fn every_mode_starts_again_after_any_other() {
    let snap0 = temp_dir("rotation-startup").join("s0.xml");
    let startup = format!(
        "-agentpath:{}=sampling,file={}",
        agent().display(),
        snap0.display()
    );
    let mut t = Target::start_main("rotation", &[&startup], "profrj.harness.EveryMode");
    let pid = t.pid.to_string();
    std::thread::sleep(Duration::from_millis(300));
    let (code, out) = profrj_run(&["stop", &pid]);
    assert_eq!(code, 0, "{out}");
    assert_mode_data("sampling", &wait_snapshot_any(&snap0), None);
    const ALL: [&str; 7] = [
        "sampling", "profile", "memory", "coverage", "alloc", "lock", "trace",
    ];
    let mut sessions: Vec<Vec<&str>> = ALL.iter().map(|m| vec![*m]).collect();
    sessions.extend(ALL.iter().rev().map(|m| vec![*m]));
    sessions.extend([
        vec!["alloc", "lock", "sampling"],
        vec!["profile", "coverage", "memory", "alloc"],
        vec!["trace", "memory", "lock"],
        vec!["alloc", "live"],
    ]);
    for (n, modes) in sessions.iter().enumerate() {
        let trace = t.path(&format!("t{n}.xml"));
        let mut opts = format!("start,{}", modes.join(","));
        opts = opts
            .replace("alloc", "alloc=64k")
            .replace("lock", "lock=100us");
        if modes.contains(&"trace") {
            opts = opts.replace("trace", &format!("trace={}", trace.display()));
        }
        opts += &format!(",file={}", t.path(&format!("s{n}-%n.xml")).display());
        let (code, out) = profrj_run(&["attach", &pid, &opts]);
        assert_eq!(code, 0, "session {n} {modes:?}: {out}");
        // Dumps every half second until each mode has its data (on a loaded
        // machine the contenders may not meet in the first half second: a
        // CI run's `lock` had no wait on the Gate); the last try asserts.
        const TRIES: usize = 10;
        for attempt in 0..TRIES {
            std::thread::sleep(Duration::from_millis(500));
            let dump = t.path(&format!("d{n}-{attempt}.xml"));
            let (code, out) = profrj_run(&["dump", &pid, "--file", &dump.display().to_string()]);
            assert_eq!(code, 0, "session {n} {modes:?}: {out}");
            let xml = wait_snapshot_any(&dump);
            // The trace's files are numbered in the JVM, across sessions:
            // this session's first is `t{n}.xml.K`.
            let traces: Vec<PathBuf> = std::fs::read_dir(&t.dir)
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.to_string_lossy().starts_with(&*trace.to_string_lossy()))
                .collect();
            let check = || {
                for mode in modes {
                    assert_mode_data(mode, &xml, traces.first().map(PathBuf::as_path));
                }
            };
            if attempt + 1 == TRIES {
                check();
            } else if std::panic::catch_unwind(check).is_ok() {
                break;
            }
        }
        let (code, out) = profrj_run(&["stop", &pid]);
        assert_eq!(code, 0, "session {n} {modes:?}: {out}");
    }
    let stderr = t.finish();
    assert!(!stderr.contains("uninstrumented"), "{stderr}");
    assert!(!stderr.contains("profrj: error"), "{stderr}");
}
