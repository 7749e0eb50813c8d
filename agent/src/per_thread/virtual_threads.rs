//! Following virtual threads (JDK 21+), on HotSpot's events: a mount points
//! the carrier's record pointer at the mounted virtual thread's record, kept
//! in the JVMTI thread-local storage of that virtual thread, and stamps the
//! redirect with the running generation (`thread_state.rs` says why that
//! makes it safe to follow); an unmount points it back; VirtualThreadEnd
//! frees the record. Each carrier counts the mounts it saw.

use super::record::{free_record, tell_moved, Record};
use super::thread_state::{following, ThreadState, GENERATION, THREAD};
use crate::vm::{Jni, Jvmti};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

impl ThreadState {
    /// Counts a mount event that reached the agent on this carrier: its own counter, which only it
    /// writes (no shared cache line per mount), summed by [`mounts_seen`].
    fn count_mount(&self) {
        let counter = match self.mounts.get() {
            Some(c) => c,
            None => {
                let c: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(0)));
                MOUNT_COUNTERS.lock().push(c);
                self.mounts.set(Some(c));
                c
            }
        };
        counter.store(counter.load(Ordering::Relaxed) + 1, Ordering::Relaxed);
    }
}

/// Every carrier's count of the mounts it saw (one small leak per carrier
/// the JVM ever had: carriers are few and pooled).
static MOUNT_COUNTERS: Mutex<Vec<&'static AtomicU64>> = Mutex::new(Vec::new());

/// How many virtual-thread mounts reached the agent so far (all carriers).
pub fn mounts_seen() -> u64 {
    MOUNT_COUNTERS
        .lock()
        .iter()
        .map(|c| c.load(Ordering::Relaxed))
        .sum()
}

/// Is the calling thread a virtual thread (one is mounted on this carrier
/// and followed)?
pub fn on_virtual_thread() -> bool {
    THREAD.try_with(ThreadState::on_virtual).unwrap_or(false)
}

/// VirtualThreadMount, on the carrier, the virtual thread mounted: the
/// probes use the virtual thread's record from now on (none yet: one is
/// made when a mode wants a slot), and its values hear of it.
pub fn mounted(jvmti: Jvmti) {
    let generation = GENERATION.load(Ordering::Acquire);
    let Ok(Some(p)) = THREAD.try_with(|t| {
        t.count_mount();
        if !following(generation) {
            return None; // posted as following stopped: no redirect
        }
        let p: *const Record = jvmti.current_thread_local().cast_const().cast();
        t.check();
        let previous = t.set_current(p);
        if t.stamp.replace(generation) == 0 {
            t.own.set(previous);
        }
        Some(p)
    }) else {
        return;
    };
    // SAFETY: a record `new_record` stored for the virtual thread, alive
    // until its VirtualThreadEnd.
    if let Some(r) = unsafe { p.as_ref() } {
        r.generation.set(generation);
        tell_moved(r, true);
    }
}

/// VirtualThreadUnmount, on the carrier, the virtual thread still mounted:
/// its values hear of it, and the OS thread's own record is current again.
pub fn unmounting() {
    let _ = THREAD.try_with(|t| {
        let stamp = t.stamp.get();
        if stamp == 0 {
            return; // mounted while nothing followed: it used the carrier's
        }
        if stamp == GENERATION.load(Ordering::Acquire) {
            // SAFETY: as in `current` (a redirect of this generation).
            if let Some(r) = unsafe { t.current().as_ref() } {
                tell_moved(r, false);
            }
        }
        t.unredirect();
    });
}

/// VirtualThreadEnd, on its carrier after its last unmount: every value
/// of its record hears it, then the record goes. (On whether or not a mode
/// follows virtual threads now: a record made while one did is freed.)
pub fn virtual_ended(jvmti: Jvmti, jni: &Jni) {
    let p: *const Record = jvmti.current_thread_local().cast_const().cast();
    if p.is_null() {
        return;
    }
    let _ = THREAD.try_with(|t| {
        if t.current() == p {
            // Its unmount was not seen: the carrier's own record again.
            t.unredirect();
        }
    });
    let _ = jvmti.set_current_thread_local(std::ptr::null());
    // SAFETY: the virtual thread's record (made by `new_record`); it is out
    // of this carrier's `current`, and any other carrier's that still holds
    // it holds it from an earlier generation, which it never reads.
    let record = unsafe { &*p };
    let generation = GENERATION.load(Ordering::Acquire);
    if following(generation) && record.generation.get() != generation {
        // Its last mounts were not seen (nothing followed then): its values
        // still belong to a carrier it ran on before. They move here first,
        // so that what they do at the end (trace's last event into a
        // carrier's ring) is done on the carrier they belong to.
        tell_moved(record, true);
    }
    // SAFETY: as above; nothing reaches it any more.
    unsafe { free_record(p, Some(jni)) };
}
