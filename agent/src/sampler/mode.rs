//! `sampling` as a [`Mode`]: the session's sampler and its thread.

use super::{signal, Config, Event, Sampler, StackSource};
use crate::log;
use crate::modes::{Cx, Mode, Section};
use crate::options::Stacks;
use crate::snapshot::XmlWriter;
use crate::threads::ThreadRecord;
use std::io;
use std::sync::Arc;

struct Sampling {
    sampler: Arc<Sampler>,
}

/// A sampler for the session's options, its stacks taken from signals unless
/// `stacks=jvmti` or the JVM cannot (then JVMTI, and the reason is said).
pub fn open(cx: &Cx) -> Result<Box<dyn Mode>, String> {
    let options = cx.options;
    let agent = cx.agent;
    let source = match options.stacks {
        Stacks::Jvmti => StackSource::Jvmti { why: None },
        Stacks::Async => match signal::setup(agent.vm, agent.jvmti, cx.jni, options.depth) {
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
        get_virtual_thread: agent.get_virtual_thread,
    };
    Ok(Box::new(Sampling {
        sampler: Arc::new(Sampler::new(config, source)),
    }))
}

impl Mode for Sampling {
    fn name(&self) -> &'static str {
        "sampling"
    }

    fn start(&self, cx: &Cx) -> Result<(), String> {
        self.sampler
            .start(cx.agent.jvmti, cx.jni, self.sampler.clone())
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
