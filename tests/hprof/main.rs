//! `profrj convert --to hprof` on real snapshots: the CPU TIME counts of a
//! profile of ProfileTruth equal its known call counts, the CPU SAMPLES
//! shares equal the sampler section's, and every block (THREAD, TRACE, CPU
//! SAMPLES, CPU TIME, SITES from <memory> and <alloc>) parses back with the
//! small reader in `hprof_text.rs`, every trace a row names being defined.
//!
//! One module per topic; `hprof_text.rs` holds what they share.

// tests/common/, shared with the other test binaries.
#[path = "../common/mod.rs"]
mod common;
mod cpu;
mod hprof_text;
mod monitor;
mod published_reader;
mod sites;
