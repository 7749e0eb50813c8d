//! `trace` mode on real JVMs: the TPTP trace of a harness program whose calls
//! and exceptions are known by construction (TraceTruth), read back with a
//! streaming XML parser that checks the document's rules as it goes: the
//! envelope, every id defined before use (and ids unique across kinds),
//! `collationValue` from 1 at `traceStart` up by one per element, every
//! `methodExit` closing the open `methodEntry` of its thread (same method and
//! ticket, `stackDepth` as the stack says), one `methodCount` per method
//! equal to its entries.

mod common;

use common::*;
use quick_xml::events::{BytesStart, Event};
use std::collections::{HashMap, HashSet};
use std::path::Path;

const H: &str = "profrj.harness.TraceTruth";

/// What a trace file holds, once checked.
#[derive(Default, Debug)]
struct Trace {
    elements: u64,
    /// methodEntry per `Class.method`.
    entries: HashMap<String, u64>,
    /// methodCount per `Class.method`.
    counts: HashMap<String, u64>,
    /// (element, `Class.method`, exception class) → how many.
    exceptions: HashMap<(String, String, String), u64>,
    /// threadStart names.
    threads: Vec<String>,
    thread_ends: u64,
    gc_starts: u64,
    gc_finishes: u64,
    /// Calls still open at the end, per thread.
    open_at_end: usize,
    /// Exits of calls entered in an earlier file (a continued trace).
    earlier_exits: u64,
    /// objAlloc per (`Class.method` or "", class), and objFree likewise.
    allocs: HashMap<(String, String), u64>,
    frees: HashMap<(String, String), u64>,
    /// objAlloc with a size, and the smallest size seen.
    sized: u64,
    /// (element, monitor class, thread name) → how many.
    monitors: HashMap<(String, String, String), u64>,
}

fn attr(e: &BytesStart, name: &str) -> Option<String> {
    e.try_get_attribute(name)
        .unwrap()
        .map(|a| a.unescape_value().unwrap().into_owned())
}

fn need(e: &BytesStart, name: &str) -> String {
    attr(e, name).unwrap_or_else(|| {
        panic!(
            "<{}> lacks {name}",
            String::from_utf8_lossy(e.name().as_ref())
        )
    })
}

fn num(e: &BytesStart, name: &str) -> u64 {
    let v = need(e, name);
    // "low[,high]"
    let mut parts = v.split(',');
    let low: u64 = parts.next().unwrap().parse().unwrap();
    match parts.next() {
        Some(h) => low | (h.parse::<u64>().unwrap() << 32),
        None => low,
    }
}

/// Reads and checks `path` (see the module's comment). `continued`: a file
/// after a dump, whose first exits may close calls entered in the one before.
fn read_trace_from(path: &Path, continued: bool) -> Trace {
    let file =
        std::fs::File::open(path).unwrap_or_else(|e| panic!("no trace at {}: {e}", path.display()));
    let mut r = quick_xml::Reader::from_reader(std::io::BufReader::with_capacity(1 << 20, file));
    let mut buf = Vec::new();
    let mut t = Trace::default();
    // Envelope ids, defined ids by kind, names.
    let mut uuids: HashMap<&'static str, String> = HashMap::new();
    let mut ids: HashMap<u64, &'static str> = HashMap::new();
    let mut class_names: HashMap<u64, String> = HashMap::new();
    let mut method_names: HashMap<u64, String> = HashMap::new();
    let mut obj_classes: HashMap<u64, u64> = HashMap::new();
    let mut obj_sites: HashMap<u64, (String, String)> = HashMap::new();
    let mut waiting: HashMap<u64, u64> = HashMap::new();
    let mut thread_names: HashMap<u64, String> = HashMap::new();
    let mut stacks: HashMap<u64, (u64, Vec<(u64, u64)>)> = HashMap::new();
    let mut ended: HashSet<u64> = HashSet::new();
    let mut collation = 0u64;
    let mut order: Vec<String> = Vec::new();
    let mut depth = 0;
    let define = |ids: &mut HashMap<u64, &'static str>, id: u64, kind: &'static str| {
        if let Some(k) = ids.insert(id, kind) {
            assert!(
                k == kind && kind == "thread",
                "id {id} defined twice ({k}, then {kind})"
            );
        }
    };
    let refers = |ids: &HashMap<u64, &'static str>, id: u64, kind: &str, what: &str| {
        assert_eq!(
            ids.get(&id).copied(),
            Some(kind),
            "{what} refers to {kind} {id} before its definition"
        );
    };
    loop {
        let ev = r.read_event_into(&mut buf).expect("well-formed XML");
        let e = match &ev {
            Event::Eof => break,
            Event::Start(e) => {
                depth += 1;
                assert_eq!(e.name().as_ref(), b"TRACE", "root element");
                assert_eq!(depth, 1);
                buf.clear();
                continue;
            }
            Event::End(_) => {
                depth -= 1;
                buf.clear();
                continue;
            }
            Event::Empty(e) => e.clone().into_owned(),
            _ => {
                buf.clear();
                continue;
            }
        };
        buf.clear();
        assert_eq!(depth, 1, "elements sit directly under <TRACE>");
        let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
        t.elements += 1;
        if order.len() < 4 {
            order.push(name.clone());
        }
        // collationValue: 1 at traceStart, +1 per element up to traceEnd.
        match (name.as_str(), attr(&e, "collationValue")) {
            ("traceStart", Some(c)) => {
                assert_eq!(c, "1");
                collation = 1;
            }
            ("node" | "processCreate" | "agentCreate" | "agentDestroy", c) => {
                assert!(c.is_none(), "{name} outside the trace has a collationValue")
            }
            (_, Some(_)) => {
                collation += 1;
                assert_eq!(num(&e, "collationValue"), collation, "{name}");
            }
            (_, None) => panic!("{name} lacks collationValue"),
        }
        if let Some(time) = attr(&e, "time") {
            let (s, f) = time.split_once('.').expect("time is utc.fff");
            assert!(
                s.parse::<u64>().unwrap() > 1_600_000_000 && f.len() == 9,
                "{time}"
            );
        }
        match name.as_str() {
            "node" => {
                uuids.insert("node", need(&e, "nodeId"));
            }
            "processCreate" => {
                assert_eq!(Some(&need(&e, "nodeIdRef")), uuids.get("node"));
                assert!(num(&e, "pid") > 0);
                uuids.insert("process", need(&e, "processId"));
            }
            "agentCreate" => {
                assert_eq!(Some(&need(&e, "processIdRef")), uuids.get("process"));
                assert_eq!(need(&e, "agentName"), "profrj");
                uuids.insert("agent", need(&e, "agentId"));
            }
            "traceStart" => {
                assert_eq!(Some(&need(&e, "agentIdRef")), uuids.get("agent"));
                uuids.insert("trace", need(&e, "traceId"));
            }
            "traceEnd" => assert_eq!(Some(&need(&e, "traceIdRef")), uuids.get("trace")),
            "agentDestroy" => assert_eq!(Some(&need(&e, "agentIdRef")), uuids.get("agent")),
            "threadStart" => {
                let id = num(&e, "threadId");
                define(&mut ids, id, "thread");
                ended.remove(&id);
                let n = need(&e, "threadName");
                thread_names.insert(id, n.clone());
                t.threads.push(n);
            }
            "threadEnd" => {
                let id = num(&e, "threadIdRef");
                refers(&ids, id, "thread", "threadEnd");
                ended.insert(id);
                t.thread_ends += 1;
            }
            "classDef" => {
                let id = num(&e, "classId");
                define(&mut ids, id, "class");
                class_names.insert(id, need(&e, "name"));
            }
            "methodDef" => {
                let id = num(&e, "methodId");
                let class = num(&e, "classIdRef");
                refers(&ids, class, "class", "methodDef");
                define(&mut ids, id, "method");
                assert!(need(&e, "signature").starts_with('('));
                let short = class_names[&class].rsplit('.').next().unwrap().to_owned();
                method_names.insert(id, format!("{short}.{}", need(&e, "name")));
            }
            "objDef" => {
                let id = num(&e, "objId");
                let class = num(&e, "classIdRef");
                refers(&ids, class, "class", "objDef");
                define(&mut ids, id, "object");
                obj_classes.insert(id, class);
            }
            "methodEntry" | "methodExit" => {
                let thread = num(&e, "threadIdRef");
                refers(&ids, thread, "thread", &name);
                assert!(!ended.contains(&thread), "{name} after threadEnd");
                let method = num(&e, "methodIdRef");
                refers(&ids, method, "method", &name);
                let ticket = num(&e, "ticket");
                let depth = num(&e, "stackDepth");
                // In a continued file, calls entered before it lie below (`base`).
                let (base, stack) = stacks.entry(thread).or_insert_with(|| {
                    let below = if continued {
                        depth.saturating_sub(1)
                    } else {
                        0
                    };
                    (
                        if name == "methodEntry" { below } else { depth },
                        Vec::new(),
                    )
                });
                if name == "methodEntry" {
                    stack.push((method, ticket));
                    assert_eq!(depth, *base + stack.len() as u64, "stackDepth of entry");
                    *t.entries.entry(method_names[&method].clone()).or_default() += 1;
                } else if stack.is_empty() && continued && *base > 0 {
                    assert_eq!(depth, *base, "stackDepth of an earlier call's exit");
                    *base -= 1;
                    t.earlier_exits += 1;
                } else {
                    assert_eq!(depth, *base + stack.len() as u64, "stackDepth of exit");
                    let top = stack.pop().expect("methodExit without an open methodEntry");
                    assert_eq!(top, (method, ticket), "methodExit closes the open call");
                }
            }
            "throw" | "catch" => {
                let thread = num(&e, "threadIdRef");
                refers(&ids, thread, "thread", &name);
                let method = num(&e, "methodIdRef");
                refers(&ids, method, "method", &name);
                let obj = num(&e, "objIdRef");
                refers(&ids, obj, "object", &name);
                if attr(&e, "ticket").is_some() {
                    let (base, stack) = &stacks[&thread];
                    let d = (num(&e, "stackDepth") - base) as usize;
                    assert_eq!(
                        stack[d - 1],
                        (method, num(&e, "ticket")),
                        "{name} in its call"
                    );
                }
                let class = class_names[&obj_classes[&obj]].clone();
                let key = (name.clone(), method_names[&method].clone(), class);
                *t.exceptions.entry(key).or_default() += 1;
            }
            "objAlloc" => {
                let thread = num(&e, "threadIdRef");
                refers(&ids, thread, "thread", &name);
                let class = num(&e, "classIdRef");
                refers(&ids, class, "class", &name);
                let id = num(&e, "objId");
                define(&mut ids, id, "object");
                let array = num(&e, "isArray");
                assert_eq!(array != 0, class_names[&class].ends_with("[]"), "isArray");
                let method = match attr(&e, "methodIdRef") {
                    Some(_) => {
                        let m = num(&e, "methodIdRef");
                        refers(&ids, m, "method", &name);
                        if attr(&e, "ticket").is_some() {
                            let (_, stack) = &stacks[&thread];
                            let top = stack.last().copied();
                            assert_eq!(top, Some((m, num(&e, "ticket"))), "objAlloc in its call");
                        }
                        method_names[&m].clone()
                    }
                    None => String::new(),
                };
                if attr(&e, "size").is_some() {
                    assert!(num(&e, "size") > 0);
                    t.sized += 1;
                }
                let site = (method, class_names[&class].clone());
                *t.allocs.entry(site.clone()).or_default() += 1;
                obj_sites.insert(id, site);
            }
            "objFree" => {
                let id = num(&e, "objIdRef");
                refers(&ids, id, "object", &name);
                ids.remove(&id);
                let site = obj_sites
                    .remove(&id)
                    .expect("an objFree of an objAlloc's object");
                *t.frees.entry(site).or_default() += 1;
            }
            "monitorContendedEnter" | "monitorContendedEntered" => {
                let thread = num(&e, "threadIdRef");
                refers(&ids, thread, "thread", &name);
                let obj = num(&e, "objIdRef");
                refers(&ids, obj, "object", &name);
                if name == "monitorContendedEnter" {
                    assert_eq!(waiting.insert(thread, obj), None, "two waits at once");
                } else {
                    assert_eq!(
                        waiting.remove(&thread),
                        Some(obj),
                        "entered what it waited for"
                    );
                }
                let class = class_names[&obj_classes[&obj]].clone();
                let key = (name.clone(), class, thread_names[&thread].clone());
                *t.monitors.entry(key).or_default() += 1;
            }
            "methodCount" => {
                let method = num(&e, "methodIdRef");
                refers(&ids, method, "method", &name);
                let prev = t
                    .counts
                    .insert(method_names[&method].clone(), num(&e, "count"));
                assert!(prev.is_none(), "two methodCounts for one method");
            }
            "gcStart" => t.gc_starts += 1,
            "gcFinish" => t.gc_finishes += 1,
            other => panic!("unexpected element {other}"),
        }
    }
    assert_eq!(
        order,
        ["node", "processCreate", "agentCreate", "traceStart"],
        "the envelope comes first"
    );
    assert!(uuids.contains_key("trace"));
    t.open_at_end = stacks.values().map(|(b, s)| *b as usize + s.len()).sum();
    t
}

fn read_trace(path: &Path) -> Trace {
    read_trace_from(path, false)
}

fn entries(t: &Trace, m: &str) -> u64 {
    t.entries.get(m).copied().unwrap_or(0)
}

fn exceptions(t: &Trace, kind: &str, m: &str, class: &str) -> u64 {
    let key = (kind.to_owned(), m.to_owned(), class.to_owned());
    t.exceptions.get(&key).copied().unwrap_or(0)
}

fn allocs(t: &Trace, m: &str, class: &str) -> u64 {
    let key = (m.to_owned(), class.to_owned());
    t.allocs.get(&key).copied().unwrap_or(0)
}

fn frees(t: &Trace, m: &str, class: &str) -> u64 {
    let key = (m.to_owned(), class.to_owned());
    t.frees.get(&key).copied().unwrap_or(0)
}

fn run_trace(name: &str, args: &[&str], extra: &str) -> (Run, Trace) {
    let dir = temp_dir(name);
    let trace = dir.join("trace.xml");
    let opts = format!(
        "trace={}{extra},file={}",
        trace.display(),
        dir.join("snap.xml").display()
    );
    let run = run_java_with(&dir, &["-Xverify:all"], &opts, H, args);
    run.assert_success();
    assert!(!run.stderr.contains("uninstrumented"), "{}", run.stderr);
    assert_no_temporary_files(&dir);
    (run, read_trace(&trace))
}

fn assert_no_temporary_files(dir: &Path) {
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

/// TraceTruth `rotate` with a trace at `template` from start-up, its
/// argument files `waits` (see TraceTruth); its stdout, to read its lines.
fn start_rotate(
    dir: &Path,
    template: &Path,
    waits: &[&Path],
) -> (
    std::process::Child,
    std::io::BufReader<std::process::ChildStdout>,
) {
    let opts = format!(
        "trace={},file={}",
        template.display(),
        dir.join("snap-%n.xml").display()
    );
    let mut child = std::process::Command::new(java())
        .current_dir(dir)
        .arg(format!("-agentpath:{}={opts}", agent().display()))
        .args(["-cp", harness_classes(), H, "rotate"])
        .args(waits)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = std::io::BufReader::new(child.stdout.take().unwrap());
    (child, out)
}

#[test]
fn calls_and_exceptions_of_the_ground_truth() {
    let (run, t) = run_trace("truth", &["truth"], "");
    assert!(run.stdout.contains("sink="), "{}", run.stdout);
    // Every line of stderr is the agent's own.
    for line in run.stderr.lines() {
        assert!(line.starts_with("profrj:"), "not the agent's: {line}");
    }
    let per_thread = [
        ("TraceTruth.work", 1),
        ("TraceTruth.makes", 1),
        ("TraceTruth.middle", 1),
        ("TraceTruth.leaf", 100),
        ("TraceTruth.catcher", 1),
        // catcher's 5, escapes' 2, finallyRethrows' 1
        ("TraceTruth.thrower", 8),
        ("TraceTruth.vmThrows", 1),
        ("TraceTruth.divide", 3),
        ("TraceTruth.catcher2", 1),
        ("TraceTruth.escapes", 2),
        ("TraceTruth.finallyRethrows", 1),
    ];
    for (m, n) in per_thread {
        assert_eq!(entries(&t, m), 2 * n, "methodEntry of {m}: {:?}", t.entries);
        assert_eq!(t.counts.get(m).copied(), Some(2 * n), "methodCount of {m}");
    }
    assert_eq!(entries(&t, "TraceTruth.main"), 1);
    assert_eq!(entries(&t, "TraceTruth.phaseTwo"), 0);
    assert_eq!(t.counts.get("TraceTruth.phaseTwo").copied(), Some(0));
    // Every call closed: the program ran to its end.
    assert_eq!(t.open_at_end, 0);
    let ise = "java.lang.IllegalStateException";
    let ae = "java.lang.ArithmeticException";
    let expected = [
        // thrower throws 8 times per thread: to catcher, through escapes, into the finally.
        ("throw", "TraceTruth.thrower", ise, 8),
        ("catch", "TraceTruth.catcher", ise, 5),
        // The VM raises it in divide: first seen leaving divide.
        ("throw", "TraceTruth.divide", ae, 3),
        ("catch", "TraceTruth.vmThrows", ae, 3),
        ("catch", "TraceTruth.catcher2", ise, 2),
        // javac's finally: a catch-any handler, then the same object rethrown.
        ("catch", "TraceTruth.finallyRethrows", ise, 1),
        ("throw", "TraceTruth.finallyRethrows", ise, 1),
        ("catch", "TraceTruth.work", ise, 1),
    ];
    for (kind, m, class, n) in expected {
        assert_eq!(
            exceptions(&t, kind, m, class),
            2 * n,
            "{kind} in {m} of {class}: {:?}",
            t.exceptions
        );
    }
    let total: u64 = t.exceptions.values().sum();
    assert_eq!(
        total,
        2 * expected.iter().map(|e| e.3).sum::<u64>(),
        "{:?}",
        t.exceptions
    );
    for name in ["trace-1", "trace-2", "main"] {
        assert!(
            t.threads.iter().any(|n| n == name),
            "{name}: {:?}",
            t.threads
        );
    }
    assert!(t.thread_ends >= 2, "the two workers end");
    assert!(
        t.gc_starts >= 1 && t.gc_finishes >= 1,
        "System.gc() is seen"
    );
}

/// With `memory`: an `objAlloc` for every object of the scope (exact per
/// method and class), an `objFree` for each one found dead (weak references).
#[test]
fn with_memory_every_object_is_allocated_and_the_dead_freed() {
    let (_, t) = run_trace("memory", &["truth"], ",memory");
    assert_eq!(
        allocs(&t, "TraceTruth.makes", "byte[]"),
        20,
        "{:?}",
        t.allocs
    );
    assert_eq!(allocs(&t, "TraceTruth.makes", "java.lang.Object"), 10);
    let ise = "java.lang.IllegalStateException";
    assert_eq!(allocs(&t, "TraceTruth.thrower", ise), 16);
    // Garbage at once; System.gc() and the agent thread's scan found them.
    assert_eq!(frees(&t, "TraceTruth.makes", "byte[]"), 20, "{:?}", t.frees);
    assert_eq!(frees(&t, "TraceTruth.makes", "java.lang.Object"), 10);
    assert_eq!(entries(&t, "TraceTruth.leaf"), 200);
}

/// With `alloc=0` (every object sampled): an `objAlloc` with its size per
/// sampled object.
#[test]
fn with_alloc_sampled_objects_are_allocated() {
    let (_, t) = run_trace("alloc", &["truth"], ",alloc=0");
    assert!(allocs(&t, "", "byte[]") >= 20, "{:?}", t.allocs);
    assert!(t.sized >= 20);
}

/// With `lock`: the contended entry into GATE's monitor, on main.
#[test]
fn with_lock_contended_monitors_are_entered() {
    let (_, t) = run_trace("lock", &["truth"], ",lock");
    let gate = "profrj.harness.TraceTruth$Gate";
    for kind in ["monitorContendedEnter", "monitorContendedEntered"] {
        let key = (kind.to_owned(), gate.to_owned(), "main".to_owned());
        assert_eq!(t.monitors.get(&key).copied(), Some(1), "{:?}", t.monitors);
    }
}

#[test]
fn ten_million_events_in_one_valid_document() {
    let (run, t) = run_trace("many", &["many", "5000000"], "");
    // 1.3 GB: not left behind.
    let _ = std::fs::remove_dir_all(temp_dir("many"));
    assert!(run.stdout.contains("sink="));
    assert_eq!(entries(&t, "TraceTruth.leaf"), 5_000_000);
    assert_eq!(t.counts.get("TraceTruth.leaf").copied(), Some(5_000_000));
    assert!(t.elements >= 10_000_000, "{} elements", t.elements);
    assert_eq!(t.open_at_end, 0);
}

#[test]
fn a_dump_ends_one_file_and_the_next_events_start_the_next() {
    let dir = temp_dir("rotate");
    let first = dir.join("t-1.xml");
    let (mut child, mut out) = start_rotate(&dir, &dir.join("t-%n.xml"), &[&first]);
    let mut line = String::new();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    assert_eq!(line.trim(), "phase one done");
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGUSR1) };
    let status = child.wait().unwrap();
    assert!(status.success());
    let one = read_trace(&first);
    let two = read_trace_from(&dir.join("t-2.xml"), true);
    assert_eq!(entries(&one, "TraceTruth.leaf"), 100);
    assert_eq!(entries(&one, "TraceTruth.phaseTwo"), 0);
    assert_eq!(entries(&two, "TraceTruth.phaseTwo"), 1);
    assert_eq!(entries(&two, "TraceTruth.leaf"), 100);
    // methodCount: calls since the trace began.
    assert_eq!(two.counts.get("TraceTruth.leaf").copied(), Some(200));
    // main was open at the dump: entered in the first file, left in the second.
    assert_eq!(entries(&two, "TraceTruth.main"), 0);
    assert_eq!((one.open_at_end, two.earlier_exits), (1, 1));
}

/// A bug in the writer thread (a panic, injected) stops the trace, not the
/// program: threads whose rings fill up do not wait for a writer that is gone.
#[test]
fn a_writer_that_dies_stops_the_trace_not_the_program() {
    let dir = temp_dir("writer-panic");
    let opts = format!(
        "trace={},file={}",
        dir.join("t.xml").display(),
        dir.join("s.xml").display()
    );
    let output = std::process::Command::new(java())
        .current_dir(&dir)
        .env("PROFRJ_INJECT_PANIC", "trace writer")
        .arg(format!("-agentpath:{}={opts}", agent().display()))
        .args(["-cp", harness_classes(), H, "many", "1000000"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&output.stdout).contains("sink="));
    assert!(
        stderr.contains("fault injected into trace writer"),
        "{stderr}"
    );
    assert!(stderr.contains("tracing stops"), "{stderr}");
    assert!(!dir.join("t.xml").exists());
    // The document the writer had open goes with it (issue 29, item 7).
    assert_no_temporary_files(&dir);
}

/// Issue 29, item 7: a trace dumped and then stopped finishes the document
/// the stop ends (with the events since the dump), and nothing after the
/// stop (the threads that end while it is stopped) leaves a temporary file.
#[test]
fn a_trace_dumped_then_stopped_ends_every_file() {
    let dir = temp_dir("dump-stop");
    let trace = dir.join("t.xml");
    let go_on = dir.join("go-on");
    let (child, mut out) = start_rotate(&dir, &trace, &[&trace, &go_on]);
    let pid = child.id().to_string();
    let mut line = String::new();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    assert_eq!(line.trim(), "phase one done");
    let (code, text) = profrj_run(&["dump", &pid]);
    assert_eq!(code, 0, "{text}");
    line.clear();
    std::io::BufRead::read_line(&mut out, &mut line).unwrap();
    assert_eq!(line.trim(), "phase two done");
    let (code, text) = profrj_run(&["stop", &pid]);
    assert_eq!(code, 0, "{text}");
    std::fs::write(&go_on, b"").unwrap();
    let done = child.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        ["go-on", "snap-1.xml", "snap-2.xml", "t.xml", "t.xml.2"],
        "a whole file per document, no temporary file"
    );
    let one = read_trace(&trace);
    let two = read_trace_from(&dir.join("t.xml.2"), true);
    assert_eq!(entries(&one, "TraceTruth.leaf"), 100);
    assert_eq!(entries(&two, "TraceTruth.phaseTwo"), 1);
    assert_eq!(entries(&two, "TraceTruth.leaf"), 100);
}
