//! The agent's lifecycle. The agent is created once per JVM, at start-up
//! (Agent_OnLoad, working from VMInit) or by the first attach (Agent_OnAttach),
//! and answers the VM's events. Profiling happens in sessions (`session`);
//! every later attach of the library is a command to them.

use crate::instrument::Instrumenter;
use crate::modes::{self, EntryPoints, Host};
use crate::options::{Command, Options};
use crate::sampler::Sampler;
use crate::session::{DumpState, Session};
use crate::threads::Threads;
use crate::vm::sys::{Capability, JvmtiEventCallbacks, JvmtiExtensionFunction};
use crate::vm::{jthread, AgentThreadEntry, Capabilities, Jni, Jvmti, JvmtiEvent, VmHandle};
use crate::{clock, control, log, memory, snapshot};
use jni_sys::jclass;
use parking_lot::Mutex;
use std::sync::OnceLock;

pub struct Agent {
    pub jvmti: Jvmti,
    /// `vthreads=` of the start that created the agent (fixed from then on).
    pub(crate) vthreads: bool,
    /// HotSpot's GetVirtualThread extension (JDK 21+), for sampling virtual threads.
    pub(crate) get_virtual_thread: Option<JvmtiExtensionFunction>,
    pub threads: Threads,
    /// Rewrites classes for the instrumenting modes (inert until one starts).
    pub instrumenter: Instrumenter,
    pub(crate) wakeups: control::Wakeups,
    pub(crate) session: Mutex<Option<Session>>,
    /// Serialises snapshots and numbers them (`%n`).
    pub(crate) dumps: Mutex<DumpState>,
    /// The JavaVM, for environments made later (the memory mode's).
    pub(crate) vm: VmHandle,
    /// The FFI edge's functions the modes hand to the VM.
    pub(crate) entry_points: EntryPoints,
    control_thread: AgentThreadEntry,
    /// What the memory mode keeps for the JVM's lifetime (its environment
    /// and agent thread), apart from any session.
    pub(crate) memory: memory::Lifetime,
    pub(crate) profile: crate::profile::Lifetime,
    pub(crate) coverage: crate::coverage::Lifetime,
    pub(crate) alloc: crate::alloc::Slot,
    pub(crate) lock: crate::lock::Slot,
    pub(crate) trace: crate::trace::Lifetime,
    pub(crate) jfr: crate::jfr::Lifetime,
}

/// What the FFI edge (`entry`) gives the agent it creates: the VM's event
/// callbacks and the functions the agent and its modes hand to the VM.
pub struct Edge {
    /// Every event function of the agent's environment, each written for
    /// its event's call; the untyped slots null.
    pub callbacks: fn() -> JvmtiEventCallbacks,
    /// The control thread's body; it does not read its argument.
    pub control_thread: AgentThreadEntry,
    pub modes: EntryPoints,
}

/// What a command answers: the text goes to the reply file and to stderr.
pub type Reply = Result<String, String>;

static AGENT: OnceLock<Agent> = OnceLock::new();

/// The agent, for the FFI edge (`entry`) alone: everything below it is
/// handed what it needs.
#[inline]
pub fn get() -> Option<&'static Agent> {
    AGENT.get()
}

/// What modes see of the agent, for their probe natives (the one other FFI
/// edge: Java calls them, and JNI natives carry no context).
#[inline]
pub fn host() -> Option<Host<'static>> {
    AGENT.get().map(Agent::host)
}

/// Agent_OnLoad: everything that can fail on a user's mistake fails here, with
/// a message, so the JVM does not start with a profiler that ignores its options.
pub fn on_load(vm: VmHandle, options: Option<&str>, edge: &Edge) -> Result<(), String> {
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
    let agent = create(vm, &options, edge)?;
    check_snapshot_path(&options);
    // Profiling starts at VMInit, when Java threads and JNI exist.
    *agent.session.lock() = Some(Session {
        options,
        signal_note: String::new(),
        modes: Vec::new(),
        started_ns: clock::now_ns(),
        stopped_ns: None,
        otlp: None,
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
pub fn on_attach(vm: VmHandle, options: Option<&str>, edge: &Edge) -> Result<(), String> {
    let existed = AGENT.get().is_some();
    let parsed = Options::parse(options).map_err(|e| e.to_string());
    let reply_to = crate::options::reply_path(options);
    let result = parsed.and_then(|o| attach_command(vm, o, edge));
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

/// An attach whose option string could not be read: said on stderr and in
/// the reply file, if the string names one.
pub fn attach_refused(lossy_options: &str, msg: &str) {
    log::error(msg);
    if let Some(path) = crate::options::reply_path(Some(lossy_options)) {
        write_reply(&path, &Err(msg.to_owned()));
    }
}

fn attach_command(vm: VmHandle, options: Options, edge: &Edge) -> Reply {
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
            let a = create(vm, &options, edge)?;
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
fn create(vm: VmHandle, options: &Options, edge: &Edge) -> Result<&'static Agent, String> {
    let vthreads = options.vthreads;
    let jvmti = Jvmti::from_vm(vm)
        .map_err(|rc| format!("this JVM offers no JVMTI 1.2 environment (GetEnv returned {rc})"))?;
    let potential = jvmti
        .potential_capabilities()
        .map_err(|e| jvmti.error_name(e))?;
    let mut caps = Capabilities::new(potential);
    // Thread tags and per-thread CPU time, for every mode.
    caps.need(Capability::TagObjects, "profrj")?;
    caps.need(Capability::GetThreadCpuTime, "profrj")?;
    // JDK 21+: without this, a carrier thread's stack stops where its virtual
    // thread's begins, and the carrier's state hides that it is running.
    let virtual_threads = vthreads && caps.want(Capability::SupportVirtualThreads);
    // Signal sampling enables CompiledMethodLoad, which makes the JIT keep
    // debug information between safepoints; asked for here, where every JVM
    // grants it, so a later session can sample.
    caps.want(Capability::GenerateCompiledMethodLoadEvents);
    // `lines` (a later session may ask for it): GetLineNumberTable. HotSpot
    // always grants it, at no cost.
    caps.want(Capability::GetLineNumbers);
    // The modes of the first session: some capabilities only start-up grants.
    modes::capabilities(options, &mut caps)?;
    jvmti
        .add_capabilities(&caps.wanted())
        .map_err(|e| format!("AddCapabilities: {}", jvmti.error_name(e)))?;
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
        vm,
        entry_points: edge.modes,
        control_thread: edge.control_thread,
        memory: memory::Lifetime::default(),
        profile: crate::profile::Lifetime::default(),
        coverage: crate::coverage::Lifetime::default(),
        alloc: crate::alloc::Slot::default(),
        lock: crate::lock::Slot::default(),
        trace: crate::trace::Lifetime::default(),
        jfr: crate::jfr::Lifetime::default(),
    };
    if AGENT.set(agent).is_err() {
        return Err("the agent is already loaded in this JVM".into());
    }
    let agent = AGENT.get().expect("just set");
    // SAFETY: `edge.callbacks` is entry's: its event functions only, each
    // written for its event's call, the untyped slots null (Edge's promise).
    unsafe { jvmti.set_event_callbacks(&(edge.callbacks)()) }
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

impl Agent {
    /// What modes see of the agent.
    #[inline]
    pub fn host(&'static self) -> Host<'static> {
        Host {
            jvmti: self.jvmti,
            vm: self.vm,
            threads: &self.threads,
            instrumenter: &self.instrumenter,
            entry_points: &self.entry_points,
            get_virtual_thread: self.get_virtual_thread,
            memory: &self.memory,
            profile: &self.profile,
            coverage: &self.coverage,
            alloc: &self.alloc,
            lock: &self.lock,
            trace: &self.trace,
            jfr: &self.jfr,
        }
    }

    /// Adds the capabilities of the modes `options` names (on HotSpot, the
    /// rewriter's can come as late as the first instrumenting session).
    pub(crate) fn add_mode_capabilities(&self, options: &Options) -> Result<(), String> {
        let jvmti = self.jvmti;
        let potential = jvmti
            .potential_capabilities()
            .map_err(|e| jvmti.error_name(e))?;
        let mut caps = Capabilities::new(potential);
        modes::capabilities(options, &mut caps)?;
        jvmti
            .add_capabilities(&caps.wanted())
            .map_err(|e| format!("AddCapabilities: {}", jvmti.error_name(e)))
    }
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
    // SAFETY: any address may be asked about; dladdr only writes `info`.
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

pub(crate) fn check_snapshot_path(options: &Options) {
    let path = snapshot::expand_path(&options.file, std::process::id(), snapshot::unix_now(), 1);
    if let Some(why) = snapshot::check_writable(&path) {
        log::warn(&format!(
            "{why}; profiling continues, the snapshot will be tried again when written"
        ));
    }
}

/// Writes a command's result where the client asked: created exclusively,
/// never through a link, mode 0600 (the client made a private directory for it).
fn write_reply(path: &str, result: &Reply) {
    let text = match result {
        Ok(m) => format!("ok\n{m}\n"),
        Err(m) => format!("error\n{m}\n"),
    };
    let written = snapshot::create_new(std::path::Path::new(path), 0o600)
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
    if let Err(e) = written {
        log::error(&format!("cannot write the reply file {path}: {e}"));
    }
}

impl Agent {
    pub fn on_vm_init(&'static self, jni: &Jni, thread: jthread) {
        // VMInit runs on the main thread: it tells its OS id, as ThreadStart does for later threads.
        self.threads
            .set_tid(self.jvmti, jni, thread, crate::vm::hotspot::current_tid());
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
                log::error(&format!("{e}; profiling is off"));
            }
        }
    }

    fn start_control_thread(&self, jni: &Jni) -> Result<(), String> {
        // SAFETY: the control thread's body does not read its argument
        // (Edge's promise).
        unsafe {
            crate::vm::start_agent_thread(
                self.jvmti,
                jni,
                "profrj control",
                self.control_thread,
                std::ptr::null(),
            )
        }
        .map_err(|e| format!("cannot start the profrj control thread: {e}"))
    }

    /// Body of the control thread: a snapshot per wake-up (signal, `kill -3`).
    pub fn run_control(&'static self, jni: &Jni) {
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

    pub fn on_thread_start(&self, jni: &Jni, thread: jthread) {
        self.threads
            .identify(self.jvmti, jni, thread, clock::now_ns());
        // ThreadStart runs on the new thread itself: its OS id, for signals.
        self.threads
            .set_tid(self.jvmti, jni, thread, crate::vm::hotspot::current_tid());
    }

    /// A class is prepared: its methods get jmethodIDs for AsyncGetCallTrace.
    pub fn on_class_prepare(&self, class: jclass) {
        crate::vm::async_trace::class_prepared(self.jvmti, class);
    }

    pub fn on_thread_end(&self, jni: &Jni, thread: jthread) {
        self.threads.thread_ended(self.jvmti, jni, thread);
        crate::alloc::thread_ended(jni);
        crate::trace::thread_ended();
    }

    pub fn run_sampler(&self, jni: &Jni, sampler: &Sampler) {
        sampler.run(self.jvmti, jni, &self.threads);
    }

    pub fn on_vm_death(&'static self, jni: &Jni) {
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
            if let Some(s) = self.session.lock().as_ref() {
                s.modes.iter().for_each(|m| m.vm_dying(jni));
            }
            match self.dump(jni, None) {
                Ok(msg) => log::info(&msg),
                Err(msg) => log::error(&msg),
            }
        }
        // The last push, after the last snapshot: both hold the same figures.
        if let Some(s) = self.session.lock().as_mut() {
            self.finish_push(s);
        }
        self.dumps.lock().vm_dead = true;
        // Whatever the session's state, the trace's writer ends here and
        // finishes any document still open (a no-op if it already has).
        self.trace.finish_file(true);
    }
}
