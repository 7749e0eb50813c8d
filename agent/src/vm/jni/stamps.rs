//! The JNI calls of the memory mode's stamps: a class's superclass, and
//! native memory shown to Java as a direct buffer.

use super::Jni;
use jni_sys::{jclass, jobject};

impl Jni {
    /// The superclass of `class` as a local reference; null for
    /// `java.lang.Object`, an interface or a primitive type.
    pub fn superclass(&self, class: jclass) -> jclass {
        // SAFETY: this thread's env; `class` is a live class reference (the
        // `vm` convention).
        unsafe { (jni_fn!(self, GetSuperclass))(self.env, class) }
    }

    /// A direct `java.nio.ByteBuffer` over `len` bytes at `at`, as a local
    /// reference (null when the VM cannot make one).
    ///
    /// # Safety
    /// The memory must stay allocated and writable for as long as the VM
    /// lives (Java code may read and write it through the buffer at any
    /// time), and whatever else reads or writes it must expect Java's plain
    /// loads and stores.
    pub unsafe fn direct_buffer(&self, at: *mut u8, len: usize) -> jobject {
        let Ok(len) = jni_sys::jlong::try_from(len) else {
            return std::ptr::null_mut();
        };
        // SAFETY: this thread's env; the memory outlives the buffer (the
        // caller's promise).
        let buffer = unsafe { (jni_fn!(self, NewDirectByteBuffer))(self.env, at.cast(), len) };
        if self.check_exception("making a direct buffer").is_err() {
            return std::ptr::null_mut();
        }
        buffer
    }
}
