//! The snapshots the reading tests share, each written once per test binary
//! (CpuSplit sampled, ProfileTruth profiled), and how a share a reader shows
//! is checked against the snapshot's own figures.

use crate::common::*;
use std::path::PathBuf;
use std::sync::OnceLock;

pub const SPLIT: &str = "profrj.harness.CpuSplit";

pub const TRUTH: &str = "profrj.harness.ProfileTruth";

/// One sampled CpuSplit run (2 ms interval, 4 s: start-up is a small part of
/// main's samples), shared by the tests.
pub fn split_snapshot() -> &'static PathBuf {
    static SNAP: OnceLock<PathBuf> = OnceLock::new();
    SNAP.get_or_init(|| {
        let dir = temp_dir("report-split");
        let snap = dir.join("split.xml");
        run_java(
            &dir,
            &format!("sampling,interval=2ms,file={}", snap.display()),
            SPLIT,
            &["4000"],
        )
        .assert_success();
        read_snapshot(&snap);
        snap
    })
}

/// A method's share of a thread's RUNNABLE samples in a sampler snapshot, in
/// percent: `attr` (`hits` for its own, `cumulated` with its callees)
/// summed over its nodes, of the thread's `cumulated`. The readers must
/// show exactly this (the sampler's own accuracy is tested in sampling.rs).
pub fn snapshot_share(snap: &std::path::Path, thread: &str, method: &str, attr: &str) -> f64 {
    let xml = read_snapshot(snap);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let t = threads(&doc, "sampler", thread)[0];
    100.0 * sum_attr(&find_nodes(t, method), attr) as f64 / attr_u64(t, "cumulated") as f64
}

/// The readers print shares with two decimals.
pub fn assert_shown(shown: f64, want: f64, what: &str) {
    assert!(
        (shown - want).abs() <= 0.005 + 1e-9,
        "{what}: shown {shown}%, the snapshot says {want:.4}%"
    );
}

/// One ProfileTruth run in profile mode.
pub fn truth_snapshot() -> &'static PathBuf {
    static SNAP: OnceLock<PathBuf> = OnceLock::new();
    SNAP.get_or_init(|| {
        let dir = temp_dir("report-truth");
        let snap = dir.join("truth.xml");
        run_java(
            &dir,
            &format!("profile,file={}", snap.display()),
            TRUTH,
            &[],
        )
        .assert_success();
        read_snapshot(&snap);
        snap
    })
}
