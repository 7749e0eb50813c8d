//! `alloc` as a [`Mode`]: a recorder per session, reached by the
//! SampledObjectAlloc event through the agent's [`super::Slot`].

use super::{Captured, Recorder};
use crate::log;
use crate::modes::{Cx, Mode, Registration, Section};
use crate::snapshot::XmlWriter;
use crate::threads::ThreadRecord;
use crate::vm::sys::Capability;
use crate::vm::{Capabilities, JvmtiEvent};
use std::io;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

/// `alloc`: sampled allocations by call path and class.
pub const REGISTRATION: Registration = Registration {
    name: "alloc",
    wanted: |o| o.alloc.is_some(),
    open,
    natives: Vec::new,
    capabilities,
};

fn capabilities(caps: &mut Capabilities) -> Result<(), String> {
    caps.need(
        Capability::GenerateSampledObjectAllocEvents,
        "alloc (JDK 11 or newer)",
    )
}

struct AllocMode {
    recorder: Arc<Recorder>,
    jvmti: crate::vm::Jvmti,
    /// `live` needs a GC at every snapshot; at exit only a pause collector
    /// can still run one (a concurrent one would wait for stopped threads).
    gc_at_exit: bool,
    dying: AtomicBool,
}

fn open(cx: &Cx) -> Result<Box<dyn Mode>, String> {
    let o = cx.options;
    let interval = o.alloc.unwrap_or_default();
    let host = cx.host;
    let gc_at_exit = o.live && {
        // The collectors' names come from the runtime class.
        let natives = crate::modes::all_natives();
        host.instrumenter
            .define_runtime(host.jvmti, cx.jni, &natives)
            .is_ok()
            && crate::memory::pause_collectors_only(cx.jni)
    };
    Ok(Box::new(AllocMode {
        recorder: Arc::new(Recorder::new(
            host.alloc.next_id(),
            interval,
            o.live,
            o.depth,
        )),
        jvmti: host.jvmti,
        gc_at_exit,
        dying: AtomicBool::new(false),
    }))
}

impl Mode for AllocMode {
    fn start(&self, cx: &Cx) -> Result<(), String> {
        let jvmti = self.jvmti;
        jvmti
            .set_heap_sampling_interval(self.recorder.interval)
            .map_err(|e| format!("SetHeapSamplingInterval: {}", jvmti.error_name(e)))?;
        cx.host.alloc.set(Some(self.recorder.clone()));
        self.recorder.active.store(true, Relaxed);
        jvmti
            .set_event_enabled(JvmtiEvent::SAMPLED_OBJECT_ALLOC, true)
            .map_err(|e| format!("SampledObjectAlloc: {}", jvmti.error_name(e)))
    }

    fn stop(&self) {
        self.recorder.active.store(false, Relaxed);
        let _ = self
            .jvmti
            .set_event_enabled(JvmtiEvent::SAMPLED_OBJECT_ALLOC, false);
    }

    fn snapshot(&self, cx: &Cx) -> Result<Box<dyn Section + '_>, String> {
        if self.recorder.live {
            if self.dying.load(Relaxed) && !self.gc_at_exit {
                log::warn("alloc: no GC can run while this JVM exits (its collector works concurrently), so live counts include objects that died since the last GC");
            } else {
                self.jvmti
                    .force_garbage_collection()
                    .map_err(|e| format!("ForceGarbageCollection: {}", self.jvmti.error_name(e)))?;
            }
        }
        Ok(Box::new(self.recorder.capture(cx.jni)))
    }

    fn vm_dying(&self) {
        self.dying.store(true, Relaxed);
    }

    fn call_trees(&self, threads: &[ThreadRecord]) -> Option<profrj_otlp::CallTrees> {
        Some(self.recorder.call_trees(threads))
    }

    fn summary(&self) -> Option<String> {
        let r = &self.recorder;
        Some(format!(
            "alloc: {} samples (interval {} bytes{}), {} events without a stack or class",
            r.samples(),
            r.interval,
            if r.live { ", live" } else { "" },
            r.failed.load(Relaxed)
        ))
    }
}

impl Section for Captured {
    fn write(
        &self,
        w: &mut XmlWriter,
        threads: &[ThreadRecord],
        window: (u64, u64),
    ) -> io::Result<()> {
        super::section::write_section(w, self, threads, window)
    }
}
