//! The agent's heap dumps of HeapTruth, ignored until the agent's
//! `heapdump=` option and `profrj heapdump` command are merged.

use crate::agree::assert_readers_agree;
use crate::common::*;
use crate::traces::assert_allocation_traces;
use crate::truth::{assert_counts, assert_heap_truth, MAIN};
use crate::{read_all, Read, Truth};

/// The agent's dump at VM exit (`heapdump=exit`) of HeapTruth run to its end.
/// Ignored until the agent's heap dumps are merged.
#[test]
#[ignore = "the agent's heapdump= option is not merged yet"]
fn profrj_dump_names_allocation_sites() {
    let dir = temp_dir("heap-profrj-exit");
    let dump = dir.join("h.hprof");
    let run = run_java_with(
        &dir,
        &[],
        &format!("memory,heapdump=exit,heapfile={}", dump.display()),
        MAIN,
        &["exit"],
    );
    run.assert_success();
    assert_agent_dump(&read_all(&dump));
}

/// The agent's dump on command (`profrj heapdump PID FILE`) of a waiting
/// HeapTruth run with `memory`. Ignored until the command is merged.
#[test]
#[ignore = "the profrj heapdump command is not merged yet"]
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
