//! `jfr` as a [`Mode`]: it collects nothing itself; the other modes hand it
//! their events while it records. Its output is its own file, not a
//! snapshot section: a snapshot (a dump) ends the current recording file.

use crate::modes::{Cx, Mode, NoSection, Registration, Section};
use crate::vm::sys::Capability;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// `jfr[=PATH]`: the running modes' events as a JFR recording.
pub const REGISTRATION: Registration = Registration {
    name: "jfr",
    wanted: |o| o.jfr.is_some(),
    open,
    natives: Vec::new,
    // Line numbers in stack frames when the JVM offers them (HotSpot does,
    // at any time); frames say -1 without.
    capabilities: |caps| {
        caps.want(Capability::GetLineNumbers);
        Ok(())
    },
};

struct Jfr {
    life: &'static super::Lifetime,
    /// The VM is ending: the next snapshot ends the recording for good.
    dying: AtomicBool,
}

fn open(cx: &Cx) -> Result<Box<dyn Mode>, String> {
    Ok(Box::new(Jfr {
        life: cx.host.jfr,
        dying: AtomicBool::new(false),
    }))
}

impl Mode for Jfr {
    fn start(&self, cx: &Cx) -> Result<(), String> {
        let path = cx.options.jfr.as_deref().unwrap_or_default();
        self.life.start(&cx.host, path)
    }

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
