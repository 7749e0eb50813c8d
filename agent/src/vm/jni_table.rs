//! JNI function interception (JVMTI Get/SetJNIFunctionTable), which is how
//! the JVMTI specification says to see objects native code makes: no event
//! reports them. Every JNI function that makes an object or array (but the
//! C-variadic `NewObject`, which stable Rust cannot define) is replaced by a
//! wrapper that calls the VM's own and then hands the new object to a hook.

use super::sys::JvmtiError;
use super::{Jni, Jvmti};
use jni_sys::{
    jarray, jclass, jint, jmethodID, jobject, jobjectArray, jsize, jvalue, va_list, JNIEnv,
    JNINativeInterface_,
};
use std::cell::Cell;
use std::sync::OnceLock;

/// Called with each object made through an intercepted function, on the
/// thread that made it (whose `Jni` it gets), with no exception pending.
pub type AllocHook = fn(jni: &Jni, object: jobject);

/// JNI's function table as far as the agent knows it: jni-sys's (to
/// `GetModule`, JNI 9) and JNI 21's `IsVirtualThread`. SetJNIFunctionTable
/// copies as many slots as the VM's own table has from the one it is
/// given: JDK 21's is one longer than jni-sys's.
#[repr(C)]
#[derive(Clone, Copy)]
struct Table {
    base: JNINativeInterface_,
    /// JNI 21's `IsVirtualThread` (null before JNI 21).
    is_virtual_thread: *mut std::ffi::c_void,
}

// jni.h: `IsVirtualThread` is slot 234, the table's last.
const _: () = assert!(std::mem::offset_of!(Table, is_virtual_thread) == 234 * 8);
const _: () = assert!(std::mem::size_of::<Table>() == 235 * 8);

/// JNI 21 (JDK 21): the table gains `IsVirtualThread`.
const JNI_VERSION_21: jint = 0x0015_0000;
/// The newest JNI version whose table is [`Table`] (JDK 24 and 25 report
/// JNI 24, which added no function).
const JNI_NEWEST_KNOWN: jint = 0x0018_0000;

struct Intercepted {
    /// The VM's own table, as it was before.
    original: Table,
    hook: AllocHook,
}

// SAFETY: the table holds function pointers, callable from any thread, and
// the VM's reserved slots, which the agent never reads; it is written once,
// before it is shared, and then only read.
unsafe impl Sync for Intercepted {}
// SAFETY: as above: nothing in it belongs to a thread.
unsafe impl Send for Intercepted {}

static STATE: OnceLock<Intercepted> = OnceLock::new();

thread_local! {
    /// Set while a hook runs: JNI it calls is not reported again.
    static IN_HOOK: Cell<bool> = const { Cell::new(false) };
}

/// Replaces the JNI allocation functions of every thread (once per VM).
/// `jni` (the calling thread's) tells the VM's JNI version, hence its
/// table's length.
pub fn intercept_allocations(
    jvmti: Jvmti,
    jni: &Jni,
    hook: AllocHook,
) -> Result<(), super::VmError> {
    if STATE.get().is_some() {
        return Ok(());
    }
    let version = jni.version();
    if version > JNI_NEWEST_KNOWN {
        return Err(super::VmError::Missing(format!(
            "JNI version {version:#x} is newer than profrj knows: its function table may be longer"
        )));
    }
    let mut table: *mut JNINativeInterface_ = std::ptr::null_mut();
    let rc = jvmti.call_get_jni_function_table(&mut table);
    if rc != JvmtiError::NONE || table.is_null() {
        return Err(super::VmError::jvmti(jvmti, "GetJNIFunctionTable", rc));
    }
    // SAFETY: the VM allocated and filled this copy of its table for us: a
    // live, initialised JNINativeInterface_ (a struct of plain pointers, so
    // the copy owns nothing), followed on JNI 21+ (checked) by
    // IsVirtualThread, in the same allocation.
    let original = unsafe {
        Table {
            base: std::ptr::read(table),
            is_virtual_thread: match version >= JNI_VERSION_21 {
                true => std::ptr::read(table.add(1).cast()),
                false => std::ptr::null_mut(),
            },
        }
    };
    // SAFETY: GetJNIFunctionTable allocated it; freed once, not used after.
    unsafe { jvmti.deallocate(table.cast()) };
    let mut whole = original;
    let ours = &mut whole.base;
    ours.AllocObject = Some(alloc_object);
    ours.NewObjectV = Some(new_object_v);
    ours.NewObjectA = Some(new_object_a);
    ours.NewObjectArray = Some(new_object_array);
    ours.NewBooleanArray = Some(new_boolean_array);
    ours.NewByteArray = Some(new_byte_array);
    ours.NewCharArray = Some(new_char_array);
    ours.NewShortArray = Some(new_short_array);
    ours.NewIntArray = Some(new_int_array);
    ours.NewLongArray = Some(new_long_array);
    ours.NewFloatArray = Some(new_float_array);
    ours.NewDoubleArray = Some(new_double_array);
    if STATE.set(Intercepted { original, hook }).is_err() {
        return Ok(());
    }
    // SAFETY: `whole` is the VM's table, as long as the VM's own (its JNI
    // version, checked above), with the allocation functions replaced by
    // wrappers of the same signatures that call the VM's own (from STATE,
    // set above) and return what it returned.
    let rc = unsafe { jvmti.call_set_jni_function_table(&whole.base) };
    if rc != JvmtiError::NONE {
        return Err(super::VmError::jvmti(jvmti, "SetJNIFunctionTable", rc));
    }
    Ok(())
}

fn state() -> &'static Intercepted {
    STATE
        .get()
        .expect("wrappers are installed only after STATE is set")
}

/// Hands a new object to the hook, unless one is running on this thread.
///
/// # Safety
/// `env` must be the calling thread's JNIEnv, and `object` null or a live
/// local reference of it: what an intercepted function got and returned.
unsafe fn report(env: *mut JNIEnv, object: jobject) -> jobject {
    if object.is_null() || IN_HOOK.with(Cell::get) {
        return object;
    }
    IN_HOOK.with(|f| f.set(true));
    let hook = state().hook;
    // SAFETY: `env` is this thread's JNIEnv (the caller's promise), and the
    // `Jni` lives only for this call.
    let jni = unsafe { Jni::from_raw(env) };
    super::guard("JNI allocation hook", (), || hook(&jni, object));
    IN_HOOK.with(|f| f.set(false));
    object
}

macro_rules! original {
    ($name:ident) => {
        state()
            .original
            .base
            .$name
            .expect(concat!("the VM's JNI ", stringify!($name)))
    };
}

/// What JNI code calls for AllocObject.
///
/// # Safety
/// AllocObject's own contract: `env` is the calling thread's JNIEnv, the other
/// arguments are valid for the VM's function.
unsafe extern "system" fn alloc_object(env: *mut JNIEnv, class: jclass) -> jobject {
    // SAFETY: the VM's own function, with the arguments the caller gave
    // (valid for it: the contract above); then `report` gets this thread's
    // env and the reference the VM returned.
    unsafe { report(env, original!(AllocObject)(env, class)) }
}

/// What JNI code calls for NewObjectV.
///
/// # Safety
/// NewObjectV's own contract: `env` is the calling thread's JNIEnv, the other
/// arguments are valid for the VM's function.
unsafe extern "system" fn new_object_v(
    env: *mut JNIEnv,
    class: jclass,
    method: jmethodID,
    args: va_list,
) -> jobject {
    // SAFETY: as in `alloc_object`; the va_list is passed through untouched.
    unsafe { report(env, original!(NewObjectV)(env, class, method, args)) }
}

/// What JNI code calls for NewObjectA.
///
/// # Safety
/// NewObjectA's own contract: `env` is the calling thread's JNIEnv, the other
/// arguments are valid for the VM's function.
unsafe extern "system" fn new_object_a(
    env: *mut JNIEnv,
    class: jclass,
    method: jmethodID,
    args: *const jvalue,
) -> jobject {
    // SAFETY: as in `alloc_object`.
    unsafe { report(env, original!(NewObjectA)(env, class, method, args)) }
}

/// What JNI code calls for NewObjectArray.
///
/// # Safety
/// NewObjectArray's own contract: `env` is the calling thread's JNIEnv, the other
/// arguments are valid for the VM's function.
unsafe extern "system" fn new_object_array(
    env: *mut JNIEnv,
    len: jsize,
    class: jclass,
    init: jobject,
) -> jobjectArray {
    // SAFETY: as in `alloc_object`.
    unsafe { report(env, original!(NewObjectArray)(env, len, class, init)) }
}

macro_rules! primitive_array {
    ($wrapper:ident, $name:ident) => {
        #[doc = concat!("What JNI code calls for ", stringify!($name), ".")]
        ///
        /// # Safety
        /// The JNI function's own contract: `env` is the calling thread's JNIEnv.
        unsafe extern "system" fn $wrapper(env: *mut JNIEnv, len: jsize) -> jarray {
            // SAFETY: as in `alloc_object`.
            unsafe { report(env, original!($name)(env, len)) }
        }
    };
}

primitive_array!(new_boolean_array, NewBooleanArray);
primitive_array!(new_byte_array, NewByteArray);
primitive_array!(new_char_array, NewCharArray);
primitive_array!(new_short_array, NewShortArray);
primitive_array!(new_int_array, NewIntArray);
primitive_array!(new_long_array, NewLongArray);
primitive_array!(new_float_array, NewFloatArray);
primitive_array!(new_double_array, NewDoubleArray);
