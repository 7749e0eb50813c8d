//! Following virtual threads (JDK 21+): HotSpot's mount and unmount events
//! point a carrier's record pointer at the mounted virtual thread's record,
//! kept in the JVMTI thread-local storage of that virtual thread, and back;
//! its VirtualThreadEnd frees it. Every redirect is stamped with the
//! generation of following it was made in ([`GENERATION`]), and every
//! lookup checks the stamp ([`ThreadState::check`]): once following stops,
//! a carrier goes back to its own record without reading the other.

use super::record::{free_record, tell_moved, Record};
use super::thread_state::{ThreadState, THREAD};
use crate::vm::{Jni, Jvmti};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;

/// The generation of following virtual threads: odd while a mode follows
/// them (the mount and unmount events on), even while none does; bumped
/// by [`start_following`] and [`stop_following`]. A carrier's redirect to a
/// virtual thread's record holds only within the generation it was made in.
static GENERATION: AtomicU32 = AtomicU32::new(0);

impl ThreadState {
    /// Sends a redirect made in an earlier generation back to the OS
    /// thread's own record, without reading the record it pointed at.
    ///
    /// Why a redirect of the running generation is safe to follow: the
    /// generation changes (`stop_following`) before the events go off, so
    /// while it holds, every unmount on this carrier was posted and undid
    /// its redirect: the virtual thread is still mounted here, running this
    /// code, and cannot end (its record is freed only at its end). Once it
    /// changed, the thread may have gone without a word, and its record
    /// with it: the pointer is dropped unread. (The stamp is loaded with
    /// Acquire and the generation stored before the VM is asked to stop
    /// posting: a carrier that no longer sees the unmount sees the new
    /// generation.)
    #[inline(always)]
    pub(super) fn check(&self) {
        let stamp = self.stamp.get();
        if stamp != 0 && stamp != GENERATION.load(Ordering::Acquire) {
            self.unredirect();
        }
    }

    /// The OS thread's own record is current again.
    #[cold]
    #[inline(never)]
    pub(super) fn unredirect(&self) {
        self.current.set(self.own.replace(std::ptr::null()));
        self.stamp.set(0);
    }

    /// Is a followed virtual thread mounted here (its record current)?
    pub(super) fn on_virtual(&self) -> bool {
        self.check();
        self.stamp.get() != 0
    }

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

/// Is `generation` one of following (odd)?
fn following(generation: u32) -> bool {
    generation & 1 == 1
}

/// The JVMTI environment that keeps virtual threads' records in its
/// thread-local storage (set by the first [`start_following`]: a record is
/// a virtual thread's only while following).
pub(super) static FOLLOWING_WITH: OnceLock<Jvmti> = OnceLock::new();

/// A mode starts following virtual threads (`vthreads`, before it turns
/// the mount events on, with `jvmti`, whose thread-local storage keeps
/// their records): the next generation, odd.
pub fn start_following(jvmti: Jvmti) {
    let _ = FOLLOWING_WITH.set(jvmti);
    let _ = GENERATION.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |g| {
        Some(if following(g) { g } else { g + 1 })
    });
}

/// The last mode that followed virtual threads stopped (`vthreads`, before
/// it turns the mount events off): the next generation, even. From now on
/// no carrier reads a record a mount pointed it at ([`ThreadState::check`]),
/// and a mount posted late redirects nothing.
pub fn stop_following() {
    let _ = GENERATION.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |g| {
        Some(if following(g) { g + 1 } else { g })
    });
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
        let previous = t.current.replace(p);
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
            if let Some(r) = unsafe { t.current.get().as_ref() } {
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
        if t.current.get() == p {
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
