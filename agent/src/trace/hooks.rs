//! What other modes hand to a running trace: `memory`'s tracked objects
//! (`objAlloc`, and `objFree` with weak references), `alloc`'s samples
//! (`objAlloc` of the sampled objects, when `memory` is not on) and
//! `lock`'s contended monitors (`monitorContendedEnter`/`Entered`). Each
//! returns at once when no trace is recording (one load).

use super::event::{Event, Kind};
use super::{on_thread, record, recording};
use crate::tsc;
use crate::vm::Jni;

/// `memory` tracked an object made at `site`; `key`: its weak reference
/// (its identity until it dies), 0 when it has none (tags).
pub fn object_allocated(jni: &Jni, site: u32, key: u64) {
    // Checked before `on_thread` reads the clock: `memory`'s every
    // allocation comes here, and without a trace it must cost one load.
    if recording().is_none() {
        return;
    }
    on_thread(jni.as_raw(), |life, tr, own, t| {
        record(life, tr, own, Event::new(Kind::ObjAlloc, site, t, key, 0))
    })
}

/// `memory`'s agent thread found these objects dead (their weak references,
/// as given to [`object_allocated`]), after a GC.
pub fn objects_freed(keys: impl Iterator<Item = u64>) {
    let Some(life) = recording() else {
        return;
    };
    let t = tsc::ticks();
    let mut q = life.vm_events.lock();
    q.extend(keys.map(|k| Event::new(Kind::ObjFree, 0, t, k, 0)));
}

/// `alloc` sampled an object of class `ty` (a type id) and `size` bytes.
/// Left out when `memory` traces every object already.
pub fn object_sampled(jni: &Jni, ty: u32, size: u64) {
    if crate::agent::host().is_some_and(|h| h.memory.is_active()) {
        return;
    }
    on_thread(jni.as_raw(), |life, tr, own, t| {
        let mut e = Event::new(Kind::ObjSample, ty, t, 0, size.min(u32::MAX as u64) as u32);
        e.extra = ty;
        record(life, tr, own, e)
    })
}

/// `lock`: the thread is about to wait for the monitor of an object of
/// type `ty` with identity hash `hash` (`entered`: it has it now).
pub fn monitor(jni: &Jni, entered: bool, ty: u32, hash: i32) {
    let kind = match entered {
        true => Kind::MonitorEntered,
        false => Kind::MonitorEnter,
    };
    on_thread(jni.as_raw(), |life, tr, own, t| {
        let mut e = Event::new(kind, 0, t, hash as u32 as u64, 0);
        e.extra = ty;
        record(life, tr, own, e)
    })
}

/// Is a trace recording? (For callers that must do work to call a hook.)
pub fn on() -> bool {
    recording().is_some()
}
