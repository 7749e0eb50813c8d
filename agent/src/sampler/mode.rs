//! `sampling` as a [`Mode`]: the session's sampler and its thread.

use super::{signal, Config, Event, Sampler, StackSource};
use crate::error::AgentError;
use crate::log;
use crate::mode::{Capture, Cx, Mode, Registration};
use crate::model::Section;
use crate::options::Stacks;
use crate::threads::ThreadRecord;
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
    probes: Registration::no_probes,
};

struct Sampling {
    sampler: Arc<Sampler>,
}

/// A sampler for the session's options, its stacks taken from signals unless
/// `stacks=jvmti` or the JVM cannot (then JVMTI, and the reason is said).
fn open(cx: &Cx) -> Result<Box<dyn Mode>, AgentError> {
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
                return Err(AgentError::Unsupported(format!(
                    "sampling: event=cpu needs signal sampling, and {why}"
                )))
            }
        },
    };
    if options.event == Event::Cpu && matches!(source, StackSource::Jvmti { .. }) {
        return Err(AgentError::Refused(
            "sampling: event=cpu needs stacks from signals; it cannot run with stacks=jvmti".into(),
        ));
    }
    let config = Config {
        interval: options.interval,
        depth: options.depth,
        event: options.event,
        get_virtual_thread: host.get_virtual_thread,
    };
    Ok(Box::new(Sampling {
        sampler: Arc::new(Sampler::new(config, source)),
    }))
}

impl Mode for Sampling {
    fn start(&self, cx: &Cx) -> Result<(), AgentError> {
        self.sampler.start(cx.host, cx.jni, self.sampler.clone())
    }

    fn stop(&self) {
        self.sampler.stop();
    }

    fn snapshot(&self, _cx: &Cx) -> Result<Box<dyn Capture + '_>, AgentError> {
        Ok(Box::new(self))
    }

    fn summary(&self) -> Option<String> {
        Some(self.sampler.cost_summary())
    }
}

/// The trees are copied into the model under the sampler's lock (sampling
/// waits meanwhile), not written under it.
impl Capture for &Sampling {
    fn sections(self: Box<Self>, threads: &[ThreadRecord], window: (u64, u64)) -> Vec<Section> {
        let section = self
            .sampler
            .with_data(|d| super::model::section(d, threads, window));
        vec![section]
    }
}
