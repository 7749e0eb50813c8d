//! `lock` as a [`Mode`]: a recorder per session, reached by the monitor
//! events through the agent's [`super::Slot`], and a monitor dump at every
//! snapshot.

use super::{Captured, Recorder};
use crate::modes::{Cx, Mode, Registration, Section};
use crate::snapshot::XmlWriter;
use crate::threads::ThreadRecord;
use crate::vm::sys::Capability;
use crate::vm::{Capabilities, JvmtiEvent};
use std::io;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// `lock`: contended monitors by call path and class, and a monitor dump.
pub const REGISTRATION: Registration = Registration {
    name: "lock",
    wanted: |o| o.lock.is_some(),
    open,
    natives: || super::park::natives().to_vec(),
    capabilities,
};

fn capabilities(caps: &mut Capabilities) -> Result<(), String> {
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
    recorder: Arc<Recorder>,
    jvmti: crate::vm::Jvmti,
}

const EVENTS: [JvmtiEvent; 2] = [
    JvmtiEvent::MONITOR_CONTENDED_ENTER,
    JvmtiEvent::MONITOR_CONTENDED_ENTERED,
];

fn open(cx: &Cx) -> Result<Box<dyn Mode>, String> {
    let o = cx.options;
    let threshold = o.lock.unwrap_or_default().as_nanos().min(u64::MAX as u128) as u64;
    Ok(Box::new(LockMode {
        recorder: Arc::new(Recorder::new(threshold, o.depth)),
        jvmti: cx.host.jvmti,
    }))
}

impl Mode for LockMode {
    fn start(&self, cx: &Cx) -> Result<(), String> {
        let jvmti = self.jvmti;
        cx.host.lock.set(Some(self.recorder.clone()));
        self.recorder.active.store(true, Relaxed);
        for ev in EVENTS {
            jvmti
                .set_event_enabled(ev, true)
                .map_err(|e| format!("monitor events: {}", jvmti.error_name(e)))?;
        }
        Ok(())
    }

    fn stop(&self) {
        self.recorder.active.store(false, Relaxed);
        for ev in EVENTS {
            let _ = self.jvmti.set_event_enabled(ev, false);
        }
    }

    fn snapshot(&self, cx: &Cx) -> Result<Box<dyn Section + '_>, String> {
        let mut captured = self.recorder.capture();
        captured.dump = Some(super::dump::take(&cx.host, cx.jni, self.recorder.depth));
        Ok(Box::new(captured))
    }

    fn call_trees(&self, threads: &[ThreadRecord]) -> Option<profrj_otlp::CallTrees> {
        Some(self.recorder.call_trees(threads))
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
