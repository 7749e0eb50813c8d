//! The agent's lifecycle. The agent is created once per JVM, at start-up
//! (Agent_OnLoad, working from VMInit) or by the first attach (Agent_OnAttach).
//! Profiling happens in sessions: `start` opens one, `stop` closes it (with a
//! snapshot), `resume` reopens it with its data, `dump` writes a snapshot of
//! it. Every later attach of the library is one such command.

use crate::instrument::Instrumenter;
use crate::options::{Command, Options};
use crate::sampler::{self, Sampler};
use crate::threads::Threads;
use crate::vm::sys::{Capability, JvmtiCapabilities, JvmtiExtensionFunction};
use crate::vm::{jthread, Jni, Jvmti, JvmtiEvent};
use crate::{clock, control, coverage, entry, log, memory, profile, snapshot};
use jni_sys::{jclass, jobject, JavaVM};
use parking_lot::Mutex;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

pub struct Agent {
    pub jvmti: Jvmti,
    /// `vthreads=` of the start that created the agent (fixed from then on).
    vthreads: bool,
    /// HotSpot's GetVirtualThread extension (JDK 21+), for sampling virtual threads.
    get_virtual_thread: Option<JvmtiExtensionFunction>,
    pub threads: Threads,
    /// Rewrites classes for the instrumenting modes (inert until one starts).
    pub instrumenter: Instrumenter,
    wakeups: control::Wakeups,
    session: Mutex<Option<Session>>,
    /// Serialises snapshots and numbers them (`%n`).
    dumps: Mutex<DumpState>,
    /// The JavaVM, for environments made later (the memory mode's).
    vm: usize,
    /// The memory mode's own JVMTI environment: its tags are its own, apart
    /// from the thread tags of `jvmti`.
    memory_env: OnceLock<Result<Jvmti, String>>,
}

struct Session {
    options: Options,
    /// Whether the dump signal is installed, for `status` and replies.
    signal_note: String,
    sampler: Option<Arc<Sampler>>,
    started_ns: u64,
    stopped_ns: Option<u64>,
}

#[derive(Default)]
struct DumpState {
    written: u32,
    /// Set at VMDeath, after the last snapshot: nothing may be written after it.
    vm_dead: bool,
}

/// What a command answers: the text goes to the reply file and to stderr.
pub type Reply = Result<String, String>;

static AGENT: OnceLock<Agent> = OnceLock::new();

pub fn get() -> Option<&'static Agent> {
    AGENT.get()
}

/// Agent_OnLoad: everything that can fail on a user's mistake fails here, with
/// a message, so the JVM does not start with a profiler that ignores its options.
pub fn on_load(vm: *mut JavaVM, options: Option<&str>) -> Result<(), String> {
    let options = Options::parse(options).map_err(|e| e.to_string())?;
    if options.command != Command::Start {
        return Err(format!(
            "'{}' is a command for a running agent; at JVM start-up give profiling options",
            options.command.name()
        ));
    }
    if options.help {
        eprint!("{}", Options::help_text());
    }
    if !options.any_mode() {
        log::info("no mode selected (only 'help'); not profiling");
        return Ok(());
    }
    let agent = create(vm, &options)?;
    check_snapshot_path(&options);
    // Profiling starts at VMInit, when Java threads and JNI exist.
    *agent.session.lock() = Some(Session {
        options,
        signal_note: String::new(),
        sampler: None,
        started_ns: clock::now_ns(),
        stopped_ns: None,
    });
    Ok(())
}

/// Agent_OnAttach: the first load creates the agent and runs the command (a
/// `start` unless another is named); later loads only run their command.
///
/// An error makes HotSpot unload the library again. That is only safe while
/// nothing of it is registered with the VM, so once this very call has
/// created the agent (callbacks, threads) it reports success to the VM; the
/// error still reaches the reply file and stderr.
pub fn on_attach(vm: *mut JavaVM, options: Option<&str>) -> Result<(), String> {
    let existed = AGENT.get().is_some();
    let parsed = Options::parse(options).map_err(|e| e.to_string());
    let reply_to = crate::options::reply_path(options);
    let result = parsed.and_then(|o| attach_command(vm, o));
    match &result {
        Ok(msg) => log::info(msg),
        Err(msg) => log::error(msg),
    }
    if let Some(path) = reply_to {
        write_reply(&path, &result);
    }
    if !existed && AGENT.get().is_some() {
        return Ok(());
    }
    result.map(|_| ())
}

fn attach_command(vm: *mut JavaVM, options: Options) -> Reply {
    if options.help {
        eprint!("{}", Options::help_text());
    }
    let jni =
        Jni::from_vm(vm).map_err(|rc| format!("no JNI environment on the attach thread ({rc})"))?;
    let agent = match AGENT.get() {
        Some(a) => a,
        None => {
            claim_jvm(&jni, false)?;
            if options.command != Command::Start {
                return Err(format!(
                    "profrj is not running in this JVM, so there is nothing to {}; start it first (profrj attach PID sampling)",
                    options.command.name()
                ));
            }
            if !options.any_mode() {
                return Ok("no mode selected (only 'help'); not profiling".into());
            }
            let a = create(vm, &options)?;
            claim_jvm(&jni, true)?;
            a.start_control_thread(&jni)?;
            a
        }
    };
    agent.command(&jni, options)
}

/// Creates the agent: JVMTI environment, capabilities, callbacks, events.
/// `vthreads` (from the first start's options) decides virtual-thread support
/// for the JVM's lifetime: its capability is requested here.
fn create(vm: *mut JavaVM, options: &Options) -> Result<&'static Agent, String> {
    let (vthreads, instrument) = (options.vthreads, options.instruments());
    let jvmti = Jvmti::from_vm(vm)
        .map_err(|rc| format!("this JVM offers no JVMTI 1.2 environment (GetEnv returned {rc})"))?;
    let needed = [Capability::TagObjects, Capability::GetThreadCpuTime];
    let potential = jvmti
        .potential_capabilities()
        .map_err(|e| jvmti.error_name(e))?;
    let mut wanted = JvmtiCapabilities::default();
    // JDK 21+: without this, a carrier thread's stack stops where its virtual
    // thread's begins, and the carrier's state hides that it is running.
    let virtual_threads = vthreads && potential.has(Capability::SupportVirtualThreads);
    if virtual_threads {
        wanted = wanted.with(Capability::SupportVirtualThreads);
    }
    for cap in needed {
        if !potential.has(cap) {
            return Err(format!(
                "this JVM does not offer the JVMTI capability {cap:?}, which profrj needs"
            ));
        }
        wanted = wanted.with(cap);
    }
    jvmti
        .add_capabilities(&wanted)
        .map_err(|e| format!("AddCapabilities: {}", jvmti.error_name(e)))?;
    if instrument {
        add_instrument_capabilities(jvmti, options.memory)?;
    }
    let wakeups =
        control::Wakeups::new().map_err(|e| format!("cannot create the control pipe: {e}"))?;
    let get_virtual_thread = virtual_threads
        .then(|| jvmti.extension_function("com.sun.hotspot.functions.GetVirtualThread"))
        .flatten();
    let agent = Agent {
        jvmti,
        vthreads,
        get_virtual_thread,
        threads: Threads::default(),
        instrumenter: Instrumenter::default(),
        wakeups,
        session: Mutex::new(None),
        dumps: Mutex::new(DumpState::default()),
        vm: vm as usize,
        memory_env: OnceLock::new(),
    };
    if AGENT.set(agent).is_err() {
        return Err("the agent is already loaded in this JVM".into());
    }
    let agent = AGENT.get().expect("just set");
    jvmti
        .set_event_callbacks(&entry::callbacks())
        .map_err(|e| format!("SetEventCallbacks: {}", jvmti.error_name(e)))?;
    for ev in [
        JvmtiEvent::VM_INIT,
        JvmtiEvent::VM_DEATH,
        JvmtiEvent::THREAD_START,
        JvmtiEvent::THREAD_END,
        JvmtiEvent::DATA_DUMP_REQUEST,
    ] {
        jvmti
            .set_event_enabled(ev, true)
            .map_err(|e| format!("enabling event {}: {}", ev.0, jvmti.error_name(e)))?;
    }
    Ok(agent)
}

/// What rewriting classes needs: the class-file hook for every class, and
/// retransforming the ones loaded before profiling started. Added at start-up
/// or, on HotSpot, as late as the first instrumenting session.
fn add_instrument_capabilities(jvmti: Jvmti, memory: bool) -> Result<(), String> {
    let potential = jvmti
        .potential_capabilities()
        .map_err(|e| jvmti.error_name(e))?;
    let mut wanted = JvmtiCapabilities::default();
    for cap in [
        Capability::GenerateAllClassHookEvents,
        Capability::RetransformClasses,
    ] {
        if !potential.has(cap) {
            return Err(format!(
                "this JVM does not offer the JVMTI capability {cap:?}, which the profile mode needs"
            ));
        }
        wanted = wanted.with(cap);
    }
    // The memory mode sees objects the VM allocates for a caller through
    // VMObjectAlloc; without it, those go uncounted (said once).
    if memory {
        if potential.has(Capability::GenerateVmObjectAllocEvents) {
            wanted = wanted.with(Capability::GenerateVmObjectAllocEvents);
        } else {
            log::warn("memory: this JVM cannot report VM allocations (VMObjectAlloc); objects made by reflection, clone or JNI are not counted");
        }
    }
    jvmti
        .add_capabilities(&wanted)
        .map_err(|e| format!("AddCapabilities: {}", jvmti.error_name(e)))
}

/// System property naming the library of the agent that runs in this JVM.
const LOADED_PROPERTY: &str = "profrj.agent.library";

/// Makes sure no other copy of the library (loaded by another path, hence
/// with its own statics) already runs in this JVM; with `claim`, marks the
/// JVM as this copy's.
fn claim_jvm(jni: &Jni, claim: bool) -> Result<(), String> {
    let mine = own_library_path();
    let other = jni.system_property(LOADED_PROPERTY).map_err(|e| e.0)?;
    match other {
        Some(other) if other != mine => Err(format!(
            "another copy of profrj ({other}) already runs in this JVM; send commands to that path"
        )),
        _ if claim => jni
            .set_system_property(LOADED_PROPERTY, &mine)
            .map_err(|e| e.0),
        _ => Ok(()),
    }
}

/// The file this library was loaded from.
fn own_library_path() -> String {
    // SAFETY: all-zero Dl_info is valid; dladdr fills it for an address inside
    // a loaded object (this function's own code).
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let found =
        unsafe { libc::dladdr(own_library_path as *const std::ffi::c_void, &mut info) } != 0;
    if !found || info.dli_fname.is_null() {
        return "libprofrj.so".to_owned();
    }
    // SAFETY: dli_fname is a NUL-terminated path owned by the dynamic loader.
    unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }
        .to_string_lossy()
        .into_owned()
}

fn check_snapshot_path(options: &Options) {
    let path = snapshot::expand_path(&options.file, std::process::id(), snapshot::unix_now(), 1);
    if let Some(why) = snapshot::check_writable(&path) {
        log::warn(&format!(
            "{why}; profiling continues, the snapshot will be tried again when written"
        ));
    }
}

fn write_reply(path: &str, result: &Reply) {
    let text = match result {
        Ok(m) => format!("ok\n{m}\n"),
        Err(m) => format!("error\n{m}\n"),
    };
    if let Err(e) = std::fs::write(path, text) {
        log::error(&format!("cannot write the reply file {path}: {e}"));
    }
}

impl Agent {
    pub fn on_vm_init(&self, jni: &Jni, thread: jthread) {
        self.threads.identify(self.jvmti, jni, thread, 0);
        if let Err(e) = claim_jvm(jni, true) {
            log::error(&e);
        }
        if let Err(e) = self.start_control_thread(jni) {
            log::error(&e);
        }
        let mut session = self.session.lock();
        if let Some(s) = session.as_mut() {
            s.started_ns = clock::now_ns();
            if let Err(e) = self.run_session(jni, s) {
                log::error(&format!("{e}; sampling is off"));
            }
        }
    }

    fn start_control_thread(&self, jni: &Jni) -> Result<(), String> {
        crate::vm::start_agent_thread(
            self.jvmti,
            jni,
            "profrj control",
            entry::control_thread,
            std::ptr::null(),
        )
        .map_err(|e| format!("cannot start the profrj control thread: {e}"))
    }

    /// Body of the control thread: a snapshot per wake-up (signal, `kill -3`).
    pub fn run_control(&self, jni: &Jni) {
        loop {
            self.wakeups.wait();
            if self.dumps.lock().vm_dead {
                return;
            }
            match self.dump(jni, None) {
                Ok(msg) => log::info(&msg),
                Err(msg) => log::error(&msg),
            }
        }
    }

    pub fn on_data_dump_request(&self) {
        control::wake();
    }

    /// Starts (or resumes) what a session's options ask for.
    fn run_session(&self, jni: &Jni, s: &mut Session) -> Result<(), String> {
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
                self.memory_env()?;
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
        let sampler = s
            .sampler
            .get_or_insert_with(|| {
                Arc::new(Sampler::new(
                    s.options.interval,
                    s.options.depth,
                    self.get_virtual_thread,
                ))
            })
            .clone();
        sampler.start(self.jvmti, jni, sampler.clone(), entry::sampler_thread)
    }

    /// The memory mode's JVMTI environment, made on first use.
    pub fn memory_env(&self) -> Result<Jvmti, String> {
        self.memory_env
            .get_or_init(|| memory::new_env(self.vm as *mut JavaVM))
            .clone()
    }

    pub fn on_thread_start(&self, jni: &Jni, thread: jthread) {
        self.threads
            .identify(self.jvmti, jni, thread, clock::now_ns());
    }

    /// An object the VM allocated for Java code (VMObjectAlloc).
    pub fn on_vm_object_alloc(&self, jni: &Jni, thread: jthread, object: jobject, class: jclass) {
        memory::vm_allocated(self, jni, thread, object, class)
    }

    /// An object native code made with JNI (the intercepted functions).
    pub fn on_jni_alloc(&self, jni: &Jni, object: jobject) {
        memory::jni_allocated(self, jni, object)
    }

    pub fn on_thread_end(&self, jni: &Jni, thread: jthread) {
        self.threads.thread_ended(self.jvmti, jni, thread);
    }

    pub fn run_sampler(&self, jni: &Jni, sampler: &Sampler) {
        sampler.run(self.jvmti, jni, &self.threads);
    }

    pub fn on_vm_death(&self, jni: &Jni) {
        let running = {
            let mut session = self.session.lock();
            match session.as_mut() {
                Some(s) if s.stopped_ns.is_none() => {
                    self.stop_session(s);
                    true
                }
                _ => false,
            }
        };
        // A stopped session already wrote its snapshot at `stop`.
        if running {
            match self.dump(jni, None) {
                Ok(msg) => log::info(&msg),
                Err(msg) => log::error(&msg),
            }
        }
        self.dumps.lock().vm_dead = true;
    }

    fn stop_session(&self, s: &mut Session) {
        if s.options.profile {
            profile::stop();
        }
        memory::set_active(false);
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
            "sampling every {:?}, depth {}",
            o.interval, o.depth
        ));
    }
    if let Some(sampler) = &s.sampler {
        parts.push(format!("{} samples", sampler.samples()));
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
