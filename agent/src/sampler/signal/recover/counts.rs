//! How many walks each way of recovering saved, for the exit line and
//! `status`: counters the handler adds to (one atomic add, no lock), apart
//! so that every rule's file counts into them and the sampler reads them.

use std::sync::atomic::{AtomicU64, Ordering};

/// Walks whose top was recovered, by what the top was.
pub(super) static RECOVERED_STUB: AtomicU64 = AtomicU64::new(0);
pub(super) static RECOVERED_COMPILED: AtomicU64 = AtomicU64::new(0);
pub(super) static RECOVERED_UNKNOWN: AtomicU64 = AtomicU64::new(0);
/// Walks of threads in the VM made from their anchor's frame.
pub(super) static RECOVERED_VM: AtomicU64 = AtomicU64::new(0);
/// Walks of compiled frames made from the sp an intrinsic saved.
pub(super) static RECOVERED_SAVED_SP: AtomicU64 = AtomicU64::new(0);

/// Walks recovered so far, by what the thread was in.
#[derive(Clone, Copy, Debug, Default)]
pub struct Recovered {
    pub stub: u64,
    pub compiled: u64,
    pub unknown: u64,
    pub vm: u64,
    pub saved_sp: u64,
}

pub fn recovered_counts() -> Recovered {
    Recovered {
        stub: RECOVERED_STUB.load(Ordering::Relaxed),
        compiled: RECOVERED_COMPILED.load(Ordering::Relaxed),
        unknown: RECOVERED_UNKNOWN.load(Ordering::Relaxed),
        vm: RECOVERED_VM.load(Ordering::Relaxed),
        saved_sp: RECOVERED_SAVED_SP.load(Ordering::Relaxed),
    }
}
