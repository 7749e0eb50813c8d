//! A copy the sampler thread publishes and signal handlers read without a
//! lock: the code map's blobs, the native objects' ranges. Replacing a copy
//! never frees one a handler may still read: a reader counts itself before
//! it loads the pointer, and replaced copies are freed only when, after the
//! swap, no reader is counted.
//!
//! Replaced copies are kept whole, the box the pointer named included: a
//! handler that loaded the pointer reads the copy's slice address through it
//! (freeing that box at the swap let a handler read the address from freed
//! memory: a JVM crashed so, in the code map's `find`, with a garbage slice
//! address, JDK 21, H2 at 1 ms).

use parking_lot::Mutex;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

pub struct Published<T> {
    current: AtomicPtr<T>,
    /// Handlers inside [`Published::reading`] now.
    readers: AtomicUsize,
    /// Copies replaced, freed once no handler reads.
    #[allow(clippy::vec_box)] // the box's address is what a handler holds: it must not move
    retired: Mutex<Vec<Box<T>>>,
}

impl<T> Published<T> {
    pub const fn new() -> Self {
        Published {
            current: AtomicPtr::new(std::ptr::null_mut()),
            readers: AtomicUsize::new(0),
            retired: Mutex::new(Vec::new()),
        }
    }

    /// Makes `copy` the one handlers read (sampler thread), then frees
    /// replaced copies no handler can still be reading.
    pub fn publish(&self, copy: T) {
        let new = Box::into_raw(Box::new(copy));
        let old = self.current.swap(new, Ordering::SeqCst);
        if !old.is_null() {
            // SAFETY: every pointer in `current` came from Box::into_raw
            // above, and the swap took this one out: no later `reading` can
            // load it. The box is kept until `reclaim` (a reader may hold it).
            self.retired.lock().push(unsafe { Box::from_raw(old) });
        }
        self.reclaim();
    }

    /// Frees the replaced copies if no handler is reading now: a handler
    /// that loaded one of them counted itself before loading, and they were
    /// all swapped out before this check.
    pub fn reclaim(&self) {
        let mut retired = self.retired.lock();
        if !retired.is_empty() && self.readers.load(Ordering::SeqCst) == 0 {
            retired.clear();
        }
    }

    /// Runs `f` over the current copy (None before the first publish).
    /// Async-signal-safe: atomics only; the copy stays allocated meanwhile.
    pub fn reading<R>(&self, f: impl FnOnce(Option<&T>) -> R) -> R {
        self.readers.fetch_add(1, Ordering::SeqCst);
        let p = self.current.load(Ordering::SeqCst);
        // SAFETY: a published copy stays allocated while `readers` counts
        // this reader (`reclaim` frees only swapped-out copies, and only when
        // it sees no reader after the swap).
        let out = f((!p.is_null()).then(|| unsafe { &*p }));
        self.readers.fetch_sub(1, Ordering::SeqCst);
        out
    }

    /// Replaced copies not yet freed (tests).
    #[cfg(test)]
    pub fn retired(&self) -> usize {
        self.retired.lock().len()
    }
}
