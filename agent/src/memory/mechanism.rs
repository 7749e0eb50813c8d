//! How the memory mode follows tracked objects to their death in this JVM:
//! weak references checked after each GC where the collector clears them
//! in its pauses (serial, parallel, G1), JVMTI tags elsewhere. Chosen once
//! per JVM, when a memory session first starts, with what that mechanism
//! needs: the GC events and an agent thread (weak references), or a JVMTI
//! environment of the mode's own, whose tags are apart from the agent's
//! thread tags, with ObjectFree (tags).

use crate::error::AgentError;
use crate::events::Kind;
use crate::host::{all_pause_collectors, Host};
use crate::instrument::probe_class;
use crate::vm::sys::{Capability, JvmtiCapabilities};
use crate::vm::{Jni, Jvmti};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::OnceLock;

/// How the memory mode learns that a tracked object died (`tracker=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tracker {
    /// Weak references where the collector allows, else tags.
    Auto,
    /// JNI weak global references, checked after each GC.
    Weak,
    /// JVMTI tags and the ObjectFree event.
    Tags,
}

impl Tracker {
    /// `tracker=` of `o` (`auto` when not given).
    pub fn of(o: &crate::options::Options) -> Self {
        match o.text("tracker") {
            Some("weak") => Tracker::Weak,
            Some("tags") => Tracker::Tags,
            _ => Tracker::Auto,
        }
    }
}

/// How this JVM's tracked objects are followed, chosen once (`choose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    WeakRefs,
    Tags,
}

/// How this JVM's tracked objects are followed, for its lifetime (part of
/// the memory mode's lasting state): the mechanism, chosen once, the JVMTI
/// environment of its tags and its agent thread.
#[derive(Default)]
pub struct Tracking {
    mechanism: OnceLock<Mechanism>,
    /// Do all of this JVM's collectors run in pauses the VM thread does
    /// alone (serial, parallel, G1)? Known once `choose` ran.
    pause_collectors: OnceLock<bool>,
    /// Is the collector G1? Its full GC inside a heap dump posts the GC
    /// events; Serial's and Parallel's do not (`heap_dump`).
    g1: OnceLock<bool>,
    /// Set when the VM is dying: concurrent collectors' threads have
    /// stopped by then, so only the pause collectors can still run a GC.
    dying: AtomicBool,
    env: OnceLock<Result<Jvmti, AgentError>>,
    thread: OnceLock<Result<(), AgentError>>,
}

impl Tracking {
    /// Picks the mechanism for this JVM (once; later sessions keep it): weak
    /// references when `tracker` allows, the collector clears them in pauses,
    /// and the VM's references look like HotSpot's.
    pub fn choose(
        &self,
        host: &Host,
        jni: &Jni,
        tracker: Tracker,
    ) -> Result<Mechanism, AgentError> {
        if let Some(&m) = self.mechanism.get() {
            return match (tracker, m) {
                (Tracker::Weak, Mechanism::Tags) | (Tracker::Tags, Mechanism::WeakRefs) => {
                    Err(AgentError::Refused(format!(
                        "this JVM already follows objects with {} (chosen when memory first ran); start with tracker=auto",
                        if m == Mechanism::Tags { "tags" } else { "weak references" }
                    )))
                }
                _ => Ok(m),
            };
        }
        let collectors = host.collectors(jni).map_err(|e| e.to_string());
        let pauses = collectors.as_ref().is_ok_and(|n| all_pause_collectors(n));
        self.pause_collectors.get_or_init(|| pauses);
        let g1 = (collectors.as_ref()).is_ok_and(|n| n.iter().any(|c| c.starts_with("G1 ")));
        self.g1.get_or_init(|| g1);
        let unsupported = match &collectors {
            Err(why) => Some(why.clone()),
            Ok(names) if !pauses => Some(format!(
                "the collector ({}) is not serial, parallel or G1",
                names.join(", ")
            )),
            Ok(_) => {
                let probe = jni.find_class(probe_class::CLASS)?;
                // SAFETY: every collector has a HotSpot collector's name
                // (PAUSE_CLEARING, checked above), so this VM is HotSpot.
                let works = unsafe { crate::vm::weak_handles_work(jni, probe) };
                jni.delete_local_ref(probe);
                (!works).then(|| "this JVM's weak references are not HotSpot's".to_owned())
            }
        };
        let m = match (tracker, unsupported) {
            (Tracker::Tags, _) => Mechanism::Tags,
            (_, None) => {
                crate::log::info(
                    "memory: following objects with weak references, checked after each GC",
                );
                Mechanism::WeakRefs
            }
            (Tracker::Weak, Some(why)) => {
                return Err(AgentError::Unsupported(format!(
                    "tracker=weak cannot be used: {why}; use tracker=tags"
                )))
            }
            (Tracker::Auto, Some(why)) => {
                crate::log::info(&format!(
                    "memory: following objects with JVMTI tags, since {why}"
                ));
                Mechanism::Tags
            }
        };
        Ok(*self.mechanism.get_or_init(|| m))
    }

    pub fn vm_dying(&self) {
        self.dying.store(true, Relaxed);
    }

    /// Would forcing a GC now hang (a concurrent collector at exit)?
    pub fn gc_impossible_now(&self) -> bool {
        self.dying.load(Relaxed) && self.pause_collectors.get() != Some(&true)
    }

    /// Does a heap walk visit only the objects reachable now? ZGC's and
    /// Shenandoah's do (they mark from the roots for it); the pause
    /// collectors' walk every object in the heap, dead ones not collected
    /// yet included. Known once `choose` ran.
    pub fn walks_see_only_reachable(&self) -> bool {
        self.pause_collectors.get() == Some(&false)
    }

    /// Is the collector G1 (known once `choose` ran)?
    pub fn is_g1(&self) -> bool {
        self.g1.get() == Some(&true)
    }

    pub fn mechanism(&self) -> Mechanism {
        self.mechanism.get().copied().unwrap_or(Mechanism::Tags)
    }
}

impl Tracking {
    /// The environment of the memory mode's tags (tags only), made on
    /// first use (after `choose`), with ObjectFree on.
    pub fn env(&self, host: &Host) -> Result<Jvmti, AgentError> {
        self.env
            .get_or_init(|| {
                let caps = JvmtiCapabilities::default()
                    .with(Capability::TagObjects)
                    .with(Capability::GenerateObjectFreeEvents);
                host.new_environment(&caps, &[Kind::ObjectFree])
                    .map_err(|e| {
                        AgentError::Unsupported(format!("memory needs tags and ObjectFree: {e}"))
                    })
            })
            .clone()
    }

    /// The environment if it was made.
    pub fn made_env(&self) -> Result<Jvmti, AgentError> {
        match self.env.get() {
            Some(env) => env.clone(),
            None => Err(AgentError::Internal(
                "memory: no JVMTI environment yet".into(),
            )),
        }
    }

    /// Starts the `profrj memory` agent thread, which counts each GC's frees
    /// and deletes dead objects' weak references (once: later sessions reuse it).
    pub fn start_thread(
        &self,
        host: &'static Host,
        jni: &Jni,
        life: &'static super::Lifetime,
    ) -> Result<(), AgentError> {
        self.thread
            .get_or_init(|| {
                host.start_thread(jni, "profrj memory", "memory thread", move |jni| {
                    life.run_agent_thread(jni, &host.events)
                })
            })
            .clone()
    }
}
