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
//! record pointer ([`THREAD`]) at it and back ([`mounted`], [`unmounting`]), so no probe
//! knows about carriers. A value hears those moments
//! ([`ThreadValue::mounted`], [`ThreadValue::unmounting`]); what a mode
//! keeps per OS thread whatever runs on it (profile's tree of a carrier)
//! is a slot of the carrier's own record ([`with_carrier`]).
//!
//! Following stops when the last mode that needs it stops (`vthreads`):
//! a carrier may then still point at the record of the virtual thread it
//! ran last, whose unmount is no longer posted. Every redirect is stamped
//! with the generation of following it was made in ([`GENERATION`]: odd
//! while following, bumped when it starts and when it stops), and every
//! lookup checks the stamp: a stale one sends the carrier back to its own
//! record without reading the other ([`ThreadState::check`]). A virtual
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

use crate::vm::{Jni, Jvmti};
use parking_lot::Mutex;
use std::any::TypeId;
use std::cell::Cell;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

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

/// Tells a slot's value that its thread ended, then drops it.
type End = unsafe fn(*const (), Option<&Jni>);

/// Tells a slot's value that its virtual thread was mounted (`true`) or
/// unmounts (`false`).
type Moved = unsafe fn(*const (), bool);

/// One slot: its value's type, a pointer to the value, and what ends it.
struct Slot {
    ty: Cell<Option<TypeId>>,
    value: Cell<*const ()>,
    end: Cell<Option<End>>,
    moved: Cell<Option<Moved>>,
}

impl Slot {
    fn empty() -> Slot {
        Slot {
            ty: Cell::new(None),
            value: Cell::new(std::ptr::null()),
            end: Cell::new(None),
            moved: Cell::new(None),
        }
    }
}

/// One thread's record.
pub struct Record {
    slots: [Slot; SLOTS],
    /// A virtual thread's: the generation of following its last mount was
    /// seen in (its values belong to that mount's carrier).
    generation: Cell<u32>,
}

/// The generation of following virtual threads: odd while a mode follows
/// them (the mount and unmount events on), even while none does; bumped
/// by [`start_following`] and [`stop_following`]. A carrier's redirect to a
/// virtual thread's record holds only within the generation it was made in.
static GENERATION: AtomicU32 = AtomicU32::new(0);

thread_local! {
    /// The calling thread's record and, on a carrier, its redirect. Constant
    /// initialiser, no destructor: reading it is one call and a load.
    static THREAD: ThreadState = const {
        ThreadState {
            current: Cell::new(std::ptr::null()),
            own: Cell::new(std::ptr::null()),
            stamp: Cell::new(0),
            mounts: Cell::new(None),
        }
    };
    /// Frees the record when the OS thread exits without a ThreadEnd.
    static EXIT: ExitGuard = const { ExitGuard };
}

/// An OS thread's way to its record.
struct ThreadState {
    /// The record the probes use (null before its first slot): the OS
    /// thread's own, or, while a followed virtual thread is mounted on it
    /// (`stamp` not 0), the virtual thread's.
    current: Cell<*const Record>,
    /// While `current` is redirected: the OS thread's own record (null:
    /// none made yet).
    own: Cell<*const Record>,
    /// The generation the mount that redirected `current` was seen in; 0:
    /// not redirected (set only by the mount and unmount events).
    stamp: Cell<u32>,
    /// The mounts this carrier saw (made at its first).
    mounts: Cell<Option<&'static AtomicU64>>,
}

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
    fn check(&self) {
        let stamp = self.stamp.get();
        if stamp != 0 && stamp != GENERATION.load(Ordering::Acquire) {
            self.unredirect();
        }
    }

    /// The OS thread's own record is current again.
    #[cold]
    #[inline(never)]
    fn unredirect(&self) {
        self.current.set(self.own.replace(std::ptr::null()));
        self.stamp.set(0);
    }

    /// Is a followed virtual thread mounted here (its record current)?
    fn on_virtual(&self) -> bool {
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
fn current() -> &'static Record {
    let p = THREAD.with(|t| {
        t.check();
        t.current.get()
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
    THREAD.with(|t| t.current.set(record));
    record
}

/// A new record, owned by whoever stores the pointer.
fn make_record() -> &'static Record {
    // Registers the exit guard's destructor; a thread already exiting
    // (its destructors running) cannot: its record then leaks.
    let _ = EXIT.try_with(|_| ());
    Box::leak(Box::new(Record {
        slots: std::array::from_fn(|_| Slot::empty()),
        generation: Cell::new(0),
    }))
}

/// The OS thread's own record (not a mounted virtual thread's), made on
/// first use.
fn carrier_record() -> &'static Record {
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

impl Record {
    #[inline(always)]
    fn find<T: ThreadValue>(&self) -> Option<&T> {
        let ty = TypeId::of::<T>();
        for s in &self.slots {
            match s.ty.get() {
                Some(t) if t == ty => {
                    // SAFETY: `insert::<T>` stored a pointer to a live `T`
                    // under T's id; it is freed only by `end_record`,
                    // which first detaches the record from its thread.
                    return Some(unsafe { &*s.value.get().cast::<T>() });
                }
                Some(_) => continue,
                None => return None, // slots fill in order
            }
        }
        None
    }

    fn insert<T: ThreadValue>(&self, held: Held<T>) -> Option<&T> {
        let slot = self.slots.iter().find(|s| s.ty.get().is_none())?;
        let (value, end): (*const T, End) = match held {
            Held::Own(b) => (Box::into_raw(b), end_boxed::<T>),
            Held::Shared(a) => (Arc::into_raw(a), end_shared::<T>),
        };
        slot.value.set(value.cast());
        slot.end.set(Some(end));
        slot.moved.set(Some(moved::<T>));
        slot.ty.set(Some(TypeId::of::<T>()));
        // SAFETY: just stored, alive until `end_record`.
        Some(unsafe { &*value })
    }
}

/// # Safety
/// `p` came from `Box::<T>::into_raw` and is ended once.
unsafe fn end_boxed<T: ThreadValue>(p: *const (), jni: Option<&Jni>) {
    // SAFETY: the caller's promise.
    let b = unsafe { Box::from_raw(p.cast::<T>().cast_mut()) };
    b.thread_ended(jni);
}

/// # Safety
/// `p` came from `Arc::<T>::into_raw` and is ended once.
unsafe fn end_shared<T: ThreadValue>(p: *const (), jni: Option<&Jni>) {
    // SAFETY: the caller's promise.
    let a = unsafe { Arc::from_raw(p.cast::<T>()) };
    a.thread_ended(jni);
}

/// # Safety
/// `p` is a live `T` of a slot (from `Box::into_raw` or `Arc::into_raw`).
unsafe fn moved<T: ThreadValue>(p: *const (), mounted: bool) {
    // SAFETY: the caller's promise.
    let t = unsafe { &*p.cast::<T>() };
    match mounted {
        true => t.mounted(),
        false => t.unmounting(),
    }
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

/// Is the calling thread a virtual thread (one is mounted on this carrier
/// and followed)?
pub fn on_virtual_thread() -> bool {
    THREAD.try_with(ThreadState::on_virtual).unwrap_or(false)
}

/// Tells each value of `record` of a mount (`true`) or an unmount.
fn tell_moved(record: &Record, mounted: bool) {
    for s in &record.slots {
        match (s.moved.get(), s.value.get().is_null()) {
            // SAFETY: `insert` paired this value with its own function;
            // the value lives until its record ends.
            (Some(moved), false) => unsafe { moved(s.value.get(), mounted) },
            (None, _) => return, // slots fill in order
            _ => {}
        }
    }
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
        t.current.replace(std::ptr::null())
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

/// Ends every value of a record, then frees it.
///
/// # Safety
/// `p` came from `make_record`, nothing reaches it any more, and it is
/// freed once.
unsafe fn free_record(p: *const Record, jni: Option<&Jni>) {
    // SAFETY: the caller's promise: a leaked Box of ours, unreachable now.
    let record = unsafe { Box::from_raw(p.cast_mut()) };
    // The last made ends first: a value made by another's first use (trace's
    // ring, made for its first caller) outlives the values that use it.
    for s in record.slots.iter().rev() {
        if let (Some(end), false) = (s.end.get(), s.value.get().is_null()) {
            // SAFETY: `insert` paired this value with its own end function;
            // each slot is ended once, with its record.
            unsafe { end(s.value.get(), jni) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
