//! Safe wrapper over the few JNI functions the agent uses. A `Jni` is bound to
//! the thread the VM handed it to and is deliberately neither `Send` nor `Sync`.
//! References passed in follow the convention of `vm` (live, of the class
//! their type names); a method that needs more is an `unsafe fn`.
//!
//! The type, how a function of its table is looked up, and how a pending
//! exception becomes an error are here; the methods are in the files beside
//! this one, by what they deal with: `references.rs` (local frames, local,
//! global and weak references), `classes.rs` (classes found or defined,
//! natives bound, method and field ids), `objects.rs` (strings, arrays,
//! fields, direct buffers), `calls.rs` (Java methods called, system
//! properties), `threads.rs` (`Thread` objects: made, their ids, virtual or
//! not).

use super::handles::VmHandle;
use jni_sys::{jint, JNIEnv};
use std::marker::PhantomData;

/// A native method to bind: (name, descriptor, function).
pub type Native = (&'static str, &'static str, *mut std::ffi::c_void);

/// Local references a frame can promise (HotSpot's MaxJNILocalCapacity):
/// for frames around JVMTI calls that return one reference per class or
/// module, whose count is unknown beforehand. Promising less makes
/// `-Xcheck:jni` print a warning on the application's stdout.
pub const MAX_LOCAL_FRAME: jint = 65_536;

/// The calling thread's JNIEnv. Invariant (from [`Jni::from_raw`]): `env` is
/// the JNIEnv of the thread this value lives on, valid while it is used.
pub struct Jni {
    pub(super) env: *mut JNIEnv,
    _not_send: PhantomData<*mut ()>,
}

/// A pending Java exception, already cleared; the text says what failed.
#[derive(Debug, Clone)]
pub struct JavaException(pub String);

impl std::fmt::Display for JavaException {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for JavaException {}

impl Jni {
    /// The JNIEnv of the current thread, which must be a Java thread (the
    /// attach listener is one); GetEnv's error code otherwise.
    pub fn from_vm(vm: VmHandle) -> Result<Self, jint> {
        let env = vm.get_env(jni_sys::JNI_VERSION_1_6)?;
        // SAFETY: GetEnv answered the calling thread's own JNIEnv, valid while
        // the thread stays attached, and a `Jni` cannot leave the thread.
        Ok(unsafe { Self::from_raw(env.as_ptr().cast()) })
    }

    /// Wraps the JNIEnv the VM passed to a callback or native method.
    ///
    /// # Safety
    /// `env` must be the calling thread's JNIEnv (the one the VM passed to
    /// the function running now, on this thread), and the result must not be
    /// used after the thread detaches from the VM.
    pub unsafe fn from_raw(env: *mut JNIEnv) -> Self {
        Self {
            env,
            _not_send: PhantomData,
        }
    }

    /// The JNIEnv itself, for code that keeps it only as long as this `Jni`.
    pub fn as_raw(&self) -> *mut JNIEnv {
        self.env
    }

    fn table(&self) -> &jni_sys::JNINativeInterface_ {
        // SAFETY: `env` is this thread's JNIEnv (the invariant of `Jni`): it
        // points to the VM's function table, which lives as long as the VM.
        unsafe { &**self.env }
    }
}

/// Looks up a JNI function; every JVM fills every slot of JNI 1.2+, so a null
/// one is a broken VM (the panic is caught by the callback guard).
macro_rules! jni_fn {
    ($self:expr, $name:ident) => {
        $self
            .table()
            .$name
            .expect(concat!("JNI function ", stringify!($name), " missing"))
    };
}

// The methods, by topic (after the macro: they call it).
mod calls;
mod classes;
mod diagnostic;
pub mod heap_dump;
mod objects;
mod references;
mod threads;

impl Jni {
    /// Clears a pending exception; `Err` names what was being done.
    fn check_exception(&self, what: &str) -> Result<(), JavaException> {
        // SAFETY: this thread's env (the invariant of `Jni`); no other argument.
        let pending = unsafe { (jni_fn!(self, ExceptionCheck))(self.env) } != 0;
        if pending {
            // SAFETY: this thread's env; clearing is allowed with an exception pending.
            unsafe { (jni_fn!(self, ExceptionClear))(self.env) };
            return Err(JavaException(format!("Java exception while {what}")));
        }
        Ok(())
    }

    /// The VM's JNI version (`JNI_VERSION_*`).
    pub fn version(&self) -> jint {
        // SAFETY: this thread's env; no other argument.
        unsafe { (jni_fn!(self, GetVersion))(self.env) }
    }
}
