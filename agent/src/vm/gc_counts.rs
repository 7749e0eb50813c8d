//! Which collections were full. HotSpot's `CollectedHeap` counts the
//! collections started (`_total_collections`, in the VMStructs table) and
//! the full ones among them (`_total_full_collections`, declared right
//! after it in every JDK from 11 to 25, and not in the table). The GC
//! increments both in its pause, before the JVMTI GarbageCollectionFinish
//! event (JDK 11's Parallel collector even before GarbageCollectionStart,
//! so a full one is told by comparing two finishes). Serial, Parallel and
//! G1 count; Shenandoah does not, and ZGC counts its cycles, whose pauses
//! are not collections (`memory` does not ask under either).
//!
//! `memory` takes its peaks at the end of the collections that find every
//! dead object (docs/MEMORY.md), and reads here which those were.

use super::hotspot::{read_own, static_address, struct_offset};
use std::sync::OnceLock;

/// The address of the heap's `_total_collections` (`None`: not found).
static AT: OnceLock<Option<u64>> = OnceLock::new();

/// Collections started so far, and the full ones among them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Collections {
    pub all: u32,
    pub full: u32,
}

/// The counts now, if this VM's heap can be read (found on first use: the
/// heap is made before any agent code runs, and lives as long as the VM).
/// One system call (`process_vm_readv`): never a fault, even where the
/// layout were not the expected one.
pub fn now() -> Option<Collections> {
    let at = (*AT.get_or_init(find))?;
    let both = read_own(at)?;
    let c = Collections {
        all: both as u32,
        full: (both >> 32) as u32,
    };
    // Full collections are some of all: anything else is not these fields.
    (c.full <= c.all).then_some(c)
}

fn find() -> Option<u64> {
    let heap = read_own(static_address("Universe", "_collectedHeap")?)?;
    let offset = struct_offset(&["CollectedHeap"], "_total_collections")?;
    (heap != 0).then(|| heap.checked_add(offset)).flatten()
}
