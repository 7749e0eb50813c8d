//! The agent's heap dumps beyond the default: every collector, gzip and
//! every object (`--gz --all`), no agent before the command, `memory`
//! started by attach, a dump at an OutOfMemoryError, and a dump cut short
//! by the file-size limit.

use crate::common::*;
use crate::traces::{assert_allocation_traces, assert_traces_of, assert_traces_where, Check};
use crate::truth::{assert_heap_truth, MAIN};
use crate::{read_all, Truth};
use std::path::Path;
use std::process::Command;

/// `profrj heapdump PID DUMP EXTRA...`: its exit code and what it said.
fn heapdump(truth: &Truth, dump: &Path, extra: &[&str]) -> (i32, String) {
    let pid = truth.child.id().to_string();
    let mut args = vec!["heapdump", pid.as_str(), dump.to_str().unwrap()];
    args.extend_from_slice(extra);
    profrj_run(&args)
}

fn memory_agent() -> String {
    format!("-agentpath:{}=memory", agent().display())
}

/// On each collector, the dump on command: HeapTruth whole for Shark and
/// NetBeans; the stamped objects (the Leaf and Holder sites) on their
/// traces everywhere; the arrays on theirs where `memory` follows them by
/// weak reference (serial, parallel, G1), on the empty trace under ZGC and
/// Shenandoah, where it uses JVMTI tags (docs/HEAPDUMP.md).
#[test]
fn every_collector_names_what_memory_follows_there() {
    let agent = memory_agent();
    for (gc, weak) in [
        ("-XX:+UseParallelGC", true),
        ("-XX:+UseSerialGC", true),
        ("-XX:+UseZGC", false),
        ("-XX:+UseShenandoahGC", false),
    ] {
        let name = format!("heap-gc{}", gc.trim_start_matches("-XX:+Use"));
        // ZGC and Shenandoah are experimental on JDK 11.
        let truth = Truth::start(&name, &["-XX:+UnlockExperimentalVMOptions", gc, &agent]);
        let dump = truth.dir.join("h.hprof");
        let (code, said) = heapdump(&truth, &dump, &[]);
        assert_eq!(code, 0, "{gc}: profrj heapdump: {said}");
        truth.finish();
        let r = read_all(&dump);
        assert_heap_truth(&r.shark);
        assert_heap_truth(&r.netbeans);
        if weak {
            assert_allocation_traces(&r.shark, "HeapTruth");
        } else {
            assert_traces_of(&r.shark, "HeapTruth", |site| {
                matches!(site, "leaf-a" | "leaf-b" | "holder")
            });
        }
    }
}

/// `--gz --all`: a gzipped file (`.gz` added), every object, read whole
/// once gunzipped; `convert` reads the gzipped file as it is.
#[test]
fn gzipped_dumps_of_every_object_read_whole() {
    let truth = Truth::start("heap-gz-all", &[&memory_agent()]);
    let dump = truth.dir.join("h.hprof");
    let (code, said) = heapdump(&truth, &dump, &["--gz", "--all"]);
    assert_eq!(code, 0, "profrj heapdump: {said}");
    truth.finish();
    let gz = truth_path(&dump, "h.hprof.gz");
    assert!(gz.is_file() && !dump.exists(), "{said}");
    let mut plain = Vec::new();
    std::io::Read::read_to_end(
        &mut flate2::read::MultiGzDecoder::new(std::fs::File::open(&gz).unwrap()),
        &mut plain,
    )
    .unwrap();
    let unzipped = dump.with_file_name("unzipped.hprof");
    std::fs::write(&unzipped, &plain).unwrap();
    let r = read_all(&unzipped);
    // Every object, garbage too: arrays whose contents look like
    // HeapTruth's may be the JDK's garbage, on the empty trace; the
    // classes only HeapTruth makes are checked whole.
    assert_traces_where(&r.shark, "HeapTruth", |site| match site {
        "leaf-a" | "leaf-b" | "holder" | "leaves" => Check::Traced,
        _ => Check::Skip,
    });
    let text = dump.with_file_name("h.txt");
    let (code, said) = profrj_run(&[
        "convert",
        gz.to_str().unwrap(),
        "--to",
        "hprof",
        "-o",
        text.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "convert of the gzipped dump: {said}");
    let objects = std::fs::read_to_string(&text)
        .unwrap()
        .lines()
        .filter(|l| l.starts_with("OBJ ") && l.contains("HeapTruth$Leaf@"))
        .count();
    assert_eq!(objects as u64, crate::truth::N_A + crate::truth::N_B);
}

fn truth_path(dump: &Path, name: &str) -> std::path::PathBuf {
    dump.with_file_name(name)
}

/// With no agent in the JVM, `profrj heapdump` loads it for the dump alone:
/// HotSpot's dump, every object on the empty trace, HeapTruth whole.
#[test]
fn without_the_agent_the_dump_is_hotspots() {
    let truth = Truth::start("heap-no-agent", &[]);
    let dump = truth.dir.join("h.hprof");
    let (code, said) = heapdump(&truth, &dump, &[]);
    assert_eq!(code, 0, "profrj heapdump: {said}");
    assert!(said.contains("0 with their allocation site"), "{said}");
    truth.finish();
    let r = read_all(&dump);
    assert_heap_truth(&r.shark);
    assert_traces_of(&r.shark, "HeapTruth", |_| false);
}

/// `heapdumps=oom`: the first OutOfMemoryError writes a dump before it is
/// thrown, holding the whole chain, each chunk on its allocation site.
#[test]
fn an_out_of_memory_error_writes_a_dump_first() {
    let dir = temp_dir("heap-oom");
    let dump = dir.join("oom.hprof");
    let run = run_java_with(
        &dir,
        &["-Xmx48m", "-XX:+UseSerialGC"],
        &format!("memory,heapdumps=oom,heapfile={}", dump.display()),
        "profrj.harness.HeapOom",
        &[],
    );
    run.assert_success();
    let made: u64 = (run.stdout.trim().strip_prefix("made "))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("HeapOom said {:?}", run.stdout));
    assert!(
        run.stderr.contains("OutOfMemoryError: heap dump written"),
        "{}",
        run.stderr
    );
    let chunk = "profrj.harness.HeapOom$Chunk";
    let v = crate::heap_readers::shark(&dump, &[chunk]);
    let line = harness_line("HeapOom", "// SITE chunk") as i32;
    // Every chunk of the chain on its site; the one whose array ran out of
    // heap (in its constructor, so before the probe stamped it, still on
    // the thread's stack) on the empty trace.
    let (mut traced, mut unstamped) = (0u64, 0u64);
    for c in v.objects_of(chunk) {
        let t = v.trace(c.trace.expect("a trace serial"));
        match t.frames.first() {
            Some(top) => {
                assert_eq!((top.method.as_str(), top.line), ("main", line), "{t:?}");
                traced += 1;
            }
            None => unstamped += 1,
        }
    }
    assert_eq!(traced, made, "chunks on their site ({unstamped} without)");
    assert!(unstamped <= 1, "{unstamped} chunks without a trace");
}

/// A dump cut short (here by the JVM's file-size limit: HotSpot's write
/// fails, or the JVM is killed by SIGXFSZ) fails the command and leaves
/// nothing at the destination, nor the agent's private directory.
#[test]
fn a_dump_cut_short_leaves_no_file() {
    let dir = temp_dir("heap-cut");
    let dump = dir.join("h.hprof");
    // 1 MiB: HeapTruth's dump is about 3 MB.
    let mut child = Command::new("sh")
        .current_dir(&dir)
        .args(["-c", "ulimit -f 1024; exec \"$0\" \"$@\""])
        .arg(java())
        .args(["-Xmx64m", &memory_agent(), "-cp", harness_classes(), MAIN])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    await_ready(&mut child);
    let pid = child.id().to_string();
    let (code, said) = profrj_run(&["heapdump", &pid, dump.to_str().unwrap()]);
    let _ = child.kill();
    let _ = child.wait();
    assert_ne!(code, 0, "a dump past the file-size limit succeeded: {said}");
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("hprof") || n.starts_with(".profrj-"))
        .collect();
    assert!(left.is_empty(), "left behind: {left:?} ({said})");
}

/// `memory` started by attach (`profrj attach PID memory`) before the heap
/// is built, then `profrj heapdump`: every site named, as at launch.
#[test]
fn memory_started_by_attach_names_what_it_followed() {
    use std::io::{BufRead, Write};
    let dir = temp_dir("heap-attach");
    let mut child = Command::new(java())
        .current_dir(&dir)
        .args(["-Xmx64m", "-cp", harness_classes(), MAIN, "late"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "waiting");
    let pid = child.id().to_string();
    let (code, said) = profrj_run(&["attach", &pid, "memory"]);
    assert_eq!(code, 0, "profrj attach: {said}");
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "go").unwrap();
    line.clear();
    out.read_line(&mut line).unwrap();
    assert_eq!(line.trim(), "ready");
    let dump = dir.join("h.hprof");
    let (code, said) = profrj_run(&["heapdump", &pid, dump.to_str().unwrap()]);
    drop(stdin);
    let _ = child.wait();
    assert_eq!(code, 0, "profrj heapdump: {said}");
    let r = read_all(&dump);
    assert_heap_truth(&r.shark);
    assert_allocation_traces(&r.shark, "HeapTruth");
}

/// `heapdumps=snapshot`: `profrj dump` writes the snapshot and a heap dump
/// beside it, numbered (`%n`).
#[test]
fn each_snapshot_brings_a_heap_dump() {
    let dir = temp_dir("heap-with-snapshot");
    let agent = format!(
        "-agentpath:{}=memory,heapdumps=snapshot,heapfile={}/h-%n.hprof,file={}/s.xml",
        agent().display(),
        dir.display(),
        dir.display()
    );
    let truth = Truth::start("heap-with-snapshot-run", &[&agent]);
    let pid = truth.child.id().to_string();
    let (code, said) = profrj_run(&["dump", &pid]);
    assert_eq!(code, 0, "profrj dump: {said}");
    assert!(
        said.contains("snapshot written") && said.contains("heap dump written"),
        "{said}"
    );
    truth.finish();
    let r = read_all(&dir.join("h-1.hprof"));
    assert_allocation_traces(&r.shark, "HeapTruth");
}
