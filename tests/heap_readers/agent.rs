//! The agent's heap dumps of HeapTruth: at VM exit (`heapdumps=exit`) and
//! on command (`profrj heapdump PID FILE`).

use crate::agree::assert_readers_agree;
use crate::common::*;
use crate::traces::assert_allocation_traces;
use crate::truth::{assert_counts, assert_heap_truth, MAIN};
use crate::{read_all, Read, Truth};

/// The agent's dump at VM exit (`heapdumps=exit`) of HeapTruth run to its end.
#[test]
fn profrj_dump_names_allocation_sites() {
    let dir = temp_dir("heap-profrj-exit");
    let dump = dir.join("h.hprof");
    let run = run_java_with(
        &dir,
        &[],
        &format!("memory,heapdumps=exit,heapfile={}", dump.display()),
        MAIN,
        &["exit"],
    );
    run.assert_success();
    let mut read = read_all(&dump);
    // At VM exit main has ended: no thread root names it, so the agent's
    // own START_THREAD record does, which Shark does not read; profrj's
    // text form of the dump prints it as HPROF's THREAD START line.
    let ended = started_threads(&dump);
    assert!(
        ended.values().any(|n| n == "main"),
        "no THREAD START names main: {ended:?}"
    );
    for (serial, name) in ended {
        assert!(
            !read.shark.threads.contains_key(&serial),
            "serial {serial} is both a thread root and profrj's"
        );
        read.shark.threads.insert(serial, name);
    }
    assert_agent_dump(&read);
}

/// The THREAD START lines of `profrj convert DUMP --to hprof`: serial → name.
fn started_threads(dump: &std::path::Path) -> std::collections::BTreeMap<u32, String> {
    let out = dump.with_extension("txt");
    let (code, said) = profrj_run(&[
        "convert",
        dump.to_str().unwrap(),
        "--to",
        "hprof",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "profrj convert: {said}");
    let text = std::fs::read_to_string(&out).unwrap();
    text.lines()
        .filter_map(|l| {
            let rest = l.strip_prefix("THREAD START (")?;
            let id = rest.split("id = ").nth(1)?.split(',').next()?.trim();
            let name = rest.split("name=\"").nth(1)?.split('"').next()?;
            Some((id.parse().ok()?, name.to_owned()))
        })
        .collect()
}

/// The agent's dump on command (`profrj heapdump PID FILE`) of a waiting
/// HeapTruth run with `memory`.
#[test]
fn profrj_heapdump_command_names_allocation_sites() {
    let truth = Truth::start(
        "heap-profrj-command",
        &[&format!("-agentpath:{}=memory", agent().display())],
    );
    let dump = truth.dir.join("h.hprof");
    let pid = truth.child.id().to_string();
    let (code, said) = profrj_run(&["heapdump", &pid, dump.to_str().unwrap()]);
    assert_eq!(code, 0, "profrj heapdump: {said}");
    truth.finish();
    assert_agent_dump(&read_all(&dump));
}

/// What an agent's dump must hold: HeapTruth for every reader, the readers
/// agreeing, and each followed object on its allocation site's trace.
pub fn assert_agent_dump(r: &Read) {
    assert_heap_truth(&r.shark);
    assert_heap_truth(&r.netbeans);
    assert_counts(&r.slurp);
    assert_readers_agree(r);
    assert_allocation_traces(&r.shark, "HeapTruth");
}
