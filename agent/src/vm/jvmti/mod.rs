//! Safe wrapper over the JVMTI environment. Every raw JVMTI call of the agent
//! goes through a method here; the rest of the agent never sees a raw pointer
//! except as an opaque handle (`jthread`, `jmethodID`), which follows the
//! convention of `vm`. Methods whose arguments the VM will call or free
//! (callbacks, thread bodies, function tables, memory) are `unsafe fn`.
//!
//! The type, how a function of its table is called, and the memory and
//! strings the VM hands back are here; the methods are in the files beside
//! this one, by what they deal with: `events.rs` (capabilities, callbacks,
//! which events come), `threads.rs` (threads, their stacks and their
//! storage), `classes.rs` (classes, their fields and modules), `methods.rs`
//! (methods and their lines), `monitors.rs` (who holds or waits for a
//! monitor), `heap.rs` (tags, identity hashes, the collector and a pass over
//! the heap), `extensions.rs` (HotSpot's own functions and events).

use super::handles::VmHandle;
use super::sys::{JvmtiEnv, JvmtiError, JvmtiInterface, JVMTI_VERSION_1_2};
use jni_sys::{jint, jlong};
use profrj_format::names::decode_modified_utf8;
use std::ffi::{c_char, CStr};
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
/// jvmti.h declares (the layout asserts of sys/table.rs pin its place).
macro_rules! jvmti_call {
    ($self:expr, $name:ident $(, $arg:expr)* $(,)?) => {
        match $self.table().$name {
            Some(f) => f($self.env $(, $arg)*),
            None => $crate::vm::sys::JvmtiError::NOT_AVAILABLE,
        }
    };
}

// The methods, by topic (after the macro: they call it).
mod classes;
mod events;
mod extensions;
mod heap;
mod methods;
mod monitors;
mod threads;

fn check(err: JvmtiError) -> Result<()> {
    if err == JvmtiError::NONE {
        Ok(())
    } else {
        Err(err)
    }
}

/// Memory the VM allocated for us, given back with `Deallocate` on drop.
/// Made only in `jvmti/`, with `ptr` either null or an array of `len`
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

    /// A system property of the VM (`java.vm.name`, …), as set at start-up.
    pub fn system_property(&self, key: &str) -> Result<String> {
        let key = std::ffi::CString::new(key).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)?;
        let mut value = std::ptr::null_mut();
        // SAFETY: a NUL-terminated key that outlives the call; a live out-pointer.
        check(unsafe { jvmti_call!(self, GetSystemProperty, key.as_ptr(), &mut value) })?;
        // SAFETY: GetSystemProperty allocated the value for us.
        Ok(unsafe { self.take_string(value) })
    }
}
