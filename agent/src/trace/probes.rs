//! The probe natives `Probe.traceEnter`, `traceExit`, `traceUnwind`,
//! `traceThrow` and `traceCatch` call: each turns into events on its
//! thread's ring, closing the calls an exception or a missed exit left
//! open.

use super::event::{Event, Kind};
use super::record::record;
use super::thread_state::on_thread;
use super::{Lifetime, Own, ThreadRing};
use crate::vm::Native;
use jni_sys::{jclass, jint, JNIEnv};

/// The probe natives: (name, descriptor, function) for RegisterNatives.
pub fn natives() -> [Native; 5] {
    [
        ("traceEnter", "(I)V", enter as *mut _),
        ("traceExit", "(I)V", exit as *mut _),
        ("traceLeave", "(III)V", leave as *mut _),
        ("traceThrown", "(III)V", thrown as *mut _),
        ("traceCaught", "(III)V", caught as *mut _),
    ]
}

extern "system" fn enter(env: *mut JNIEnv, _class: jclass, method: jint) {
    on_thread(env, |life, tr, own, t| {
        own.ticket += 1;
        own.stack.push((method as u32, own.ticket));
        let depth = own.stack.len() as u32;
        let e = Event::new(Kind::Entry, method as u32, t, own.ticket, depth);
        record(life, tr, own, e);
    })
}

extern "system" fn exit(env: *mut JNIEnv, _class: jclass, method: jint) {
    on_thread(env, |life, tr, own, t| {
        close_to(life, tr, own, method as u32, t)
    })
}

/// Exits `method`'s open call and any above it (calls whose exit was
/// missed: an exception from a super() call, or entered before a resume). An
/// exit with no open call of its own (entered while stopped) is ignored.
fn close_to(life: &Lifetime, tr: &ThreadRing, own: &mut Own, method: u32, t: u64) {
    if let Some(i) = own.stack.iter().rposition(|f| f.0 == method) {
        close_above(life, tr, own, i, t);
    }
}

/// Exits the open calls above the first `keep`, innermost first.
fn close_above(life: &Lifetime, tr: &ThreadRing, own: &mut Own, keep: usize, t: u64) {
    while own.stack.len() > keep {
        let (m, ticket) = own.stack.pop().unwrap_or_default();
        let d = own.stack.len() as u32 + 1;
        record(life, tr, own, Event::new(Kind::Exit, m, t, ticket, d));
    }
}

/// The open call of `method` nearest the top: (ticket, depth), or 0/0.
fn open_call(own: &Own, method: u32) -> (u64, u32) {
    match own.stack.iter().rposition(|f| f.0 == method) {
        Some(i) => (own.stack[i].1, i as u32 + 1),
        None => (0, 0),
    }
}

/// An exception event: `new` if the thread has not seen this object (by
/// identity hash) as its last exception.
fn exception(
    life: &Lifetime,
    tr: &ThreadRing,
    own: &mut Own,
    kind: Kind,
    at: (u32, i32, i32),
    t: u64,
) {
    let (method, ty, hash) = at;
    let (ticket, depth) = open_call(own, method);
    let fresh = own.exception != Some(hash);
    own.exception = Some(hash);
    let kind = match kind {
        Kind::Throw if fresh => Kind::ThrowNew,
        Kind::Catch if fresh => {
            // Raised by the VM or by code out of scope, and caught here: its
            // throw is first seen here.
            let mut e = Event::new(Kind::ThrowNew, method, t, ticket, depth);
            e.extra = ty as u32;
            record(life, tr, own, e);
            Kind::Catch
        }
        k => k,
    };
    let mut e = Event::new(kind, method, t, ticket, depth);
    e.extra = ty as u32;
    record(life, tr, own, e);
}

/// `Probe.traceUnwind`: an exception of type `ty` (hash `hash`) leaves `method`.
extern "system" fn leave(env: *mut JNIEnv, _class: jclass, method: jint, ty: jint, hash: jint) {
    on_thread(env, |life, tr, own, t| {
        if own.exception != Some(hash) {
            // Raised by the VM or by code out of scope: first seen leaving here.
            exception(life, tr, own, Kind::Throw, (method as u32, ty, hash), t);
        }
        close_to(life, tr, own, method as u32, t);
    })
}

/// `Probe.traceThrow`: `method` throws an exception (`athrow`).
extern "system" fn thrown(env: *mut JNIEnv, _class: jclass, method: jint, ty: jint, hash: jint) {
    on_thread(env, |life, tr, own, t| {
        exception(life, tr, own, Kind::Throw, (method as u32, ty, hash), t)
    })
}

/// `Probe.traceCatch`: a handler of `method` catches an exception.
extern "system" fn caught(env: *mut JNIEnv, _class: jclass, method: jint, ty: jint, hash: jint) {
    on_thread(env, |life, tr, own, t| {
        // Calls above the catching one were left by the exception (their
        // unwind probes ran, unless out of scope or missed).
        if let Some(i) = own.stack.iter().rposition(|f| f.0 == method as u32) {
            close_above(life, tr, own, i + 1, t);
        }
        exception(life, tr, own, Kind::Catch, (method as u32, ty, hash), t);
    })
}
