//! `alloc` as a [`Mode`]: a recorder per session, reached by the
//! SampledObjectAlloc event through the agent's [`super::Slot`].

use super::{Captured, LiveRule, Recorder};
use crate::log;
use crate::modes::{Cx, Mode, Registration, Section};
use crate::snapshot::XmlWriter;
use crate::threads::ThreadRecord;
use crate::vm::sys::Capability;
use crate::vm::{Capabilities, Jni, JvmtiEvent};
use parking_lot::Mutex;
use std::io;
use std::sync::atomic::Ordering::Relaxed;
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
    )?;
    // `live` at VM exit: which GC each sample lived through.
    caps.need(Capability::GenerateGarbageCollectionEvents, "alloc")
}

/// What `live` knows of the session's GCs.
#[derive(Default)]
struct Gcs {
    /// GCs started before the session's first start ([`super::Slot::gcs`]).
    at_start: Option<u32>,
    /// Set at VM death: GCs started by then (the samples they cleared
    /// dropped). The snapshot at exit runs no GC of its own; the same
    /// count as at the start means no GC ran in the session.
    at_exit: Option<u32>,
}

struct AllocMode {
    recorder: Arc<Recorder>,
    jvmti: crate::vm::Jvmti,
    slot: &'static super::Slot,
    gcs: Mutex<Gcs>,
}

fn open(cx: &Cx) -> Result<Box<dyn Mode>, String> {
    let o = cx.options;
    let interval = o.alloc.unwrap_or_default();
    let host = cx.host;
    Ok(Box::new(AllocMode {
        recorder: Arc::new(Recorder::new(
            host.alloc.next_id(),
            interval,
            o.live,
            o.depth,
        )),
        jvmti: host.jvmti,
        slot: host.alloc,
        gcs: Mutex::default(),
    }))
}

impl AllocMode {
    /// Which samples a `live` snapshot keeps now; `None` without `live`.
    fn live_rule(&self) -> Option<LiveRule> {
        if !self.recorder.live {
            return None;
        }
        let gcs = self.gcs.lock();
        Some(match gcs.at_exit {
            None => LiveRule::Gc,
            Some(last) if Some(last) == gcs.at_start => LiveRule::NoGc,
            Some(last) => LiveRule::LastGc(last),
        })
    }
}

impl Mode for AllocMode {
    fn start(&self, cx: &Cx) -> Result<(), String> {
        let jvmti = self.jvmti;
        jvmti
            .set_heap_sampling_interval(self.recorder.interval)
            .map_err(|e| format!("SetHeapSamplingInterval: {}", jvmti.error_name(e)))?;
        if self.recorder.live {
            // Enabled for good (a stopped session's GCs still age its samples).
            jvmti
                .set_event_enabled(JvmtiEvent::GARBAGE_COLLECTION_START, true)
                .map_err(|e| format!("GarbageCollectionStart: {}", jvmti.error_name(e)))?;
            self.gcs.lock().at_start.get_or_insert(self.slot.gcs());
        }
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
        let rule = self.live_rule();
        match rule {
            Some(LiveRule::Gc) => self
                .jvmti
                .force_garbage_collection()
                .map_err(|e| format!("ForceGarbageCollection: {}", self.jvmti.error_name(e)))?,
            Some(LiveRule::NoGc) => log::info("alloc: no GC ran during the session, so no sampled object is known dead: live counts every sample (liveRule=\"noGc\")"),
            Some(LiveRule::LastGc(_)) | None => {}
        }
        Ok(Box::new(self.recorder.capture(cx.jni, rule)))
    }

    /// `live`: main has returned, its locals' objects are garbage, and a GC
    /// now (the snapshot's, or `memory`'s) would clear what the program held
    /// to its end. So the samples the program's GCs cleared are dropped
    /// here, the GCs counted, and the exit snapshot, running no GC, keeps
    /// those alive at the last ([`LiveRule::LastGc`]).
    fn vm_dying(&self, jni: &Jni) {
        if self.recorder.live {
            self.recorder.prune(jni);
            self.gcs.lock().at_exit = Some(self.slot.gcs());
        }
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
