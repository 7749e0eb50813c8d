//! A probe's way to its thread's values without a thread-local: a table
//! keyed by the `JNIEnv` pointer the JVM passes to every native. In a
//! shared library each thread-local access is a call (`__tls_get_addr`);
//! the table is four loads and three compares (`profile`'s measure, on JDK
//! 25: 2.4 ns a call less, docs/BENCHMARKS.md).
//!
//! A `JNIEnv` is one live Java thread's (a virtual thread's is its
//! carrier's), so an entry whose `env` is the caller's is the caller's own:
//! only the owning thread writes an entry's fields, and clears `env` before
//! its Java thread can go ([`release`], at its record's end), so a new
//! thread that gets the same `JNIEnv` address never finds the old one's.
//! Entries live for good (a free list recycles them): a thread that reads
//! another's entry through a colliding table slot reads valid memory, sees
//! a `env` not its own, and takes the thread-local way. Two threads whose
//! `JNIEnv`s share a table slot do not fight over it: the first keeps it.
//!
//! An entry's values are emptied whenever the thread's record changes
//! (`ThreadState::set_current`), and stamped with the generation of
//! following that record was current in, which the caller checks (a virtual
//! thread's record stops being readable when following stops:
//! `thread_state.rs`). A thread with no entry (its slot taken) searches its
//! record on every look-up, as before the table.

use jni_sys::JNIEnv;
use parking_lot::Mutex;
use std::sync::atomic::{AtomicPtr, AtomicU32, AtomicUsize, Ordering::*};

/// How many values a thread keeps at hand (`find_cached`: one per type
/// that asks, `Cached::SLOT`; only `profile`'s `Caller` does).
pub(super) const CACHED: usize = 1;

/// Table slots: a power of two.
const SLOTS: usize = 4096;

/// One thread's values at hand, found by its `JNIEnv`: a cache line of its
/// own, so that one carrier's writes at a mount never evict another's.
#[repr(align(64))]
pub(super) struct Entry {
    /// The owning thread's `JNIEnv` (0: none, free).
    env: AtomicUsize,
    /// The redirect generation of the record the values are of (0: the
    /// thread's own record).
    stamp: AtomicU32,
    cached: [AtomicPtr<()>; CACHED],
}

static TABLE: [AtomicPtr<Entry>; SLOTS] = [const { AtomicPtr::new(std::ptr::null_mut()) }; SLOTS];

/// Entries no thread holds.
static FREE: Mutex<Vec<&'static Entry>> = Mutex::new(Vec::new());

fn slot(env: usize) -> usize {
    (env >> 4 ^ env >> 16) & (SLOTS - 1)
}

/// The value in slot `index` of the calling thread's entry (null: none)
/// and the redirect stamp of the record it is of (the caller checks it
/// against the generation of following). Never panics.
#[inline(always)]
pub(super) fn lookup(env: *mut JNIEnv, index: usize) -> (*const (), u32) {
    let env = env as usize;
    // SAFETY: a table slot holds null or an entry, and entries are never
    // freed.
    let Some(e) = (unsafe { TABLE[slot(env)].load(Relaxed).as_ref() }) else {
        return (std::ptr::null(), 0);
    };
    if e.env.load(Relaxed) != env {
        return (std::ptr::null(), 0);
    }
    let value = e
        .cached
        .get(index)
        .map_or(std::ptr::null(), |c| c.load(Relaxed));
    (value, e.stamp.load(Relaxed))
}

/// The calling thread's entry for `env`: `mine` (the one its thread state
/// holds) or, if it has none, one made or taken from the free list, put in
/// the table where its slot is free. `None` where another live thread
/// holds the slot and this thread has no entry yet (it then keeps using the
/// thread-local way, and nothing is made).
pub(super) fn take(env: *mut JNIEnv, mine: Option<&'static Entry>) -> Option<&'static Entry> {
    let env = env as usize;
    let at = &TABLE[slot(env)];
    let held = at.load(Acquire);
    // SAFETY: as in `lookup`.
    let free = match unsafe { held.as_ref() } {
        None => true,
        // A free entry, or one that moved to another slot with its thread.
        Some(e) => {
            let owner = e.env.load(Relaxed);
            owner == 0 || (owner != env && slot(owner) != slot(env))
        }
    };
    let e = match mine {
        Some(e) => e,
        None if !free => return None,
        None => FREE.lock().pop().unwrap_or_else(|| {
            Box::leak(Box::new(Entry {
                env: AtomicUsize::new(0),
                stamp: AtomicU32::new(0),
                cached: [const { AtomicPtr::new(std::ptr::null_mut()) }; CACHED],
            }))
        }),
    };
    e.env.store(env, Relaxed);
    if free {
        // Lost to another thread taking the slot at once: the entry stays
        // this thread's, out of the table.
        let _ = at.compare_exchange(held, e as *const Entry as *mut Entry, Release, Relaxed);
    }
    Some(e)
}

impl Entry {
    /// Keeps `value` at `index` for a record of redirect stamp `stamp`.
    pub(super) fn keep(&self, index: usize, value: *const (), stamp: u32) {
        self.stamp.store(stamp, Relaxed);
        if let Some(c) = self.cached.get(index) {
            c.store(value.cast_mut(), Relaxed);
        }
    }

    /// The thread's record changed: nothing kept holds any more.
    pub(super) fn forget(&self) {
        for c in &self.cached {
            c.store(std::ptr::null_mut(), Relaxed);
        }
    }

    /// The thread's record ends: the entry leaves its `JNIEnv` and goes back
    /// to the free list (its table slot keeps pointing at it until another
    /// thread takes the slot; a lookup then finds `env` 0).
    pub(super) fn release(&'static self) {
        self.forget();
        self.env.store(0, Relaxed);
        FREE.lock().push(self);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(v: usize) -> *mut JNIEnv {
        v as *mut JNIEnv
    }

    /// An entry answers its own `JNIEnv` only, until its record changes or
    /// it is released; a second `JNIEnv` of the same table slot keeps the
    /// thread-local way, and takes the slot once the first is gone.
    #[test]
    fn an_entry_answers_its_own_env_only() {
        let a = 0x7f00_0000_1000usize;
        let value = 0x1234usize as *const ();
        let e = take(env(a), None).expect("a free slot");
        assert!(lookup(env(a), 0).0.is_null(), "nothing kept yet");
        e.keep(0, value, 0);
        assert_eq!(lookup(env(a), 0), (value, 0));
        assert!(lookup(env(a), CACHED).0.is_null(), "no such slot");
        assert!(lookup(env(a + 8), 0).0.is_null(), "another env");
        e.forget();
        assert!(lookup(env(a), 0).0.is_null(), "record changed");
        // A redirect's stamp comes with the value.
        e.keep(0, value, 7);
        assert_eq!(lookup(env(a), 0), (value, 7));
        e.keep(0, value, 0);
        // Another thread whose env falls in the same slot.
        let c = a + (1 << 28);
        assert_eq!(slot(c), slot(a));
        assert!(take(env(c), None).is_none(), "the slot is taken");
        assert_eq!(lookup(env(a), 0), (value, 0), "and stays the first's");
        e.release();
        assert!(lookup(env(a), 0).0.is_null(), "released");
        let again = take(env(a), None).expect("the slot is free again");
        assert!(lookup(env(a), 0).0.is_null(), "nothing kept from before");
        again.release();
    }
}
