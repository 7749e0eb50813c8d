//! `memory` mode: objects alive per allocating thread and type, and the most
//! that were ever alive at once (ProfilerJ's memory view, HPROF's heap=sites).
//!
//! Instrumented code calls `Probe.alloc(object, type)` after each object's
//! constructor call and after each array allocation; objects the VM makes
//! for a caller (reflection, `clone`, JNI) come through the VMObjectAlloc
//! event. The bookkeeping is Java (`agent/java/profrj/runtime/Memory.java`):
//! each object gets a weak reference queued by the GC when the object is
//! collected, which counts the free. A JVMTI tag per object was measured at
//! 330–500 ns and locks a global table; the weak reference costs the
//! allocating thread one small allocation (see docs/BENCHMARKS.md).
//!
//! A snapshot forces a full GC first, so `count` is the objects still
//! reachable, exactly. "Alive" between snapshots means "not yet found dead
//! by a GC": `max` is the highest count reached, frees counted as the GC
//! reports them.

mod section;
mod vm_alloc;

pub use section::write_section;
pub use vm_alloc::{jni_allocated, vm_allocated};

use crate::instrument::probe_class;
use crate::vm::{JavaException, Jni, Jvmti};
use jni_sys::{jclass, jint, jmethodID, jobject, jvalue, JNIEnv};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::OnceLock;

/// The natives of `profrj.runtime.Memory`, for RegisterNatives.
pub fn natives() -> [(&'static str, &'static str, *mut std::ffi::c_void); 2] {
    [
        ("threadId", "()I", thread_id as *mut _),
        ("typeId", "(Ljava/lang/Class;)I", type_of as *mut _),
    ]
}

/// Type names by id: the id instrumented code passes with each allocation.
#[derive(Default)]
struct Types {
    names: Vec<String>,
    ids: HashMap<String, u32>,
}

static TYPES: Mutex<Option<Types>> = Mutex::new(None);

/// The id of a type named as Java writes it (`java.util.HashMap$Node`,
/// `int[]`, `java.lang.String[][]`).
pub fn type_id(java_name: &str) -> u32 {
    let mut guard = TYPES.lock();
    let t = guard.get_or_insert_with(Types::default);
    if let Some(&id) = t.ids.get(java_name) {
        return id;
    }
    let id = t.names.len() as u32;
    t.names.push(java_name.to_owned());
    t.ids.insert(java_name.to_owned(), id);
    id
}

/// A type as Java writes it, from an internal name (`java/lang/String`) or
/// an array descriptor (`[I`, `[Ljava/lang/String;`).
pub fn java_type_name(internal: &str) -> String {
    if internal.starts_with('[') {
        crate::instrument::registry::java_type(internal).0
    } else {
        internal.replace('/', ".")
    }
}

/// The Java side, bound once the runtime classes are defined.
struct Runtime {
    /// Global reference to `profrj.runtime.Memory`.
    class: usize,
    track: usize,
    snapshot: usize,
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

/// Does a running session want VM allocations tracked? (Bytecode probes
/// cannot be switched off: a stopped session keeps counting them.)
static ACTIVE: AtomicBool = AtomicBool::new(false);

pub fn set_active(on: bool) {
    ACTIVE.store(on, Relaxed);
}

pub fn is_active() -> bool {
    ACTIVE.load(Relaxed)
}

/// Binds the natives of `Memory` (`class`, a local reference) and keeps what
/// the agent calls.
pub fn bind(jni: &Jni, class: jclass) -> Result<(), JavaException> {
    jni.register_natives(class, &natives())?;
    let track = jni.static_method_id(class, "track", "(Ljava/lang/Object;I)V")?;
    let snapshot = jni.static_method_id(class, "snapshot", "()[J")?;
    let _ = RUNTIME.set(Runtime {
        class: jni.new_global_ref(class) as usize,
        track: track as usize,
        snapshot: snapshot as usize,
    });
    Ok(())
}

/// Tracks an object the VM allocated (VMObjectAlloc), of class signature `sig`.
pub fn track_vm_object(jni: &Jni, object: jobject, sig: &str) {
    let Some(rt) = RUNTIME.get() else { return };
    let ty = type_id(&crate::instrument::registry::java_type(sig).0);
    let args = [jvalue { l: object }, jvalue { i: ty as jint }];
    if let Err(e) = jni.call_static_void_method(rt.class as jclass, rt.track as jmethodID, &args) {
        crate::log::error_once("memory track", &format!("memory: {}", e.0));
    }
}

/// One row of the `<memory>` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The agent's thread id (`-1`: a thread it does not know).
    pub thread: i64,
    pub class: String,
    pub count: i64,
    pub max: i64,
}

/// Live counts now: a full GC, the frees it found counted, then every
/// thread's counters. Runs on the dumping thread.
pub fn live_counts(jvmti: Jvmti, jni: &Jni) -> Result<Vec<Row>, String> {
    let rt = RUNTIME.get().ok_or("the memory runtime is not loaded")?;
    jvmti
        .force_garbage_collection()
        .map_err(|e| format!("ForceGarbageCollection: {}", jvmti.error_name(e)))?;
    wait_for_reference_processing(jni);
    let array = jni
        .call_static_object_method(rt.class as jclass, rt.snapshot as jmethodID, &[])
        .map_err(|e| e.0)?;
    let mut flat = vec![0i64; jni.array_length(array)];
    let read = jni.long_array_region(array, &mut flat);
    jni.delete_local_ref(array);
    read.map_err(|e| e.0)?;
    let names = TYPES
        .lock()
        .as_ref()
        .map(|t| t.names.clone())
        .unwrap_or_default();
    Ok(flat
        .chunks_exact(4)
        .map(|r| Row {
            thread: r[0],
            class: names
                .get(r[1] as usize)
                .cloned()
                .unwrap_or_else(|| format!("(type {})", r[1])),
            count: r[2],
            max: r[3],
        })
        .collect())
}

/// Waits until the reference handler has queued what the last GC cleared
/// (the JDK's own `waitForReferenceProcessing`, which NIO uses before
/// giving up on direct memory), so every free is on the queue.
fn wait_for_reference_processing(jni: &Jni) {
    let access = jni.call_static_object(
        "jdk/internal/access/SharedSecrets",
        "getJavaLangRefAccess",
        "()Ljdk/internal/access/JavaLangRefAccess;",
    );
    match access {
        Ok(a) if !a.is_null() => {
            for _ in 0..1000 {
                let progress = jni.call_boolean(
                    a,
                    "jdk/internal/access/JavaLangRefAccess",
                    "waitForReferenceProcessing",
                    "()Z",
                );
                if !matches!(progress, Ok(true)) {
                    break;
                }
            }
            jni.delete_local_ref(a);
        }
        // Not this JDK's internals: give the reference handler time.
        _ => std::thread::sleep(std::time::Duration::from_millis(100)),
    }
}

/// `Memory.threadId()`: the agent's id of the calling thread.
extern "system" fn thread_id(env: *mut JNIEnv, _class: jclass) -> jint {
    crate::vm::guard("memory thread id", -1, || {
        let Some(a) = crate::agent::get() else {
            return -1;
        };
        let jni = Jni::from_raw(env);
        let Ok(t) = a.jvmti.current_thread() else {
            return -1;
        };
        let id = a.threads.identify(a.jvmti, &jni, t, 0);
        jni.delete_local_ref(t);
        match id {
            Some(crate::threads::Identity::Java(id)) => id.0 as jint,
            _ => -1,
        }
    })
}

/// `Memory.typeId(Class)`: the type id of a class (asked once per class).
extern "system" fn type_of(_env: *mut JNIEnv, _class: jclass, of: jclass) -> jint {
    crate::vm::guard("memory type id", 0, || {
        let Some(a) = crate::agent::get() else {
            return 0;
        };
        let sig = a.jvmti.class_signature(of).unwrap_or_default();
        type_id(&crate::instrument::registry::java_type(&sig).0) as jint
    })
}

/// The class instrumented code calls, for the rewriter.
pub const PROBE: (&str, &str, &str) = (
    probe_class::CLASS,
    probe_class::ALLOC_METHOD.0,
    probe_class::ALLOC_METHOD.1,
);
