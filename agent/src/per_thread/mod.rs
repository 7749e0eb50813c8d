//! What a thread has open, for every mode that keeps something per thread
//! (profile's shadow stack and tree, trace's ring and open calls, alloc's
//! recent classes, memory's counters and log, lock's wait start): one
//! record per thread, owned here and reached through one thread-local
//! pointer, with a typed slot per mode that asked for one.
//!
//! One pointer, not a thread-local per mode: in a shared library each
//! thread-local access is a call (`__tls_get_addr`), and a probe now pays
//! for one. And one place where a record follows a Java thread rather
//! than an OS thread: a record belongs to a Java thread. A platform
//! thread's is its OS thread's; a virtual thread's (JDK 21+) is kept in
//! the JVMTI thread-local storage HotSpot keeps per virtual thread, and
//! HotSpot's mount and unmount events (`vthreads`) point the carrier's
//! record pointer ([`THREAD`](thread_state::THREAD)) at it and back
//! ([`mounted`], [`unmounting`]), so no probe knows about carriers. A
//! value hears those moments ([`ThreadValue::mounted`],
//! [`ThreadValue::unmounting`]); what a mode
//! keeps per OS thread whatever runs on it (profile's tree of a carrier)
//! is a slot of the carrier's own record ([`with_carrier`]).
//!
//! Following stops when the last mode that needs it stops (`vthreads`):
//! a carrier may then still point at the record of the virtual thread it
//! ran last, whose unmount is no longer posted. Every redirect is stamped
//! with the generation of following it was made in
//! ([`GENERATION`](thread_state::GENERATION): odd while following,
//! bumped when it starts and when it stops), and every lookup checks the
//! stamp: a stale one sends the carrier back to its own record without
//! reading the other
//! ([`ThreadState::check`](thread_state::ThreadState::check)). A virtual
//! thread mounted while nothing followed is found again at its first mount
//! once following starts again; until then it uses its carrier's record.
//!
//! A slot is found by its value's type, among the few a thread has (no
//! lock, no hashing). A record lives from the first probe or event that
//! wants a slot on the thread until the thread's JVMTI ThreadEnd
//! ([`thread_ended`], where each value hears [`ThreadValue::thread_ended`]
//! with the thread's JNI, the last made first), a virtual thread's until its VirtualThreadEnd
//! ([`virtual_ended`], on its carrier after its last unmount), or, for a
//! thread that never posts one, until its OS thread exits (without JNI
//! then).
//!
//! The probes' hottest look-ups (`profile`'s, on every call) skip both the
//! thread-local and the search of the record: [`find_cached`] keeps the
//! value found last where the `JNIEnv` the JVM passes every native finds it
//! (`by_env.rs`), forgotten whenever the thread's record changes.
//!
//! The files: `record.rs` one record and its typed slots; `thread_state.rs`
//! the thread-local that reaches it (made on first use, freed with the
//! thread) and the generation its redirects are checked against; `by_env.rs`
//! the values at hand by `JNIEnv`;
//! `virtual_threads.rs` the mount and unmount events that redirect it and a
//! virtual thread's end; here, what the modes call.

mod by_env;
mod record;
mod thread_state;
mod virtual_threads;

pub use thread_state::{start_following, stop_following, thread_ended};
pub use virtual_threads::{mounted, mounts_seen, on_virtual_thread, unmounting, virtual_ended};

use crate::vm::Jni;
use jni_sys::JNIEnv;
use record::Record;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use thread_state::{carrier_record, current, GENERATION, THREAD};

/// The most slots a thread's record holds: one per type of value the
/// modes keep per thread, all modes running at once (a platform thread can
/// hold every type; today's modes have 9, the toy mode 1 more).
/// tests/architecture.rs counts the `ThreadValue` implementations against
/// it. A record of a virtual thread costs its slots too (48 bytes each).
pub const SLOTS: usize = 12;

/// A value a mode keeps per thread.
pub trait ThreadValue: 'static {
    /// The thread ends (its ThreadEnd, on the thread itself; `jni` is
    /// `None` when the OS thread exits without one). The value is dropped
    /// right after.
    fn thread_ended(&self, _jni: Option<&Jni>) {}

    /// The virtual thread whose record holds the value was just mounted on
    /// the calling carrier.
    fn mounted(&self) {}

    /// The virtual thread whose record holds the value is about to unmount
    /// from the calling carrier (still mounted).
    fn unmounting(&self) {}
}

/// How a slot holds its value: its own, or shared with readers on other
/// threads (a dump reading a profile's tree, the trace writer a ring).
pub enum Held<T> {
    Own(Box<T>),
    /// (No mode shares its value now: profile's trees and trace's rings
    /// are read through lists of their own.)
    #[allow(dead_code)]
    Shared(Arc<T>),
}

/// Runs `f` with the calling thread's `T`, made by `make` the first time
/// (`None` from `make`: nothing made, `f` not run, `None` returned).
#[inline(always)]
pub fn with<T: ThreadValue, R>(
    make: impl FnOnce() -> Option<Held<T>>,
    f: impl FnOnce(&T) -> R,
) -> Option<R> {
    in_record(current(), make, f)
}

/// A value a probe looks up on every call, kept at hand ([`find_cached`])
/// after its first look-up: each such type has a slot of its own, below
/// `by_env::CACHED`.
///
/// # Safety
/// No two types may name the same slot: the slot's pointer is read as a
/// `Self`.
pub unsafe trait Cached: ThreadValue {
    const SLOT: usize;
}

/// The calling thread's `T`, for the probes' hottest look-ups, given the `JNIEnv` the JVM
/// passed the probe: the value found last, while the thread's record is
/// the one it was found in, through the `JNIEnv`'s table entry (no
/// thread-local, no search of the record: `by_env.rs`), else through the
/// thread-local. Never panics.
#[inline(always)]
pub fn find_cached<T: Cached>(env: *mut JNIEnv) -> Option<&'static T> {
    let (hit, stamp) = by_env::lookup(env, T::SLOT);
    if !hit.is_null() && (stamp == 0 || stamp == GENERATION.load(Ordering::Acquire)) {
        // SAFETY: kept by this thread (the entry of its `JNIEnv`) as a
        // `&'static T` found in its current record, under T's own slot
        // (`Cached`'s contract), and forgotten when that record stopped being
        // current or its generation of following ended; the record frees
        // its values only once it is out of `current`.
        return Some(unsafe { &*hit.cast::<T>() });
    }
    find_cached_slow::<T>(env)
}

/// [`find_cached`] through the thread-local and a search of the record;
/// keeps what it finds in the thread's entry, if it has one.
#[inline(never)]
fn find_cached_slow<T: Cached>(env: *mut JNIEnv) -> Option<&'static T> {
    THREAD
        .try_with(|t| {
            t.check();
            // SAFETY: as in `current`: a non-null `current` is live.
            let found = unsafe { t.current().as_ref() }?.find::<T>()?;
            // Only an entry the thread has (`env_entry` makes it: this path
            // allocates nothing).
            if let Some(mine) = t.by_env.get() {
                if let Some(e) = by_env::take(env, Some(mine)) {
                    e.keep(T::SLOT, (found as *const T).cast(), t.stamp.get());
                }
            }
            Some(found)
        })
        .ok()
        .flatten()
}

/// Gives the calling thread an entry for `env` in the table [`find_cached`]
/// reads (a probe's first, behind its unwinding guard: this may allocate).
pub fn env_entry(env: *mut JNIEnv) {
    let _ = THREAD.try_with(|t| {
        if t.by_env.get().is_none() {
            t.by_env.set(by_env::take(env, None));
        }
    });
}

/// [`with`] in `record`.
#[inline(always)]
fn in_record<T: ThreadValue, R>(
    record: &'static Record,
    make: impl FnOnce() -> Option<Held<T>>,
    f: impl FnOnce(&T) -> R,
) -> Option<R> {
    match record.find::<T>() {
        Some(t) => Some(f(t)),
        None => {
            let t = made(record, make)?;
            Some(f(t))
        }
    }
}

#[cold]
#[inline(never)]
fn made<T: ThreadValue>(
    record: &'static Record,
    make: impl FnOnce() -> Option<Held<T>>,
) -> Option<&'static T> {
    let held = make()?;
    let t = record.insert(held);
    if t.is_none() {
        crate::log::error_once(
            "per-thread slots",
            "internal error: a thread's record has no free slot; that mode records nothing on it",
        );
    }
    t
}

/// Runs `f` with the calling OS thread's own `T` — a carrier's, not the
/// mounted virtual thread's — made by `make` the first time (as [`with`]).
pub fn with_carrier<T: ThreadValue, R>(
    make: impl FnOnce() -> Option<Held<T>>,
    f: impl FnOnce(&T) -> R,
) -> Option<R> {
    in_record(carrier_record(), make, f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

    static ENDED: AtomicU32 = AtomicU32::new(0);

    struct Counter(Cell<u32>);
    impl ThreadValue for Counter {
        fn thread_ended(&self, jni: Option<&Jni>) {
            assert!(jni.is_none());
            ENDED.fetch_add(self.0.get(), Relaxed);
        }
    }
    struct Other(u32);
    impl ThreadValue for Other {}

    #[test]
    fn slots_by_type_made_once_and_ended_with_the_thread() {
        std::thread::spawn(|| {
            let bump = || {
                with(
                    || Some(Held::Own(Box::new(Counter(Cell::new(0))))),
                    |c| c.0.set(c.0.get() + 1),
                )
            };
            assert!(with(|| None::<Held<Counter>>, |_| ()).is_none());
            bump();
            bump();
            assert_eq!(
                with(|| Some(Held::Shared(Arc::new(Other(5)))), |o| o.0),
                Some(5)
            );
            assert_eq!(with::<Other, _>(|| None, |o| o.0), Some(5));
            bump();
            assert_eq!(with::<Counter, _>(|| None, |c| c.0.get()), Some(3));
            assert!(with(|| None::<Held<Counter>>, |_| ()).is_some());
        })
        .join()
        .unwrap();
        // The OS thread exited without a ThreadEnd: the guard ended it.
        assert_eq!(ENDED.load(Relaxed), 3);
    }
}
