//! What a running trace hears besides its probes: garbage collections
//! (`gcStart`/`gcFinish`), objects another mode tracked (`objAlloc`, and
//! `objFree` when their deaths are told), sampled allocations (`objAlloc`
//! of the sampled objects, when no mode tracks every object), and waits for
//! contended monitors and locks (`monitorContendedEnter`/`Entered`). Each
//! returns at once when no trace records (one load).

use super::event::{Event, Kind as TraceKind};
use super::record::record;
use super::thread_state::on_thread;
use super::Lifetime;
use crate::events::{Allocation, Kind, Listener, LockWait};
use crate::tsc;
use crate::vm::Jni;

/// The kinds of events the trace listens to.
pub const KINDS: [Kind; 7] = [
    Kind::GcStart,
    Kind::GcFinish,
    Kind::ObjectTracked,
    Kind::ObjectsFreed,
    Kind::SampledObjectAlloc,
    Kind::LockWait,
    Kind::VmDeath,
];

impl Listener for Lifetime {
    /// Whatever the session's state, the writer ends here and finishes any
    /// document still open (a no-op if it already has).
    fn vm_death(&self) {
        self.finish_file(true)
    }

    fn gc_start(&self) {
        self.gc(true)
    }

    fn gc_finish(&self) {
        self.gc(false)
    }

    /// A mode tracked an object made at `site`; `key`: its weak reference
    /// (its identity until it dies), 0 when it has none (tags).
    fn object_tracked(&self, jni: &Jni, site: u32, key: u64) {
        // Checked before `on_thread` reads the clock: every tracked
        // allocation comes here, and without a trace it must cost one load.
        if !self.recording() {
            return;
        }
        on_thread(jni.as_raw(), |life, tr, own, t| {
            record(
                life,
                tr,
                own,
                Event::new(TraceKind::ObjAlloc, site, t, key, 0),
            )
        })
    }

    /// Objects tracked earlier died (their keys as given to
    /// [`Listener::object_tracked`]), after a GC.
    fn objects_freed(&self, keys: &[u64]) {
        if !self.recording() {
            return;
        }
        let t = tsc::ticks();
        let mut q = self.vm_events.lock();
        q.extend(
            keys.iter()
                .map(|&k| Event::new(TraceKind::ObjFree, 0, t, k, 0)),
        );
    }

    /// A sampled allocation: left out when a mode traces every object already.
    fn sampled_object_alloc(&self, jni: &Jni, a: &Allocation) {
        if !self.recording() {
            return;
        }
        let Some(host) = crate::host::get() else {
            return;
        };
        if host.events.every_object_tracked() {
            return;
        }
        let Ok(sig) = host.jvmti.class_signature(a.class) else {
            return;
        };
        let ty = host.sites.type_of_signature(&sig);
        let size = a.size;
        on_thread(jni.as_raw(), |life, tr, own, t| {
            let depth = size.min(u32::MAX as u64) as u32;
            let mut e = Event::new(TraceKind::ObjSample, ty, t, 0, depth);
            e.extra = ty;
            record(life, tr, own, e)
        })
    }

    /// A wait for a contended monitor or lock, about to begin or just over.
    fn lock_wait(&self, jni: &Jni, wait: &LockWait<'_>) {
        if !self.recording() {
            return;
        }
        let Some(host) = crate::host::get() else {
            return;
        };
        let ty = host.sites.type_of_signature(wait.signature);
        let hash = host.jvmti.object_hash_code(wait.object).unwrap_or(0);
        let kind = match wait.entered {
            true => TraceKind::MonitorEntered,
            false => TraceKind::MonitorEnter,
        };
        on_thread(jni.as_raw(), |life, tr, own, t| {
            let mut e = Event::new(kind, 0, t, hash as u32 as u64, 0);
            e.extra = ty;
            record(life, tr, own, e)
        })
    }
}
