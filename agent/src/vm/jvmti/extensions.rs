//! The JVM's own functions and events beyond the JVMTI specification, looked
//! up by name (HotSpot's `GetVirtualThread`, `VirtualThreadMount`, ...):
//! their tables, whose every entry is a separate allocation to free, and the
//! calls that go through them.

use super::{check, Jvmti, JvmtiBuf, Result};
use crate::vm::sys::{
    jthread, EventVirtualThread, JvmtiError, JvmtiExtensionEventInfo, JvmtiExtensionFunction,
    JvmtiExtensionFunctionInfo, JvmtiParamInfo,
};
use jni_sys::jint;
use std::ffi::{c_char, CStr};

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

impl Jvmti {
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
}
