//! `java.lang.Thread` objects: one made for an agent thread, a thread's id
//! read from its field, and whether it is virtual (JNI 21's function, found
//! by its slot).

use super::{JavaException, Jni};
use jni_sys::{jint, jobject, jvalue, JNIEnv};

impl Jni {
    /// `new java.lang.Thread(name)`, not started: the object RunAgentThread needs.
    pub fn new_thread_object(&self, name: &str) -> Result<jobject, JavaException> {
        let class = self.find_class("java/lang/Thread")?;
        let ctor = self.method_id(class, "<init>", "(Ljava/lang/String;)V")?;
        let jname = self.new_string(name)?;
        let args = [jvalue { l: jname }];
        // SAFETY: `ctor` is the constructor Thread(String) of `class`, a
        // concrete class; `args` is one String, as its descriptor says.
        let obj = unsafe { (jni_fn!(self, NewObjectA))(self.env, class, ctor, args.as_ptr()) };
        self.check_exception("creating the profrj thread")?;
        if obj.is_null() {
            return Err(JavaException(
                "creating the profrj thread returned null".into(),
            ));
        }
        Ok(obj)
    }

    /// `Thread.threadId()` of `thread` (a live `Thread` reference), read
    /// from its `tid` field without running Java code.
    pub fn java_thread_id(&self, thread: jobject) -> Option<i64> {
        let class = self.find_class("java/lang/Thread").ok()?;
        let field = self.field_id(class, "tid", "J");
        let ok = !thread.is_null() && self.is_instance_of(thread, class);
        self.delete_local_ref(class);
        let field = field.ok()?;
        // SAFETY: `thread` is a live, non-null Thread (checked above) and
        // `field` a `long` field of Thread.
        ok.then(|| unsafe { self.long_field(thread, field) })
    }

    /// Is `thread` (a live `Thread` reference) a virtual thread? Always
    /// false before JNI 21 (JDK 21), which has none.
    pub fn is_virtual_thread(&self, thread: jobject) -> bool {
        const JNI_VERSION_21: jint = 0x0015_0000;
        /// `IsVirtualThread`'s slot in the JNI 21 function table (jni.h:
        /// after `GetModule`, 233).
        const IS_VIRTUAL_THREAD: usize = 234;
        if self.version() < JNI_VERSION_21 {
            return false;
        }
        type IsVirtual = unsafe extern "system" fn(*mut JNIEnv, jobject) -> jni_sys::jboolean;
        // SAFETY: `env` points to the VM's function table (the invariant of
        // `Jni`), an array of pointers; a JNI 21 VM (checked above) has
        // `IsVirtualThread` at slot 234, a function of that signature.
        let f = unsafe {
            let table = *self.env as *const Option<IsVirtual>;
            *table.add(IS_VIRTUAL_THREAD)
        };
        // SAFETY: this thread's env and a live thread reference.
        f.is_some_and(|f| unsafe { f(self.env, thread) } != 0)
    }
}
