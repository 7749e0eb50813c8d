//! Every function the VM calls. Each is a thin shell: rebuild the safe handles,
//! run the real work inside `guard` (no panic may cross into the JVM).

use crate::agent;
use crate::sampler::Sampler;
use crate::vm::sys::{JvmtiEnv, JvmtiEventCallbacks};
use crate::vm::{guard, install_panic_hook, jthread, Jni, VmHandle};
use jni_sys::{jclass, jint, jlong, jobject, JNIEnv, JavaVM, JNI_ERR, JNI_OK};
use std::ffi::{c_char, c_void, CStr};
use std::sync::Arc;

/// # Safety
/// Called by the JVM with a valid `vm` and a NUL-terminated (or null) option string.
#[no_mangle]
pub unsafe extern "C" fn Agent_OnLoad(
    vm: *mut JavaVM,
    options: *mut c_char,
    _reserved: *mut c_void,
) -> jint {
    install_panic_hook();
    // SAFETY: the JVM passes a NUL-terminated string (or null) that outlives this call.
    let opts = match unsafe { option_string(options) } {
        Ok(o) => o,
        Err((_, msg)) => {
            crate::log::error(&msg);
            return JNI_ERR;
        }
    };
    // SAFETY: the JavaVM the JVM passed to Agent_OnLoad (the caller's promise).
    let vm = unsafe { VmHandle::from_raw(vm) };
    guard("Agent_OnLoad", JNI_ERR, || {
        match agent::on_load(vm, opts.as_deref()) {
            Ok(()) => JNI_OK,
            Err(msg) => {
                crate::log::error(&msg);
                JNI_ERR
            }
        }
    })
}

/// # Safety
/// Called by the JVM's attach listener with a valid `vm` and a NUL-terminated
/// (or null) option string.
#[no_mangle]
pub unsafe extern "C" fn Agent_OnAttach(
    vm: *mut JavaVM,
    options: *mut c_char,
    _reserved: *mut c_void,
) -> jint {
    install_panic_hook();
    // SAFETY: as for Agent_OnLoad.
    let opts = match unsafe { option_string(options) } {
        Ok(o) => o,
        Err((lossy, msg)) => {
            guard("Agent_OnAttach", (), || agent::attach_refused(&lossy, &msg));
            return JNI_ERR;
        }
    };
    // SAFETY: the JavaVM the JVM passed to Agent_OnAttach (the caller's promise).
    let vm = unsafe { VmHandle::from_raw(vm) };
    guard("Agent_OnAttach", JNI_ERR, || {
        match agent::on_attach(vm, opts.as_deref()) {
            Ok(()) => JNI_OK,
            Err(_) => JNI_ERR, // already reported to stderr and the reply file
        }
    })
}

/// The option string, which must be UTF-8: a path in it (`file=`) is kept
/// byte for byte, so one that is not UTF-8 is refused rather than changed.
/// The error carries the string with bad bytes replaced (to find `reply=`)
/// and the message.
///
/// # Safety
/// `p` is null or a NUL-terminated string that outlives this call.
unsafe fn option_string(p: *const c_char) -> Result<Option<String>, (String, String)> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: guaranteed by the caller.
    let c = unsafe { CStr::from_ptr(p) };
    match c.to_str() {
        Ok(s) => Ok(Some(s.to_owned())),
        Err(e) => Err((
            c.to_string_lossy().into_owned(),
            format!(
                "the option string is not UTF-8 (byte {} is not): profrj keeps paths such as file= byte for byte and takes them only in UTF-8",
                e.valid_up_to()
            ),
        )),
    }
}

/// A class name from the VM (modified UTF-8, as good as UTF-8 for names).
///
/// # Safety
/// `p` is null or a NUL-terminated string that outlives this call.
unsafe fn class_name(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: guaranteed by the caller.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

/// # Safety
/// Called by the JVM as the library is unloaded.
#[no_mangle]
pub unsafe extern "C" fn Agent_OnUnload(_vm: *mut JavaVM) {}

pub fn callbacks() -> JvmtiEventCallbacks {
    JvmtiEventCallbacks {
        VMInit: Some(vm_init),
        VMDeath: Some(vm_death),
        ThreadStart: Some(thread_start),
        ThreadEnd: Some(thread_end),
        DataDumpRequest: Some(data_dump_request),
        ClassFileLoadHook: Some(class_file_load_hook),
        VMObjectAlloc: Some(vm_object_alloc),
        ClassLoad: Some(class_load),
        ClassPrepare: Some(class_prepare),
        CompiledMethodLoad: Some(compiled_method_load),
        ..Default::default()
    }
}

unsafe extern "C" fn vm_init(_jvmti: *mut JvmtiEnv, jni: *mut JNIEnv, thread: jthread) {
    guard("VMInit", (), || {
        if let Some(a) = agent::get() {
            a.on_vm_init(&Jni::from_raw(jni), thread)
        }
    })
}

unsafe extern "C" fn vm_death(_jvmti: *mut JvmtiEnv, jni: *mut JNIEnv) {
    guard("VMDeath", (), || {
        if let Some(a) = agent::get() {
            a.on_vm_death(&Jni::from_raw(jni))
        }
    })
}

unsafe extern "C" fn thread_start(_jvmti: *mut JvmtiEnv, jni: *mut JNIEnv, thread: jthread) {
    guard("ThreadStart", (), || {
        if let Some(a) = agent::get() {
            a.on_thread_start(&Jni::from_raw(jni), thread)
        }
    })
}

unsafe extern "C" fn thread_end(_jvmti: *mut JvmtiEnv, jni: *mut JNIEnv, thread: jthread) {
    guard("ThreadEnd", (), || {
        if let Some(a) = agent::get() {
            a.on_thread_end(&Jni::from_raw(jni), thread)
        }
    })
}

/// Enabled only because AsyncGetCallTrace refuses to walk without it.
unsafe extern "C" fn class_load(
    _jvmti: *mut JvmtiEnv,
    _jni: *mut JNIEnv,
    _thread: jthread,
    _class: jclass,
) {
}

unsafe extern "C" fn class_prepare(
    _jvmti: *mut JvmtiEnv,
    _jni: *mut JNIEnv,
    _thread: jthread,
    class: jclass,
) {
    guard("ClassPrepare", (), || {
        if let Some(a) = agent::get() {
            a.on_class_prepare(class)
        }
    })
}

/// Enabled only so that HotSpot's compilers keep debug information between
/// safepoints (what signal sampling needs to name inlined frames).
unsafe extern "C" fn compiled_method_load(
    _jvmti: *mut JvmtiEnv,
    _method: jni_sys::jmethodID,
    _code_size: jint,
    _code_addr: *const c_void,
    _map_length: jint,
    _map: *const c_void,
    _compile_info: *const c_void,
) {
}

unsafe extern "C" fn data_dump_request(_jvmti: *mut JvmtiEnv) {
    guard("DataDumpRequest", (), || {
        if let Some(a) = agent::get() {
            a.on_data_dump_request()
        }
    })
}

unsafe extern "C" fn vm_object_alloc(
    _jvmti: *mut JvmtiEnv,
    jni: *mut JNIEnv,
    thread: jthread,
    object: jobject,
    class: jclass,
    _size: jlong,
) {
    guard("VMObjectAlloc", (), || {
        if let Some(a) = agent::get() {
            a.on_vm_object_alloc(&Jni::from_raw(jni), thread, object, class)
        }
    })
}

/// An object the memory mode tagged was collected (its own environment's
/// event). Runs on a VM thread; calls nothing back.
pub unsafe extern "C" fn object_free(_jvmti: *mut JvmtiEnv, tag: jlong) {
    guard("ObjectFree", (), || crate::memory::object_freed(tag))
}

/// A GC starts (the memory mode's own environment, weak references). Runs
/// in the pause; calls no JNI or JVMTI.
pub unsafe extern "C" fn gc_start(_jvmti: *mut JvmtiEnv) {
    guard("GarbageCollectionStart", (), crate::memory::gc_started)
}

/// A GC finishes, still in the pause: the memory mode wakes its agent
/// thread to count what it freed.
pub unsafe extern "C" fn gc_finish(_jvmti: *mut JvmtiEnv) {
    guard("GarbageCollectionFinish", (), crate::memory::gc_finished)
}

/// Body of the `profrj memory` agent thread (counts each GC's frees and
/// deletes dead objects' weak references).
pub unsafe extern "C" fn memory_thread(_jvmti: *mut JvmtiEnv, jni: *mut JNIEnv, _arg: *mut c_void) {
    guard("memory thread", (), || {
        crate::memory::run_agent_thread(&Jni::from_raw(jni))
    })
}

/// The JNI interception hook (runs inside the VM's guard, see vm::jni_table).
pub fn jni_alloc(jni: *mut JNIEnv, object: jobject) {
    if let Some(a) = agent::get() {
        a.on_jni_alloc(&Jni::from_raw(jni), object)
    }
}

#[allow(clippy::too_many_arguments)]
unsafe extern "C" fn class_file_load_hook(
    _jvmti: *mut JvmtiEnv,
    jni: *mut JNIEnv,
    class_being_redefined: jclass,
    loader: jobject,
    name: *const c_char,
    _protection_domain: jobject,
    len: jint,
    data: *const u8,
    new_len: *mut jint,
    new_data: *mut *mut u8,
) {
    guard("ClassFileLoadHook", (), || {
        let Some(a) = agent::get() else { return };
        // SAFETY: the VM passes the class bytes (`len` of them) and a
        // NUL-terminated name or null, valid for this call.
        let bytes = unsafe { std::slice::from_raw_parts(data, len.max(0) as usize) };
        let name = unsafe { class_name(name) };
        let jni = Jni::from_raw(jni);
        if let Some(out) = a.instrumenter.transform(
            &jni,
            loader,
            name.as_deref(),
            bytes,
            class_being_redefined.is_null(),
        ) {
            if let Ok(p) = a.jvmti.allocate_copy(&out) {
                // SAFETY: out-parameters the VM gave us for this call.
                unsafe {
                    *new_len = out.len() as jint;
                    *new_data = p;
                }
            }
        }
    })
}

/// Body of a `profrj sampler` agent thread; `arg` is an `Arc<Sampler>` from
/// `Arc::into_raw`, whose reference this thread now owns.
pub unsafe extern "C" fn sampler_thread(_jvmti: *mut JvmtiEnv, jni: *mut JNIEnv, arg: *mut c_void) {
    // SAFETY: Sampler::start passes exactly one Arc reference per thread.
    let sampler = unsafe { Arc::from_raw(arg as *const Sampler) };
    guard("sampler thread", (), || {
        if let Some(a) = agent::get() {
            a.run_sampler(&Jni::from_raw(jni), &sampler)
        }
    })
}

/// Body of the `profrj control` agent thread.
pub unsafe extern "C" fn control_thread(
    _jvmti: *mut JvmtiEnv,
    jni: *mut JNIEnv,
    _arg: *mut c_void,
) {
    guard("control thread", (), || {
        if let Some(a) = agent::get() {
            a.run_control(&Jni::from_raw(jni))
        }
    })
}
