//! `alloc` as a [`Mode`]: a recorder per session, reached by the
//! SampledObjectAlloc event through the mode's [`Lifetime`].

use super::{Captured, Lifetime, LiveRule, Recorder};
use crate::error::AgentError;
use crate::events::Kind;
use crate::host::Host;
use crate::log;
use crate::mode::{Capture, Cx, Mode, Registration};
use crate::model::Section;
use crate::options::{self, ModeOptions, Opt, OptionError, Options, Takes, Value};
use crate::threads::ThreadRecord;
use crate::vm::sys::Capability;
use crate::vm::{Capabilities, Jni, Jvmti};
use parking_lot::Mutex;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// `alloc`: sampled allocations by call path and class.
pub const REGISTRATION: Registration = Registration {
    name: "alloc",
    options: ModeOptions {
        options: &[
            Opt {
                syntax: "alloc[=SIZE]",
                default: "512k",
                takes: Takes::Start,
                meaning: "allocation sites by call path: JVMTI samples an object about every SIZE bytes a thread allocates (k, m, g: binary multiples; 0 samples every object), each weighted to estimate all bytes and objects (the <alloc> section)",
                read: Some(read_interval),
            },
            Opt {
                syntax: "live",
                default: "",
                takes: Takes::Start,
                meaning: "alloc: only the sampled objects still reachable at the snapshot (a snapshot runs a GC; at VM exit, those alive at the program's last GC: the section's liveRule says which): who allocated what is alive",
                read: Some(options::read_flag_value),
            },
        ],
        default_mode: false,
        records_others: false,
        check: check_options,
    },
    open,
    natives: Vec::new,
    capabilities,
    probes: Registration::no_probes,
};

/// Bytes between samples when `alloc` gives none.
const DEFAULT_INTERVAL: u32 = 512 * 1024;

/// JVMTI takes the sampling interval as a jint.
const MAX_INTERVAL: u64 = i32::MAX as u64;

/// `alloc[=SIZE]`.
fn read_interval(key: &str, value: Option<&str>) -> Result<Value, OptionError> {
    let Some(v) = value else {
        return Ok(Value::Bytes(DEFAULT_INTERVAL));
    };
    options::parse_size(v, MAX_INTERVAL)
        .map(Value::Bytes)
        .ok_or_else(|| {
            options::bad_value(
                key,
                v,
                "bytes between samples, e.g. 512k, 64k, 1m; 0 for every object; at most 2g-1",
            )
        })
}

/// `live` belongs to `alloc`.
fn check_options(o: &Options) -> Result<(), OptionError> {
    options::belongs_to(o, "live", "alloc", "alloc,live")
}

fn capabilities(caps: &mut Capabilities) -> Result<(), AgentError> {
    caps.need(
        Capability::GenerateSampledObjectAllocEvents,
        "alloc (JDK 11 or newer)",
    )?;
    // `live` at VM exit: which GC each sample lived through.
    Ok(caps.need(Capability::GenerateGarbageCollectionEvents, "alloc")?)
}

/// What `live` knows of the session's GCs.
#[derive(Default)]
struct Gcs {
    /// GCs started before the session's first start ([`Lifetime::gcs`]).
    at_start: Option<u32>,
    /// Set at VM death: GCs started by then (the samples they cleared
    /// dropped). The snapshot at exit runs no GC of its own; the same
    /// count as at the start means no GC ran in the session.
    at_exit: Option<u32>,
}

struct AllocMode {
    host: &'static Host,
    life: &'static Lifetime,
    recorder: Arc<Recorder>,
    jvmti: Jvmti,
    gcs: Mutex<Gcs>,
}

fn open(cx: &Cx) -> Result<Box<dyn Mode>, AgentError> {
    let o = cx.options;
    let interval = o.bytes("alloc").unwrap_or(DEFAULT_INTERVAL);
    let live = o.given("live");
    let host = cx.host;
    let life = host.state::<Lifetime>();
    host.events
        .subscribe(life, &[Kind::SampledObjectAlloc, Kind::GcStart]);
    Ok(Box::new(AllocMode {
        host,
        life,
        recorder: Arc::new(Recorder::new(life.next_id(), interval, live, o.depth)),
        jvmti: host.jvmti,
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

/// [`Host::want`]'s error named after the event.
fn named(call: &str) -> impl FnOnce(AgentError) -> AgentError + '_ {
    move |e| match e {
        AgentError::Jvmti { error, .. } => AgentError::Jvmti {
            call: call.into(),
            error,
        },
        e => e,
    }
}

impl Mode for AllocMode {
    fn start(&self, _cx: &Cx) -> Result<(), AgentError> {
        let jvmti = self.jvmti;
        jvmti
            .set_heap_sampling_interval(self.recorder.interval)
            .map_err(|e| AgentError::jvmti(jvmti, "SetHeapSamplingInterval", e))?;
        if self.recorder.live {
            // On for good (a stopped session's GCs still age its samples).
            self.host
                .want(self.life, Kind::GcStart, true)
                .map_err(named("GarbageCollectionStart"))?;
            self.gcs.lock().at_start.get_or_insert(self.life.gcs());
        }
        self.life.set(Some(self.recorder.clone()));
        self.recorder.active.store(true, Relaxed);
        self.host
            .want(self.life, Kind::SampledObjectAlloc, true)
            .map_err(named("SampledObjectAlloc"))
    }

    fn stop(&self) {
        self.recorder.active.store(false, Relaxed);
        let _ = self.host.want(self.life, Kind::SampledObjectAlloc, false);
    }

    fn snapshot(&self, cx: &Cx) -> Result<Box<dyn Capture + '_>, AgentError> {
        let rule = self.live_rule();
        match rule {
            Some(LiveRule::Gc) => self
                .jvmti
                .force_garbage_collection()
                .map_err(|e| AgentError::jvmti(self.jvmti, "ForceGarbageCollection", e))?,
            Some(LiveRule::NoGc) => log::info("alloc: no GC ran during the session, so no sampled object is known dead: live counts every sample (liveRule=\"noGc\")"),
            Some(LiveRule::LastGc(_)) | None => {}
        }
        Ok(Box::new(self.recorder.capture(cx.jni, rule)))
    }

    fn call_trees(&self, threads: &[Arc<ThreadRecord>]) -> Option<crate::model::CallTrees> {
        let every = (0, u64::MAX);
        Some(super::model::trees(&self.recorder.all(), threads, every))
    }

    /// `live`: main has returned, its locals' objects are garbage, and a GC
    /// now (the snapshot's, or `memory`'s) would clear what the program held
    /// to its end. So the samples the program's GCs cleared are dropped
    /// here, the GCs counted, and the exit snapshot, running no GC, keeps
    /// those alive at the last ([`LiveRule::LastGc`]).
    fn vm_dying(&self, jni: &Jni) {
        if self.recorder.live {
            self.recorder.prune(jni);
            self.gcs.lock().at_exit = Some(self.life.gcs());
        }
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

impl Capture for Captured {
    fn sections(
        self: Box<Self>,
        threads: &[Arc<ThreadRecord>],
        window: (u64, u64),
    ) -> Vec<Section> {
        vec![super::model::section(&self, threads, window)]
    }
}
