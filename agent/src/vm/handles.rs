//! What the agent keeps of the VM beyond the call that gave it: the JavaVM,
//! and JNI global references. As raw pointers they would be neither `Send`
//! nor `Sync` (they were kept as `usize` instead, which says nothing); these
//! types say what they hold and why it may cross threads, once.

use jni_sys::{jint, jobject, JavaVM};
use std::ffi::c_void;
use std::ptr::NonNull;

/// The process's JavaVM, as the VM handed it to `Agent_OnLoad` or
/// `Agent_OnAttach`.
#[derive(Clone, Copy)]
pub struct VmHandle(NonNull<JavaVM>);

// SAFETY: the JavaVM and its invocation interface may be used from any
// thread (the JNI specification's Invocation API: GetEnv, AttachCurrentThread
// are called by threads other than the one that got the pointer). HotSpot's
// JavaVM is a static (`main_vm`), valid for the life of the process.
unsafe impl Send for VmHandle {}
// SAFETY: as above; the handle is only read, and the VM synchronises its own
// invocation functions.
unsafe impl Sync for VmHandle {}

impl VmHandle {
    /// # Safety
    /// `vm` must be the JavaVM the VM passed to `Agent_OnLoad` or
    /// `Agent_OnAttach` (non-null, valid for the process's life).
    pub unsafe fn from_raw(vm: *mut JavaVM) -> Self {
        debug_assert!(!vm.is_null());
        // SAFETY: non-null (the caller's promise).
        Self(unsafe { NonNull::new_unchecked(vm) })
    }

    pub fn as_raw(self) -> *mut JavaVM {
        self.0.as_ptr()
    }

    /// The calling thread's environment of `version` (a JNIEnv for a JNI
    /// version, a jvmtiEnv for a JVMTI one), or GetEnv's error code (a
    /// thread not attached to the VM gets `JNI_EDETACHED`; a VM without
    /// GetEnv, `JNI_ERR`). Async-signal-safe
    /// on HotSpot: GetEnv reads a thread-local and allocates nothing.
    pub(super) fn get_env(self, version: jint) -> Result<NonNull<c_void>, jint> {
        let vm = self.as_raw();
        // SAFETY: `vm` is the live JavaVM (`from_raw`); it points to the VM's
        // invocation interface table, which lives as long as the VM.
        let get_env = unsafe { (**vm).GetEnv };
        let Some(get_env) = get_env else {
            return Err(jni_sys::JNI_ERR);
        };
        let mut env: *mut c_void = std::ptr::null_mut();
        // SAFETY: GetEnv of this VM's own table, with the VM and a place for
        // one pointer, which is all it writes.
        let rc = unsafe { get_env(vm, &mut env, version) };
        match NonNull::new(env) {
            Some(env) if rc == jni_sys::JNI_OK => Ok(env),
            _ => Err(rc),
        }
    }
}

/// A JNI global reference the agent keeps for the VM's life (it never
/// deletes one): the platform class loader, coverage counter arrays.
#[derive(Clone, Copy, Debug)]
pub struct GlobalRef(NonNull<jni_sys::_jobject>);

// SAFETY: a global reference is valid in every thread until DeleteGlobalRef
// (JNI specification, "Global and Local References"), which is never called
// on a GlobalRef; the object behind it is only reached through JNI calls,
// which the VM makes safe from any thread.
unsafe impl Send for GlobalRef {}
// SAFETY: as above; the handle itself is never written.
unsafe impl Sync for GlobalRef {}

impl GlobalRef {
    /// # Safety
    /// `global` must be a JNI global reference that is never deleted (what
    /// [`super::Jni::new_global_ref`] makes).
    pub(super) unsafe fn new(global: NonNull<jni_sys::_jobject>) -> Self {
        Self(global)
    }

    /// The reference, for JNI calls on any thread.
    pub fn as_raw(self) -> jobject {
        self.0.as_ptr()
    }
}
