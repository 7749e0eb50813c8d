//! `lock` as a [`Mode`]: a recorder per session, reached by the monitor
//! events and the park probes through the mode's [`Lifetime`], and a
//! monitor dump at every snapshot.

use super::{Captured, Lifetime, Recorder};
use crate::error::AgentError;
use crate::host::Host;
use crate::instrument::Probes;
use crate::mode::{Capture, Cx, Mode, Registration};
use crate::model::Section;
use crate::options::{self, ModeOptions, Opt, OptionError, Takes, Value};
use crate::threads::ThreadRecord;
use crate::vm::sys::Capability;
use crate::vm::Capabilities;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Duration;

/// `lock`: contended monitors by call path and class, and a monitor dump.
pub const REGISTRATION: Registration = Registration {
    name: "lock",
    options: ModeOptions {
        options: &[
            Opt {
                syntax: "lock[=DURATION]",
                default: "0",
                takes: Takes::Start,
                meaning: "where threads wait for each other: contended synchronized entries and java.util.concurrent locks parked for, by call path and lock class, with counts and nanoseconds waited, waits shorter than DURATION (ns, us, ms or s: lock=1ms, lock=100us; 0 records every one) left out, and HPROF's MONITOR DUMP at every snapshot (the <lock> section)",
                read: Some(read_threshold),
            },
        ],
        default_mode: false,
        records_others: false,
        check: ModeOptions::no_check,
    },
    open,
    natives: || super::park::natives().to_vec(),
    capabilities,
    probes: |_| Probes {
        park: true,
        ..Probes::NONE
    },
};

/// `lock[=DURATION]`: the shortest wait recorded, at most an hour.
fn read_threshold(key: &str, value: Option<&str>) -> Result<Value, OptionError> {
    let Some(v) = value else {
        return Ok(Value::Duration(Duration::ZERO));
    };
    let d = options::parse_duration(key, v, "1ms")?;
    if d > Duration::from_secs(3600) {
        return Err(options::bad_value(
            key,
            v,
            "the shortest wait recorded, at most 3600s",
        ));
    }
    Ok(Value::Duration(d))
}

fn capabilities(caps: &mut Capabilities) -> Result<(), AgentError> {
    caps.need(Capability::GenerateMonitorEvents, "lock")?;
    // java.util.concurrent: probes in LockSupport (retransformed).
    crate::instrument::capabilities(caps)?;
    // The monitor dump: who owns what, who waits for what. HotSpot grants
    // some of these at start-up only; attached, the dump does without them
    // (a function lacking its capability fails, and the dump leaves out
    // what it would have told).
    caps.want(Capability::GetMonitorInfo);
    caps.want(Capability::GetOwnedMonitorStackDepthInfo);
    caps.want(Capability::GetCurrentContendedMonitor);
    Ok(())
}

struct LockMode {
    host: &'static Host,
    life: &'static Lifetime,
    recorder: Arc<Recorder>,
}

fn open(cx: &Cx) -> Result<Box<dyn Mode>, AgentError> {
    let o = cx.options;
    let threshold = o.duration("lock").unwrap_or_default();
    let threshold = threshold.as_nanos().min(u64::MAX as u128) as u64;
    let life = cx.host.state::<Lifetime>();
    cx.host.events.subscribe(life, &super::KINDS);
    Ok(Box::new(LockMode {
        host: cx.host,
        life,
        recorder: Arc::new(Recorder::new(threshold, o.depth)),
    }))
}

impl Mode for LockMode {
    fn start(&self, cx: &Cx) -> Result<(), AgentError> {
        // A wait's start follows its virtual thread across carriers.
        cx.host.follow_virtual_threads("lock");
        self.life.set(Some(self.recorder.clone()));
        self.recorder.active.store(true, Relaxed);
        for kind in super::KINDS {
            self.host.want(self.life, kind, true).map_err(|e| match e {
                AgentError::Jvmti { error, .. } => AgentError::Jvmti {
                    call: "monitor events".into(),
                    error,
                },
                e => e,
            })?;
        }
        Ok(())
    }

    fn stop(&self) {
        self.recorder.active.store(false, Relaxed);
        for kind in super::KINDS {
            let _ = self.host.want(self.life, kind, false);
        }
        self.host.unfollow_virtual_threads("lock");
    }

    fn snapshot(&self, cx: &Cx) -> Result<Box<dyn Capture + '_>, AgentError> {
        let mut captured = self.recorder.capture();
        captured.dump = Some(super::dump::take(cx.host, cx.jni, self.recorder.depth));
        Ok(Box::new(captured))
    }

    fn call_trees(&self, threads: &[Arc<ThreadRecord>]) -> Option<crate::model::CallTrees> {
        let every = (0, u64::MAX);
        Some(super::model::trees(
            &self.recorder.capture(),
            threads,
            every,
        ))
    }

    fn summary(&self) -> Option<String> {
        let r = &self.recorder;
        let w = r.totals();
        Some(format!(
            "lock: {} contended waits, {} ms in all (shortest recorded {} ns), {} ns of the agent's per wait recorded; left out: {} shorter, {} waits for a condition (re-entries after Object.wait or Condition.await, CountDownLatch.await), {} without a stack or class",
            w.count,
            w.time / 1_000_000,
            r.threshold,
            r.spent.load(Relaxed) / w.count.max(1),
            r.short.load(Relaxed),
            r.rewaits.load(Relaxed),
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
        vec![super::model::section(*self, threads, window)]
    }
}
