//! What a thread has open, for every mode that keeps something per thread
//! (profile's shadow stack and tree, trace's ring and open calls, alloc's
//! recent classes, memory's counters and log, lock's wait start): one
//! record per thread, owned here and reached through one thread-local
//! pointer, with a typed slot per mode that asked for one.
//!
//! One pointer, not a thread-local per mode: in a shared library each
//! thread-local access is a call (`__tls_get_addr`), and a probe now pays
//! for one. And one place to change when a record must follow a Java
//! thread rather than an OS thread: a virtual thread mounted on a carrier
//! would point the carrier's [`CURRENT`] at the virtual thread's record
//! (see [`current`]; nothing else reads the pointer).
//!
//! A slot is found by its value's type, among the few a thread has (no
//! lock, no hashing). A record lives from the first probe or event that
//! wants a slot on the thread until the thread's JVMTI ThreadEnd
//! ([`thread_ended`], where each value hears [`ThreadValue::thread_ended`]
//! with the thread's JNI), or, for a thread that never posts one, until
//! its OS thread exits (without JNI then).

use crate::vm::Jni;
use std::any::TypeId;
use std::cell::Cell;
use std::sync::Arc;

/// The most slots a thread's record holds: one per mode at most.
pub const SLOTS: usize = 8;

/// A value a mode keeps per thread.
pub trait ThreadValue: 'static {
    /// The thread ends (its ThreadEnd, on the thread itself; `jni` is
    /// `None` when the OS thread exits without one). The value is dropped
    /// right after.
    fn thread_ended(&self, _jni: Option<&Jni>) {}
}

/// How a slot holds its value: its own, or shared with readers on other
/// threads (a dump reading a profile's tree, the trace writer a ring).
pub enum Held<T> {
    Own(Box<T>),
    Shared(Arc<T>),
}

/// Tells a slot's value that its thread ended, then drops it.
type End = unsafe fn(*const (), Option<&Jni>);

/// One slot: its value's type, a pointer to the value, and what ends it.
struct Slot {
    ty: Cell<Option<TypeId>>,
    value: Cell<*const ()>,
    end: Cell<Option<End>>,
}

impl Slot {
    fn empty() -> Slot {
        Slot {
            ty: Cell::new(None),
            value: Cell::new(std::ptr::null()),
            end: Cell::new(None),
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
    let p = CURRENT.with(Cell::get);
    if p.is_null() {
        return new_record();
    }
    // SAFETY: made by `new_record` (a leaked Box) and freed only by
    // `end_record`, which first clears CURRENT: a non-null CURRENT is live.
    unsafe { &*p }
}

#[cold]
#[inline(never)]
fn new_record() -> &'static Record {
    let record: &'static Record = Box::leak(Box::new(Record {
        slots: std::array::from_fn(|_| Slot::empty()),
    }));
    CURRENT.with(|c| c.set(record));
    // Registers the exit guard's destructor; a thread already exiting
    // (its destructors running) cannot: its record then leaks.
    let _ = EXIT.try_with(|_| ());
    record
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

/// Runs `f` with the calling thread's `T`, made by `make` the first time
/// (`None` from `make`: nothing made, `f` not run, `None` returned).
#[inline(always)]
pub fn with<T: ThreadValue, R>(
    make: impl FnOnce() -> Option<Held<T>>,
    f: impl FnOnce(&T) -> R,
) -> Option<R> {
    let record = current();
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
    // SAFETY: made by `new_record` with Box::leak; detached from the thread
    // just now, so nothing reaches it any more: freed once, here.
    let record = unsafe { Box::from_raw(p.cast_mut()) };
    for s in &record.slots {
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
