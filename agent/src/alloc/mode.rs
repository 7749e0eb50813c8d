//! `alloc` as a [`Mode`]: a recorder per session, reached by the
//! SampledObjectAlloc event through the mode's [`Lifetime`].

use super::{Captured, Lifetime, Recorder};
use crate::error::AgentError;
use crate::events::Kind;
use crate::host::Host;
use crate::log;
use crate::mode::{Capture, Cx, Mode, Registration};
use crate::model::Section;
use crate::options::{self, ModeOptions, Opt, OptionError, Options, Takes, Value};
use crate::threads::ThreadRecord;
use crate::vm::sys::Capability;
use crate::vm::{Capabilities, Jvmti};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
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
                meaning: "allocation sites by call path: JVMTI samples an object about every SIZE bytes a thread allocates (k, m suffixes; 0 samples every object), each weighted to estimate all bytes and objects (the <alloc> section)",
                read: Some(read_interval),
            },
            Opt {
                syntax: "live",
                default: "",
                takes: Takes::Start,
                meaning: "alloc: only the sampled objects still reachable at the snapshot (a snapshot runs a GC): who allocated what is alive",
                read: Some(options::read_flag_value),
            },
        ],
        default_mode: false,
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
    Ok(caps.need(
        Capability::GenerateSampledObjectAllocEvents,
        "alloc (JDK 11 or newer)",
    )?)
}

struct AllocMode {
    host: &'static Host,
    life: &'static Lifetime,
    recorder: Arc<Recorder>,
    jvmti: Jvmti,
    /// `live` needs a GC at every snapshot; at exit only a pause collector
    /// can still run one (a concurrent one would wait for stopped threads).
    gc_at_exit: bool,
    dying: AtomicBool,
}

fn open(cx: &Cx) -> Result<Box<dyn Mode>, AgentError> {
    let o = cx.options;
    let interval = o.bytes("alloc").unwrap_or(DEFAULT_INTERVAL);
    let live = o.given("live");
    let host = cx.host;
    let life = host.state::<Lifetime>();
    host.events.subscribe(life, &[Kind::SampledObjectAlloc]);
    let gc_at_exit = live && host.pause_collectors_only(cx.jni);
    Ok(Box::new(AllocMode {
        host,
        life,
        recorder: Arc::new(Recorder::new(life.next_id(), interval, live, o.depth)),
        jvmti: host.jvmti,
        gc_at_exit,
        dying: AtomicBool::new(false),
    }))
}

impl Mode for AllocMode {
    fn start(&self, cx: &Cx) -> Result<(), AgentError> {
        let jvmti = self.jvmti;
        jvmti
            .set_heap_sampling_interval(self.recorder.interval)
            .map_err(|e| AgentError::jvmti(jvmti, "SetHeapSamplingInterval", e))?;
        self.life.set(Some(self.recorder.clone()));
        self.recorder.active.store(true, Relaxed);
        let _ = cx;
        self.host
            .want(self.life, Kind::SampledObjectAlloc, true)
            .map_err(|e| match e {
                AgentError::Jvmti { error, .. } => AgentError::Jvmti {
                    call: "SampledObjectAlloc".into(),
                    error,
                },
                e => e,
            })
    }

    fn stop(&self) {
        self.recorder.active.store(false, Relaxed);
        let _ = self.host.want(self.life, Kind::SampledObjectAlloc, false);
    }

    fn snapshot(&self, cx: &Cx) -> Result<Box<dyn Capture + '_>, AgentError> {
        if self.recorder.live {
            if self.dying.load(Relaxed) && !self.gc_at_exit {
                log::warn("alloc: no GC can run while this JVM exits (its collector works concurrently), so live counts include objects that died since the last GC");
            } else {
                self.jvmti
                    .force_garbage_collection()
                    .map_err(|e| AgentError::jvmti(self.jvmti, "ForceGarbageCollection", e))?;
            }
        }
        Ok(Box::new(self.recorder.capture(cx.jni)))
    }

    fn call_trees(&self, threads: &[ThreadRecord]) -> Option<crate::model::CallTrees> {
        let every = (0, u64::MAX);
        Some(super::model::trees(&self.recorder.all(), threads, every))
    }

    fn vm_dying(&self) {
        self.dying.store(true, Relaxed);
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
    fn sections(self: Box<Self>, threads: &[ThreadRecord], window: (u64, u64)) -> Vec<Section> {
        vec![super::model::section(&self, threads, window)]
    }
}
