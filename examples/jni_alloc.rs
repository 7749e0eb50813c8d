//! A JNI library for the memory mode's test of objects made by native code
//! (tests/memory.rs, harness `JniAlloc`): `JniAlloc.make(Class, int)` returns
//! an `Object[]` of `n` new instances of the class, all made with JNI.

use jni_sys::{jclass, jint, jobjectArray, JNIEnv};

/// # Safety
/// Called by the JVM for `static native Object[] make(Class<?> c, int n)`.
#[no_mangle]
pub unsafe extern "system" fn Java_profrj_harness_JniAlloc_make(
    env: *mut JNIEnv,
    _class: jclass,
    of: jclass,
    n: jint,
) -> jobjectArray {
    // SAFETY: `env` is this thread's JNIEnv for the duration of the call.
    let table = unsafe { &**env };
    let (Some(find), Some(new_array), Some(alloc), Some(set)) = (
        table.FindClass,
        table.NewObjectArray,
        table.AllocObject,
        table.SetObjectArrayElement,
    ) else {
        return std::ptr::null_mut();
    };
    // SAFETY: valid env; a NUL-terminated class name.
    let object = unsafe { find(env, c"java/lang/Object".as_ptr()) };
    // SAFETY: valid env and element class; n is the caller's non-negative count.
    let array = unsafe { new_array(env, n, object, std::ptr::null_mut()) };
    for i in 0..n {
        // SAFETY: `of` is a concrete class with a no-argument shape (AllocObject
        // runs no constructor); the array has `n` elements.
        unsafe {
            let o = alloc(env, of);
            set(env, array, i, o);
        }
    }
    array
}
