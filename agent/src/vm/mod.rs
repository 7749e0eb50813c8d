//! Everything that touches the VM through raw pointers: JVMTI and JNI bindings,
//! their safe wrappers, and the panic trampoline every callback goes through.

pub mod async_trace;
mod guard;
mod handles;
pub mod hotspot;
mod jni;
mod jni_table;
mod jvmti;
pub mod sys;
mod weak_handle;

pub use guard::{guard, install_panic_hook};
pub use handles::{GlobalRef, VmHandle};
pub use jni::{JavaException, Jni, MAX_LOCAL_FRAME};
pub use jni_table::intercept_allocations;
pub use jvmti::Jvmti;
pub use sys::{jthread, JvmtiEvent};
pub use weak_handle::{self_test as weak_handles_work, WeakHandle};

/// The entry point of an agent thread.
pub type AgentThreadEntry =
    unsafe extern "C" fn(*mut sys::JvmtiEnv, *mut jni_sys::JNIEnv, *mut std::ffi::c_void);

/// Starts a JVMTI agent thread named `name` running `entry(arg)`. The thread
/// object is tagged as the agent's own, so it is never registered or sampled.
pub fn start_agent_thread(
    jvmti: Jvmti,
    jni: &Jni,
    name: &str,
    entry: AgentThreadEntry,
    arg: *const std::ffi::c_void,
) -> Result<(), String> {
    let thread = jni.new_thread_object(name).map_err(|e| e.0)?;
    let r = jvmti
        .set_tag(thread, crate::threads::AGENT_THREAD_TAG)
        .and_then(|()| jvmti.run_agent_thread(thread, entry, arg, sys::JVMTI_THREAD_MAX_PRIORITY));
    jni.delete_local_ref(thread);
    r.map_err(|e| jvmti.error_name(e))
}
