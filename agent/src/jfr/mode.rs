//! `jfr` as a [`Mode`]: it collects nothing itself; while it records, its
//! [`Lifetime`] hears the events the other modes publish as they fold them
//! (samples, sampled objects, lock waits). Its output is its own file, not
//! a snapshot section: a snapshot (a dump) ends the current recording file.

use super::Lifetime;
use crate::error::AgentError;
use crate::host::Host;
use crate::mode::{Capture, Cx, Mode, Nothing, Registration};
use crate::options::{self, ModeOptions, Opt, OptionError, Takes, Value};
use crate::vm::sys::Capability;
use crate::vm::Jni;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// The recording's path template when `jfr` gives none.
const DEFAULT_PATH: &str = "profrj-%p.jfr";

/// `jfr[=PATH]`: the running modes' events as a JFR recording.
pub const REGISTRATION: Registration = Registration {
    name: "jfr",
    options: ModeOptions {
        options: &[Opt {
            syntax: "jfr[=PATH]",
            default: DEFAULT_PATH,
            takes: Takes::Start,
            meaning: "also write the running modes' events as they happen to a JDK Flight Recorder file at PATH (samples as jdk.ExecutionSample when the thread ran, else profiler.WallClockSample, alloc's as jdk.ObjectAllocationSample, lock's as jdk.JavaMonitorEnter/jdk.ThreadPark, with the JVM, OS and CPU information events), for JDK Mission Control and IntelliJ; placeholders as for file=; each dump ends the file, the next events start the next (%n numbers them, else .2, .3... before .jfr); sampling is on if no mode is named (docs/JFR.md)",
            read: Some(read_path),
        }],
        default_mode: false,
        // It records the others' events: named alone, the default mode
        // (sampling) comes with it.
        records_others: true,
        check: ModeOptions::no_check,
    },
    open,
    natives: Vec::new,
    // Line numbers in stack frames when the JVM offers them (HotSpot does,
    // at any time); frames say -1 without.
    capabilities: |caps| {
        caps.want(Capability::GetLineNumbers);
        Ok(())
    },
    probes: Registration::no_probes,
};

/// `jfr[=PATH]`.
fn read_path(key: &str, value: Option<&str>) -> Result<Value, OptionError> {
    let path = match value {
        Some(v) => options::parse_file(key, v)?,
        None => DEFAULT_PATH.to_owned(),
    };
    Ok(Value::Text(path))
}

struct Jfr {
    host: &'static Host,
    life: &'static Lifetime,
    /// The VM is ending: the next snapshot ends the recording for good.
    dying: AtomicBool,
}

fn open(cx: &Cx) -> Result<Box<dyn Mode>, AgentError> {
    let life = cx.host.state::<Lifetime>();
    cx.host.events.subscribe(life, &super::hooks::KINDS);
    Ok(Box::new(Jfr {
        host: cx.host,
        life,
        dying: AtomicBool::new(false),
    }))
}

impl Mode for Jfr {
    fn start(&self, cx: &Cx) -> Result<(), AgentError> {
        let path = cx.options.text("jfr").unwrap_or(DEFAULT_PATH);
        self.life.start(self.host, path)
    }

    fn stop(&self) {
        self.life.stop();
    }

    fn snapshot(&self, _cx: &Cx) -> Result<Box<dyn Capture + '_>, AgentError> {
        self.life.finish_file(self.dying.load(Relaxed));
        Ok(Box::new(Nothing))
    }

    fn vm_dying(&self, _jni: &Jni) {
        self.dying.store(true, Relaxed);
    }

    fn summary(&self) -> Option<String> {
        Some(self.life.summary())
    }
}
