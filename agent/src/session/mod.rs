//! Profiling sessions: `start` opens one with its options, `stop` closes it
//! (with a snapshot), `resume` reopens it with its data, `dump` writes a
//! snapshot of it, `status` describes it. Every later attach of the library
//! is one of these commands (see `agent`). A session talks to its modes
//! through [`crate::mode::Mode`] alone, and to the VM through the host.

use crate::error::AgentError;
use crate::host::Host;
use crate::mode::Cx;
use crate::model::Snapshot;
use crate::options::{Command, Options};
use crate::registry::{self, Opened};
use crate::vm::sys::Capability;
use crate::vm::{Capabilities, Jni, JvmtiEvent};
use crate::{clock, control, log, snapshot};
use parking_lot::Mutex;
use std::path::PathBuf;

mod heap;
pub(crate) use heap::write_heap_dump;

/// What a command answers: the text goes to the reply file and to stderr.
pub type Reply = Result<String, AgentError>;

pub(crate) struct Session {
    pub(crate) options: Options,
    /// Whether the dump signal is installed, for `status` and replies.
    signal_note: String,
    /// The modes the options named, opened by the session's first run.
    modes: Vec<Opened>,
    pub(crate) started_ns: u64,
    pub(crate) stopped_ns: Option<u64>,
    /// `otlp`: the push, started by the session's first run.
    otlp: Option<crate::otlp::Pusher>,
}

impl Session {
    /// A session of `options`, not run yet.
    pub(crate) fn new(options: Options) -> Self {
        Session {
            options,
            signal_note: String::new(),
            modes: Vec::new(),
            started_ns: clock::now_ns(),
            stopped_ns: None,
            otlp: None,
        }
    }
}

#[derive(Default)]
struct DumpState {
    written: u32,
    /// Set at VMDeath, after the last snapshot: nothing may be written after it.
    vm_dead: bool,
}

/// The agent's session (one at a time) and its snapshots.
pub struct Sessions {
    host: &'static Host,
    /// `vthreads=` of the start that created the agent (fixed from then on).
    vthreads: bool,
    session: Mutex<Option<Session>>,
    /// Serialises snapshots and numbers them (`%n`). Locked before `session`.
    dumps: Mutex<DumpState>,
}

impl Sessions {
    pub fn new(host: &'static Host, vthreads: bool) -> Self {
        Sessions {
            host,
            vthreads,
            session: Mutex::new(None),
            dumps: Mutex::new(DumpState::default()),
        }
    }

    /// A session to run at VMInit (Agent_OnLoad's options).
    pub(crate) fn set_pending(&self, options: Options) {
        *self.session.lock() = Some(Session::new(options));
    }

    /// VMInit: runs the session Agent_OnLoad set, from now.
    pub fn run_pending(&'static self, jni: &Jni) {
        let mut session = self.session.lock();
        if let Some(s) = session.as_mut() {
            s.started_ns = clock::now_ns();
            if let Err(e) = self.run(jni, s) {
                log::error(&format!("{e}; profiling is off"));
            }
        }
    }

    /// Starts (or resumes) what a session's options ask for: the modes are
    /// opened on the first run and started on every run.
    fn run(&'static self, jni: &Jni, s: &mut Session) -> Result<(), AgentError> {
        s.signal_note = match &s.options.signal {
            None => "no dump signal".to_owned(),
            Some((number, name)) => match control::install_dump_signal(*number) {
                Ok(()) => format!("dump signal SIG{name}"),
                Err(e) => {
                    let msg = format!("no dump signal: SIG{name} {e}");
                    log::warn(&msg);
                    msg
                }
            },
        };
        let host = self.host;
        // Every run adds its modes' capabilities: the agent's environment
        // holds only what the sessions before asked for (a JVM started with
        // `sampling` lacks `alloc`'s), and adding one held already is harmless.
        add_mode_capabilities(host, &s.options)?;
        host.threads.set_fold_rule(s.options.fold_ended);
        self.want_oom_events(jni, &s.options)?;
        let probes = registry::probes(&s.options);
        if probes.any() {
            host.define_runtime(jni)?;
        }
        // The push's configuration is checked before any mode starts: a
        // bad one refuses the session, as a bad option does.
        let push = match (&s.options.otlp, &s.otlp) {
            (Some(_), None) => Some(push_config(jni, &s.options)?),
            _ => None,
        };
        let cx = Cx {
            host,
            jni,
            options: &s.options,
        };
        if s.modes.is_empty() {
            s.modes = registry::open(&cx)?;
        }
        if probes.any() {
            self.start_instrumenting(jni, &s.options)?;
        }
        s.modes
            .iter()
            .try_for_each(|m| m.start(&cx).map_err(|e| e.in_mode(m.name)))?;
        if let Some(config) = push {
            match crate::otlp::Pusher::start(config, |id| Box::new(move || self.push_source(id))) {
                Ok(p) => s.otlp = Some(p),
                Err(e) => log::error(&format!("{e}; profiling goes on without it")),
            }
        }
        Ok(())
    }

    /// What the push with id `id` reads each period: the trees of the
    /// session's call-tree modes, while the session is still the one that
    /// started it.
    fn push_source(&self, id: u64) -> Option<crate::otlp::ModeTrees> {
        let session = self.session.lock();
        let s = session.as_ref()?;
        if s.otlp.as_ref().map(|p| p.id()) != Some(id) {
            return None;
        }
        Some(self.mode_trees(s))
    }

    /// The session's call-tree modes' trees, as the push sends them.
    fn mode_trees(&self, s: &Session) -> crate::otlp::ModeTrees {
        let records = self.host.threads.records();
        s.modes
            .iter()
            .filter_map(|m| {
                let trees = m.call_trees(&records)?;
                Some((
                    m.name,
                    crate::otlp::model::call_trees(m.name, &trees, &records)?,
                ))
            })
            .collect()
    }

    /// The last push of a session's `otlp`, at the JVM's exit or when a
    /// new session replaces it: taken out of the session, sent within
    /// [`crate::otlp::EXIT_DEADLINE`], its summary logged.
    fn finish_push(&self, s: &mut Session) {
        if let Some(p) = s.otlp.take() {
            let trees = self.mode_trees(s);
            p.finish(trees, crate::otlp::EXIT_DEADLINE);
            log::info(&p.summary());
        }
    }

    /// What every instrumenting mode needs: the class-file hook, and the
    /// instrumenter started with the probes of the modes asked for.
    fn start_instrumenting(&self, jni: &Jni, options: &Options) -> Result<(), AgentError> {
        let host = self.host;
        host.jvmti
            .set_event_enabled(JvmtiEvent::CLASS_FILE_LOAD_HOOK, true)
            .map_err(|e| AgentError::jvmti(host.jvmti, "enabling the class-file hook", e))?;
        host.instrumenter.start(
            host.jvmti,
            jni,
            options.scope.clone(),
            registry::probes(options),
            &host.natives,
            &host.sites,
        )
    }

    /// Stops the modes in the reverse of their start: `jfr`, which records
    /// the others' events, last.
    fn stop(&self, s: &mut Session) {
        for m in s.modes.iter().rev() {
            m.stop();
            if let Some(line) = m.summary() {
                log::info(&line);
            }
        }
        if let Some(p) = &s.otlp {
            p.push_now();
        }
        s.stopped_ns = Some(clock::now_ns());
    }

    /// Runs one command from an attach client.
    pub fn command(&'static self, jni: &Jni, options: Options) -> Reply {
        match options.command {
            Command::Start => {
                let mut session = self.session.lock();
                if let Some(s) = session.as_ref().filter(|s| s.stopped_ns.is_none()) {
                    return Err(AgentError::Refused(format!(
                        "already profiling ({}); stop it first, or dump",
                        self.describe(s)
                    )));
                }
                if options.vthreads != self.vthreads {
                    return Err(AgentError::Refused(format!(
                        "vthreads={} was fixed when the agent loaded; it cannot change in this JVM",
                        if self.vthreads { "on" } else { "off" }
                    )));
                }
                check_snapshot_path(&options);
                if let Some(old) = session.as_mut() {
                    self.finish_push(old);
                }
                let mut s = Session::new(options);
                self.run(jni, &mut s)?;
                let msg = format!("started: {}", self.describe(&s));
                *session = Some(s);
                Ok(msg)
            }
            Command::Stop => {
                {
                    let mut session = self.session.lock();
                    let s = session
                        .as_mut()
                        .ok_or(AgentError::Refused("no profiling session to stop".into()))?;
                    if s.stopped_ns.is_some() {
                        return Err(AgentError::Refused("profiling is already stopped".into()));
                    }
                    self.stop(s);
                }
                self.dump(jni, None).map(|m| format!("stopped; {m}"))
            }
            Command::Resume => {
                let mut session = self.session.lock();
                let s = session
                    .as_mut()
                    .ok_or(AgentError::Refused("no profiling session to resume".into()))?;
                if s.stopped_ns.is_none() {
                    return Err(AgentError::Refused(format!(
                        "profiling is already running ({})",
                        self.describe(s)
                    )));
                }
                s.stopped_ns = None;
                self.run(jni, s)?;
                Ok(format!("resumed: {}", self.describe(s)))
            }
            Command::Dump => self.dump(jni, options.file_given.then_some(options.file.as_str())),
            Command::HeapDump => self.heap_dump(jni, &options.heap),
            Command::Status => {
                // Dumps lock before sessions (as `dump` does): read it first.
                let written = self.dumps.lock().written;
                let session = self.session.lock();
                let s = session.as_ref().ok_or(AgentError::Refused(
                    "loaded, no profiling session started".into(),
                ))?;
                let state = if s.stopped_ns.is_some() {
                    "stopped"
                } else {
                    "running"
                };
                let vthreads = self
                    .host
                    .virtual_thread_status()
                    .map(|v| format!("; {v}"))
                    .unwrap_or_default();
                Ok(format!(
                    "{state}: {}; {} threads seen; {} snapshots written{vthreads}",
                    self.describe(s),
                    self.host.threads.count(),
                    written
                ))
            }
        }
    }

    /// Writes a snapshot of the current session now, to the session's file or
    /// to `file` (a one-off template). Failure is reported; profiling goes on.
    pub fn dump(&self, jni: &Jni, file: Option<&str>) -> Reply {
        let mut dumps = self.dumps.lock();
        if dumps.vm_dead {
            return Err(AgentError::Refused(
                "the JVM is shutting down; its last snapshot is written".into(),
            ));
        }
        let session = self.session.lock();
        let s = session.as_ref().ok_or(AgentError::Refused(
            "no profiling session started, so there is nothing to dump; start one first (profrj attach PID sampling)".into(),
        ))?;
        let window = (s.started_ns, s.stopped_ns.unwrap_or_else(clock::now_ns));
        let template = file.unwrap_or(&s.options.file).to_owned();
        let number = dumps.written + 1;
        let path: PathBuf =
            snapshot::expand_path(&template, std::process::id(), snapshot::unix_now(), number);
        let host = self.host;
        let cx = Cx {
            host,
            jni,
            options: &s.options,
        };
        // Before the thread records: a mode may run a GC, and meet new threads.
        let captures = s
            .modes
            .iter()
            .map(|m| m.snapshot(&cx).map_err(|e| e.in_mode(m.name)))
            .collect::<Result<Vec<_>, _>>()?;
        let refs = host.threads.count() as i32 * 3 + 64;
        jni.with_local_frame(refs, || host.threads.refresh_live(host.jvmti, jni));
        let records = host.threads.records();
        let sections = captures
            .into_iter()
            .flat_map(|c| c.sections(&records, window))
            .collect();
        let sections = crate::fold_ended::fold_ended(&records, sections);
        let model = Snapshot {
            threads: &records,
            window,
            sections,
        };
        let result =
            snapshot::write_document(&path, |out| crate::xml::write(&model, out).map(|_| ()));
        match result {
            Ok(()) => {
                dumps.written = number;
                let msg = format!("snapshot written to {}", path.display());
                if !s.options.heap.with_snapshot {
                    return Ok(msg);
                }
                match heap::write_heap_dump(Some(host), jni, &s.options.heap) {
                    Ok(heap) => Ok(format!("{msg}; {heap}")),
                    Err(e) => Ok(format!("{msg}; no heap dump: {e}")),
                }
            }
            Err(e) => Err(crate::error::io(
                format!("cannot write snapshot to {}", path.display()),
                e,
            )),
        }
    }

    /// VMDeath: a running session stops, its modes hear the VM is dying,
    /// and its last snapshot is written; nothing is written after.
    pub fn vm_death(&self, jni: &Jni) {
        // The heap dump at exit first, while `memory` still follows objects.
        let heap = (self.session.lock().as_ref())
            .filter(|s| s.options.heap.at_exit)
            .map(|s| s.options.heap.clone());
        if let Some(heap) = heap {
            match heap::write_heap_dump(Some(self.host), jni, &heap) {
                Ok(msg) => log::info(&msg),
                Err(e) => log::error(&format!("no heap dump at exit: {e}")),
            }
        }
        let running = {
            let mut session = self.session.lock();
            match session.as_mut() {
                Some(s) if s.stopped_ns.is_none() => {
                    self.stop(s);
                    true
                }
                _ => false,
            }
        };
        // A stopped session already wrote its snapshot at `stop`.
        if running {
            if let Some(s) = self.session.lock().as_ref() {
                s.modes.iter().for_each(|m| m.vm_dying(jni));
            }
            match self.dump(jni, None) {
                Ok(msg) => log::info(&msg),
                Err(msg) => log::error(&msg.to_string()),
            }
        }
        // The last push, after the last snapshot: both hold the same figures.
        if let Some(s) = self.session.lock().as_mut() {
            self.finish_push(s);
        }
        self.dumps.lock().vm_dead = true;
        self.host.events.vm_death();
    }

    /// Set once the VM is dead (the control thread's cue to end).
    pub fn vm_dead(&self) -> bool {
        self.dumps.lock().vm_dead
    }

    fn describe(&self, s: &Session) -> String {
        let o = &s.options;
        let mut parts: Vec<String> = s.modes.iter().filter_map(|m| m.describe()).collect();
        parts.extend(s.modes.iter().filter_map(|m| m.summary()));
        let names = registry::instrumenting(o);
        if !names.is_empty() {
            let i = &self.host.instrumenter;
            parts.push(format!(
                "{}: {} classes, {} methods instrumented, {} refused",
                names.join("+"),
                i.classes.load(std::sync::atomic::Ordering::Relaxed),
                i.methods.load(std::sync::atomic::Ordering::Relaxed),
                i.refused.load(std::sync::atomic::Ordering::Relaxed)
            ));
        }
        if let Some(p) = &s.otlp {
            parts.push(p.summary());
        }
        parts.push(format!("file {}", o.file));
        parts.push(s.signal_note.clone());
        parts.join(", ")
    }
}

/// The `otlp` push's configuration for `options` (the JVM's system
/// properties name the resource).
fn push_config(jni: &Jni, options: &Options) -> Result<crate::otlp::config::Config, AgentError> {
    let property = |key: &str| jni.system_property(key).ok().flatten();
    let process = crate::otlp::config::Process {
        pid: std::process::id(),
        command: property("sun.java.command"),
        runtime_name: property("java.runtime.name"),
        runtime_version: property("java.runtime.version"),
        runtime_description: match (
            property("java.vm.vendor"),
            property("java.vm.name"),
            property("java.vm.version"),
        ) {
            (Some(a), Some(b), Some(c)) => Some(format!("{a} {b} {c}")),
            _ => None,
        },
    };
    crate::otlp::config::Config::new(options, &process)
        .map_err(|e| AgentError::Refused(format!("otlp: {e}")))
}

/// Adds the capabilities of the modes `options` names (on HotSpot, the
/// rewriter's can come as late as the first instrumenting session).
fn add_mode_capabilities(host: &Host, options: &Options) -> Result<(), AgentError> {
    let jvmti = host.jvmti;
    let potential = jvmti
        .potential_capabilities()
        .map_err(|e| AgentError::jvmti(jvmti, "GetPotentialCapabilities", e))?;
    let mut caps = Capabilities::new(potential);
    registry::capabilities(options, &mut caps)?;
    jvmti
        .add_capabilities(&caps.wanted())
        .map_err(|e| AgentError::jvmti(jvmti, "AddCapabilities", e))
}

/// Says at once when the session's snapshot could not be written where its
/// options say (it is tried again when written).
pub(crate) fn check_snapshot_path(options: &Options) {
    let path = snapshot::expand_path(&options.file, std::process::id(), snapshot::unix_now(), 1);
    if let Some(why) = snapshot::check_writable(&path) {
        log::warn(&format!(
            "{why}; profiling continues, the snapshot will be tried again when written"
        ));
    }
}

/// Capabilities every session needs, asked for at start-up.
pub(crate) fn base_capabilities(caps: &mut Capabilities) -> Result<(), AgentError> {
    // Thread tags and per-thread CPU time, for every mode.
    caps.need(Capability::TagObjects, "profrj")?;
    caps.need(Capability::GetThreadCpuTime, "profrj")?;
    Ok(())
}
