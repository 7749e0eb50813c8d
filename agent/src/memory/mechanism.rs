//! How the memory mode follows tracked objects to their death in this JVM:
//! weak references checked after each GC where the collector clears them
//! in its pauses (serial, parallel, G1), JVMTI tags elsewhere. Chosen once per JVM, when a memory
//! session first starts, with the JVMTI environment that mechanism needs.

use crate::instrument::probe_class;
use crate::modes::EntryPoints;
use crate::options::Tracker;
use crate::vm::sys::{Capability, JvmtiCapabilities, JvmtiEventCallbacks};
use crate::vm::{Jni, Jvmti, JvmtiEvent, VmHandle};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::OnceLock;

/// How this JVM's tracked objects are followed, chosen once (`choose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mechanism {
    WeakRefs,
    Tags,
}

/// The collectors whose GC clears JNI weak references inside a pause
/// (their `GarbageCollectorMXBean` names, JDK 11–25).
const PAUSE_CLEARING: [&str; 7] = [
    "Copy",
    "MarkSweepCompact",
    "PS Scavenge",
    "PS MarkSweep",
    "G1 Young Generation",
    "G1 Old Generation",
    "G1 Concurrent GC",
];

/// How this JVM's tracked objects are followed, for its lifetime (part of
/// the memory mode's state, which the agent owns): the mechanism, chosen
/// once, its own JVMTI environment (its tags are its own, apart from the
/// agent's thread tags) and its agent thread.
#[derive(Default)]
pub struct Tracking {
    mechanism: OnceLock<Mechanism>,
    /// Do all of this JVM's collectors run in pauses the VM thread does
    /// alone (serial, parallel, G1)? Known once `choose` ran.
    pause_collectors: OnceLock<bool>,
    /// Set when the VM is dying: concurrent collectors' threads have
    /// stopped by then, so only the pause collectors can still run a GC.
    dying: AtomicBool,
    env: OnceLock<Result<Jvmti, String>>,
    thread: OnceLock<Result<(), String>>,
}

impl Tracking {
    /// Picks the mechanism for this JVM (once; later sessions keep it): weak
    /// references when `tracker` allows, the collector clears them in pauses,
    /// and the VM's references look like HotSpot's.
    pub fn choose(&self, jni: &Jni, tracker: Tracker) -> Result<Mechanism, String> {
        if let Some(&m) = self.mechanism.get() {
            return match (tracker, m) {
            (Tracker::Weak, Mechanism::Tags) | (Tracker::Tags, Mechanism::WeakRefs) => Err(format!(
                "this JVM already follows objects with {} (chosen when memory first ran); start with tracker=auto",
                if m == Mechanism::Tags { "tags" } else { "weak references" }
            )),
            _ => Ok(m),
        };
        }
        let collectors = collector_names(jni);
        let pauses = collectors.as_ref().is_ok_and(|n| all_pause_collectors(n));
        self.pause_collectors.get_or_init(|| pauses);
        let unsupported = match &collectors {
            Err(why) => Some(why.clone()),
            Ok(names) if !pauses => Some(format!(
                "the collector ({}) is not serial, parallel or G1",
                names.join(", ")
            )),
            Ok(_) => {
                let probe = jni.find_class(probe_class::CLASS).map_err(|e| e.0)?;
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
                return Err(format!(
                    "tracker=weak cannot be used: {why}; use tracker=tags"
                ))
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

    pub fn mechanism(&self) -> Mechanism {
        self.mechanism.get().copied().unwrap_or(Mechanism::Tags)
    }
}

fn all_pause_collectors(names: &[String]) -> bool {
    !names.is_empty() && names.iter().all(|n| PAUSE_CLEARING.contains(&n.as_str()))
}

/// The names of the JVM's garbage collectors (`GarbageCollectorMXBean`s).
fn collector_names(jni: &Jni) -> Result<Vec<String>, String> {
    let names = jni
        .call_static_object(probe_class::CLASS, "collectors", "()Ljava/lang/String;")
        .and_then(|s| {
            let text = jni.string_utf(s);
            jni.delete_local_ref(s);
            text
        })
        .map_err(|e| format!("the garbage collector is unknown ({})", e.0))?;
    Ok(names
        .unwrap_or_default()
        .split(',')
        .filter(|n| !n.is_empty())
        .map(str::to_owned)
        .collect())
}

/// A JVMTI environment of the memory mode's own, with the events its
/// mechanism needs: the GC's start and finish for weak references;
/// ObjectFree (and tags, which never meet the agent's thread tags) for tags.
fn new_env(vm: VmHandle, edge: &EntryPoints, mechanism: Mechanism) -> Result<Jvmti, String> {
    let env = Jvmti::from_vm(vm).map_err(|rc| format!("no JVMTI environment for memory ({rc})"))?;
    let (needs, caps, callbacks, events) = match mechanism {
        Mechanism::WeakRefs => (
            "GC events",
            JvmtiCapabilities::default().with(Capability::GenerateGarbageCollectionEvents),
            JvmtiEventCallbacks {
                GarbageCollectionStart: Some(edge.gc_start),
                GarbageCollectionFinish: Some(edge.gc_finish),
                ..Default::default()
            },
            &[
                JvmtiEvent::GARBAGE_COLLECTION_START,
                JvmtiEvent::GARBAGE_COLLECTION_FINISH,
            ][..],
        ),
        Mechanism::Tags => (
            "tags and ObjectFree",
            JvmtiCapabilities::default()
                .with(Capability::TagObjects)
                .with(Capability::GenerateObjectFreeEvents),
            JvmtiEventCallbacks {
                ObjectFree: Some(edge.object_free),
                ..Default::default()
            },
            &[JvmtiEvent::OBJECT_FREE][..],
        ),
    };
    env.add_capabilities(&caps)
        .map_err(|e| format!("memory needs {needs}: {}", env.error_name(e)))?;
    // SAFETY: `callbacks` holds entry's GC or ObjectFree functions only, each
    // written for its event's call, and leaves the untyped slots null.
    unsafe { env.set_event_callbacks(&callbacks) }
        .map_err(|e| format!("SetEventCallbacks: {}", env.error_name(e)))?;
    for &event in events {
        env.set_event_enabled(event, true)
            .map_err(|e| format!("enabling event {}: {}", event.0, env.error_name(e)))?;
    }
    Ok(env)
}

impl Tracking {
    /// The memory mode's JVMTI environment, made on first use (after `choose`).
    pub fn env(&self, vm: VmHandle, edge: &EntryPoints) -> Result<Jvmti, String> {
        self.env
            .get_or_init(|| new_env(vm, edge, self.mechanism()))
            .clone()
    }

    /// The environment if it was made.
    pub fn made_env(&self) -> Result<Jvmti, String> {
        self.env
            .get()
            .cloned()
            .unwrap_or_else(|| Err("memory: no JVMTI environment yet".into()))
    }

    /// Starts the `profrj memory` agent thread, which counts each GC's frees
    /// and deletes dead objects' weak references (once: later sessions reuse it).
    pub fn start_thread(&self, jvmti: Jvmti, jni: &Jni, edge: &EntryPoints) -> Result<(), String> {
        self.thread
            .get_or_init(|| {
                // SAFETY: the FFI edge's memory_thread reads no argument
                // (EntryPoints' promise).
                unsafe {
                    crate::vm::start_agent_thread(
                        jvmti,
                        jni,
                        "profrj memory",
                        edge.memory_thread,
                        std::ptr::null(),
                    )
                }
            })
            .clone()
            .map_err(|e| format!("memory: cannot start its agent thread: {e}"))
    }
}
