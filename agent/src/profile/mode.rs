//! `profile` as a [`Mode`]. Its probes are inserted by the instrumenter,
//! which the session starts for every instrumenting mode at once.

use crate::instrument::registry::MethodInfo;
use crate::modes::{Cx, Mode, Registration, Section};
use crate::snapshot::XmlWriter;
use crate::threads::ThreadRecord;
use std::io;
use std::sync::Arc;

/// `profile`: every call in scope timed by probes the rewriter inserts.
pub const REGISTRATION: Registration = Registration {
    name: "profile",
    wanted: |o| o.profile,
    open,
    natives: || super::natives().to_vec(),
    capabilities: crate::instrument::capabilities,
};

/// The session's view of the JVM-lifetime state its probes write.
struct Profile(&'static super::Lifetime);

pub fn open(cx: &Cx) -> Result<Box<dyn Mode>, String> {
    Ok(Box::new(Profile(cx.host.profile)))
}

impl Mode for Profile {
    fn start(&self, cx: &Cx) -> Result<(), String> {
        self.0.start(cx.options.timing_sampled);
        Ok(())
    }

    fn stop(&self) {
        self.0.stop();
    }

    fn call_trees(&self, threads: &[ThreadRecord]) -> Option<profrj_otlp::CallTrees> {
        let methods = crate::agent::host()?.instrumenter.registry.snapshot();
        let sampled = super::timing_sampled();
        Some(super::section::call_trees(
            &self.0.threads(),
            &methods,
            threads,
            sampled,
        ))
    }

    fn snapshot(&self, cx: &Cx) -> Result<Box<dyn Section + '_>, String> {
        Ok(Box::new(Captured {
            methods: cx.host.instrumenter.registry.snapshot(),
            threads: self.0.threads(),
        }))
    }
}

/// The method registry and the per-thread trees, as a snapshot found them.
struct Captured {
    methods: Vec<MethodInfo>,
    threads: Vec<Arc<super::ThreadProfile>>,
}

impl Section for Captured {
    fn write(&self, w: &mut XmlWriter, records: &[ThreadRecord], _: (u64, u64)) -> io::Result<()> {
        let sampled = super::timing_sampled();
        super::write_section(w, &self.threads, &self.methods, records, sampled)
    }
}
