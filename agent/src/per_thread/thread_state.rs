//! An OS thread's way to its record: one thread-local ([`THREAD`]) whose
//! `current` pointer the probes read, made on first use, freed at the
//! thread's ThreadEnd or, without one, when the OS thread exits. While a
//! followed virtual thread is mounted, `current` is redirected to that
//! thread's record (by `virtual_threads.rs`, on the mount events); the
//! redirect is stamped with the generation of following ([`GENERATION`],
//! bumped here when following starts and stops) and checked against it at
//! every lookup ([`ThreadState::check`]), so a carrier goes back to its own
//! record, unread, once following stops.

use super::by_env::Entry;
use super::record::{free_record, Record};
use crate::vm::{Jni, Jvmti};
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::OnceLock;

thread_local! {
    /// The calling thread's record and, on a carrier, its redirect. Constant
    /// initialiser, no destructor: reading it is one call and a load.
    pub(super) static THREAD: ThreadState = const {
        ThreadState {
            current: Cell::new(std::ptr::null()),
            by_env: Cell::new(None),
            own: Cell::new(std::ptr::null()),
            stamp: Cell::new(0),
            mounts: Cell::new(None),
        }
    };
    /// Frees the record when the OS thread exits without a ThreadEnd.
    static EXIT: ExitGuard = const { ExitGuard };
}

/// An OS thread's way to its record.
pub(super) struct ThreadState {
    /// The record the probes use (null before its first slot): the OS
    /// thread's own, or, while a followed virtual thread is mounted on it
    /// (`stamp` not 0), the virtual thread's.
    current: Cell<*const Record>,
    /// Values of `current` found before (`find_cached`), kept where the
    /// thread's `JNIEnv` finds them (`by_env.rs`): its entry there, once it
    /// has one. Emptied whenever `current` changes
    /// ([`ThreadState::set_current`]), so a value it holds is one of the
    /// live `current`.
    pub(super) by_env: Cell<Option<&'static Entry>>,
    /// While `current` is redirected: the OS thread's own record (null:
    /// none made yet).
    pub(super) own: Cell<*const Record>,
    /// The generation the mount that redirected `current` was seen in; 0:
    /// not redirected (set only by the mount and unmount events).
    pub(super) stamp: Cell<u32>,
    /// The mounts this carrier saw (made at its first).
    pub(super) mounts: Cell<Option<&'static AtomicU64>>,
}

/// The generation of following virtual threads: odd while a mode follows
/// them (the mount and unmount events on), even while none does; bumped
/// by [`start_following`] and [`stop_following`]. A carrier's redirect to a
/// virtual thread's record holds only within the generation it was made in.
pub(super) static GENERATION: AtomicU32 = AtomicU32::new(0);

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
        self.set_current(self.own.replace(std::ptr::null()));
        self.stamp.set(0);
    }

    /// The record the probes use from now on; the values kept at hand go
    /// with the one before. Answers that one.
    pub(super) fn set_current(&self, record: *const Record) -> *const Record {
        if let Some(e) = self.by_env.get() {
            e.forget();
        }
        self.current.replace(record)
    }

    /// The record the probes use (null: none yet).
    #[inline(always)]
    pub(super) fn current(&self) -> *const Record {
        self.current.get()
    }

    /// Is a followed virtual thread mounted here (its record current)?
    pub(super) fn on_virtual(&self) -> bool {
        self.check();
        self.stamp.get() != 0
    }
}

/// Is `generation` one of following (odd)?
pub(super) fn following(generation: u32) -> bool {
    generation & 1 == 1
}

/// The JVMTI environment that keeps virtual threads' records in its
/// thread-local storage (set by the first [`start_following`]: a record is
/// a virtual thread's only while following).
static FOLLOWING_WITH: OnceLock<Jvmti> = OnceLock::new();

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

struct ExitGuard;

impl Drop for ExitGuard {
    fn drop(&mut self) {
        end_record(None);
    }
}

/// The record of the calling thread, made on first use.
#[inline(always)]
pub(super) fn current() -> &'static Record {
    let p = THREAD.with(|t| {
        t.check();
        t.current()
    });
    if p.is_null() {
        return new_record();
    }
    // SAFETY: made by `new_record` (a leaked Box) and freed only by
    // `end_record` or `virtual_ended`, which first take it out of the
    // thread's `current` (a virtual thread's is out of every carrier's
    // `current` of this generation once it has unmounted for the last time,
    // and `check` just dropped one of an earlier generation): a non-null
    // `current` is live.
    unsafe { &*p }
}

#[cold]
#[inline(never)]
fn new_record() -> &'static Record {
    let stamp = THREAD
        .try_with(|t| t.on_virtual().then(|| t.stamp.get()))
        .ok()
        .flatten();
    let record = make_record();
    if let Some(generation) = stamp {
        // A virtual thread's record goes with it, in its JVMTI storage. If
        // the VM refuses, it lasts until the unmount, and leaks.
        record.generation.set(generation);
        if let Some(jvmti) = FOLLOWING_WITH.get() {
            let _ = jvmti.set_current_thread_local((record as *const Record).cast());
        }
    }
    THREAD.with(|t| t.set_current(record));
    record
}

/// A new record, owned by whoever stores the pointer.
fn make_record() -> &'static Record {
    // Registers the exit guard's destructor; a thread already exiting
    // (its destructors running) cannot: its record then leaks.
    let _ = EXIT.try_with(|_| ());
    Box::leak(Box::new(Record::new()))
}

/// The OS thread's own record (not a mounted virtual thread's), made on
/// first use.
pub(super) fn carrier_record() -> &'static Record {
    let own = THREAD
        .try_with(|t| match t.on_virtual() {
            true => Some(match t.own.get() {
                p if p.is_null() => {
                    let r = make_record();
                    t.own.set(r);
                    r as *const Record
                }
                p => p,
            }),
            false => None,
        })
        .ok()
        .flatten();
    match own {
        // SAFETY: the carrier's own record, made by `make_record` and
        // freed only by `end_record` once it is current again.
        Some(p) => unsafe { &*p },
        None => current(),
    }
}

/// The calling thread's ThreadEnd: every value hears it, then the record
/// goes. Something that wants a slot later on this thread gets a new record.
pub fn thread_ended(jni: &Jni) {
    end_record(Some(jni));
}

fn end_record(jni: Option<&Jni>) {
    // A virtual thread's record, current or left from an earlier generation,
    // is not the OS thread's: its own end frees it.
    let Ok(p) = THREAD.try_with(|t| {
        if t.stamp.get() != 0 {
            t.unredirect();
        }
        let p = t.set_current(std::ptr::null());
        if let Some(e) = t.by_env.take() {
            e.release();
        }
        p
    }) else {
        return;
    };
    if p.is_null() {
        return;
    }
    // SAFETY: made by `make_record`; detached from the thread just now, so
    // nothing reaches it any more.
    unsafe { free_record(p, jni) };
}
