//! What the file-writing threads (`trace`'s and `jfr`'s) tell the rest of
//! the agent: how to wake them, and what they wrote so far (for `status`
//! and the exit line).

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Arc;

/// Counted by the writer thread.
#[derive(Default)]
pub struct Stats {
    pub events: AtomicU64,
    pub files: AtomicU64,
    pub bytes: AtomicU64,
    /// The writer thread's own CPU time so far, ns (where it keeps it).
    pub cpu_ns: AtomicU64,
}

/// A writer thread, as the agent holds it.
pub struct Handle {
    pub thread: std::thread::Thread,
    pub stats: Arc<Stats>,
}

impl Handle {
    pub fn wake(&self) {
        self.thread.unpark();
    }
    pub fn events(&self) -> u64 {
        self.stats.events.load(Relaxed)
    }
    pub fn files(&self) -> u64 {
        self.stats.files.load(Relaxed)
    }
    pub fn bytes(&self) -> u64 {
        self.stats.bytes.load(Relaxed)
    }
    pub fn cpu_ns(&self) -> u64 {
        self.stats.cpu_ns.load(Relaxed)
    }
}
