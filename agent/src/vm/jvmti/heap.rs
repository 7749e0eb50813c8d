//! The JVMTI functions of the memory mode's stamps and heap census: what a
//! class declares and implements, its package opened to the agent's
//! runtime, and one pass over the heap.

use super::{check, Jvmti, JvmtiBuf, Result};
use crate::vm::sys::{JvmtiError, JvmtiHeapCallbacks, JVMTI_HEAP_FILTER_CLASS_UNTAGGED};
use jni_sys::{jclass, jfieldID, jint, jobject};
use std::ffi::c_void;

impl Jvmti {
    /// The fields `class` declares (static ones too, not inherited ones),
    /// in the order of its class file.
    pub fn class_fields(&self, class: jclass) -> Result<Vec<jfieldID>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        // SAFETY: a class reference (the `vm` convention); out-pointers to two live locals.
        check(unsafe { jvmti_call!(self, GetClassFields, class, &mut count, &mut ptr) })?;
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        };
        Ok(buf.as_slice().to_vec())
    }

    /// `(name, descriptor)` of a field of `class`.
    pub fn field_name(&self, class: jclass, field: jfieldID) -> Result<(String, String)> {
        let mut name = std::ptr::null_mut();
        let mut sig = std::ptr::null_mut();
        // SAFETY: a class reference and one of its fields (`class_fields`);
        // out-pointers to two live locals, null for the generic signature (allowed).
        check(unsafe {
            jvmti_call!(
                self,
                GetFieldName,
                class,
                field,
                &mut name,
                &mut sig,
                std::ptr::null_mut()
            )
        })?;
        // SAFETY: GetFieldName allocated both strings for us.
        Ok(unsafe { (self.take_string(name), self.take_string(sig)) })
    }

    /// The interfaces `class` names in its declaration (an interface: those
    /// it extends), as local references.
    pub fn implemented_interfaces(&self, class: jclass) -> Result<Vec<jclass>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        // SAFETY: a class reference (the `vm` convention); out-pointers to two live locals.
        check(unsafe { jvmti_call!(self, GetImplementedInterfaces, class, &mut count, &mut ptr) })?;
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        };
        Ok(buf.as_slice().to_vec())
    }

    /// Opens package `package` (dotted, `com.acme.model`) of `module` to
    /// module `to` (deep reflection, `setAccessible`), as `--add-opens`
    /// would. No effect on an unnamed or open module.
    pub fn add_module_opens(&self, module: jobject, package: &str, to: jobject) -> Result<()> {
        let package = std::ffi::CString::new(package).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)?;
        // SAFETY: two module references (the `vm` convention; the VM checks
        // that they are modules) and a NUL-terminated name alive for the call.
        check(unsafe { jvmti_call!(self, AddModuleOpens, module, package.as_ptr(), to) })
    }

    /// One pass over the heap (a VM operation: every Java thread stops),
    /// calling `callbacks` for each object whose class this environment
    /// tagged (and, with `only`, that is an instance of that class), on the
    /// VM thread, with `data`. Needs `can_tag_objects`.
    ///
    /// # Safety
    /// Each callback must be sound to call as JVMTI calls its slot, with
    /// `data`, on the VM thread inside the operation (no JNI, no JVMTI, no
    /// lock a Java thread may hold), until this returns.
    pub unsafe fn iterate_classes_tagged(
        &self,
        callbacks: &JvmtiHeapCallbacks,
        only: Option<jclass>,
        data: *const c_void,
    ) -> Result<()> {
        let filter: jint = JVMTI_HEAP_FILTER_CLASS_UNTAGGED;
        let only = only.unwrap_or(std::ptr::null_mut());
        // SAFETY: `callbacks` and `data` are what the callbacks expect (the
        // caller's promise), both alive for the call; `only` a class
        // reference (the `vm` convention) or null.
        check(unsafe { jvmti_call!(self, IterateThroughHeap, filter, only, callbacks, data) })
    }
}
