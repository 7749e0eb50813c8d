//! What a trace keeps per thread: an OS thread's ring ([`CarrierRing`], in
//! its own record), a Java thread's open calls, tickets and last exception
//! ([`Caller`], in its record, following a virtual thread from carrier to
//! carrier), how they are made on a thread's first event, and how a probe
//! reaches them ([`on_thread`]).

use super::event::{Event, Kind};
use super::record::record;
use super::ring::Ring;
use super::{Lifetime, Named, Own, ThreadRing};
use crate::per_thread::{self, Held, ThreadValue};
use crate::threads::ThreadId;
use crate::tsc;
use crate::vm::Jni;
use jni_sys::JNIEnv;
use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::Ordering::*;
use std::sync::Arc;

/// An OS thread's ring, in its own record (a carrier's, not a mounted
/// virtual thread's).
pub(super) struct CarrierRing(Arc<ThreadRing>);

/// The OS thread ended: its ring closes, for the writer to drain and
/// forget (its Java thread's last event is in: a record's values end in
/// the reverse of their making, and its [`Caller`] came after).
impl ThreadValue for CarrierRing {
    fn thread_ended(&self, _jni: Option<&Jni>) {
        self.0.ring.close();
    }
}

/// One Java thread's trace state, in its record: a platform thread's, or
/// a virtual thread's, which goes with it.
pub(super) struct Caller {
    /// Its key in the rings and in [`Lifetime::callers`].
    key: u64,
    life: &'static Lifetime,
    /// The ring of the OS thread it runs on (a virtual thread's is set at
    /// each mount). Touched only by the thread whose record holds it.
    ring: UnsafeCell<Arc<ThreadRing>>,
    /// Touched only by the thread whose record holds it.
    own: UnsafeCell<Own>,
}

impl ThreadValue for Caller {
    /// The thread ends: its last event while recording (not recording, no
    /// event: a stopped trace's file is finished, and nothing may start
    /// another); the writer forgets it once that is written.
    fn thread_ended(&self, _jni: Option<&Jni>) {
        if self.life.recording() {
            // SAFETY: this is the caller's own thread (its record is
            // ending), on the OS thread whose ring it holds.
            let (own, tr) = unsafe { (&mut *self.own.get(), &**self.ring.get()) };
            let e = Event::new(Kind::ThreadEnd, 0, tsc::ticks(), 0, 0);
            record(self.life, tr, own, e);
        } else {
            self.life.callers.lock().remove(&self.key);
        }
    }

    /// A virtual thread was mounted: its events go to this carrier's ring.
    fn mounted(&self) {
        if let Some(ring) = this_ring(self.life) {
            // SAFETY: only the caller's own thread touches `ring`, and it
            // runs this (its mount), holding no reference to it now.
            unsafe { *self.ring.get() = ring };
        }
    }
}

/// The calling thread's trace state, made on its first event while a
/// trace records.
fn first_event(env: *mut JNIEnv) -> Option<Held<Caller>> {
    let host = crate::host::get()?;
    let life = host.state::<Lifetime>();
    if !life.active.load(Relaxed) {
        return None;
    }
    // SAFETY: `env` is what the VM passed to the probe native (or callback)
    // that called this, on this thread: its JNIEnv.
    let jni = unsafe { Jni::from_raw(env) };
    let thread = host.current_thread(&jni);
    let name = per_thread::on_virtual_thread().then(|| virtual_name(host, &jni, thread));
    let ring = this_ring(life)?;
    let key = life.keys.fetch_add(1, Relaxed) + 1;
    life.callers.lock().insert(key, Named { thread, name });
    Some(Held::Own(Box::new(Caller {
        key,
        life,
        ring: UnsafeCell::new(ring),
        own: UnsafeCell::new(Own {
            stack: Vec::with_capacity(64),
            ticket: 0,
            exception: None,
            dropped: 0,
            key,
        }),
    })))
}

/// A virtual thread's name in the trace: its group's and its
/// `Thread.threadId()` (`[virtual threads] 31`), each virtual thread its
/// own thread there.
fn virtual_name(host: &crate::host::Host, jni: &Jni, group: Option<ThreadId>) -> String {
    let group = group
        .and_then(|g| host.threads.name(g))
        .unwrap_or_else(|| crate::threads::VIRTUAL_GROUP.to_owned());
    let id = host.jvmti.current_thread().ok().and_then(|t| {
        let id = jni.java_thread_id(t);
        jni.delete_local_ref(t);
        id
    });
    match id {
        Some(id) => format!("{group} {id}"),
        None => group,
    }
}

/// The calling OS thread's ring, made on its first use.
fn this_ring(life: &'static Lifetime) -> Option<Arc<ThreadRing>> {
    per_thread::with_carrier(
        || {
            let tr = Arc::new(ThreadRing {
                ring: Ring::new(),
                last: Cell::new(0),
            });
            life.rings.lock().push(tr.clone());
            Some(Held::Own(Box::new(CarrierRing(tr))))
        },
        |c: &CarrierRing| c.0.clone(),
    )
}

/// A probe's work on the calling thread's ring, given the time read first;
/// nothing when no trace records.
#[inline(always)]
pub(super) fn on_thread(
    env: *mut JNIEnv,
    work: impl FnOnce(&Lifetime, &ThreadRing, &mut Own, u64),
) {
    let t = tsc::ticks();
    crate::vm::guard_hot("trace probe", (), || {
        per_thread::with(
            || first_event(env),
            |caller: &Caller| {
                if caller.life.active.load(Relaxed) {
                    // SAFETY: only the thread whose record holds the caller
                    // touches its `own` and `ring`; the ring is the OS
                    // thread's it runs on (set at its first event and at
                    // each mount), kept alive by the caller's Arc.
                    let (own, tr) = unsafe { (&mut *caller.own.get(), &**caller.ring.get()) };
                    work(caller.life, tr, own, t)
                }
            },
        );
    })
}
