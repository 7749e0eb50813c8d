//! `sampling` as a [`Mode`]: the session's sampler and its thread.

use super::{signal, Config, Event, Sampler, StackSource};
use crate::log;
use crate::modes::{Cx, Mode, Registration, Section};
use crate::options::Stacks;
use crate::snapshot::XmlWriter;
use crate::threads::ThreadRecord;
use std::io;
use std::sync::Arc;

/// `sampling`: every thread's stack once per interval. Its JVMTI needs
/// (CompiledMethodLoad, thread CPU time) are the agent's own, asked for at
/// start-up, where every JVM grants them.
pub const REGISTRATION: Registration = Registration {
    name: "sampling",
    wanted: |o| o.sampling,
    open,
    natives: Vec::new,
    capabilities: |_| Ok(()),
};

struct Sampling {
    sampler: Arc<Sampler>,
}

/// A sampler for the session's options, its stacks taken from signals unless
/// `stacks=jvmti` or the JVM cannot (then JVMTI, and the reason is said).
pub fn open(cx: &Cx) -> Result<Box<dyn Mode>, String> {
    let options = cx.options;
    let host = cx.host;
    let source = match options.stacks {
        Stacks::Jvmti => StackSource::Jvmti { why: None },
        Stacks::Async => match signal::setup(host.vm, host.jvmti, cx.jni, options.depth) {
            Ok(setup) => StackSource::Signal(setup),
            Err(why) if options.event == Event::Wall => {
                log::warn(&format!(
                    "sampling: stacks from JVMTI handshakes (safepoint-biased), because {why}"
                ));
                StackSource::Jvmti { why: Some(why) }
            }
            Err(why) => {
                return Err(format!(
                    "sampling: event=cpu needs signal sampling, and {why}"
                ))
            }
        },
    };
    if options.event == Event::Cpu && matches!(source, StackSource::Jvmti { .. }) {
        return Err(
            "sampling: event=cpu needs stacks from signals; it cannot run with stacks=jvmti".into(),
        );
    }
    let config = Config {
        interval: options.interval,
        depth: options.depth,
        event: options.event,
        lines: options.lines,
        get_virtual_thread: host.get_virtual_thread,
    };
    Ok(Box::new(Sampling {
        sampler: Arc::new(Sampler::new(config, source)),
    }))
}

impl Mode for Sampling {
    fn start(&self, cx: &Cx) -> Result<(), String> {
        let entry = cx.host.entry_points.sampler_thread;
        // SAFETY: the FFI edge's sampler_thread takes one Arc<Sampler>
        // reference as its argument (EntryPoints' promise).
        unsafe {
            self.sampler
                .start(cx.host.jvmti, cx.jni, self.sampler.clone(), entry)
        }
    }

    fn stop(&self) {
        self.sampler.stop();
    }

    fn snapshot(&self, _cx: &Cx) -> Result<Box<dyn Section + '_>, String> {
        Ok(Box::new(self))
    }

    fn summary(&self) -> Option<String> {
        Some(self.sampler.cost_summary())
    }

    fn call_trees(&self, threads: &[ThreadRecord]) -> Option<profrj_otlp::CallTrees> {
        Some(self.sampler.call_trees(threads))
    }
}

impl Section for &Sampling {
    fn write(
        &self,
        w: &mut XmlWriter,
        threads: &[ThreadRecord],
        window: (u64, u64),
    ) -> io::Result<()> {
        self.sampler
            .with_data(|d| super::write_section(w, d, threads, window))
    }
}
