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
//! [`CURRENT`] at it and back ([`mounted`], [`unmounting`]), so no probe
//! knows about carriers. A value hears those moments
//! ([`ThreadValue::mounted`], [`ThreadValue::unmounting`]); what a mode
//! keeps per OS thread whatever runs on it (profile's tree of a carrier)
//! is a slot of the carrier's own record ([`with_carrier`]).
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
use std::any::TypeId;
use std::cell::Cell;
use std::sync::Arc;

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
}

thread_local! {
    /// The calling thread's record (null before its first slot). Constant
    /// initialiser, no destructor: reading it is one call and a load.
    static CURRENT: Cell<*const Record> = const { Cell::new(std::ptr::null()) };
    /// Frees the record when the OS thread exits without a ThreadEnd.
    static EXIT: ExitGuard = const { ExitGuard };
    /// What a carrier keeps while a virtual thread is mounted on it (set
    /// only by the mount and unmount events).
    static CARRIER: Carrier = const {
        Carrier {
            own: Cell::new(std::ptr::null()),
            mounted: Cell::new(false),
        }
    };
}

/// A carrier's side of a mount.
struct Carrier {
    /// While a virtual thread is mounted: the OS thread's own record
    /// (null: none made yet).
    own: Cell<*const Record>,
    /// A virtual thread is mounted (seen by its mount event): [`CURRENT`]
    /// is its record.
    mounted: Cell<bool>,
}

struct ExitGuard;

impl Drop for ExitGuard {
    fn drop(&mut self) {
        // A virtual thread still mounted keeps its record (its end frees it).
        let own = CARRIER.try_with(|c| {
            c.mounted
                .replace(false)
                .then(|| c.own.replace(std::ptr::null()))
        });
        if let Ok(Some(own)) = own {
            let _ = CURRENT.try_with(|c| c.set(own));
        }
        end_record(None);
    }
}

/// The record of the calling thread, made on first use.
#[inline(always)]
fn current() -> &'static Record {
    let p = CURRENT.with(Cell::get);
    if p.is_null() {
        return new_record();
    }
    // SAFETY: made by `new_record` (a leaked Box) and freed only by
    // `end_record` or `virtual_ended`, which first take it out of CURRENT
    // (a virtual thread's is out of every carrier's CURRENT once it has
    // unmounted for the last time): a non-null CURRENT is live.
    unsafe { &*p }
}

#[cold]
#[inline(never)]
fn new_record() -> &'static Record {
    let is_virtual = CARRIER.try_with(|c| c.mounted.get()).unwrap_or(false);
    let record = make_record();
    if is_virtual {
        // A virtual thread's record goes with it, in its JVMTI storage. If
        // the VM refuses, it lasts until the unmount, and leaks.
        if let Some(host) = crate::host::get() {
            let _ = host
                .jvmti
                .set_current_thread_local((record as *const Record).cast());
        }
    }
    CURRENT.with(|c| c.set(record));
    record
}

/// A new record, owned by whoever stores the pointer.
fn make_record() -> &'static Record {
    // Registers the exit guard's destructor; a thread already exiting
    // (its destructors running) cannot: its record then leaks.
    let _ = EXIT.try_with(|_| ());
    Box::leak(Box::new(Record {
        slots: std::array::from_fn(|_| Slot::empty()),
    }))
}

/// The OS thread's own record (not a mounted virtual thread's), made on
/// first use.
fn carrier_record() -> &'static Record {
    let own = CARRIER
        .try_with(|c| match c.mounted.get() {
            true => Some(match c.own.get() {
                p if p.is_null() => {
                    let r = make_record();
                    c.own.set(r);
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
    CARRIER.try_with(|c| c.mounted.get()).unwrap_or(false)
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
    let p: *const Record = jvmti.current_thread_local().cast_const().cast();
    let Ok(()) = CARRIER.try_with(|c| {
        let current = CURRENT.with(|cur| cur.replace(p));
        if !c.mounted.replace(true) {
            c.own.set(current);
        }
    }) else {
        return;
    };
    // SAFETY: a record `new_record` stored for the virtual thread, alive
    // until its VirtualThreadEnd.
    if let Some(r) = unsafe { p.as_ref() } {
        tell_moved(r, true);
    }
}

/// VirtualThreadUnmount, on the carrier, the virtual thread still mounted:
/// its values hear of it, and the OS thread's own record is current again.
pub fn unmounting() {
    let _ = CARRIER.try_with(|c| {
        if !c.mounted.get() {
            return; // mounted before the events were on: it used the carrier's
        }
        let p = CURRENT.with(Cell::get);
        // SAFETY: as in `current`.
        if let Some(r) = unsafe { p.as_ref() } {
            tell_moved(r, false);
        }
        c.mounted.set(false);
        CURRENT.with(|cur| cur.set(c.own.replace(std::ptr::null())));
    });
}

/// VirtualThreadEnd, on its carrier after its last unmount: every value
/// of its record hears it, then the record goes.
pub fn virtual_ended(jvmti: Jvmti, jni: &Jni) {
    let p: *const Record = jvmti.current_thread_local().cast_const().cast();
    if p.is_null() {
        return;
    }
    let _ = CARRIER.try_with(|c| {
        if CURRENT.with(Cell::get) == p {
            // Its unmount was not seen: the carrier's own record again.
            CURRENT.with(|cur| cur.set(c.own.replace(std::ptr::null())));
            c.mounted.set(false);
        }
    });
    let _ = jvmti.set_current_thread_local(std::ptr::null());
    // SAFETY: the virtual thread's record (made by `new_record`), out of
    // every carrier's CURRENT now; nothing reaches it any more.
    unsafe { free_record(p, Some(jni)) };
}

/// The calling thread's ThreadEnd: every value hears it, then the record
/// goes. Something that wants a slot later on this thread gets a new record.
pub fn thread_ended(jni: &Jni) {
    end_record(Some(jni));
}

fn end_record(jni: Option<&Jni>) {
    let Ok(p) = CURRENT.try_with(|c| c.replace(std::ptr::null())) else {
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
