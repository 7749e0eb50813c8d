//! One thread's record: a fixed row of typed slots, each holding one mode's
//! value with the functions that end it and tell it of a mount or unmount
//! (stored with the value, so the record needs no list of types). A slot is
//! found by its value's type among the few a thread has (no lock, no
//! hashing); slots fill in order, and the last made is ended first.

use super::{Held, ThreadValue, SLOTS};
use crate::vm::Jni;
use std::any::TypeId;
use std::cell::Cell;
use std::sync::Arc;

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
    pub(super) generation: Cell<u32>,
}

impl Record {
    /// A record with every slot empty.
    pub(super) fn new() -> Record {
        Record {
            slots: std::array::from_fn(|_| Slot::empty()),
            generation: Cell::new(0),
        }
    }

    #[inline(always)]
    pub(super) fn find<T: ThreadValue>(&'static self) -> Option<&'static T> {
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

    pub(super) fn insert<T: ThreadValue>(&self, held: Held<T>) -> Option<&T> {
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

/// Tells each value of `record` of a mount (`true`) or an unmount.
pub(super) fn tell_moved(record: &Record, mounted: bool) {
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

/// Ends every value of a record, then frees it.
///
/// # Safety
/// `p` came from `make_record`, nothing reaches it any more, and it is
/// freed once.
pub(super) unsafe fn free_record(p: *const Record, jni: Option<&Jni>) {
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
