//! `memory` as a [`Mode`]: how deaths are seen (weak references or tags) is
//! chosen when the first memory session opens, and so is stamping
//! (`stamps=`); objects the VM or native code makes are reported through
//! VMObjectAlloc and the intercepted JNI table.

use super::Counts;
use crate::log;
use crate::modes::{Cx, Mode, Registration, Section};
use crate::snapshot::XmlWriter;
use crate::threads::ThreadRecord;
use crate::vm::sys::Capability;
use crate::vm::Capabilities;
use crate::vm::JvmtiEvent;
use std::io;

/// `memory`: live and peak object counts per thread and class.
pub const REGISTRATION: Registration = Registration {
    name: "memory",
    wanted: |o| o.memory,
    open,
    natives: super::natives,
    capabilities,
};

/// The rewriter's, and VMObjectAlloc for objects the VM makes for Java code
/// (reflection, clone); without it those go uncounted, said once.
fn capabilities(caps: &mut Capabilities) -> Result<(), String> {
    crate::instrument::capabilities(caps)?;
    if !caps.want(Capability::GenerateVmObjectAllocEvents) {
        crate::log::warn("memory: this JVM cannot report VM allocations (VMObjectAlloc); objects made by reflection, clone or JNI are not counted");
    }
    Ok(())
}

/// The session's view of the JVM-lifetime state its probes write.
struct Memory(
    &'static super::Lifetime,
    &'static crate::instrument::Instrumenter,
);

pub fn open(cx: &Cx) -> Result<Box<dyn Mode>, String> {
    let host = cx.host;
    let tracking = &host.memory.tracking;
    let mechanism = tracking
        .choose(cx.jni, cx.options.tracker)
        .map_err(|e| format!("memory: {e}"))?;
    let edge = host.entry_points;
    tracking.env(host.vm, edge)?;
    let stamps = &host.memory.stamps;
    stamps.publish(cx.jni)?;
    if cx.options.stamps {
        if let Err(e) = stamps.start(&host, cx.jni) {
            log::warn(&format!(
                "memory: {e}; every object is followed with {}",
                match mechanism {
                    super::Mechanism::WeakRefs => "a weak reference",
                    super::Mechanism::Tags => "a tag",
                }
            ));
        }
    }
    if mechanism == super::Mechanism::WeakRefs || stamps.on() {
        tracking.start_thread(host.jvmti, cx.jni, edge)?;
    }
    if let Err(e) = crate::vm::intercept_allocations(host.jvmti, edge.jni_alloc) {
        log::warn(&format!(
            "memory: cannot intercept JNI ({e}); objects native code makes are not counted"
        ));
    }
    if let Err(e) = host
        .jvmti
        .set_event_enabled(JvmtiEvent::VM_OBJECT_ALLOC, true)
    {
        log::warn(&format!(
            "memory: no VMObjectAlloc events ({}); objects made by reflection, clone or JNI are not counted",
            host.jvmti.error_name(e)
        ));
    }
    Ok(Box::new(Memory(host.memory, host.instrumenter)))
}

impl Mode for Memory {
    fn start(&self, cx: &Cx) -> Result<(), String> {
        let life = self.0;
        life.set_active(true);
        life.stamps.set_budget(cx.options.census_percent);
        // A trace wants each object's free: no stamps while one runs.
        let stamp = cx.options.stamps && cx.options.trace.is_none() && life.stamps.on();
        life.stamps.set_mode(if stamp {
            super::stamps::STAMP
        } else {
            super::stamps::WEAK
        });
        Ok(())
    }

    fn stop(&self) {
        self.0.stamps.set_mode(super::stamps::OFF);
        self.0.set_active(false);
    }

    /// Forces a GC first, so `count` holds only objects still reachable.
    fn snapshot(&self, cx: &Cx) -> Result<Box<dyn Section + '_>, String> {
        let _ = cx;
        let life = self.0;
        let counts = life
            .live_counts(life.tracking.made_env()?)
            .map_err(|e| format!("memory: {e}"))?;
        Ok(Box::new(Captured(counts)))
    }

    /// A concurrent collector can no longer run a GC for the last snapshot.
    fn vm_dying(&self, _jni: &crate::vm::Jni) {
        self.0.tracking.vm_dying();
    }

    fn summary(&self) -> Option<String> {
        let stamped = self.1.stamped.load(std::sync::atomic::Ordering::Relaxed);
        self.0.cost_summary(stamped)
    }
}

struct Captured(Counts);

impl Section for Captured {
    fn write(&self, w: &mut XmlWriter, threads: &[ThreadRecord], _: (u64, u64)) -> io::Result<()> {
        super::write_section(w, &self.0.rows, threads)
    }

    /// `<sites>`, after the contract's sections.
    fn write_after(
        &self,
        w: &mut XmlWriter,
        threads: &[ThreadRecord],
        _: (u64, u64),
    ) -> io::Result<()> {
        super::write_sites(w, &self.0.sites, threads)
    }
}
