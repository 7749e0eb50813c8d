//! Everything that touches the VM through raw pointers: JVMTI and JNI bindings,
//! their safe wrappers, and the panic trampoline every callback goes through.
//!
//! Where the unsafety is:
//! - Pointers the VM hands the agent (`JavaVM*`, `JNIEnv*`, strings, buffers)
//!   become safe values only through an `unsafe fn` whose `# Safety` says
//!   what the VM guarantees ([`VmHandle::from_raw`], [`Jni::from_raw`]); the
//!   functions the VM calls (`crate::entry`, the probe natives) do that.
//! - Whatever the VM will call or free later (event callbacks, agent thread
//!   bodies, native methods, the JNI function table, JVMTI memory) is passed
//!   through an `unsafe fn`.
//! - JNI references (`jobject`, `jclass`, `jthread`) are opaque handles the
//!   safe wrappers pass to the VM, which resolves them. The convention, not
//!   checked by types: a reference given to a wrapper is live (a local
//!   reference of the calling thread not deleted yet, its frame not popped,
//!   or a global one) or null where the wrapper allows it, and a `jclass` or
//!   `jthread` refers to a `Class` or a `Thread`. Every reference the agent
//!   holds comes from the VM (callback arguments, JNI and JVMTI results), and
//!   none is kept past its frame except as a [`GlobalRef`] or [`WeakHandle`].
//!   A wrapper that needs more than this (an array of a given type, a
//!   field's type) is an `unsafe fn`.

pub mod async_trace;
mod capabilities;
pub mod fault_guard;
pub mod gc_counts;
mod guard;
mod handles;
pub mod hotspot;
mod jni;
mod jni_table;
mod jvmti;
pub mod nmethod;
pub mod sys;
mod weak_handle;

pub use capabilities::Capabilities;
pub use guard::{guard, guard_hot, install_panic_hook};
pub use handles::{GlobalRef, VmHandle};
pub use jni::{
    heap_dump::{HeapDumper, HeapReserve},
    JavaException, Jni, Native, MAX_LOCAL_FRAME,
};
pub use jni_table::{intercept_allocations, AllocHook};
pub use jvmti::Jvmti;
pub use sys::{jthread, JvmtiEvent};
pub use weak_handle::{self_test as weak_handles_work, WeakHandle};

/// What the VM refused, or lacks.
#[derive(Debug, Clone, thiserror::Error)]
pub enum VmError {
    /// A JVMTI function failed: what it was for, and the error's name.
    #[error("{call}: {error}")]
    Jvmti { call: String, error: String },
    /// A JNI call threw.
    #[error(transparent)]
    Java(#[from] JavaException),
    /// This JVM lacks what is asked (a capability, an exported function).
    #[error("{0}")]
    Missing(String),
}

impl VmError {
    /// A JVMTI function's failure, with its error's name.
    pub fn jvmti(jvmti: Jvmti, call: impl Into<String>, e: sys::JvmtiError) -> Self {
        VmError::Jvmti {
            call: call.into(),
            error: jvmti.error_name(e),
        }
    }
}

/// The JVMTI tag of the agent's own threads (Java threads are tagged with
/// their ids from 1 up).
pub const AGENT_THREAD_TAG: i64 = -1;

pub type AgentThreadEntry =
    unsafe extern "C" fn(*mut sys::JvmtiEnv, *mut jni_sys::JNIEnv, *mut std::ffi::c_void);

/// Starts a JVMTI agent thread named `name` running `entry(arg)`. The thread
/// object is tagged as the agent's own, so it is never registered or sampled.
///
/// # Safety
/// `entry` must be sound to call on the new thread with the VM's JVMTI
/// environment, that thread's JNIEnv and `arg`. On `Err` the thread did not
/// start: `entry` never sees `arg`, so whatever `arg` stands for is still
/// the caller's.
pub unsafe fn start_agent_thread(
    jvmti: Jvmti,
    jni: &Jni,
    name: &str,
    entry: AgentThreadEntry,
    arg: *const std::ffi::c_void,
) -> Result<(), VmError> {
    let thread = jni.new_thread_object(name)?;
    let r = jvmti.set_tag(thread, AGENT_THREAD_TAG).and_then(|()| {
        // SAFETY: `thread` is a new, unstarted Thread; `entry` may be
        // called with `arg` on it (the caller's promise).
        unsafe { jvmti.run_agent_thread(thread, entry, arg, sys::JVMTI_THREAD_MAX_PRIORITY) }
    });
    jni.delete_local_ref(thread);
    r.map_err(|e| VmError::jvmti(jvmti, "RunAgentThread", e))
}
