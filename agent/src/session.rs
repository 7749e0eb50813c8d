//! Profiling sessions: `start` opens one with its options, `stop` closes it
//! (with a snapshot), `resume` reopens it with its data, `dump` writes a
//! snapshot of it, `status` describes it. Every later attach of the library
//! is one of these commands (see `agent`).

use crate::agent::{check_snapshot_path, get, Agent, Reply};
use crate::instrument::Modes;
use crate::modes::{self, Cx, Opened};
use crate::options::{Command, Options};
use crate::vm::{Jni, JvmtiEvent};
use crate::{clock, control, log, snapshot};
use std::path::PathBuf;

pub(crate) struct Session {
    pub(crate) options: Options,
    /// Whether the dump signal is installed, for `status` and replies.
    pub(crate) signal_note: String,
    /// The modes the options named, opened by the session's first run.
    pub(crate) modes: Vec<Opened>,
    pub(crate) started_ns: u64,
    pub(crate) stopped_ns: Option<u64>,
    /// `otlp`: the push, started by the session's first run.
    pub(crate) otlp: Option<crate::otlp::Pusher>,
}

#[derive(Default)]
pub(crate) struct DumpState {
    pub(crate) written: u32,
    /// Set at VMDeath, after the last snapshot: nothing may be written after it.
    pub(crate) vm_dead: bool,
}

impl Agent {
    /// Starts (or resumes) what a session's options ask for: the modes are
    /// opened on the first run and started on every run.
    pub(crate) fn run_session(&'static self, jni: &Jni, s: &mut Session) -> Result<(), String> {
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
        // Every run adds its modes' capabilities: the agent's environment
        // holds only what the sessions before asked for (a JVM started with
        // `sampling` lacks `alloc`'s), and adding one held already is harmless.
        self.add_mode_capabilities(&s.options)?;
        if s.options.rewrites() {
            self.start_instrumenting(jni, &s.options)?;
        }
        let cx = Cx {
            host: self.host(),
            jni,
            options: &s.options,
        };
        // The push's configuration is checked before any mode starts: a
        // bad one refuses the session, as a bad option does.
        let push = match (&s.options.otlp, &s.otlp) {
            (Some(_), None) => Some(self.push_config(jni, &s.options)?),
            _ => None,
        };
        if s.modes.is_empty() {
            s.modes = modes::open(&cx)?;
        }
        s.modes
            .iter()
            .try_for_each(|m| m.start(&cx).map_err(|e| modes::named(m.name, e)))?;
        if let Some(config) = push {
            match crate::otlp::Pusher::start(config, |id| Box::new(move || self.push_source(id))) {
                Ok(p) => s.otlp = Some(p),
                Err(e) => log::error(&format!("{e}; profiling goes on without it")),
            }
        }
        Ok(())
    }

    /// The `otlp` push's configuration for `options` (the JVM's system
    /// properties name the resource).
    fn push_config(
        &self,
        jni: &Jni,
        options: &Options,
    ) -> Result<crate::otlp::config::Config, String> {
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
        crate::otlp::config::Config::new(options, &process).map_err(|e| format!("otlp: {e}"))
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

    /// The session's call-tree modes' trees.
    pub(crate) fn mode_trees(&self, s: &Session) -> crate::otlp::ModeTrees {
        let records = self.threads.records();
        s.modes
            .iter()
            .filter_map(|m| Some((m.name, m.call_trees(&records)?)))
            .collect()
    }

    /// The last push of a session's `otlp`, at the JVM's exit or when a
    /// new session replaces it: taken out of the session, sent within
    /// [`crate::otlp::EXIT_DEADLINE`], its summary logged.
    pub(crate) fn finish_push(&self, s: &mut Session) {
        if let Some(p) = s.otlp.take() {
            let trees = self.mode_trees(s);
            p.finish(trees, crate::otlp::EXIT_DEADLINE);
            log::info(&p.summary());
        }
    }

    /// What every instrumenting mode needs: the class-file hook, and the
    /// instrumenter started with the probes of the modes asked for.
    fn start_instrumenting(&'static self, jni: &Jni, options: &Options) -> Result<(), String> {
        self.jvmti
            .set_event_enabled(JvmtiEvent::CLASS_FILE_LOAD_HOOK, true)
            .map_err(|e| format!("enabling the class-file hook: {}", self.jvmti.error_name(e)))?;
        self.instrumenter.start(
            self.jvmti,
            jni,
            options.scope.clone(),
            Modes::of(options),
            &modes::all_natives(),
            Box::new(modes::ModeIds(self.host())),
        )
    }

    /// Stops the modes in the reverse of their start: `jfr`, which records
    /// the others' events, last.
    pub(crate) fn stop_session(&self, s: &mut Session) {
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
                    return Err(format!(
                        "already profiling ({}); stop it first, or dump",
                        describe(s)
                    ));
                }
                if options.vthreads != self.vthreads {
                    return Err(format!(
                        "vthreads={} was fixed when the agent loaded; it cannot change in this JVM",
                        if self.vthreads { "on" } else { "off" }
                    ));
                }
                check_snapshot_path(&options);
                if let Some(old) = session.as_mut() {
                    self.finish_push(old);
                }
                let mut s = Session {
                    options,
                    signal_note: String::new(),
                    modes: Vec::new(),
                    started_ns: clock::now_ns(),
                    stopped_ns: None,
                    otlp: None,
                };
                self.run_session(jni, &mut s)?;
                let msg = format!("started: {}", describe(&s));
                *session = Some(s);
                Ok(msg)
            }
            Command::Stop => {
                {
                    let mut session = self.session.lock();
                    let s = session.as_mut().ok_or("no profiling session to stop")?;
                    if s.stopped_ns.is_some() {
                        return Err("profiling is already stopped".into());
                    }
                    self.stop_session(s);
                }
                self.dump(jni, None).map(|m| format!("stopped; {m}"))
            }
            Command::Resume => {
                let mut session = self.session.lock();
                let s = session.as_mut().ok_or("no profiling session to resume")?;
                if s.stopped_ns.is_none() {
                    return Err(format!("profiling is already running ({})", describe(s)));
                }
                s.stopped_ns = None;
                self.run_session(jni, s)?;
                Ok(format!("resumed: {}", describe(s)))
            }
            Command::Dump => self.dump(jni, options.file_given.then_some(options.file.as_str())),
            Command::Status => {
                // Dumps lock before sessions (as `dump` does): read it first.
                let written = self.dumps.lock().written;
                let session = self.session.lock();
                let s = session
                    .as_ref()
                    .ok_or("loaded, no profiling session started")?;
                let state = if s.stopped_ns.is_some() {
                    "stopped"
                } else {
                    "running"
                };
                Ok(format!(
                    "{state}: {}; {} threads seen; {} snapshots written",
                    describe(s),
                    self.threads.count(),
                    written
                ))
            }
        }
    }

    /// Writes a snapshot of the current session now, to the session's file or
    /// to `file` (a one-off template). Failure is reported; profiling goes on.
    pub fn dump(&'static self, jni: &Jni, file: Option<&str>) -> Reply {
        let mut dumps = self.dumps.lock();
        if dumps.vm_dead {
            return Err("the JVM is shutting down; its last snapshot is written".into());
        }
        let session = self.session.lock();
        let s = session
            .as_ref()
            .ok_or("no profiling session started, so there is nothing to dump; start one first (profrj attach PID sampling)")?;
        let window = (s.started_ns, s.stopped_ns.unwrap_or_else(clock::now_ns));
        let template = file.unwrap_or(&s.options.file).to_owned();
        let number = dumps.written + 1;
        let path: PathBuf =
            snapshot::expand_path(&template, std::process::id(), snapshot::unix_now(), number);
        let cx = Cx {
            host: self.host(),
            jni,
            options: &s.options,
        };
        // Before the thread records: a mode may run a GC, and meet new threads.
        let sections = s
            .modes
            .iter()
            .map(|m| m.snapshot(&cx))
            .collect::<Result<Vec<_>, _>>()?;
        let refs = self.threads.count() as i32 * 3 + 64;
        jni.with_local_frame(refs, || self.threads.refresh_live(self.jvmti, jni));
        let records = self.threads.records();
        let result = snapshot::write_document(&path, |w| {
            sections
                .iter()
                .try_for_each(|section| section.write(w, &records, window))?;
            sections
                .iter()
                .try_for_each(|section| section.write_after(w, &records, window))
        });
        match result {
            Ok(()) => {
                dumps.written = number;
                Ok(format!("snapshot written to {}", path.display()))
            }
            Err(e) => Err(format!("cannot write snapshot to {}: {e}", path.display())),
        }
    }
}

fn describe(s: &Session) -> String {
    let o = &s.options;
    let mut parts = Vec::new();
    if o.sampling {
        parts.push(format!(
            "sampling every {:?} ({}), depth {}",
            o.interval,
            o.event.name(),
            o.depth
        ));
    }
    parts.extend(s.modes.iter().filter_map(|m| m.summary()));
    if let (true, Some(a)) = (o.instruments(), get()) {
        let i = &a.instrumenter;
        let modes = [
            (o.profile, "profile"),
            (o.coverage, "coverage"),
            (o.memory, "memory"),
            (o.trace.is_some(), "trace"),
        ];
        let names: Vec<&str> = modes.iter().filter(|m| m.0).map(|m| m.1).collect();
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
