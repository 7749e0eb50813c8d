//! `trace` as a [`Mode`]. Its probes are inserted by the instrumenter with
//! the other instrumenting modes'; its output is its own file, not a
//! snapshot section: a snapshot (a dump) ends the current trace file.

use crate::modes::{Cx, Mode, NoSection, Registration, Section};
use crate::vm::sys::Capability;
use crate::vm::{Capabilities, Jvmti, JvmtiEvent};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// `trace`: every call, return, throw and catch in scope, as TPTP events.
pub const REGISTRATION: Registration = Registration {
    name: "trace",
    wanted: |o| o.trace.is_some(),
    open,
    natives: || super::natives().to_vec(),
    capabilities,
};

fn capabilities(caps: &mut Capabilities) -> Result<(), String> {
    crate::instrument::capabilities(caps)?;
    caps.need(Capability::GenerateGarbageCollectionEvents, "trace")
}

const EVENTS: [JvmtiEvent; 2] = [
    JvmtiEvent::GARBAGE_COLLECTION_START,
    JvmtiEvent::GARBAGE_COLLECTION_FINISH,
];

struct Trace {
    life: &'static super::Lifetime,
    jvmti: Jvmti,
    /// The VM is ending: the next snapshot closes the trace for good.
    dying: AtomicBool,
}

fn open(cx: &Cx) -> Result<Box<dyn Mode>, String> {
    Ok(Box::new(Trace {
        life: cx.host.trace,
        jvmti: cx.host.jvmti,
        dying: AtomicBool::new(false),
    }))
}

impl Mode for Trace {
    fn start(&self, cx: &Cx) -> Result<(), String> {
        let o = cx.options;
        let path = o.trace.as_deref().unwrap_or_default();
        let sources = super::writer::Sources {
            threads: cx.host.threads,
            registry: &cx.host.instrumenter.registry,
            memory: cx.host.memory,
        };
        let args = match o.overflow_drop {
            true => format!("trace={path},overflow=drop"),
            false => format!("trace={path}"),
        };
        self.life.start(sources, path, o.overflow_drop, &args)?;
        for ev in EVENTS {
            self.jvmti
                .set_event_enabled(ev, true)
                .map_err(|e| format!("GC events: {}", self.jvmti.error_name(e)))?;
        }
        Ok(())
    }

    /// The GC events stay enabled: `alloc,live` counts GCs through them
    /// too, and a stopped trace records none (`Lifetime::gc`).
    fn stop(&self) {
        self.life.stop();
    }

    fn snapshot(&self, _cx: &Cx) -> Result<Box<dyn Section + '_>, String> {
        self.life.finish_file(self.dying.load(Relaxed));
        Ok(Box::new(NoSection))
    }

    fn vm_dying(&self, _jni: &crate::vm::Jni) {
        self.dying.store(true, Relaxed);
    }

    fn summary(&self) -> Option<String> {
        Some(self.life.summary())
    }
}
