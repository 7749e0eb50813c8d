//! `profile` as a [`Mode`]. Its probes are inserted by the instrumenter,
//! which the session starts for every instrumenting mode at once.

use super::Lifetime;
use crate::error::AgentError;
use crate::instrument::registry::MethodInfo;
use crate::instrument::Probes;
use crate::mode::{Capture, Cx, Mode, Registration};
use crate::model::Section;
use crate::options::{self, ModeOptions, Opt, Takes};
use crate::threads::ThreadRecord;
use std::sync::Arc;

/// `profile`: every call in scope timed by probes the rewriter inserts.
pub const REGISTRATION: Registration = Registration {
    name: "profile",
    options: ModeOptions {
        options: &[
            Opt {
                syntax: "profile",
                default: "",
                takes: Takes::Start,
                meaning: "instrumented method timing: exact call counts and times per call path (the <profile> section)",
                read: Some(options::read_flag_value),
            },
            Opt {
                syntax: "timing=all|sampled",
                default: "all",
                takes: Takes::Start,
                meaning: "profile: all times every call (two clock reads); sampled counts every call exactly but times one call in 32 per thread, a node's times the timed calls' scaled to its count (self time: its total less its children's, at least 0): the cheapest profile, times approximate. Fixed by the first profile session",
                read: Some(|k, v| options::choice(k, v, &["all", "sampled"], "all or sampled")),
            },
        ],
        default_mode: false,
        records_others: false,
        check: ModeOptions::no_check,
    },
    open,
    natives: || super::natives().to_vec(),
    capabilities: |caps| Ok(crate::instrument::capabilities(caps)?),
    probes: |_| Probes {
        profile: true,
        ..Probes::NONE
    },
};

/// The session's view of the JVM-lifetime state its probes write.
struct Profile(&'static Lifetime, &'static crate::host::Host);

fn open(cx: &Cx) -> Result<Box<dyn Mode>, AgentError> {
    Ok(Box::new(Profile(cx.host.state::<Lifetime>(), cx.host)))
}

impl Mode for Profile {
    fn start(&self, cx: &Cx) -> Result<(), AgentError> {
        // A call's open frames follow its virtual thread across carriers.
        cx.host.follow_virtual_threads("profile");
        let mut rebound = Ok(());
        let sampled = cx.options.text("timing") == Some("sampled");
        self.0.start(sampled, || {
            // SAFETY: `natives_sampled` pairs each of the probe class's
            // profile natives with a function of its descriptor's
            // parameters, like `natives`, which it replaces.
            rebound = unsafe {
                cx.host
                    .instrumenter
                    .rebind_natives(cx.jni, &super::natives_sampled())
            };
        });
        rebound
    }

    fn stop(&self) {
        self.0.stop();
        self.1.unfollow_virtual_threads("profile");
    }

    fn call_trees(&self, _threads: &[Arc<ThreadRecord>]) -> Option<crate::model::CallTrees> {
        let methods = self.1.instrumenter.registry.snapshot();
        Some(super::model::trees(
            &self.0.threads(),
            &methods,
            self.0.timing_sampled(),
        ))
    }

    fn snapshot(&self, cx: &Cx) -> Result<Box<dyn Capture + '_>, AgentError> {
        Ok(Box::new(Captured {
            methods: cx.host.instrumenter.registry.snapshot(),
            threads: self.0.threads(),
            sampled: self.0.timing_sampled(),
        }))
    }
}

/// The method registry and the per-thread trees, as a snapshot found them.
struct Captured {
    methods: Vec<MethodInfo>,
    threads: Vec<Arc<super::ThreadProfile>>,
    sampled: bool,
}

impl Capture for Captured {
    fn sections(self: Box<Self>, _: &[Arc<ThreadRecord>], _: (u64, u64)) -> Vec<Section> {
        vec![super::model::section(
            &self.threads,
            &self.methods,
            self.sampled,
        )]
    }
}
