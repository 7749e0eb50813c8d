//! `sampling` as a [`Mode`]: the session's sampler and its thread.

use super::{signal, Config, Event, Sampler, StackSource};
use crate::error::AgentError;
use crate::log;
use crate::mode::{Capture, Cx, Mode, Registration};
use crate::model::Section;
use crate::native::CStack;
use crate::options::{self, ModeOptions, Opt, OptionError, Options, Takes, Value};
use crate::threads::ThreadRecord;
use std::sync::Arc;
use std::time::Duration;

/// `sampling`: every thread's stack once per interval. Its JVMTI needs
/// (CompiledMethodLoad, thread CPU time) are the agent's own, asked for at
/// start-up, where every JVM grants them.
pub const REGISTRATION: Registration = Registration {
    name: "sampling",
    options: ModeOptions {
        options: &[
        Opt {
            syntax: "sampling",
            default: "on if no mode is named",
            takes: Takes::Start,
            meaning: "stack sampling (the <sampler> section)",
            read: Some(options::read_flag_value),
        },
        Opt {
            syntax: "interval=DURATION",
            default: "10ms",
            takes: Takes::Start,
            meaning: "sampling interval, with unit us, ms or s (100us to 10s)",
            read: Some(read_interval),
        },
        Opt {
            syntax: "event=wall|cpu",
            default: "wall",
            takes: Takes::Start,
            meaning: "sampling: wall counts every live thread once per interval (hits when it ran); cpu samples each thread once per interval of CPU time it uses",
            read: Some(|k, v| options::choice(k, v, &["wall", "cpu"], "valid: wall, cpu")),
        },
        Opt {
            syntax: "stacks=async|jvmti",
            default: "async",
            takes: Takes::Start,
            meaning: "sampling: async takes each stack in its thread from a signal (SIGPROF, AsyncGetCallTrace: no safepoint bias, the sampler never waits); jvmti uses JVMTI handshakes",
            read: Some(|k, v| options::choice(k, v, &["async", "jvmti"], "valid: async, jvmti")),
        },
        Opt {
            syntax: "jvmthreads=on|off",
            default: "on with event=cpu, off with event=wall",
            takes: Takes::Start,
            meaning: "sampling: also sample the JVM's own threads (GC workers, JIT compiler threads, the VM thread, other native threads of the process), each a <thread> with jvmThread=gc|compiler|vm|other and its samples under [jvm_gc], [jvm_compiler], [jvm_vm] or [jvm_other], so a cpu profile adds up to the process's CPU (docs/THREADS.md); needs stacks from signals",
            read: Some(|k, v| options::choice(k, v, &["on", "off"], "valid: on, off")),
        },
        Opt {
            syntax: "cstack=no|fp|dwarf",
            default: "no",
            takes: Takes::Start,
            meaning: "sampling: native frames (C, C++) over a thread's Java frames, as async-profiler's cstack: fp follows frame pointers, dwarf the libraries' .eh_frame rules (frame pointers where none); no keeps Java frames only",
            read: Some(|k, v| options::choice(k, v, &["no", "fp", "dwarf"], "valid: no, fp, dwarf")),
        },
        Opt {
            syntax: "kernel=on|off",
            default: "off",
            takes: Takes::Start,
            meaning: "sampling: the kernel's frames over a thread's own where it was in the kernel, typed kernel; event=cpu: from a perf event per thread (its task clock) instead of its CPU timer, in a system call or a page fault, named from /proc/kallsyms (root, or perf_event_paranoid <= 1; elsewhere said and sampled without); event=wall: where a thread not running Java code waits (a blocking call, a sleep, a lock), from /proc/self/task/TID/stack (root only; elsewhere said)",
            read: Some(|k, v| options::choice(k, v, &["on", "off"], "valid: on, off")),
        },
        Opt {
            syntax: "lines",
            default: "",
            takes: Takes::Start,
            meaning: "sampling: each frame with its source line (a node per method and line, the line in a line attribute; every output with a line field carries it: collapsed `m():N`, pprof and OTLP `Line.line` (the otlp= push and convert), HPROF `File.java:N`, JFR `lineNumber` (convert --to jfr), the flame page), as async-profiler's lines option; alone it samples, beside another mode give sampling,lines",
            read: Some(options::read_flag_value),
        },
        ],
        default_mode: true,
        records_others: false,
        check: check_options,
    },
    open,
    natives: Vec::new,
    capabilities: |_| Ok(()),
    probes: Registration::no_probes,
};

struct Sampling {
    sampler: Arc<Sampler>,
    /// What `describe` says.
    settings: String,
}

/// A sampler for the session's options, its stacks taken from signals unless
/// `stacks=jvmti` or the JVM cannot (then JVMTI, and the reason is said).
/// `lines` belongs to sampling: alone it samples (the default mode), beside
/// another mode only with `sampling` named.
fn check_options(o: &Options) -> Result<(), OptionError> {
    if o.given("lines") && o.any_mode() {
        return options::belongs_to(o, "lines", "sampling", "sampling,lines");
    }
    if o.given("cstack") && o.any_mode() {
        return options::belongs_to(o, "cstack", "sampling", "sampling,cstack=fp");
    }
    if o.given("kernel") && o.any_mode() {
        return options::belongs_to(o, "kernel", "sampling", "sampling,kernel=on");
    }
    Ok(())
}

/// `interval=`: 100us to 10s.
fn read_interval(key: &str, value: Option<&str>) -> Result<Value, OptionError> {
    let v = options::required(key, value)?;
    let d = options::parse_duration(key, v, "10ms")?;
    if d < Duration::from_micros(100) || d > Duration::from_secs(10) {
        return Err(options::bad_value(key, v, "must be between 100us and 10s"));
    }
    Ok(Value::Duration(d))
}

/// The sampling interval (`interval=`, 10 ms by default).
pub fn interval(o: &Options) -> Duration {
    o.duration("interval").unwrap_or(Duration::from_millis(10))
}

/// Whether the JVM's own threads are sampled (`jvmthreads=`): by default
/// with `event=cpu`, where they get samples only as they use CPU, so the
/// profile adds up to the process's CPU time; not with `event=wall`, where
/// a JVM's dozen idle workers would add a sample each per tick.
pub fn jvm_threads(o: &Options) -> bool {
    match o.text("jvmthreads") {
        Some("on") => true,
        Some("off") => false,
        _ => event(o) == Event::Cpu,
    }
}

/// What a sample measures (`event=`).
pub fn event(o: &Options) -> Event {
    match o.text("event") {
        Some("cpu") => Event::Cpu,
        _ => Event::Wall,
    }
}

/// How native frames are walked (`cstack=`, none by default).
pub fn cstack(o: &Options) -> CStack {
    o.text("cstack")
        .and_then(CStack::from_word)
        .unwrap_or(CStack::No)
}

fn open(cx: &Cx) -> Result<Box<dyn Mode>, AgentError> {
    let options = cx.options;
    let host = cx.host;
    let event = event(options);
    let source = match options.text("stacks") {
        Some("jvmti") => StackSource::Jvmti { why: None },
        _ => match signal::setup(host.vm, host.jvmti, cx.jni, options.depth) {
            Ok(setup) => StackSource::Signal(setup),
            Err(why) if event == Event::Wall => {
                log::warn(&format!(
                    "sampling: stacks from JVMTI handshakes (safepoint-biased), because {why}"
                ));
                StackSource::Jvmti {
                    why: Some(why.to_string()),
                }
            }
            Err(why) => {
                return Err(AgentError::Unsupported(format!(
                    "sampling: event=cpu needs signal sampling, and {why}"
                )))
            }
        },
    };
    if event == Event::Cpu && matches!(source, StackSource::Jvmti { .. }) {
        return Err(AgentError::Refused(
            "sampling: event=cpu needs stacks from signals; it cannot run with stacks=jvmti".into(),
        ));
    }
    let cstack = cstack(options);
    if cstack != CStack::No && matches!(source, StackSource::Jvmti { .. }) {
        return Err(AgentError::Refused(format!(
            "sampling: cstack={} needs stacks from signals; it cannot run with stacks=jvmti",
            cstack.name()
        )));
    }
    crate::native::configure(cstack);
    let kernel = event == Event::Cpu && options.text("kernel") == Some("on");
    signal::cpu_timer::use_perf_events(kernel);
    if event == Event::Cpu {
        // Timers armed at each thread's start (`stacks/cpu_timers.rs`).
        let kinds = [crate::events::Kind::ThreadStart];
        host.events.subscribe(&super::stacks::CPU_TIMERS, &kinds);
    }
    let config = Config {
        interval: interval(options),
        depth: options.depth,
        event,
        lines: options.given("lines"),
        jvm_threads: jvm_threads(options),
        kernel: options.text("kernel") == Some("on"),
        get_virtual_thread: host.get_virtual_thread,
    };
    if config.jvm_threads && options.text("jvmthreads") == Some("on") {
        if let StackSource::Jvmti { .. } = source {
            log::warn("sampling: jvmthreads needs stacks from signals; the JVM's own threads are not sampled");
        }
    }
    let settings = format!(
        "sampling every {:?} ({}{}), depth {}{}{}",
        config.interval,
        config.event.name(),
        if config.jvm_threads {
            ", the JVM's threads too"
        } else {
            ""
        },
        config.depth,
        match cstack {
            CStack::No => String::new(),
            c => format!(", cstack={}", c.name()),
        },
        if options.text("kernel") == Some("on") {
            ", kernel frames"
        } else {
            ""
        }
    );
    Ok(Box::new(Sampling {
        sampler: Arc::new(Sampler::new(config, source)),
        settings,
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

    fn call_trees(&self, threads: &[Arc<ThreadRecord>]) -> Option<crate::model::CallTrees> {
        let config = self.sampler.config();
        let period = crate::model::Period {
            name: match config.event {
                Event::Cpu => "cpu",
                Event::Wall => "wall",
            },
            unit: crate::model::Unit::Nanoseconds,
            value: config.interval.as_nanos() as u64,
        };
        let every = (0, u64::MAX);
        Some(
            self.sampler
                .with_data(|d| super::model::trees(d, threads, every, Some(period))),
        )
    }

    fn describe(&self) -> Option<String> {
        Some(self.settings.clone())
    }

    fn summary(&self) -> Option<String> {
        Some(self.sampler.cost_summary())
    }
}

/// The trees are copied into the model under the sampler's lock (sampling
/// waits meanwhile), not written under it.
impl Capture for &Sampling {
    fn sections(
        self: Box<Self>,
        threads: &[Arc<ThreadRecord>],
        window: (u64, u64),
    ) -> Vec<Section> {
        let section = self
            .sampler
            .with_data(|d| super::model::section(d, threads, window));
        vec![section]
    }
}
