//! Reading results: `profrj report`, `convert`, `diff` and `flame` on
//! snapshots the agent wrote from harness programs whose answer is known
//! (CpuSplit: heavy() takes 75% of main's CPU; CpuRatio: a chosen split;
//! ProfileTruth: exact call counts). The pprof output is decoded with
//! `protoc` against tests/data/profile.proto, the flame page is loaded in
//! headless Chromium. Both tools are required (`.ci/run` installs them). The
//! helpers that read each command's output are in `common/readers.rs`.
//!
//! One module per topic; `snapshots.rs` holds what they share.

mod command_line;
// tests/common/, shared with the other test binaries.
#[path = "../common/mod.rs"]
mod common;
mod convert;
mod coverage;
mod flame;
mod html;
mod snapshots;
mod tables;
mod xprof;
