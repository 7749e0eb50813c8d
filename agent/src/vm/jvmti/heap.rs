//! Objects and the heap: tags, identity hashes, a full collection, and one
//! pass over the heap or over what its roots reach (the memory mode's census).

use super::{check, Jvmti, Result};
use crate::vm::sys::{JvmtiHeapCallbacks, JVMTI_HEAP_FILTER_CLASS_UNTAGGED};
use jni_sys::{jclass, jint, jlong, jobject};
use std::ffi::c_void;

impl Jvmti {
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

    /// The object's identity hash code (JVMTI GetObjectHashCode: no
    /// safepoint, no allocation).
    pub fn object_hash_code(&self, object: jobject) -> Result<i32> {
        let mut hash = 0;
        // SAFETY: an object reference (the `vm` convention) and a live out-pointer.
        check(unsafe { jvmti_call!(self, GetObjectHashCode, object, &mut hash) })?;
        Ok(hash)
    }

    /// A full garbage collection, now (the memory mode's snapshot: only
    /// objects still reachable count as live).
    pub fn force_garbage_collection(&self) -> Result<()> {
        // SAFETY: no arguments.
        check(unsafe { jvmti_call!(self, ForceGarbageCollection) })
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

    /// Every object the heap's roots reach, once each, from the roots
    /// (JVMTI FollowReferences, no filter: a VM operation, every Java
    /// thread stopped): `callbacks` for each reference and each object's
    /// primitive fields, on the VM thread, with `data`. Unlike a pass over
    /// the heap, it never visits an object that only a weak root (a JNI
    /// weak reference, a tag) still holds. Needs `can_tag_objects`.
    ///
    /// # Safety
    /// As [`Jvmti::iterate_classes_tagged`]'s.
    pub unsafe fn follow_references(
        &self,
        callbacks: &JvmtiHeapCallbacks,
        data: *const c_void,
    ) -> Result<()> {
        let (none, from_roots) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: as in `iterate_classes_tagged`; no class filter and no
        // initial object (null: from the roots).
        check(unsafe { jvmti_call!(self, FollowReferences, 0, none, from_roots, callbacks, data) })
    }
}
