//! Any bytes: read as a snapshot with profrj's reader (the CLI's
//! `src/snapshot`, included by path since the CLI is a binary crate), then
//! weigh every call tree. Nothing may panic, hang or allocate without bound.
#![no_main]

#[allow(dead_code, unused_imports)]
#[path = "../../src/snapshot/mod.rs"]
mod snapshot;

use libfuzzer_sys::fuzz_target;
use snapshot::{Metric, Weighted};

fuzz_target!(|data: &[u8]| {
    let Ok(snap) = snapshot::parse_bytes(data) else { return };
    for sec in [snap.sampler.as_ref(), snap.profile.as_ref()].into_iter().flatten() {
        for t in &sec.threads {
            for metric in [Metric::Cpu, Metric::Wall, Metric::Calls] {
                let _ = Weighted::new(&t.tree, sec.kind, metric);
            }
        }
    }
});
