//! Any bytes: read as a snapshot with profrj's reader (the CLI's
//! `src/snapshot`, included by path since the CLI is a binary crate), then
//! weigh every call tree by every metric of its section, into the method
//! and site tables. Nothing may panic, hang or allocate without bound.
#![no_main]

#[allow(dead_code, unused_imports)]
#[path = "../../src/snapshot/mod.rs"]
mod snapshot;

use libfuzzer_sys::fuzz_target;
use snapshot::{method_table, site_table, Metric, Weighted};

fuzz_target!(|data: &[u8]| {
    let Ok(snap) = snapshot::parse_bytes(data) else { return };
    for sec in &snap.call_sections {
        let trees: Vec<_> = sec.threads.iter().map(|t| &t.tree).collect();
        for metric in Metric::all(sec.kind) {
            for t in &trees {
                let _ = Weighted::new(t, metric);
            }
            let _ = method_table(&snap.names, &trees, metric);
            let _ = site_table(&snap.names, &trees, metric);
        }
    }
});
