//! One record per Java thread, for the modes that keep something per
//! thread that must follow a virtual thread: a slot per mode ([`Slot`]),
//! holding a pointer to that mode's value, made by the mode on the
//! thread's first probe or event that needs it.
//!
//! The probes reach the record through one thread-local pointer of the OS
//! thread ([`current`]). A platform thread's record is its OS thread's. A
//! virtual thread's is kept in HotSpot's JVMTI thread-local storage of the
//! virtual thread (read without a VM transition), and the mount and
//! unmount events point the carrier's pointer at it and back again
//! ([`mounted`], [`unmounting`]), so nothing else in the modes knows about
//! carriers. A mode can hear those moments ([`Hooks`]): `profile` moves a
//! virtual thread's open calls onto the carrier's tree at a mount and
//! keeps its CPU clock apart from the carrier's.
//!
//! Who frees what: a platform thread's record goes at its ThreadEnd
//! ([`thread_ended`]), a virtual thread's at its VirtualThreadEnd
//! ([`virtual_ended`]); each value in it hears [`Hooks::ended`] first, on
//! the ending thread (for a virtual thread: on its carrier, just after its
//! last unmount).

use crate::threads::ThreadId;
use crate::vm::{Jni, Jvmti};
use std::cell::Cell;

/// The modes' slots in a record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Slot {
    /// `profile`'s caller: its open calls and CPU clock.
    Profile = 0,
    /// `trace`'s caller: its open calls, tickets and last exception.
    Trace = 1,
    /// `lock`'s wait starts (monitor, park).
    Lock = 2,
}

const SLOTS: usize = 3;

/// What a mode does with its value in a record at the moments the record
/// changes hands. Each function gets the slot's (non-null) pointer, on the
/// thread the record is current on.
pub struct Hooks {
    /// The record's virtual thread was just mounted on this carrier.
    pub mounted: Option<fn(*const ())>,
    /// The record's virtual thread is about to unmount from this carrier.
    pub unmounting: Option<fn(*const ())>,
    /// The thread ended: the value's last call; it must free the value.
    ///
    /// # Safety
    /// (for the implementer) called once per value, with the pointer the
    /// mode stored, after which no probe can reach it.
    pub ended: unsafe fn(*const ()),
}

/// Each slot's hooks, in [`Slot`] order.
const HOOKS: [&Hooks; SLOTS] = [
    &crate::profile::RECORD_HOOKS,
    &crate::trace::RECORD_HOOKS,
    &crate::lock::RECORD_HOOKS,
];

/// One Java thread's record.
pub struct Record {
    slots: [Cell<*const ()>; SLOTS],
    /// The agent's id of the thread (a virtual thread's group's), + 1; 0
    /// before it is asked.
    identity: Cell<u32>,
    is_virtual: bool,
}

impl Record {
    fn new(is_virtual: bool) -> Record {
        Record {
            slots: Default::default(),
            identity: Cell::new(0),
            is_virtual,
        }
    }

    /// The mode's value in `slot` (null before the mode made one).
    #[inline(always)]
    pub fn get(&self, slot: Slot) -> *const () {
        self.slots[slot as usize].get()
    }

    /// Stores the mode's value, which the record owns from now on (it
    /// ends it with [`Hooks::ended`]).
    pub fn set(&self, slot: Slot, value: *const ()) {
        self.slots[slot as usize].set(value)
    }

    /// A virtual thread's record?
    pub fn is_virtual(&self) -> bool {
        self.is_virtual
    }

    /// The agent's id of the thread — of its group, for a virtual thread —
    /// asked of the thread registry once (`None` for the agent's own
    /// threads or when the VM refuses).
    pub fn identity(&self, jni: &Jni) -> Option<ThreadId> {
        match self.identity.get() {
            0 => {
                let a = crate::agent::get()?;
                let id = a.threads.current(a.jvmti, jni)?;
                self.identity.set(id.0 + 1);
                Some(id)
            }
            n => Some(ThreadId(n - 1)),
        }
    }

    /// Ends every value (their `ended` hooks) and frees the record.
    ///
    /// # Safety
    /// `p` came from [`Box::into_raw`] in this file and no thread can reach
    /// it any more.
    unsafe fn end(p: *const Record) {
        // SAFETY: the caller's promise: a Box of ours, unreachable now.
        let record = unsafe { Box::from_raw(p.cast_mut()) };
        for (slot, hooks) in record.slots.iter().zip(HOOKS) {
            let value = slot.get();
            if !value.is_null() {
                // SAFETY: the mode's own value in its slot, ended once here.
                unsafe { (hooks.ended)(value) };
            }
        }
    }
}

/// What the OS thread runs as: its own record, or the mounted virtual
/// thread's. One thread-local for the three (a shared library pays a call
/// per thread-local it reads).
struct Carrier {
    /// The record the probes use now (null: none made yet).
    current: Cell<*const Record>,
    /// While a virtual thread is mounted: the OS thread's own record.
    own: Cell<*const Record>,
    /// A virtual thread is mounted (seen by its mount event).
    mounted: Cell<bool>,
}

thread_local! {
    static CARRIER: Carrier = const {
        Carrier {
            current: Cell::new(std::ptr::null()),
            own: Cell::new(std::ptr::null()),
            mounted: Cell::new(false),
        }
    };
}

/// The calling thread's record (the mounted virtual thread's, on a
/// carrier), made on first use; `None` only while the OS thread exits.
#[inline(always)]
pub fn current() -> Option<&'static Record> {
    let p = CARRIER.try_with(|c| c.current.get()).ok()?;
    if p.is_null() {
        return new_record();
    }
    // SAFETY: made by `new_record` and freed only by `thread_ended` or
    // `virtual_ended`, which first take it out of `current` (a virtual
    // thread's is out of every carrier's `current` once it has unmounted
    // for the last time, before its VirtualThreadEnd).
    Some(unsafe { &*p })
}

#[cold]
#[inline(never)]
fn new_record() -> Option<&'static Record> {
    let mounted = CARRIER.try_with(|c| c.mounted.get()).ok()?;
    let p = Box::into_raw(Box::new(Record::new(mounted))).cast_const();
    if mounted {
        // A virtual thread's record goes with it, in its JVMTI storage. If
        // the VM refuses, it lasts until the unmount (and leaks).
        if let Some(a) = crate::agent::get() {
            let _ = a.jvmti.set_current_thread_local(p.cast());
        }
    }
    let _ = CARRIER.try_with(|c| c.current.set(p));
    // SAFETY: just made; freed only as `current` says.
    Some(unsafe { &*p })
}

/// VirtualThreadMount, on the carrier: the probes use the virtual thread's
/// record from now on (none yet: one is made when a mode needs it).
pub fn mounted(jvmti: Jvmti) {
    let p: *const Record = jvmti.current_thread_local().cast_const().cast();
    let _ = CARRIER.try_with(|c| {
        if !c.mounted.replace(true) {
            c.own.set(c.current.get());
        }
        c.current.set(p);
    });
    // SAFETY: a record this file stored for the virtual thread, alive until
    // its VirtualThreadEnd.
    if let Some(r) = unsafe { p.as_ref() } {
        for (slot, hooks) in r.slots.iter().zip(HOOKS) {
            if let (false, Some(hook)) = (slot.get().is_null(), hooks.mounted) {
                hook(slot.get());
            }
        }
    }
}

/// VirtualThreadUnmount, on the carrier, the virtual thread still mounted:
/// the OS thread's own record is current again.
pub fn unmounting() {
    let _ = CARRIER.try_with(|c| {
        if !c.mounted.replace(false) {
            return; // mounted before the events were on: it used the carrier's
        }
        // SAFETY: as in `current`.
        if let Some(r) = unsafe { c.current.get().as_ref() } {
            for (slot, hooks) in r.slots.iter().zip(HOOKS) {
                if let (false, Some(hook)) = (slot.get().is_null(), hooks.unmounting) {
                    hook(slot.get());
                }
            }
        }
        c.current.set(c.own.replace(std::ptr::null()));
    });
}

/// VirtualThreadEnd, on its carrier after its last unmount: its record
/// ends.
pub fn virtual_ended(jvmti: Jvmti) {
    let p: *const Record = jvmti.current_thread_local().cast_const().cast();
    if p.is_null() {
        return;
    }
    let _ = CARRIER.try_with(|c| {
        if c.current.get() == p {
            // Its unmount was not seen: the carrier's own record again.
            c.current.set(c.own.replace(std::ptr::null()));
            c.mounted.set(false);
        }
    });
    // SAFETY: the virtual thread's record (made by `new_record`), out of
    // every carrier's `current` now; HotSpot drops its storage next.
    unsafe { Record::end(p) };
}

/// ThreadEnd, on the ending platform thread: its record ends. Something
/// that needs a record later on this OS thread gets a new one.
pub fn thread_ended() {
    let Ok(p) = CARRIER.try_with(|c| c.current.replace(std::ptr::null())) else {
        return;
    };
    if !p.is_null() {
        // SAFETY: the OS thread's own record, taken out of `current` just
        // now: nothing reaches it any more.
        unsafe { Record::end(p) };
    }
}
