//! `memory` as a [`Mode`]: how deaths are seen (weak references or tags) is
//! chosen when the first memory session opens; objects the VM or native code
//! makes are reported through VMObjectAlloc and the intercepted JNI table.

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
    natives: || super::natives().to_vec(),
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
struct Memory(&'static super::Lifetime);

pub fn open(cx: &Cx) -> Result<Box<dyn Mode>, String> {
    let host = cx.host;
    let tracking = &host.memory.tracking;
    let mechanism = tracking
        .choose(cx.jni, cx.options.tracker)
        .map_err(|e| format!("memory: {e}"))?;
    let edge = host.entry_points;
    tracking.env(host.vm, edge)?;
    if mechanism == super::Mechanism::WeakRefs {
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
    Ok(Box::new(Memory(host.memory)))
}

impl Mode for Memory {
    fn start(&self, _cx: &Cx) -> Result<(), String> {
        self.0.set_active(true);
        Ok(())
    }

    fn stop(&self) {
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
        self.0.cost_summary()
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
