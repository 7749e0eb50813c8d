//! Heap dumps (HPROF binary) against HeapTruth, read by three independent
//! readers (Shark, NetBeans' heap library, hprof-slurp:
//! `tests/common/heap_readers.rs`). Today the dumps are HotSpot's own
//! (`jcmd PID GC.heap_dump`): they check the ground truth and the readers,
//! and that the allocation-trace check can fail and can pass. The agent's
//! dumps (the `memory` mode's objects each carrying a one-frame TRACE of its
//! allocating method and line, on its allocating thread's serial) are
//! checked by `agent.rs`.
//!
//! One module per topic: `truth.rs` HeapTruth's heap, object by object;
//! `agree.rs` the readers against each other; `traces.rs` the allocation
//! traces; `agent.rs` the agent's dumps; `variants.rs` those on every
//! collector, gzipped, without the agent, at an OutOfMemoryError, cut short.

mod agent;
mod agree;
// tests/common/, shared with the other test binaries.
#[path = "../common/mod.rs"]
mod common;
mod traces;
mod truth;
mod variants;

use common::heap_readers::{self, ReaderView};
use common::*;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use truth::{assert_counts, assert_heap_truth, MAIN, NAMED};

/// A running HeapTruth: built its heap ("ready"), waits for stdin to close.
pub struct Truth {
    pub child: Child,
    pub dir: PathBuf,
}

impl Truth {
    pub fn start(name: &str, jvm_args: &[&str]) -> Truth {
        let dir = temp_dir(name);
        let mut child = Command::new(java())
            .current_dir(&dir)
            .args(["-Xmx64m"])
            .args(jvm_args)
            .args(["-cp", harness_classes(), MAIN])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("cannot start java");
        let mut line = String::new();
        BufReader::new(child.stdout.as_mut().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "ready", "HeapTruth did not build its heap");
        Truth { child, dir }
    }

    /// Closes its stdin: it exits; asserts a clean exit.
    pub fn finish(mut self) {
        drop(self.child.stdin.take());
        let status = self.child.wait().unwrap();
        assert!(status.success(), "HeapTruth failed: {status:?}");
    }
}

impl Drop for Truth {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A dump and what each reader read of it.
pub struct Read {
    pub shark: ReaderView,
    pub netbeans: ReaderView,
    pub slurp: ReaderView,
}

pub fn read_all(dump: &Path) -> Read {
    assert!(dump.is_file(), "no dump at {}", dump.display());
    Read {
        shark: heap_readers::shark(dump, &NAMED),
        netbeans: heap_readers::netbeans(dump, &NAMED),
        slurp: heap_readers::hprof_slurp(dump),
    }
}

/// HotSpot's own dump of a waiting HeapTruth (live objects: jcmd collects
/// first), read once for every test of this binary.
pub fn hotspot() -> &'static Read {
    static READ: OnceLock<Read> = OnceLock::new();
    READ.get_or_init(|| {
        let truth = Truth::start("heap-hotspot", &[]);
        let dump = truth.dir.join("hotspot.hprof");
        let said = stdout_of(
            Command::new(jdk_tool("jcmd"))
                .arg(truth.child.id().to_string())
                .arg("GC.heap_dump")
                .arg(&dump),
        );
        assert!(said.contains("Heap dump file created"), "jcmd: {said}");
        truth.finish();
        read_all(&dump)
    })
}

#[test]
fn shark_reads_heap_truth_from_hotspots_dump() {
    assert_heap_truth(&hotspot().shark);
}

#[test]
fn netbeans_reads_heap_truth_from_hotspots_dump() {
    assert_heap_truth(&hotspot().netbeans);
}

#[test]
fn hprof_slurp_counts_heap_truth_in_hotspots_dump() {
    assert_counts(&hotspot().slurp);
}
