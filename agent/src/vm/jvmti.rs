//! Safe wrapper over the JVMTI environment. Every raw JVMTI call of the agent
//! goes through a method here; the rest of the agent never sees a raw pointer
//! except as an opaque handle (`jthread`, `jmethodID`), which follows the
//! convention of `vm`. Methods whose arguments the VM will call or free
//! (callbacks, thread bodies, function tables, memory) are `unsafe fn`.

use super::handles::VmHandle;
use super::sys::*;
use jni_sys::{jclass, jint, jlong, jmethodID, jobject, JNIEnv};
use profrj_format::names::decode_modified_utf8;
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
// SAFETY: the handle is a pointer never written after `from_vm`; JVMTI
// functions may be called on one environment from several threads at once.
unsafe impl Sync for Jvmti {}

/// Calls a typed slot of the function table. A null slot (a VM that does not
/// implement the function) reads as `NOT_AVAILABLE` instead of a crash.
///
/// The call is unsafe: each use sits in an `unsafe` block whose comment says
/// why its arguments are what the function takes. The slot's type is the one
/// jvmti.h declares (the layout asserts of sys.rs pin its place).
macro_rules! jvmti_call {
    ($self:expr, $name:ident $(, $arg:expr)* $(,)?) => {
        match $self.table().$name {
            Some(f) => f($self.env $(, $arg)*),
            None => JvmtiError::NOT_AVAILABLE,
        }
    };
}

fn check(err: JvmtiError) -> Result<()> {
    if err == JvmtiError::NONE {
        Ok(())
    } else {
        Err(err)
    }
}

/// Memory the VM allocated for us, given back with `Deallocate` on drop.
/// Made only in this file, with `ptr` either null or an array of `len`
/// initialised `T` a JVMTI function of `jvmti` returned, owned by no one else.
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
            // SAFETY: the VM wrote `len` initialised elements at `ptr` (the
            // struct's invariant), which stay until the drop below.
            unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
        }
    }
}

impl<T> Drop for JvmtiBuf<T> {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: JVMTI allocated `ptr` for us (the struct's invariant);
            // it is freed once, here.
            unsafe { self.jvmti.deallocate(self.ptr.cast()) };
        }
    }
}

/// An entry of GetExtensionFunctions' or GetExtensionEvents' table: its
/// id, its parameters, and its other allocations (null where an entry
/// has fewer; each freed by the caller of those functions).
trait ExtensionInfo {
    fn id(&self) -> *mut c_char;
    fn params(&self) -> (*mut JvmtiParamInfo, jint);
    fn allocations(&self) -> [*mut u8; 3];
}

impl ExtensionInfo for JvmtiExtensionFunctionInfo {
    fn id(&self) -> *mut c_char {
        self.id
    }
    fn params(&self) -> (*mut JvmtiParamInfo, jint) {
        (self.params, self.param_count)
    }
    fn allocations(&self) -> [*mut u8; 3] {
        [
            self.id.cast(),
            self.short_description.cast(),
            self.errors.cast(),
        ]
    }
}

impl ExtensionInfo for JvmtiExtensionEventInfo {
    fn id(&self) -> *mut c_char {
        self.id
    }
    fn params(&self) -> (*mut JvmtiParamInfo, jint) {
        (self.params, self.param_count)
    }
    fn allocations(&self) -> [*mut u8; 3] {
        [
            self.id.cast(),
            self.short_description.cast(),
            std::ptr::null_mut(),
        ]
    }
}

pub struct ThreadInfo {
    pub name: String,
}

/// What GetObjectMonitorUsage says of a monitor (threads as local references).
pub struct MonitorUsage {
    pub owner: Option<jthread>,
    pub entry_count: jint,
    /// Threads waiting to enter (or re-enter) it.
    pub waiters: Vec<jthread>,
    /// Threads in `Object.wait` on it.
    pub notify_waiters: Vec<jthread>,
}

impl Jvmti {
    fn table(&self) -> &JvmtiInterface {
        // SAFETY: `env` came from GetEnv (`from_vm`) and no environment is
        // ever disposed of, so it stays valid for the VM's life; it points to
        // the VM's function table.
        unsafe { &**self.env }
    }

    /// Gets a new JVMTI 1.2 environment from the VM (each call makes one).
    pub fn from_vm(vm: VmHandle) -> std::result::Result<Self, jint> {
        let env = vm.get_env(JVMTI_VERSION_1_2)?;
        Ok(Self {
            env: env.as_ptr().cast(),
        })
    }

    /// Copies a VM-allocated C string (modified UTF-8, decoded by the
    /// format's one decoder) and deallocates it.
    ///
    /// # Safety
    /// `p` must be null or a NUL-terminated string a JVMTI function of this
    /// environment returned, not deallocated yet; it is deallocated here.
    unsafe fn take_string(&self, p: *mut c_char) -> String {
        if p.is_null() {
            return String::new();
        }
        // SAFETY: a NUL-terminated string the VM allocated (the caller's
        // promise), alive until the deallocation below.
        let utf = unsafe { CStr::from_ptr(p) };
        let s = decode_modified_utf8(utf.to_bytes());
        // SAFETY: VM-allocated and not freed yet (the caller's promise).
        unsafe { self.deallocate(p.cast()) };
        s
    }

    /// Gives memory back to the VM.
    ///
    /// # Safety
    /// `p` must be null or memory this environment's Allocate, or one of its
    /// functions that allocate a result, returned; not deallocated yet, and
    /// not used after.
    pub(super) unsafe fn deallocate(&self, p: *mut u8) {
        // SAFETY: `p` is null or JVMTI memory not freed yet (the caller's promise).
        let _ = unsafe { jvmti_call!(self, Deallocate, p) };
    }

    pub fn error_name(&self, err: JvmtiError) -> String {
        let mut p = std::ptr::null_mut();
        // SAFETY: any error number is accepted; `p` is a live out-pointer.
        if unsafe { jvmti_call!(self, GetErrorName, err, &mut p) } == JvmtiError::NONE {
            // SAFETY: GetErrorName allocated the name for us.
            unsafe { self.take_string(p) }
        } else {
            format!("JVMTI error {}", err.0)
        }
    }

    pub fn potential_capabilities(&self) -> Result<JvmtiCapabilities> {
        let mut caps = JvmtiCapabilities::default();
        // SAFETY: `caps` is a live, writable jvmtiCapabilities.
        check(unsafe { jvmti_call!(self, GetPotentialCapabilities, &mut caps) })?;
        Ok(caps)
    }

    pub fn add_capabilities(&self, caps: &JvmtiCapabilities) -> Result<()> {
        // SAFETY: `caps` is a live jvmtiCapabilities, read during the call.
        check(unsafe { jvmti_call!(self, AddCapabilities, caps) })
    }

    /// Makes the VM call `callbacks` for the events this environment enables.
    ///
    /// # Safety
    /// Every function in `callbacks` must be sound to call as the VM calls
    /// that event's callback (the arguments jvmti.h lists, on the thread the
    /// event names) for as long as the VM runs; the slots typed as plain
    /// pointers must be null.
    pub unsafe fn set_event_callbacks(&self, callbacks: &JvmtiEventCallbacks) -> Result<()> {
        let size = std::mem::size_of::<JvmtiEventCallbacks>() as jint;
        // SAFETY: `callbacks` is read during the call (the VM copies it) and
        // `size` is its size; its functions are sound as callbacks (the caller's promise).
        check(unsafe { jvmti_call!(self, SetEventCallbacks, callbacks, size) })
    }

    pub fn set_event_enabled(&self, event: JvmtiEvent, enabled: bool) -> Result<()> {
        let mode = if enabled {
            JvmtiEventMode::ENABLE
        } else {
            JvmtiEventMode::DISABLE
        };
        // Variadic in C; a null thread means "all threads".
        // SAFETY: a mode and event number the VM checks; the variadic thread
        // argument is a null jthread, as jvmti.h declares it.
        check(unsafe {
            jvmti_call!(
                self,
                SetEventNotificationMode,
                mode,
                event,
                std::ptr::null_mut::<jni_sys::_jobject>()
            )
        })
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
        // SAFETY: `buf` holds `max` frames (max <= buf.len()); out-pointer to a live count.
        check(unsafe {
            jvmti_call!(
                self,
                GetStackTrace,
                thread,
                0,
                max,
                buf.as_mut_ptr(),
                &mut count
            )
        })?;
        Ok(&buf[..(count.max(0) as usize).min(buf.len())])
    }

    /// The calling thread's own stack, as [`Jvmti::stack_trace`]: a null
    /// thread asks for the current one, so HotSpot skips resolving a thread
    /// reference and searching the thread list for it (~30 ns of a
    /// ~1.5 µs walk, measured in `alloc`'s event).
    pub fn own_stack_trace<'a>(
        &self,
        buf: &'a mut [JvmtiFrameInfo],
    ) -> Result<&'a [JvmtiFrameInfo]> {
        self.stack_trace(std::ptr::null_mut(), buf)
    }

    /// The JVM-specific extension function named `id`, if this JVM has it.
    pub fn extension_function(&self, id: &str) -> Option<JvmtiExtensionFunction> {
        let mut count = 0;
        let mut infos = std::ptr::null_mut();
        // SAFETY: out-pointers to two live locals.
        let err = unsafe { jvmti_call!(self, GetExtensionFunctions, &mut count, &mut infos) };
        self.find_extension(err, infos, count, id, |f: &JvmtiExtensionFunctionInfo| {
            f.func
        })
    }

    /// The index of the JVM-specific event named `id`, if this JVM has it
    /// (HotSpot's `com.sun.hotspot.events.VirtualThreadMount`, JDK 21+).
    pub fn extension_event(&self, id: &str) -> Option<jint> {
        let mut count = 0;
        let mut infos = std::ptr::null_mut();
        // SAFETY: out-pointers to two live locals.
        let err = unsafe { jvmti_call!(self, GetExtensionEvents, &mut count, &mut infos) };
        self.find_extension(err, infos, count, id, |e: &JvmtiExtensionEventInfo| {
            Some(e.extension_event_index)
        })
    }

    /// What `pick` takes from the entry named `id` of a table
    /// GetExtensionFunctions or GetExtensionEvents answered (`err`, `infos`,
    /// `count`), freeing the table and every allocation inside it.
    fn find_extension<I: ExtensionInfo, R>(
        &self,
        err: JvmtiError,
        infos: *mut I,
        count: jint,
        id: &str,
        pick: impl Fn(&I) -> Option<R>,
    ) -> Option<R> {
        if err != JvmtiError::NONE {
            return None;
        }
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr: infos,
            len: count.max(0) as usize,
        };
        let mut found = None;
        for info in buf.as_slice() {
            let name = info.id();
            // SAFETY: each id is a NUL-terminated string the VM allocated,
            // freed only below.
            if !name.is_null() && unsafe { CStr::from_ptr(name) }.to_bytes() == id.as_bytes() {
                found = pick(info);
            }
            let (params, param_count) = info.params();
            let params = JvmtiBuf {
                jvmti: *self,
                ptr: params,
                len: param_count.max(0) as usize,
            };
            // SAFETY: every string and array inside an entry is a separate
            // allocation of the call for us (or null), freed once here; the
            // table itself goes with `buf`, after the loop.
            unsafe {
                for p in params.as_slice() {
                    self.deallocate(p.name.cast());
                }
                for allocation in info.allocations() {
                    self.deallocate(allocation);
                }
            }
        }
        found
    }

    /// Sets the callback of the extension event `index` (from
    /// [`Jvmti::extension_event`]); `None` removes it.
    ///
    /// # Safety
    /// The event at `index` must be one the VM posts with (env, JNIEnv,
    /// thread), as HotSpot's VirtualThreadMount/Unmount are, and `callback`
    /// sound to call so from any thread.
    pub unsafe fn set_extension_event_callback(
        &self,
        index: jint,
        callback: Option<EventVirtualThread>,
    ) -> Result<()> {
        // SAFETY: an index the VM checks; the callback's contract is the
        // caller's promise.
        check(unsafe { jvmti_call!(self, SetExtensionEventCallback, index, callback) })
    }

    /// The value the agent stored for the calling thread (JVMTI thread-local
    /// storage, null if none). On a carrier running a virtual thread this
    /// is the virtual thread's: HotSpot binds a mounted virtual thread's
    /// JVMTI state to its carrier, and reads it without a VM transition.
    pub fn current_thread_local(&self) -> *mut c_void {
        let mut p = std::ptr::null_mut();
        // SAFETY: a null thread means the calling one; a live out-pointer.
        let err = unsafe {
            jvmti_call!(
                self,
                GetThreadLocalStorage,
                std::ptr::null_mut::<jni_sys::_jobject>(),
                &mut p
            )
        };
        if err == JvmtiError::NONE {
            p
        } else {
            std::ptr::null_mut()
        }
    }

    /// Stores `value` for the calling thread (a mounted virtual thread's
    /// own, on a carrier); the VM only keeps the pointer.
    pub fn set_current_thread_local(&self, value: *const c_void) -> Result<()> {
        // SAFETY: a null thread means the calling one; the VM never reads
        // through `value`.
        check(unsafe {
            jvmti_call!(
                self,
                SetThreadLocalStorage,
                std::ptr::null_mut::<jni_sys::_jobject>(),
                value
            )
        })
    }

    /// HotSpot's `GetVirtualThread` extension: the virtual thread mounted on
    /// `carrier` (a local reference), or `None`.
    ///
    /// # Safety
    /// `get_virtual_thread` must be what [`Jvmti::extension_function`]
    /// answered for `com.sun.hotspot.functions.GetVirtualThread`: it is
    /// called with that function's arguments.
    pub unsafe fn mounted_virtual_thread(
        &self,
        get_virtual_thread: JvmtiExtensionFunction,
        carrier: jthread,
    ) -> Option<jthread> {
        let mut vthread: jthread = std::ptr::null_mut();
        // SAFETY: the function is GetVirtualThread (the caller's promise),
        // which takes (jthread carrier, jthread* result), as HotSpot's
        // jvmtiExtensions.cpp reads its variadic arguments; `vthread` is a
        // live place for the result.
        let err = unsafe { get_virtual_thread(self.env, carrier, &mut vthread as *mut jthread) };
        (err == JvmtiError::NONE && !vthread.is_null()).then_some(vthread)
    }

    /// JVMTI thread state bits (`JVMTI_THREAD_STATE_*`).
    pub fn thread_state(&self, thread: jthread) -> Result<jint> {
        let mut state = 0;
        // SAFETY: a thread reference (the `vm` convention); a live out-pointer.
        check(unsafe { jvmti_call!(self, GetThreadState, thread, &mut state) })?;
        Ok(state)
    }

    /// Every live Java thread, as local references.
    pub fn all_threads(&self) -> Result<Vec<jthread>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        // SAFETY: out-pointers to two live locals.
        check(unsafe { jvmti_call!(self, GetAllThreads, &mut count, &mut ptr) })?;
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
        // SAFETY: a live out-pointer.
        check(unsafe { jvmti_call!(self, GetCurrentThread, &mut t) })?;
        Ok(t)
    }

    /// Every loaded class, as local references.
    pub fn loaded_classes(&self) -> Result<Vec<jclass>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        // SAFETY: out-pointers to two live locals.
        check(unsafe { jvmti_call!(self, GetLoadedClasses, &mut count, &mut ptr) })?;
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
        // SAFETY: a class reference (the `vm` convention); out-pointers to two live locals.
        check(unsafe { jvmti_call!(self, GetClassMethods, class, &mut count, &mut ptr) })?;
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
        // SAFETY: a class reference (the `vm` convention); a live out-pointer.
        let err = unsafe { jvmti_call!(self, IsModifiableClass, class, &mut yes) };
        err == JvmtiError::NONE && yes != 0
    }

    /// The defining loader of `class` as a local reference; null for the boot loader.
    pub fn class_loader(&self, class: jclass) -> Result<jobject> {
        let mut loader = std::ptr::null_mut();
        // SAFETY: a class reference (the `vm` convention); a live out-pointer.
        check(unsafe { jvmti_call!(self, GetClassLoader, class, &mut loader) })?;
        Ok(loader)
    }

    /// Every module, as local references (JVMTI 9+).
    pub fn all_modules(&self) -> Result<Vec<jobject>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        // SAFETY: out-pointers to two live locals.
        check(unsafe { jvmti_call!(self, GetAllModules, &mut count, &mut ptr) })?;
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        };
        Ok(buf.as_slice().to_vec())
    }

    /// Lets `module` read `to` (JVMTI 9+).
    pub fn add_module_reads(&self, module: jobject, to: jobject) -> Result<()> {
        // SAFETY: two module references (the `vm` convention; the VM checks
        // that they are modules).
        check(unsafe { jvmti_call!(self, AddModuleReads, module, to) })
    }

    /// Runs the ClassFileLoadHook again over `classes` (their original bytes).
    pub fn retransform_classes(&self, classes: &[jclass]) -> Result<()> {
        let n = jint::try_from(classes.len()).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)?;
        // SAFETY: `classes` holds `n` class references (the `vm` convention),
        // read during the call.
        check(unsafe { jvmti_call!(self, RetransformClasses, n, classes.as_ptr()) })
    }

    /// `bytes` copied into memory from JVMTI's Allocate, which is what a
    /// ClassFileLoadHook hands back as the new class file (the VM frees it).
    pub fn allocate_copy(&self, bytes: &[u8]) -> Result<*mut u8> {
        let mut p = std::ptr::null_mut();
        // SAFETY: any size is accepted (the VM fails the call if it cannot); a
        // live out-pointer.
        check(unsafe { jvmti_call!(self, Allocate, bytes.len() as jlong, &mut p) })?;
        // SAFETY: Allocate returned a new block of `bytes.len()` bytes (a
        // zero-length copy writes nothing), which cannot overlap `bytes`.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
        Ok(p)
    }

    /// Name and daemon flag of a thread. The local references the VM returns
    /// (thread group, context loader) are released through `jni`.
    pub fn thread_info(&self, jni: &super::Jni, thread: jthread) -> Result<ThreadInfo> {
        // SAFETY: all-zero is a valid JvmtiThreadInfo (null pointers, zero ints).
        let mut info: JvmtiThreadInfo = unsafe { std::mem::zeroed() };
        // SAFETY: a thread reference (the `vm` convention); `info` is a live,
        // writable jvmtiThreadInfo.
        check(unsafe { jvmti_call!(self, GetThreadInfo, thread, &mut info) })?;
        jni.delete_local_ref(info.thread_group);
        jni.delete_local_ref(info.context_class_loader);
        Ok(ThreadInfo {
            // SAFETY: GetThreadInfo allocated the name for us.
            name: unsafe { self.take_string(info.name) },
        })
    }

    pub fn thread_cpu_time(&self, thread: jthread) -> Result<jlong> {
        let mut t = 0;
        // SAFETY: a thread reference or null (the `vm` convention); a live out-pointer.
        check(unsafe { jvmti_call!(self, GetThreadCpuTime, thread, &mut t) })?;
        Ok(t)
    }

    pub fn tag(&self, object: jobject) -> Result<jlong> {
        let mut tag = 0;
        // SAFETY: an object reference (the `vm` convention); a live out-pointer.
        check(unsafe { jvmti_call!(self, GetTag, object, &mut tag) })?;
        Ok(tag)
    }

    pub fn set_tag(&self, object: jobject, tag: jlong) -> Result<()> {
        // SAFETY: an object reference (the `vm` convention); any tag value.
        check(unsafe { jvmti_call!(self, SetTag, object, tag) })
    }

    /// JVMTI GetJNIFunctionTable: a copy of the JNI table, to `deallocate`.
    pub(super) fn call_get_jni_function_table(
        &self,
        out: &mut *mut jni_sys::JNINativeInterface_,
    ) -> JvmtiError {
        // SAFETY: `out` is a live out-pointer.
        unsafe { jvmti_call!(self, GetJNIFunctionTable, out) }
    }

    /// JVMTI SetJNIFunctionTable: every thread's JNI calls go through `table`
    /// from now on (the VM copies it).
    ///
    /// # Safety
    /// Every function in `table` must behave as the JNI function of its slot,
    /// for any thread that calls it, as long as the VM runs.
    pub(super) unsafe fn call_set_jni_function_table(
        &self,
        table: &jni_sys::JNINativeInterface_,
    ) -> JvmtiError {
        // SAFETY: `table` is read during the call (the VM copies it); its
        // functions behave as JNI's (the caller's promise).
        unsafe { jvmti_call!(self, SetJNIFunctionTable, table) }
    }

    /// A full garbage collection, now (the memory mode's snapshot: only
    /// objects still reachable count as live).
    /// Sets the mean bytes between SampledObjectAlloc events (0: every object).
    pub fn set_heap_sampling_interval(&self, bytes: u32) -> Result<()> {
        let bytes = bytes.min(jint::MAX as u32) as jint;
        // SAFETY: any non-negative jint is a valid interval.
        check(unsafe { jvmti_call!(self, SetHeapSamplingInterval, bytes) })
    }

    pub fn force_garbage_collection(&self) -> Result<()> {
        // SAFETY: no arguments.
        check(unsafe { jvmti_call!(self, ForceGarbageCollection) })
    }

    /// `(name, descriptor)` of a method.
    pub fn method_name(&self, method: jmethodID) -> Result<(String, String)> {
        let mut name = std::ptr::null_mut();
        let mut sig = std::ptr::null_mut();
        // SAFETY: a jmethodID the VM gave (the `vm` convention); out-pointers to
        // two live locals, and null for the generic signature (allowed).
        check(unsafe {
            jvmti_call!(
                self,
                GetMethodName,
                method,
                &mut name,
                &mut sig,
                std::ptr::null_mut()
            )
        })?;
        // SAFETY: GetMethodName allocated both strings for us.
        Ok(unsafe { (self.take_string(name), self.take_string(sig)) })
    }

    /// A method's access flags (`ACC_STATIC`, …).
    pub fn method_modifiers(&self, method: jmethodID) -> Result<jint> {
        let mut m = 0;
        // SAFETY: a jmethodID the VM gave (the `vm` convention); a live out-pointer.
        check(unsafe { jvmti_call!(self, GetMethodModifiers, method, &mut m) })?;
        Ok(m)
    }

    /// A method's line number table as (first bytecode index, line), in the
    /// class file's order; an error for a native method or a class compiled
    /// without line numbers (or without the GetLineNumbers capability).
    pub fn line_number_table(&self, method: jmethodID) -> Result<Vec<(i64, i32)>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        // SAFETY: a jmethodID the VM gave (the `vm` convention); out-pointers
        // to two live locals.
        check(unsafe { jvmti_call!(self, GetLineNumberTable, method, &mut count, &mut ptr) })?;
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        };
        Ok(buf
            .as_slice()
            .iter()
            .map(|e| (e.start_location, e.line_number))
            .collect())
    }

    /// A system property of the VM (`java.vm.name`, …), as set at start-up.
    pub fn system_property(&self, key: &str) -> Result<String> {
        let key = std::ffi::CString::new(key).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)?;
        let mut value = std::ptr::null_mut();
        // SAFETY: a NUL-terminated key that outlives the call; a live out-pointer.
        check(unsafe { jvmti_call!(self, GetSystemProperty, key.as_ptr(), &mut value) })?;
        // SAFETY: GetSystemProperty allocated the value for us.
        Ok(unsafe { self.take_string(value) })
    }

    /// Makes the VM send `event` for what already happened: every compiled
    /// method (COMPILED_METHOD_LOAD) or every piece of generated code
    /// (DYNAMIC_CODE_GENERATED), to this environment's callbacks.
    pub fn generate_events(&self, event: JvmtiEvent) -> Result<()> {
        // SAFETY: an event number the VM checks.
        check(unsafe { jvmti_call!(self, GenerateEvents, event) })
    }

    /// The declaring class, as a JNI local reference.
    pub fn method_declaring_class(&self, method: jmethodID) -> Result<jclass> {
        let mut class = std::ptr::null_mut();
        // SAFETY: a jmethodID the VM gave (the `vm` convention); a live out-pointer.
        check(unsafe { jvmti_call!(self, GetMethodDeclaringClass, method, &mut class) })?;
        Ok(class)
    }

    /// The JVM type signature of a class, e.g. `Ljava/lang/String;`.
    /// The object's identity hash code (JVMTI GetObjectHashCode: no
    /// safepoint, no allocation).
    pub fn object_hash_code(&self, object: jobject) -> Result<i32> {
        let mut hash = 0;
        // SAFETY: an object reference (the `vm` convention) and a live out-pointer.
        check(unsafe { jvmti_call!(self, GetObjectHashCode, object, &mut hash) })?;
        Ok(hash)
    }

    pub fn class_signature(&self, class: jclass) -> Result<String> {
        let mut sig = std::ptr::null_mut();
        // SAFETY: a class reference (the `vm` convention); a live out-pointer,
        // and null for the generic signature (allowed).
        check(unsafe {
            jvmti_call!(
                self,
                GetClassSignature,
                class,
                &mut sig,
                std::ptr::null_mut()
            )
        })?;
        // SAFETY: GetClassSignature allocated the signature for us.
        Ok(unsafe { self.take_string(sig) })
    }

    /// The object whose monitor `thread` waits to enter (or to re-enter
    /// after `Object.wait`), as a local reference; `None` if none.
    pub fn current_contended_monitor(&self, thread: jthread) -> Result<Option<jobject>> {
        let mut monitor = std::ptr::null_mut();
        // SAFETY: a thread reference (the `vm` convention); a live out-pointer.
        check(unsafe { jvmti_call!(self, GetCurrentContendedMonitor, thread, &mut monitor) })?;
        Ok((!monitor.is_null()).then_some(monitor))
    }

    /// The monitors `thread` owns, as local references, each with the depth
    /// of the frame that entered it (-1: entered through JNI).
    pub fn owned_monitors(&self, thread: jthread) -> Result<Vec<(jobject, jint)>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        // SAFETY: a thread reference (the `vm` convention); out-pointers to
        // two live locals.
        check(unsafe {
            jvmti_call!(
                self,
                GetOwnedMonitorStackDepthInfo,
                thread,
                &mut count,
                &mut ptr
            )
        })?;
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        };
        Ok(buf
            .as_slice()
            .iter()
            .map(|m| (m.monitor, m.stack_depth))
            .collect())
    }

    /// The identity hash of `object` (what `System.identityHashCode` gives).
    pub fn object_hash(&self, object: jobject) -> Result<jint> {
        let mut hash = 0;
        // SAFETY: an object reference (the `vm` convention); a live out-pointer.
        check(unsafe { jvmti_call!(self, GetObjectHashCode, object, &mut hash) })?;
        Ok(hash)
    }

    /// Who owns `object`'s monitor, how many times, and the threads waiting
    /// to enter it and to be notified (local references).
    pub fn monitor_usage(&self, object: jobject) -> Result<MonitorUsage> {
        let mut u = JvmtiMonitorUsage {
            owner: std::ptr::null_mut(),
            entry_count: 0,
            waiter_count: 0,
            waiters: std::ptr::null_mut(),
            notify_waiter_count: 0,
            notify_waiters: std::ptr::null_mut(),
        };
        // SAFETY: an object reference (the `vm` convention); a live out-pointer.
        check(unsafe { jvmti_call!(self, GetObjectMonitorUsage, object, &mut u) })?;
        let waiters = JvmtiBuf {
            jvmti: *self,
            ptr: u.waiters,
            len: u.waiter_count.max(0) as usize,
        };
        let notify = JvmtiBuf {
            jvmti: *self,
            ptr: u.notify_waiters,
            len: u.notify_waiter_count.max(0) as usize,
        };
        Ok(MonitorUsage {
            owner: (!u.owner.is_null()).then_some(u.owner),
            entry_count: u.entry_count,
            waiters: waiters.as_slice().to_vec(),
            notify_waiters: notify.as_slice().to_vec(),
        })
    }

    /// Starts `thread` (a `java.lang.Thread` the caller created) running `proc`
    /// as a JVMTI agent thread.
    ///
    /// # Safety
    /// `proc` must be sound to call on the new thread with this environment,
    /// that thread's JNIEnv and `arg`.
    pub(super) unsafe fn run_agent_thread(
        &self,
        thread: jthread,
        proc: unsafe extern "C" fn(*mut JvmtiEnv, *mut JNIEnv, *mut c_void),
        arg: *const c_void,
        priority: jint,
    ) -> Result<()> {
        // SAFETY: a new, unstarted Thread; `proc` is sound to call with `arg`
        // on the new thread (the caller's promise).
        check(unsafe { jvmti_call!(self, RunAgentThread, thread, Some(proc), arg, priority) })
    }
}

mod heap;
