//! Safe wrapper over the JVMTI environment. Every raw JVMTI call of the agent
//! goes through a method here; the rest of the agent never sees a raw pointer
//! except as an opaque handle (`jthread`, `jmethodID`).

use super::handles::VmHandle;
use super::sys::*;
use jni_sys::{jclass, jint, jlong, jmethodID, jobject, JNIEnv};
use std::ffi::{c_char, c_void, CStr};
use std::fmt;

pub type Result<T> = std::result::Result<T, JvmtiError>;

impl fmt::Display for JvmtiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "JVMTI error {}", self.0)
    }
}

/// A JVMTI environment. The JVMTI spec makes an environment usable from any
/// thread, so the handle is `Copy + Send + Sync`.
#[derive(Clone, Copy)]
pub struct Jvmti {
    env: *mut JvmtiEnv,
}

// SAFETY: a jvmtiEnv may be used from any thread (JVMTI spec, "Environments").
unsafe impl Send for Jvmti {}
// SAFETY: as above; the function table is immutable.
unsafe impl Sync for Jvmti {}

/// Calls a typed slot of the function table. A null slot (a VM that does not
/// implement the function) reads as `NOT_AVAILABLE` instead of a crash.
macro_rules! jvmti_call {
    ($self:expr, $name:ident $(, $arg:expr)* $(,)?) => {{
        let env = $self.env;
        // SAFETY: `env` came from JavaVM::GetEnv and stays valid for the VM's life;
        // the table it points to is the VM's own.
        let table = unsafe { &**env };
        match table.$name {
            // SAFETY: the slot's type is the one jvmti.h declares (checked by the
            // offset asserts in sys.rs); arguments are checked by each caller.
            Some(f) => unsafe { f(env $(, $arg)*) },
            None => JvmtiError::NOT_AVAILABLE,
        }
    }};
}

fn check(err: JvmtiError) -> Result<()> {
    if err == JvmtiError::NONE {
        Ok(())
    } else {
        Err(err)
    }
}

/// Memory the VM allocated for us, given back with `Deallocate` on drop.
pub struct JvmtiBuf<T> {
    jvmti: Jvmti,
    ptr: *mut T,
    len: usize,
}

impl<T> JvmtiBuf<T> {
    fn as_slice(&self) -> &[T] {
        if self.ptr.is_null() || self.len == 0 {
            &[]
        } else {
            // SAFETY: the VM wrote `len` initialised elements at `ptr`.
            unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
        }
    }
}

impl<T> Drop for JvmtiBuf<T> {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            self.jvmti.deallocate(self.ptr.cast());
        }
    }
}

pub struct ThreadInfo {
    pub name: String,
}

impl Jvmti {
    /// Gets a new JVMTI 1.2 environment from the VM (each call makes one).
    pub fn from_vm(vm: VmHandle) -> std::result::Result<Self, jint> {
        let env = vm.get_env(JVMTI_VERSION_1_2)?;
        Ok(Self {
            env: env.as_ptr().cast(),
        })
    }

    /// Copies a VM-allocated C string and deallocates it.
    fn take_string(&self, p: *mut c_char) -> String {
        if p.is_null() {
            return String::new();
        }
        // SAFETY: JVMTI returns NUL-terminated modified UTF-8 strings.
        let s = unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned();
        self.deallocate(p.cast());
        s
    }

    pub fn deallocate(&self, p: *mut u8) {
        let _ = jvmti_call!(self, Deallocate, p);
    }

    pub fn error_name(&self, err: JvmtiError) -> String {
        let mut p = std::ptr::null_mut();
        if jvmti_call!(self, GetErrorName, err, &mut p) == JvmtiError::NONE {
            self.take_string(p)
        } else {
            format!("JVMTI error {}", err.0)
        }
    }

    pub fn potential_capabilities(&self) -> Result<JvmtiCapabilities> {
        let mut caps = JvmtiCapabilities::default();
        check(jvmti_call!(self, GetPotentialCapabilities, &mut caps))?;
        Ok(caps)
    }

    pub fn add_capabilities(&self, caps: &JvmtiCapabilities) -> Result<()> {
        check(jvmti_call!(self, AddCapabilities, caps))
    }

    pub fn set_event_callbacks(&self, callbacks: &JvmtiEventCallbacks) -> Result<()> {
        let size = std::mem::size_of::<JvmtiEventCallbacks>() as jint;
        check(jvmti_call!(self, SetEventCallbacks, callbacks, size))
    }

    pub fn set_event_enabled(&self, event: JvmtiEvent, enabled: bool) -> Result<()> {
        let mode = if enabled {
            JvmtiEventMode::ENABLE
        } else {
            JvmtiEventMode::DISABLE
        };
        // Variadic in C; a null thread means "all threads".
        check(jvmti_call!(
            self,
            SetEventNotificationMode,
            mode,
            event,
            std::ptr::null_mut::<jni_sys::_jobject>()
        ))
    }

    /// `thread`'s stack, top frame first, into `buf` (its length is the maximum
    /// depth); returns the frames written. For another thread, HotSpot 15+
    /// takes it in a handshake with that thread alone, not a global safepoint.
    pub fn stack_trace<'a>(
        &self,
        thread: jthread,
        buf: &'a mut [JvmtiFrameInfo],
    ) -> Result<&'a [JvmtiFrameInfo]> {
        let mut count = 0;
        let max = buf.len().min(jint::MAX as usize) as jint;
        check(jvmti_call!(
            self,
            GetStackTrace,
            thread,
            0,
            max,
            buf.as_mut_ptr(),
            &mut count
        ))?;
        Ok(&buf[..(count.max(0) as usize).min(buf.len())])
    }

    /// The JVM-specific extension function named `id`, if this JVM has it.
    pub fn extension_function(&self, id: &str) -> Option<JvmtiExtensionFunction> {
        let mut count = 0;
        let mut infos = std::ptr::null_mut();
        if jvmti_call!(self, GetExtensionFunctions, &mut count, &mut infos) != JvmtiError::NONE {
            return None;
        }
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr: infos,
            len: count.max(0) as usize,
        };
        let mut found = None;
        for info in buf.as_slice() {
            // SAFETY: each id is a NUL-terminated string allocated by the VM.
            if !info.id.is_null() && unsafe { CStr::from_ptr(info.id) }.to_bytes() == id.as_bytes()
            {
                found = info.func;
            }
            // Every string and array inside the table is a separate allocation.
            let params = JvmtiBuf {
                jvmti: *self,
                ptr: info.params,
                len: info.param_count.max(0) as usize,
            };
            for p in params.as_slice() {
                self.deallocate(p.name.cast());
            }
            self.deallocate(info.id.cast());
            self.deallocate(info.short_description.cast());
            self.deallocate(info.errors.cast());
        }
        found
    }

    /// HotSpot's `GetVirtualThread` extension: the virtual thread mounted on
    /// `carrier` (a local reference), or `None`.
    pub fn mounted_virtual_thread(
        &self,
        get_virtual_thread: JvmtiExtensionFunction,
        carrier: jthread,
    ) -> Option<jthread> {
        let mut vthread: jthread = std::ptr::null_mut();
        // SAFETY: the extension takes (jthread carrier, jthread* result), as
        // HotSpot's jvmtiExtensions.cpp reads its variadic arguments.
        let err = unsafe { get_virtual_thread(self.env, carrier, &mut vthread as *mut jthread) };
        (err == JvmtiError::NONE && !vthread.is_null()).then_some(vthread)
    }

    /// JVMTI thread state bits (`JVMTI_THREAD_STATE_*`).
    pub fn thread_state(&self, thread: jthread) -> Result<jint> {
        let mut state = 0;
        check(jvmti_call!(self, GetThreadState, thread, &mut state))?;
        Ok(state)
    }

    /// Every live Java thread, as local references.
    pub fn all_threads(&self) -> Result<Vec<jthread>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        check(jvmti_call!(self, GetAllThreads, &mut count, &mut ptr))?;
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        };
        Ok(buf.as_slice().to_vec())
    }

    /// The calling thread, as a local reference.
    pub fn current_thread(&self) -> Result<jthread> {
        let mut t = std::ptr::null_mut();
        check(jvmti_call!(self, GetCurrentThread, &mut t))?;
        Ok(t)
    }

    /// Every loaded class, as local references.
    pub fn loaded_classes(&self) -> Result<Vec<jclass>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        check(jvmti_call!(self, GetLoadedClasses, &mut count, &mut ptr))?;
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        };
        Ok(buf.as_slice().to_vec())
    }

    /// Makes the VM create a jmethodID for every method of `class` (what
    /// AsyncGetCallTrace reports; it cannot create them in a signal handler).
    pub fn prepare_method_ids(&self, class: jclass) -> Result<()> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        check(jvmti_call!(
            self,
            GetClassMethods,
            class,
            &mut count,
            &mut ptr
        ))?;
        drop(JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        });
        Ok(())
    }

    /// Can `class` be retransformed (not a primitive, array or hidden class)?
    pub fn is_modifiable_class(&self, class: jclass) -> bool {
        let mut yes: jboolean = 0;
        jvmti_call!(self, IsModifiableClass, class, &mut yes) == JvmtiError::NONE && yes != 0
    }

    /// The defining loader of `class` as a local reference; null for the boot loader.
    pub fn class_loader(&self, class: jclass) -> Result<jobject> {
        let mut loader = std::ptr::null_mut();
        check(jvmti_call!(self, GetClassLoader, class, &mut loader))?;
        Ok(loader)
    }

    /// Every module, as local references (JVMTI 9+).
    pub fn all_modules(&self) -> Result<Vec<jobject>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        check(jvmti_call!(self, GetAllModules, &mut count, &mut ptr))?;
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        };
        Ok(buf.as_slice().to_vec())
    }

    /// Lets `module` read `to` (JVMTI 9+).
    pub fn add_module_reads(&self, module: jobject, to: jobject) -> Result<()> {
        check(jvmti_call!(self, AddModuleReads, module, to))
    }

    /// Runs the ClassFileLoadHook again over `classes` (their original bytes).
    pub fn retransform_classes(&self, classes: &[jclass]) -> Result<()> {
        let n = jint::try_from(classes.len()).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)?;
        check(jvmti_call!(self, RetransformClasses, n, classes.as_ptr()))
    }

    /// `bytes` copied into memory from JVMTI's Allocate, which is what a
    /// ClassFileLoadHook hands back as the new class file (the VM frees it).
    pub fn allocate_copy(&self, bytes: &[u8]) -> Result<*mut u8> {
        let mut p = std::ptr::null_mut();
        check(jvmti_call!(self, Allocate, bytes.len() as jlong, &mut p))?;
        // SAFETY: Allocate returned a block of at least `bytes.len()` bytes.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
        Ok(p)
    }

    /// Name and daemon flag of a thread. The local references the VM returns
    /// (thread group, context loader) are released through `jni`.
    pub fn thread_info(&self, jni: &super::Jni, thread: jthread) -> Result<ThreadInfo> {
        // SAFETY: all-zero is a valid JvmtiThreadInfo (null pointers, zero ints).
        let mut info: JvmtiThreadInfo = unsafe { std::mem::zeroed() };
        check(jvmti_call!(self, GetThreadInfo, thread, &mut info))?;
        jni.delete_local_ref(info.thread_group);
        jni.delete_local_ref(info.context_class_loader);
        Ok(ThreadInfo {
            name: self.take_string(info.name),
        })
    }

    pub fn thread_cpu_time(&self, thread: jthread) -> Result<jlong> {
        let mut t = 0;
        check(jvmti_call!(self, GetThreadCpuTime, thread, &mut t))?;
        Ok(t)
    }

    pub fn tag(&self, object: jobject) -> Result<jlong> {
        let mut tag = 0;
        check(jvmti_call!(self, GetTag, object, &mut tag))?;
        Ok(tag)
    }

    pub fn set_tag(&self, object: jobject, tag: jlong) -> Result<()> {
        check(jvmti_call!(self, SetTag, object, tag))
    }

    /// JVMTI GetJNIFunctionTable: a copy of the JNI table, to `deallocate`.
    pub(super) fn call_get_jni_function_table(
        &self,
        out: &mut *mut jni_sys::JNINativeInterface_,
    ) -> JvmtiError {
        jvmti_call!(self, GetJNIFunctionTable, out)
    }

    /// JVMTI SetJNIFunctionTable: every thread's JNI calls go through `table`
    /// from now on (the VM copies it).
    pub(super) fn call_set_jni_function_table(
        &self,
        table: &jni_sys::JNINativeInterface_,
    ) -> JvmtiError {
        jvmti_call!(self, SetJNIFunctionTable, table)
    }

    /// A full garbage collection, now (the memory mode's snapshot: only
    /// objects still reachable count as live).
    pub fn force_garbage_collection(&self) -> Result<()> {
        check(jvmti_call!(self, ForceGarbageCollection))
    }

    /// `(name, descriptor)` of a method.
    pub fn method_name(&self, method: jmethodID) -> Result<(String, String)> {
        let mut name = std::ptr::null_mut();
        let mut sig = std::ptr::null_mut();
        check(jvmti_call!(
            self,
            GetMethodName,
            method,
            &mut name,
            &mut sig,
            std::ptr::null_mut()
        ))?;
        Ok((self.take_string(name), self.take_string(sig)))
    }

    /// The declaring class, as a JNI local reference.
    pub fn method_declaring_class(&self, method: jmethodID) -> Result<jclass> {
        let mut class = std::ptr::null_mut();
        check(jvmti_call!(
            self,
            GetMethodDeclaringClass,
            method,
            &mut class
        ))?;
        Ok(class)
    }

    /// The JVM type signature of a class, e.g. `Ljava/lang/String;`.
    pub fn class_signature(&self, class: jclass) -> Result<String> {
        let mut sig = std::ptr::null_mut();
        check(jvmti_call!(
            self,
            GetClassSignature,
            class,
            &mut sig,
            std::ptr::null_mut()
        ))?;
        Ok(self.take_string(sig))
    }

    /// Starts `thread` (a `java.lang.Thread` the caller created) running `proc`
    /// as a JVMTI agent thread.
    pub fn run_agent_thread(
        &self,
        thread: jthread,
        proc: unsafe extern "C" fn(*mut JvmtiEnv, *mut JNIEnv, *mut c_void),
        arg: *const c_void,
        priority: jint,
    ) -> Result<()> {
        check(jvmti_call!(
            self,
            RunAgentThread,
            thread,
            Some(proc),
            arg,
            priority
        ))
    }
}
