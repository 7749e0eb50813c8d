//! References and their frames: local references deleted or made, a local
//! frame around work that makes many, global references kept for the VM's
//! life, weak global ones, and references compared.

use super::Jni;
use crate::vm::handles::GlobalRef;
use jni_sys::{jint, jobject};

/// HotSpot's `MaxJNILocalCapacity` by default: `PushLocalFrame` refuses a
/// larger capacity (and pushes no frame). Capacities sized by the threads
/// ever seen pass it after some 20,000 ended threads; a frame holds more
/// references than its capacity anyway (the capacity only reserves).
const MAX_LOCAL_CAPACITY: jint = 65_536;

impl Jni {
    /// Runs `f` inside a fresh JNI local frame, so the local references it
    /// creates (stack traces, classes, threads) are released when it returns.
    /// Long-running agent threads never return to Java, so without this every
    /// local reference would leak. `capacity` is capped at
    /// [`MAX_LOCAL_CAPACITY`].
    pub fn with_local_frame<R>(&self, capacity: jint, f: impl FnOnce() -> R) -> R {
        let capacity = capacity.clamp(0, MAX_LOCAL_CAPACITY);
        // SAFETY: this thread's env; any capacity is allowed (the VM fails
        // the call, with an exception, when it cannot reserve it).
        let pushed = unsafe { (jni_fn!(self, PushLocalFrame))(self.env, capacity) } == 0;
        let r = f();
        if pushed {
            // SAFETY: pops the frame pushed above, on the same thread; a null
            // result reference is allowed.
            unsafe { (jni_fn!(self, PopLocalFrame))(self.env, std::ptr::null_mut()) };
        } else {
            let _ = self.check_exception("reserving JNI local references");
        }
        r
    }

    /// Tells the VM this frame will hold `n` more local references (JVMTI calls
    /// such as GetAllThreads create one per thread).
    pub fn ensure_local_capacity(&self, n: usize) {
        let n = n.min(i32::MAX as usize) as jint;
        // SAFETY: this thread's env; any capacity is allowed (the VM fails
        // the call, with an exception, when it cannot reserve it).
        if unsafe { (jni_fn!(self, EnsureLocalCapacity))(self.env, n) } != 0 {
            let _ = self.check_exception("reserving JNI local references");
        }
    }

    /// A new local reference to `obj` (e.g. a global one, to return to Java).
    pub fn new_local_ref(&self, obj: jobject) -> jobject {
        // SAFETY: this thread's env; `obj` is a live reference or null.
        unsafe { (jni_fn!(self, NewLocalRef))(self.env, obj) }
    }

    pub fn delete_local_ref(&self, obj: jobject) {
        if !obj.is_null() {
            // SAFETY: this thread's env; `obj` is a live local reference of
            // this thread (the `vm` convention), not used after this.
            unsafe { (jni_fn!(self, DeleteLocalRef))(self.env, obj) }
        }
    }

    /// A global reference to `obj`, kept for the VM's life; `None` for a
    /// null `obj` or when the VM is out of memory.
    pub fn new_global_ref(&self, obj: jobject) -> Option<GlobalRef> {
        // SAFETY: this thread's env; `obj` a live reference or null.
        let global = unsafe { (jni_fn!(self, NewGlobalRef))(self.env, obj) };
        // SAFETY: a global reference NewGlobalRef just made, which nothing
        // deletes (the agent keeps them all for the VM's life).
        std::ptr::NonNull::new(global).map(|g| unsafe { GlobalRef::new(g) })
    }

    /// A weak global reference to `obj` (null when the VM has no room).
    pub fn new_weak_global_ref(&self, obj: jobject) -> jobject {
        // SAFETY: this thread's env; `obj` is a live reference or null.
        unsafe { (jni_fn!(self, NewWeakGlobalRef))(self.env, obj) }
    }

    /// Frees a weak global reference made by `new_weak_global_ref`.
    pub fn delete_weak_global_ref(&self, weak: jobject) {
        // SAFETY: this thread's env; `weak` is a weak global reference not
        // deleted yet (the `vm` convention: a live reference), not used after.
        unsafe { (jni_fn!(self, DeleteWeakGlobalRef))(self.env, weak) }
    }

    pub fn is_same_object(&self, a: jobject, b: jobject) -> bool {
        // SAFETY: this thread's env; both are live references or null.
        unsafe { (jni_fn!(self, IsSameObject))(self.env, a, b) != 0 }
    }
}
