//! What this environment may do and what the VM tells it: capabilities,
//! event callbacks, which events are on, events replayed for what happened
//! before, the heap sampling interval, and the JNI function table swapped.
//! Apart from the other files' queries: these set up how and when the VM
//! calls the agent back.

use super::{check, Jvmti, Result};
use crate::vm::sys::{
    JvmtiCapabilities, JvmtiError, JvmtiEvent, JvmtiEventCallbacks, JvmtiEventMode,
};
use jni_sys::jint;

impl Jvmti {
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

    /// Makes the VM send `event` for what already happened: every compiled
    /// method (COMPILED_METHOD_LOAD) or every piece of generated code
    /// (DYNAMIC_CODE_GENERATED), to this environment's callbacks.
    pub fn generate_events(&self, event: JvmtiEvent) -> Result<()> {
        // SAFETY: an event number the VM checks.
        check(unsafe { jvmti_call!(self, GenerateEvents, event) })
    }

    /// Sets the mean bytes between SampledObjectAlloc events (0: every object).
    pub fn set_heap_sampling_interval(&self, bytes: u32) -> Result<()> {
        let bytes = bytes.min(jint::MAX as u32) as jint;
        // SAFETY: any non-negative jint is a valid interval.
        check(unsafe { jvmti_call!(self, SetHeapSamplingInterval, bytes) })
    }

    /// JVMTI GetJNIFunctionTable: a copy of the JNI table, to `deallocate`.
    pub(in crate::vm) fn call_get_jni_function_table(
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
    pub(in crate::vm) unsafe fn call_set_jni_function_table(
        &self,
        table: &jni_sys::JNINativeInterface_,
    ) -> JvmtiError {
        // SAFETY: `table` is read during the call (the VM copies it); its
        // functions behave as JNI's (the caller's promise).
        unsafe { jvmti_call!(self, SetJNIFunctionTable, table) }
    }
}
