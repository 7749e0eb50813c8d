//! Profiling sessions: `start` opens one with its options, `stop` closes it
//! (with a snapshot), `resume` reopens it with its data, `dump` writes a
//! snapshot of it, `status` describes it. Every later attach of the library
//! is one of these commands (see `agent`).

use crate::agent::{add_instrument_capabilities, check_snapshot_path, get, Agent, Reply};
use crate::options::{Command, Options, Stacks};
use crate::sampler::{self, Event, Sampler, StackSource};
use crate::vm::{Jni, JvmtiEvent};
use crate::{clock, control, coverage, entry, log, memory, profile, snapshot};
use std::path::PathBuf;
use std::sync::Arc;

pub(crate) struct Session {
    pub(crate) options: Options,
    /// Whether the dump signal is installed, for `status` and replies.
    pub(crate) signal_note: String,
    pub(crate) sampler: Option<Arc<Sampler>>,
    pub(crate) started_ns: u64,
    pub(crate) stopped_ns: Option<u64>,
}

#[derive(Default)]
pub(crate) struct DumpState {
    pub(crate) written: u32,
    /// Set at VMDeath, after the last snapshot: nothing may be written after it.
    pub(crate) vm_dead: bool,
}

impl Agent {
    /// Starts (or resumes) what a session's options ask for.
    pub(crate) fn run_session(&self, jni: &Jni, s: &mut Session) -> Result<(), String> {
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
        if s.options.instruments() {
            add_instrument_capabilities(self.jvmti, s.options.memory)?;
            self.jvmti
                .set_event_enabled(JvmtiEvent::CLASS_FILE_LOAD_HOOK, true)
                .map_err(|e| {
                    format!("enabling the class-file hook: {}", self.jvmti.error_name(e))
                })?;
            self.instrumenter
                .start(self.jvmti, jni, s.options.scope.clone(), s.options.modes())?;
            if s.options.memory {
                let mechanism =
                    memory::choose(jni, s.options.tracker).map_err(|e| format!("memory: {e}"))?;
                self.memory_env()?;
                if mechanism == memory::Mechanism::WeakRefs {
                    self.start_memory_thread(jni)?;
                }
                if let Err(e) = crate::vm::intercept_allocations(self.jvmti, entry::jni_alloc) {
                    log::warn(&format!(
                        "memory: cannot intercept JNI ({e}); objects native code makes are not counted"
                    ));
                }
                if let Err(e) = self
                    .jvmti
                    .set_event_enabled(JvmtiEvent::VM_OBJECT_ALLOC, true)
                {
                    log::warn(&format!(
                        "memory: no VMObjectAlloc events ({}); objects made by reflection, clone or JNI are not counted",
                        self.jvmti.error_name(e)
                    ));
                }
            }
        }
        if s.options.profile {
            profile::start();
        }
        memory::set_active(s.options.memory);
        if !s.options.sampling {
            return Ok(());
        }
        let sampler = match &s.sampler {
            Some(existing) => existing.clone(),
            None => {
                let sampler = Arc::new(self.new_sampler(jni, &s.options)?);
                s.sampler = Some(sampler.clone());
                sampler
            }
        };
        sampler.start(self.jvmti, jni, sampler.clone(), entry::sampler_thread)
    }

    /// A sampler for `options`, its stacks taken from signals unless
    /// `stacks=jvmti` or the JVM cannot (then JVMTI, and the reason is said).
    fn new_sampler(&self, jni: &Jni, options: &Options) -> Result<Sampler, String> {
        let source = match options.stacks {
            Stacks::Jvmti => StackSource::Jvmti { why: None },
            Stacks::Async => {
                let vm = self.vm as *mut jni_sys::JavaVM;
                match sampler::signal::setup(vm, self.jvmti, jni, options.depth) {
                    Ok(setup) => StackSource::Signal(setup),
                    Err(why) if options.event == Event::Wall => {
                        log::warn(&format!("sampling: stacks from JVMTI handshakes (safepoint-biased), because {why}"));
                        StackSource::Jvmti { why: Some(why) }
                    }
                    Err(why) => {
                        return Err(format!(
                            "sampling: event=cpu needs signal sampling, and {why}"
                        ))
                    }
                }
            }
        };
        if options.event == Event::Cpu && matches!(source, StackSource::Jvmti { .. }) {
            return Err(
                "sampling: event=cpu needs stacks from signals; it cannot run with stacks=jvmti"
                    .into(),
            );
        }
        let config = sampler::Config {
            interval: options.interval,
            depth: options.depth,
            event: options.event,
            get_virtual_thread: self.get_virtual_thread,
        };
        Ok(Sampler::new(config, source))
    }

    pub(crate) fn stop_session(&self, s: &mut Session) {
        if s.options.profile {
            profile::stop();
        }
        memory::set_active(false);
        if let Some(cost) = memory::cost_summary() {
            log::info(&cost);
        }
        if let Some(sampler) = &s.sampler {
            sampler.stop();
            log::info(&sampler.cost_summary());
        }
        s.stopped_ns = Some(clock::now_ns());
    }

    /// Runs one command from an attach client.
    pub fn command(&self, jni: &Jni, options: Options) -> Reply {
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
                let mut s = Session {
                    options,
                    signal_note: String::new(),
                    sampler: None,
                    started_ns: clock::now_ns(),
                    stopped_ns: None,
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
                    self.dumps.lock().written
                ))
            }
        }
    }

    /// Writes a snapshot of the current session now, to the session's file or
    /// to `file` (a one-off template). Failure is reported; profiling goes on.
    pub fn dump(&self, jni: &Jni, file: Option<&str>) -> Reply {
        let mut dumps = self.dumps.lock();
        if dumps.vm_dead {
            return Err("the JVM is shutting down; its last snapshot is written".into());
        }
        let (template, sampler, window, modes) = {
            let session = self.session.lock();
            let s = session
                .as_ref()
                .ok_or("no profiling session started, so there is nothing to dump; start one first (profrj attach PID sampling)")?;
            let end = s.stopped_ns.unwrap_or_else(clock::now_ns);
            (
                file.unwrap_or(&s.options.file).to_owned(),
                s.sampler.clone(),
                (s.started_ns, end),
                s.options.modes(),
            )
        };
        let number = dumps.written + 1;
        let path: PathBuf =
            snapshot::expand_path(&template, std::process::id(), snapshot::unix_now(), number);
        // Before the thread records: it runs a GC, and may meet new threads.
        let memory = match modes.memory {
            true => {
                Some(memory::live_counts(self.memory_env()?).map_err(|e| format!("memory: {e}"))?)
            }
            false => None,
        };
        let refs = self.threads.count() as i32 * 3 + 64;
        jni.with_local_frame(refs, || self.threads.refresh_live(self.jvmti, jni));
        let records = self.threads.records();
        let coverage = modes.coverage.then(|| coverage::counts(jni));
        let result = snapshot::write_document(&path, |w| {
            if let Some(s) = &sampler {
                s.with_data(|d| sampler::write_section(w, d, &records, window))?;
            }
            if modes.profile {
                let methods = self.instrumenter.registry.snapshot();
                profile::write_section(w, &profile::threads(), &methods, &records)?;
            }
            if let Some(rows) = &memory {
                memory::write_section(w, rows, &records)?;
            }
            if let Some(c) = &coverage {
                coverage::write_section(w, c)?;
            }
            Ok(())
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
    if let Some(sampler) = &s.sampler {
        parts.push(sampler.cost_summary());
    }
    if let (true, Some(a)) = (o.instruments(), get()) {
        let i = &a.instrumenter;
        let modes = [
            (o.profile, "profile"),
            (o.coverage, "coverage"),
            (o.memory, "memory"),
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
    parts.push(format!("file {}", o.file));
    parts.push(s.signal_note.clone());
    parts.join(", ")
}
