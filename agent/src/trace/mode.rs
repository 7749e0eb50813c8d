//! `trace` as a [`Mode`]. Its probes are inserted by the instrumenter with
//! the other instrumenting modes'; its output is its own file, not a
//! snapshot section: a snapshot (a dump) ends the current trace file.

use super::Lifetime;
use crate::error::AgentError;
use crate::events::Kind;
use crate::host::Host;
use crate::instrument::Probes;
use crate::mode::{Capture, Cx, Mode, Nothing, Registration};
use crate::options::{self, ModeOptions, Opt, OptionError, Options, Takes, Value};
use crate::vm::sys::Capability;
use crate::vm::{Capabilities, Jni};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

/// `trace`: every call, return, throw and catch in scope, as TPTP events.
pub const REGISTRATION: Registration = Registration {
    name: "trace",
    options: ModeOptions {
        options: &[
            Opt {
                syntax: "trace[=PATH]",
                default: "profrj-%p-trace.xml",
                takes: Takes::Start,
                meaning: "every call, return, throw and catch of the classes in scope as it happens, written as a TPTP trace-event XML document to PATH (placeholders as for file=; each dump ends the current file and the next events start the next, %n numbering them in the JVM, across sessions, else .2, .3... appended). Not a snapshot section",
                read: Some(read_path),
            },
            Opt {
                syntax: "overflow=wait|drop",
                default: "wait",
                takes: Takes::Start,
                meaning: "trace: when a thread's event buffer is full because the disk cannot keep up, wait for the writer (a complete trace, a slower program) or drop the events and count them (the trace marks each gap)",
                read: Some(|k, v| options::choice(k, v, &["wait", "drop"], "wait or drop")),
            },
        ],
        default_mode: false,
        records_others: false,
        check: check_options,
    },
    open,
    natives: || super::natives().to_vec(),
    capabilities,
    probes: |_| Probes {
        trace: true,
        ..Probes::NONE
    },
};

/// `trace[=PATH]`.
fn read_path(key: &str, value: Option<&str>) -> Result<Value, OptionError> {
    let path = match value {
        Some(v) => options::parse_file(key, v)?,
        None => "profrj-%p-trace.xml".to_owned(),
    };
    Ok(Value::Text(path))
}

/// `overflow` belongs to `trace`.
fn check_options(o: &Options) -> Result<(), OptionError> {
    options::belongs_to(o, "overflow", "trace", "trace,overflow=drop")
}

fn capabilities(caps: &mut Capabilities) -> Result<(), AgentError> {
    crate::instrument::capabilities(caps)?;
    Ok(caps.need(Capability::GenerateGarbageCollectionEvents, "trace")?)
}

/// The GC events a running trace turns on (it only listens to the others).
const GC: [Kind; 2] = [Kind::GcStart, Kind::GcFinish];

struct Trace {
    host: &'static Host,
    life: &'static Lifetime,
    /// The VM is ending: the next snapshot closes the trace for good.
    dying: AtomicBool,
}

fn open(cx: &Cx) -> Result<Box<dyn Mode>, AgentError> {
    let life = cx.host.state::<Lifetime>();
    cx.host.events.subscribe(life, &super::hooks::KINDS);
    Ok(Box::new(Trace {
        host: cx.host,
        life,
        dying: AtomicBool::new(false),
    }))
}

impl Mode for Trace {
    fn start(&self, cx: &Cx) -> Result<(), AgentError> {
        // A call's open entries follow its virtual thread across carriers.
        cx.host.follow_virtual_threads("trace");
        let o = cx.options;
        let path = o.text("trace").unwrap_or_default();
        let drop_when_full = o.text("overflow") == Some("drop");
        let host = self.host;
        let sources = super::writer::Sources {
            threads: &host.threads,
            registry: &host.instrumenter.registry,
            sites: &host.sites,
        };
        let args = match drop_when_full {
            true => format!("trace={path},overflow=drop"),
            false => format!("trace={path}"),
        };
        self.life.start(sources, path, drop_when_full, &args)?;
        for kind in GC {
            host.want(self.life, kind, true).map_err(|e| match e {
                AgentError::Jvmti { error, .. } => AgentError::Jvmti {
                    call: "GC events".into(),
                    error,
                },
                e => e,
            })?;
        }
        Ok(())
    }

    /// Ends the current file; the GC events stay on while another mode
    /// wants them (`alloc,live` counts GCs).
    fn stop(&self) {
        self.life.stop();
        for kind in GC {
            let _ = self.host.want(self.life, kind, false);
        }
        self.host.unfollow_virtual_threads("trace");
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
