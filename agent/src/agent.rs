//! The agent's lifecycle. The agent is created once per JVM, at start-up
//! (Agent_OnLoad, working from VMInit) or by the first attach (Agent_OnAttach),
//! and answers the VM's events. Profiling happens in sessions (`session`);
//! every later attach of the library is a command to them.

use crate::error::AgentError;
use crate::host::{Edge, Host};
use crate::options::{Command, Options};
use crate::session::{check_snapshot_path, Reply, Sessions};
use crate::vm::sys::Capability;
use crate::vm::{jthread, Capabilities, Jni, Jvmti, JvmtiEvent, VmHandle};
use crate::{clock, control, log, registry, snapshot};
use jni_sys::jclass;
use std::sync::OnceLock;

pub struct Agent {
    pub host: &'static Host,
    pub(crate) wakeups: control::Wakeups,
    pub sessions: Sessions,
}

static AGENT: OnceLock<Agent> = OnceLock::new();

/// The agent, for the FFI edge (`entry`) alone: everything below it is
/// handed what it needs.
#[inline]
pub fn get() -> Option<&'static Agent> {
    AGENT.get()
}

/// Agent_OnLoad: everything that can fail on a user's mistake fails here, with
/// a message, so the JVM does not start with a profiler that ignores its options.
pub fn on_load(vm: VmHandle, options: Option<&str>, edge: &Edge) -> Result<(), AgentError> {
    let options = registry::parse_options(options)?;
    if options.command != Command::Start {
        return Err(AgentError::Refused(format!(
            "'{}' is a command for a running agent; at JVM start-up give profiling options",
            options.command.name()
        )));
    }
    if options.help {
        crate::log::line(&registry::help_text());
    }
    if !options.any_mode() {
        log::info("no mode selected (only 'help'); not profiling");
        return Ok(());
    }
    let agent = create(vm, &options, edge)?;
    check_snapshot_path(&options);
    // Profiling starts at VMInit, when Java threads and JNI exist.
    agent.sessions.set_pending(options);
    Ok(())
}

/// Agent_OnAttach: the first load creates the agent and runs the command (a
/// `start` unless another is named); later loads only run their command.
///
/// An error makes HotSpot unload the library again. That is only safe while
/// nothing of it is registered with the VM, so once this very call has
/// created the agent (callbacks, threads) it reports success to the VM; the
/// error still reaches the reply file and stderr.
pub fn on_attach(vm: VmHandle, options: Option<&str>, edge: &Edge) -> Result<(), AgentError> {
    let existed = AGENT.get().is_some();
    let parsed = registry::parse_options(options).map_err(AgentError::from);
    let reply_to = crate::options::reply_path(options);
    let result = parsed.and_then(|o| attach_command(vm, o, edge));
    match &result {
        Ok(msg) => log::info(msg),
        Err(e) => log::error(&e.to_string()),
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
        write_reply(
            &path,
            &Err(AgentError::Options(crate::options::OptionError(
                msg.to_owned(),
            ))),
        );
    }
}

fn attach_command(vm: VmHandle, options: Options, edge: &Edge) -> Reply {
    if options.help {
        crate::log::line(&registry::help_text());
    }
    let jni = Jni::from_vm(vm).map_err(|rc| {
        AgentError::Unsupported(format!("no JNI environment on the attach thread ({rc})"))
    })?;
    let agent = match AGENT.get() {
        Some(a) => a,
        None => {
            claim_jvm(&jni, false)?;
            if options.command == Command::HeapDump {
                // A heap dump needs no agent: HotSpot's, every object with
                // its empty trace.
                return crate::session::write_heap_dump(None, &jni, &options.heap);
            }
            if options.command != Command::Start {
                return Err(AgentError::Refused(format!(
                    "profrj is not running in this JVM, so there is nothing to {}; start it first (profrj attach PID sampling)",
                    options.command.name()
                )));
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
    agent.sessions.command(&jni, options)
}

/// Creates the agent: JVMTI environment, capabilities, callbacks, events.
/// `vthreads` (from the first start's options) decides virtual-thread support
/// for the JVM's lifetime: its capability is requested here.
fn create(vm: VmHandle, options: &Options, edge: &Edge) -> Result<&'static Agent, AgentError> {
    let vthreads = options.vthreads;
    let jvmti = Jvmti::from_vm(vm).map_err(|rc| {
        AgentError::Unsupported(format!(
            "this JVM offers no JVMTI 1.2 environment (GetEnv returned {rc})"
        ))
    })?;
    let potential = jvmti
        .potential_capabilities()
        .map_err(|e| AgentError::jvmti(jvmti, "GetPotentialCapabilities", e))?;
    let mut caps = Capabilities::new(potential);
    crate::session::base_capabilities(&mut caps)?;
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
    registry::capabilities(options, &mut caps)?;
    jvmti
        .add_capabilities(&caps.wanted())
        .map_err(|e| AgentError::jvmti(jvmti, "AddCapabilities", e))?;
    let wakeups = control::Wakeups::new()
        .map_err(|e| crate::error::io("cannot create the control pipe", e))?;
    let get_virtual_thread = virtual_threads
        .then(|| jvmti.extension_function("com.sun.hotspot.functions.GetVirtualThread"))
        .flatten();
    let vthread_events = virtual_threads
        .then(|| crate::vthreads::Support::find(jvmti))
        .flatten();
    let host = Host::install(
        jvmti,
        vm,
        get_virtual_thread,
        vthread_events,
        registry::all_natives(),
        *edge,
    )?;
    let agent = Agent {
        host,
        wakeups,
        sessions: Sessions::new(host, vthreads),
    };
    if AGENT.set(agent).is_err() {
        return Err(AgentError::Refused(
            "the agent is already loaded in this JVM".into(),
        ));
    }
    let agent = AGENT.get().expect("just set");
    // SAFETY: `edge.callbacks` is entry's: its event functions only, each
    // written for its event's call, the untyped slots null (Edge's promise).
    unsafe { jvmti.set_event_callbacks(&(edge.callbacks)()) }
        .map_err(|e| AgentError::jvmti(jvmti, "SetEventCallbacks", e))?;
    for ev in [
        JvmtiEvent::VM_INIT,
        JvmtiEvent::VM_DEATH,
        JvmtiEvent::THREAD_START,
        JvmtiEvent::THREAD_END,
        JvmtiEvent::DATA_DUMP_REQUEST,
    ] {
        jvmti
            .set_event_enabled(ev, true)
            .map_err(|e| AgentError::jvmti(jvmti, format!("enabling event {}", ev.0), e))?;
    }
    Ok(agent)
}

/// System property naming the library of the agent that runs in this JVM.
const LOADED_PROPERTY: &str = "profrj.agent.library";

/// Makes sure no other copy of the library (loaded by another path, hence
/// with its own statics) already runs in this JVM; with `claim`, marks the
/// JVM as this copy's.
fn claim_jvm(jni: &Jni, claim: bool) -> Result<(), AgentError> {
    let mine = own_library_path();
    let other = jni.system_property(LOADED_PROPERTY)?;
    match other {
        Some(other) if other != mine => Err(AgentError::Refused(format!(
            "another copy of profrj ({other}) already runs in this JVM; send commands to that path"
        ))),
        _ if claim => Ok(jni.set_system_property(LOADED_PROPERTY, &mine)?),
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
        let host = self.host;
        // VMInit runs on the main thread: it tells its OS id, as ThreadStart does for later threads.
        host.threads
            .set_tid(host.jvmti, jni, thread, crate::vm::hotspot::current_tid());
        if let Err(e) = claim_jvm(jni, true) {
            log::error(&e.to_string());
        }
        if let Err(e) = self.start_control_thread(jni) {
            log::error(&e.to_string());
        }
        self.sessions.run_pending(jni);
    }

    fn start_control_thread(&'static self, jni: &Jni) -> Result<(), AgentError> {
        self.host
            .start_thread(jni, "profrj control", "control thread", move |jni| {
                self.run_control(jni)
            })
    }

    /// Body of the control thread: a snapshot per wake-up (signal, `kill -3`).
    fn run_control(&self, jni: &Jni) {
        loop {
            self.wakeups.wait();
            if self.sessions.vm_dead() {
                return;
            }
            match self.sessions.dump(jni, None) {
                Ok(msg) => log::info(&msg),
                Err(e) => log::error(&e.to_string()),
            }
        }
    }

    /// ResourceExhausted: the heap dump `heapdumps=oom` asks for, on the
    /// thread about to throw the OutOfMemoryError (the dump is written
    /// before the error can end the program, as HotSpot's own is).
    pub fn on_resource_exhausted(&self, jni: &Jni, flags: i32) {
        self.sessions.resource_exhausted(jni, flags)
    }

    pub fn on_data_dump_request(&self) {
        control::wake();
    }

    pub fn on_thread_start(&self, jni: &Jni, thread: jthread) {
        let host = self.host;
        let identity = host
            .threads
            .identify(host.jvmti, jni, thread, clock::now_ns());
        // ThreadStart runs on the new thread itself: its OS id, for signals.
        let tid = crate::vm::hotspot::current_tid();
        host.threads.set_tid(host.jvmti, jni, thread, tid);
        if let Some(crate::threads::Identity::Java(id)) = identity {
            let coverage = host.state::<crate::coverage::Lifetime>();
            coverage.thread_started(host.jvmti, jni, thread);
            host.events.thread_start(id, tid);
        }
    }

    /// A class is prepared: its methods get jmethodIDs for AsyncGetCallTrace.
    pub fn on_class_prepare(&self, class: jclass) {
        crate::vm::async_trace::class_prepared(self.host.jvmti, class);
    }

    /// ThreadEnd, on the ending thread: its table entry, then what each
    /// mode kept for it.
    pub fn on_thread_end(&self, jni: &Jni, thread: jthread) {
        self.host.threads.thread_ended(self.host.jvmti, jni, thread);
        crate::per_thread::thread_ended(jni);
    }

    /// VirtualThreadEnd (while virtual threads are followed), on its
    /// carrier after its last unmount: what each mode kept for it, then
    /// its group's count of the living.
    pub fn on_vthread_end(&self, jni: &Jni, thread: jthread) {
        crate::per_thread::virtual_ended(self.host.jvmti, jni);
        self.host.threads.virtual_ended(self.host.jvmti, thread);
    }

    pub fn on_vm_death(&self, jni: &Jni) {
        self.host.threads.end_groups();
        self.sessions.vm_death(jni);
        // The control thread ends now (it finds the VM dead): HotSpot's exit
        // waits up to 300 ms for every Java thread still in native code, and
        // an agent thread blocked in poll(2) is one (measured: +330 ms on
        // every run of a trivial program, whatever the mode).
        control::wake();
    }
}
