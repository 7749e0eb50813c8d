//! What the modes see of the agent: the JVM (its JVMTI environment and
//! `JavaVM`), the thread table, the rewriter, the events, the allocation
//! sites, each mode's lasting state ([`States`]) and the services that hand
//! something to the VM (agent threads, environments of a mode's own). The
//! host is made once per JVM, when the agent is, and lives as long as the
//! JVM.
//!
//! Modes are handed the host ([`crate::mode::Cx`]); what the VM calls
//! without context (a probe native) finds it with [`get`]. The host names
//! no mode: a mode's state is found by its type.

use crate::error::AgentError;
use crate::events::{Events, Kind, Listener};
use crate::instrument::Instrumenter;
use crate::sites::Sites;
use crate::states::States;
use crate::threads::{Identity, ThreadId, Threads};
use crate::vm::sys::{JvmtiCapabilities, JvmtiEventCallbacks, JvmtiExtensionFunction};
use crate::vm::{AgentThreadEntry, AllocHook, Jni, Jvmti, Native, VmHandle};
use std::sync::OnceLock;

/// The functions of the FFI edge (`entry`, each inside the panic guard)
/// that the host hands to the VM. Their contracts, which the SAFETY
/// comments here rely on: `agent_thread` takes one [`ThreadBody`] from
/// `Box::into_raw` as its argument and owns it; `callbacks` are event
/// functions written for their events' calls, each handing its event to
/// [`Events`] (or to the agent's lifecycle), the untyped slots null.
#[derive(Clone, Copy)]
pub struct Edge {
    pub callbacks: fn() -> JvmtiEventCallbacks,
    pub agent_thread: AgentThreadEntry,
    pub jni_alloc: AllocHook,
    /// HotSpot's VirtualThreadMount and VirtualThreadUnmount callbacks.
    pub vthreads: crate::vthreads::Callbacks,
}

/// The probe natives: names, descriptors and function addresses.
pub struct Natives(pub Vec<Native>);

// SAFETY: the addresses are of functions, callable on any thread; the
// names are static strings. Nothing here belongs to a thread.
unsafe impl Send for Natives {}
// SAFETY: as above; the list is never changed once made.
unsafe impl Sync for Natives {}

impl std::ops::Deref for Natives {
    type Target = [Native];

    fn deref(&self) -> &[Native] {
        &self.0
    }
}

/// What an agent thread runs: its body, and its name for the panic guard.
pub struct ThreadBody {
    pub what: &'static str,
    pub run: Box<dyn FnOnce(&Jni) + Send>,
}

/// The agent as the modes see it.
pub struct Host {
    pub jvmti: Jvmti,
    pub vm: VmHandle,
    pub threads: Threads,
    /// Rewrites classes for the instrumenting modes (inert until one starts).
    pub instrumenter: Instrumenter,
    pub events: Events,
    /// Java types and allocation sites, numbered for probes and events.
    pub sites: Sites,
    /// Each mode's state for the JVM's lifetime.
    pub states: States,
    /// HotSpot's GetVirtualThread extension (JDK 21+, `vthreads=on`).
    pub get_virtual_thread: Option<JvmtiExtensionFunction>,
    /// HotSpot's mount and unmount events (JDK 21+, `vthreads=on`), to
    /// follow virtual threads across carriers.
    virtual_threads: Option<crate::vthreads::Support>,
    /// Every probe native, bound when the runtime classes are defined.
    pub natives: Natives,
    edge: Edge,
}

static HOST: OnceLock<Host> = OnceLock::new();

/// The host, for what the VM calls without context (probe natives, event
/// callbacks); `None` before the agent is made.
#[inline(always)]
pub fn get() -> Option<&'static Host> {
    HOST.get()
}

impl Host {
    /// Makes the host (once per JVM).
    pub fn install(
        jvmti: Jvmti,
        vm: VmHandle,
        get_virtual_thread: Option<JvmtiExtensionFunction>,
        virtual_threads: Option<crate::vthreads::Support>,
        natives: Vec<Native>,
        edge: Edge,
    ) -> Result<&'static Host, AgentError> {
        let host = Host {
            jvmti,
            vm,
            threads: Threads::default(),
            instrumenter: Instrumenter::default(),
            events: Events::default(),
            sites: Sites::default(),
            states: States::default(),
            get_virtual_thread,
            virtual_threads,
            natives: Natives(natives),
            edge,
        };
        if HOST.set(host).is_err() {
            return Err(AgentError::Refused(
                "the agent is already loaded in this JVM".into(),
            ));
        }
        Ok(HOST.get().expect("just set"))
    }

    /// The state of type `T` of a mode, made on first use.
    #[inline(always)]
    pub fn state<T: Default + Send + Sync + 'static>(&self) -> &'static T {
        self.states.get::<T>()
    }

    /// The calling thread's id in the thread table, registered if new;
    /// `None` for the agent's own threads or when the VM refuses.
    pub fn current_thread(&self, jni: &Jni) -> Option<ThreadId> {
        self.threads.current(self.jvmti, jni)
    }

    /// The id of `thread` (a local reference), registered if new.
    pub fn thread_id(&self, jni: &Jni, thread: crate::vm::jthread) -> Option<ThreadId> {
        match self.threads.identify(self.jvmti, jni, thread, 0)? {
            Identity::Java(id) => Some(id),
            Identity::Agent => None,
        }
    }

    /// From now on, a virtual thread's per-thread record follows it across
    /// carriers (`per_thread`): called by each mode (`mode`, its name) that
    /// keeps something per thread as it starts; the first turns HotSpot's
    /// mount and unmount events on. Where the JVM has no such events (before
    /// JDK 21, `vthreads=off`) virtual threads share their carriers'
    /// records, and where turning them on fails, a warning says so.
    pub fn follow_virtual_threads(&self, mode: &'static str) {
        if let Some(v) = &self.virtual_threads {
            if let Err(e) = v.follow(self.jvmti, self.edge.vthreads, mode) {
                crate::log::warn_once("virtual threads", &e.to_string());
            }
        }
    }

    /// `mode` (which called [`Host::follow_virtual_threads`]) stopped: the
    /// last to stop turns the events off, so that a switch costs nothing
    /// of the agent's while no mode needs it.
    pub fn unfollow_virtual_threads(&self, mode: &'static str) {
        if let Some(v) = &self.virtual_threads {
            if let Err(e) = v.unfollow(self.jvmti, mode) {
                crate::log::warn_once("virtual threads off", &e.to_string());
            }
        }
    }

    /// Whether virtual threads are followed now, and the mounts seen so
    /// far, for `status`; `None` where they cannot be (`vthreads=off`, a
    /// JVM without the events).
    pub fn virtual_thread_status(&self) -> Option<String> {
        Some(self.virtual_threads.as_ref()?.status())
    }

    /// Says whether `listener` wants `kind`'s event delivered (see
    /// [`Events::want`]); objects made with JNI are seen once asked for
    /// (the JNI table is replaced for good).
    pub fn want(
        &self,
        listener: &'static dyn Listener,
        kind: Kind,
        on: bool,
    ) -> Result<(), AgentError> {
        if kind == Kind::JniObjectAlloc && on {
            // The caller is a Java thread (a session's command): its JNI
            // tells the VM's JNI version.
            let jni = Jni::from_vm(self.vm).map_err(|rc| {
                AgentError::Unsupported(format!("no JNI environment on this thread ({rc})"))
            })?;
            crate::vm::intercept_allocations(self.jvmti, &jni, self.edge.jni_alloc)?;
        }
        self.events.want(self.jvmti, listener, kind, on)
    }

    /// A JVMTI environment of a mode's own (its tags apart from the agent's
    /// thread tags, say), with `caps` and its events of `kinds` on; its
    /// events reach the listeners of their kinds like the agent's own.
    pub fn new_environment(
        &self,
        caps: &JvmtiCapabilities,
        kinds: &[Kind],
    ) -> Result<Jvmti, AgentError> {
        let env = Jvmti::from_vm(self.vm).map_err(|rc| {
            AgentError::Unsupported(format!("no further JVMTI environment ({rc})"))
        })?;
        env.add_capabilities(caps)
            .map_err(|e| AgentError::jvmti(env, "AddCapabilities", e))?;
        // SAFETY: entry's callbacks, each written for its event's call, the
        // untyped slots null (Edge's promise).
        unsafe { env.set_event_callbacks(&(self.edge.callbacks)()) }
            .map_err(|e| AgentError::jvmti(env, "SetEventCallbacks", e))?;
        for &kind in kinds {
            for &event in crate::events::jvmti_events(kind) {
                env.set_event_enabled(event, true)
                    .map_err(|e| AgentError::jvmti(env, "SetEventNotificationMode", e))?;
            }
        }
        Ok(env)
    }

    /// Starts an agent thread named `name` running `run`; `what` names it
    /// in the panic guard's report.
    pub fn start_thread(
        &self,
        jni: &Jni,
        name: &str,
        what: &'static str,
        run: impl FnOnce(&Jni) + Send + 'static,
    ) -> Result<(), AgentError> {
        let body = Box::into_raw(Box::new(ThreadBody {
            what,
            run: Box::new(run),
        }));
        // SAFETY: entry's agent_thread takes one ThreadBody from
        // Box::into_raw and owns it (Edge's promise); `body` is one, given
        // to that thread alone.
        let started = unsafe {
            crate::vm::start_agent_thread(
                self.jvmti,
                jni,
                name,
                self.edge.agent_thread,
                body.cast_const().cast(),
            )
        };
        started.map_err(|e| {
            // SAFETY: the thread did not start (start_agent_thread's Err), so
            // `body` is still ours; dropped once, here.
            drop(unsafe { Box::from_raw(body) });
            AgentError::Unsupported(format!("cannot start the {name} thread: {e}"))
        })
    }

    /// Defines the runtime classes (once per JVM), binding every probe
    /// native.
    pub fn define_runtime(&self, jni: &Jni) -> Result<(), AgentError> {
        self.instrumenter
            .define_runtime(self.jvmti, jni, &self.natives)
    }

    /// The names of the JVM's garbage collectors (`GarbageCollectorMXBean`s).
    pub fn collectors(&self, jni: &Jni) -> Result<Vec<String>, AgentError> {
        self.define_runtime(jni)?;
        crate::instrument::probe_class::collector_names(jni)
    }
}

/// The collectors that work in pauses the VM thread does alone, clearing
/// JNI weak references there (their `GarbageCollectorMXBean` names, JDK
/// 11–25).
const PAUSE_COLLECTORS: [&str; 7] = [
    "Copy",
    "MarkSweepCompact",
    "PS Scavenge",
    "PS MarkSweep",
    "G1 Young Generation",
    "G1 Old Generation",
    "G1 Concurrent GC",
];

/// Are `names` (a JVM's collectors) all pause collectors?
pub fn all_pause_collectors(names: &[String]) -> bool {
    !names.is_empty() && names.iter().all(|n| PAUSE_COLLECTORS.contains(&n.as_str()))
}

/// The probe natives of the core: `Probe.typeId(Class)`, the type id of a
/// class (asked once per class by probes that learn a type as they run).
pub fn natives() -> [Native; 1] {
    [("typeId", "(Ljava/lang/Class;)I", type_id as *mut _)]
}

extern "system" fn type_id(
    _env: *mut jni_sys::JNIEnv,
    _class: jni_sys::jclass,
    of: jni_sys::jclass,
) -> jni_sys::jint {
    crate::vm::guard("memory type id", 0, || {
        let Some(host) = get() else {
            return 0;
        };
        let sig = host.jvmti.class_signature(of).unwrap_or_default();
        host.sites.type_of_signature(&sig) as jni_sys::jint
    })
}
