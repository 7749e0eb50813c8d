//! Every function the VM calls. Each is a thin shell: rebuild the safe handles,
//! run the real work inside `guard` (no panic may cross into the JVM).
//!
//! A function that reads a pointer the VM passes is an `unsafe extern fn`
//! whose `# Safety` says which call of the VM it is written for; what the
//! VM guarantees for that call is what makes its handles sound.

use crate::agent;
use crate::code_map;
use crate::events::Allocation;
use crate::host::{self, Edge, ThreadBody};
use crate::vm::sys::{JvmtiEnv, JvmtiEventCallbacks};
use crate::vm::{guard, install_panic_hook, jthread, Jni, VmHandle};
use jni_sys::{jclass, jint, jlong, jobject, JNIEnv, JavaVM, JNI_ERR, JNI_OK};
use std::ffi::{c_char, c_void, CStr};

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
        match agent::on_load(vm, opts.as_deref(), &EDGE) {
            Ok(()) => JNI_OK,
            Err(e) => {
                crate::log::error(&e.to_string());
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
    // SAFETY: the JVM passes a NUL-terminated string (or null) that outlives this call.
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
        match agent::on_attach(vm, opts.as_deref(), &EDGE) {
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
    // SAFETY: non-null (checked above), NUL-terminated and alive for the
    // call (the caller's promise).
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

/// A name from the VM: a class, a stub (modified UTF-8, as good as UTF-8 for names).
///
/// # Safety
/// `p` is null or a NUL-terminated string that outlives this call.
unsafe fn vm_string(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: non-null (checked above), NUL-terminated and alive for the
        // call (the caller's promise).
        let bytes = unsafe { CStr::from_ptr(p) }.to_bytes();
        Some(profrj_format::names::decode_modified_utf8(bytes))
    }
}

/// Called by the JVM as the library is unloaded; reads nothing.
#[no_mangle]
pub extern "C" fn Agent_OnUnload(_vm: *mut JavaVM) {}

/// What the agent hands to the VM: these functions, each a thin shell.
const EDGE: Edge = Edge {
    callbacks,
    agent_thread,
    jni_alloc,
    vthreads: crate::vthreads::Callbacks {
        mount: vthread_mount,
        unmount: vthread_unmount,
    },
};

fn callbacks() -> JvmtiEventCallbacks {
    JvmtiEventCallbacks {
        VMInit: Some(vm_init),
        VMDeath: Some(vm_death),
        ThreadStart: Some(thread_start),
        ThreadEnd: Some(thread_end),
        DataDumpRequest: Some(data_dump_request),
        ResourceExhausted: Some(resource_exhausted),
        ClassFileLoadHook: Some(class_file_load_hook),
        VMObjectAlloc: Some(vm_object_alloc),
        SampledObjectAlloc: Some(sampled_object_alloc),
        MonitorContendedEnter: Some(monitor_contended_enter),
        MonitorContendedEntered: Some(monitor_contended_entered),
        GarbageCollectionStart: Some(gc_start),
        GarbageCollectionFinish: Some(gc_finish),
        ObjectFree: Some(object_free),
        ClassLoad: Some(class_load),
        ClassPrepare: Some(class_prepare),
        CompiledMethodLoad: Some(compiled_method_load),
        VirtualThreadEnd: Some(vthread_end),
        CompiledMethodUnload: Some(compiled_method_unload),
        DynamicCodeGenerated: Some(dynamic_code_generated),
        ..Default::default()
    }
}

/// The VMInit event.
///
/// # Safety
/// Only the VM calls this, as VMInit's callback: `jni` is the calling
/// thread's JNIEnv and `thread` a local reference in it.
unsafe extern "C" fn vm_init(_jvmti: *mut JvmtiEnv, jni: *mut JNIEnv, thread: jthread) {
    // SAFETY: the JNIEnv the VM passed to this callback, on this thread.
    let jni = unsafe { Jni::from_raw(jni) };
    guard("VMInit", (), || {
        if let Some(a) = agent::get() {
            a.on_vm_init(&jni, thread)
        }
    })
}

/// The VMDeath event.
///
/// # Safety
/// Only the VM calls this, as VMDeath's callback: `jni` is the calling
/// thread's JNIEnv.
unsafe extern "C" fn vm_death(_jvmti: *mut JvmtiEnv, jni: *mut JNIEnv) {
    // SAFETY: the JNIEnv the VM passed to this callback, on this thread.
    let jni = unsafe { Jni::from_raw(jni) };
    guard("VMDeath", (), || {
        if let Some(a) = agent::get() {
            a.on_vm_death(&jni)
        }
    })
}

/// The ResourceExhausted event: an OutOfMemoryError is about to be thrown
/// (or a resource ran out) on this thread.
///
/// # Safety
/// Only the VM calls this, as ResourceExhausted's callback: `jni` is the
/// calling thread's JNIEnv. Reads only `flags`.
unsafe extern "C" fn resource_exhausted(
    _jvmti: *mut JvmtiEnv,
    jni: *mut JNIEnv,
    flags: jni_sys::jint,
    _reserved: *const std::ffi::c_void,
    _description: *const std::ffi::c_char,
) {
    // SAFETY: the JNIEnv the VM passed to this callback, on this thread.
    let jni = unsafe { Jni::from_raw(jni) };
    guard("ResourceExhausted", (), || {
        if let Some(a) = agent::get() {
            a.on_resource_exhausted(&jni, flags)
        }
    })
}

/// The ThreadStart event.
///
/// # Safety
/// Only the VM calls this, as ThreadStart's callback, on the new thread:
/// `jni` is its JNIEnv and `thread` a local reference in it.
unsafe extern "C" fn thread_start(_jvmti: *mut JvmtiEnv, jni: *mut JNIEnv, thread: jthread) {
    // SAFETY: the JNIEnv the VM passed to this callback, on this thread.
    let jni = unsafe { Jni::from_raw(jni) };
    guard("ThreadStart", (), || {
        if let Some(a) = agent::get() {
            a.on_thread_start(&jni, thread)
        }
    })
}

/// The ThreadEnd event.
///
/// # Safety
/// Only the VM calls this, as ThreadEnd's callback, on the ending thread:
/// `jni` is its JNIEnv and `thread` a local reference in it.
unsafe extern "C" fn thread_end(_jvmti: *mut JvmtiEnv, jni: *mut JNIEnv, thread: jthread) {
    // SAFETY: the JNIEnv the VM passed to this callback, on this thread.
    let jni = unsafe { Jni::from_raw(jni) };
    guard("ThreadEnd", (), || {
        if let Some(a) = agent::get() {
            a.on_thread_end(&jni, thread)
        }
    })
}

/// HotSpot's VirtualThreadMount extension event, on the carrier with the
/// virtual thread mounted. Reads none of its arguments (the virtual
/// thread's record is found through its JVMTI thread-local storage).
extern "C" fn vthread_mount(_jvmti: *mut JvmtiEnv, _jni: *mut JNIEnv, _thread: jthread) {
    crate::vm::guard_hot("VirtualThreadMount", (), || {
        if let Some(a) = agent::get() {
            crate::per_thread::mounted(a.host.jvmti)
        }
    })
}

/// HotSpot's VirtualThreadUnmount extension event, on the carrier, the
/// virtual thread still mounted. Reads none of its arguments.
extern "C" fn vthread_unmount(_jvmti: *mut JvmtiEnv, _jni: *mut JNIEnv, _thread: jthread) {
    crate::vm::guard_hot("VirtualThreadUnmount", (), crate::per_thread::unmounting)
}

/// The VirtualThreadEnd event (JVMTI 21).
///
/// # Safety
/// Only the VM calls this, as VirtualThreadEnd's callback, on the carrier
/// of the ending virtual thread: `thread` is a local reference to it.
unsafe extern "C" fn vthread_end(_jvmti: *mut JvmtiEnv, jni: *mut JNIEnv, thread: jthread) {
    // SAFETY: the JNIEnv the VM passed to this callback, on this thread.
    let jni = unsafe { Jni::from_raw(jni) };
    guard("VirtualThreadEnd", (), || {
        if let Some(a) = agent::get() {
            a.on_vthread_end(&jni, thread)
        }
    })
}

/// Enabled only because AsyncGetCallTrace refuses to walk without it.
/// Reads none of its arguments.
extern "C" fn class_load(
    _jvmti: *mut JvmtiEnv,
    _jni: *mut JNIEnv,
    _thread: jthread,
    _class: jclass,
) {
}

/// The ClassPrepare event.
///
/// # Safety
/// Only the VM calls this, as ClassPrepare's callback: `class` is a local
/// reference of the calling thread.
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

/// A method was compiled. Enabled so that HotSpot's compilers keep debug
/// information between safepoints (what signal sampling needs to name
/// inlined frames), and for the signal handler's map of generated code.
/// Reads only its scalar arguments.
extern "C" fn compiled_method_load(
    _jvmti: *mut JvmtiEnv,
    method: jni_sys::jmethodID,
    code_size: jint,
    code_addr: *const c_void,
    _map_length: jint,
    _map: *const c_void,
    compile_info: *const c_void,
) {
    guard("CompiledMethodLoad", (), || {
        let (start, len) = (code_addr as usize, code_size.max(0) as usize);
        // The frame size and tier, for the signal handler's frame types.
        use crate::vm::nmethod::CompiledInfo;
        // SAFETY: the event's own compile_info, read during the callback.
        let itself = unsafe { crate::vm::nmethod::inlined_into_itself(compile_info) };
        let info = crate::vm::nmethod::info(method, start, len).map(|i| CompiledInfo {
            inlined_into_itself: itself,
            ..i
        });
        code_map::compiled(method as usize, start, len, info)
    })
}

/// A compiled method's code was freed (the signal handler's code map).
extern "C" fn compiled_method_unload(
    _jvmti: *mut JvmtiEnv,
    method: jni_sys::jmethodID,
    code_addr: *const c_void,
) {
    guard("CompiledMethodUnload", (), || {
        code_map::unloaded(method as usize, code_addr as usize)
    })
}

/// The VM generated a stub, the interpreter or an adapter (the signal
/// handler's code map).
///
/// # Safety
/// Only the VM calls this, as DynamicCodeGenerated's callback: `name` is a
/// NUL-terminated string alive for the call.
unsafe extern "C" fn dynamic_code_generated(
    _jvmti: *mut JvmtiEnv,
    name: *const c_char,
    address: *const c_void,
    length: jint,
) {
    // SAFETY: null or a NUL-terminated string alive for the call (the caller's promise).
    let name = unsafe { vm_string(name) }.unwrap_or_default();
    guard("DynamicCodeGenerated", (), || {
        code_map::generated(&name, address as usize, length.max(0) as usize)
    })
}

/// The DataDumpRequest event (`kill -3`). Reads none of its arguments.
extern "C" fn data_dump_request(_jvmti: *mut JvmtiEnv) {
    guard("DataDumpRequest", (), || {
        if let Some(a) = agent::get() {
            a.on_data_dump_request()
        }
    })
}

/// The VMObjectAlloc event.
///
/// # Safety
/// Only the VM calls this, as VMObjectAlloc's callback: `jni` is the
/// calling thread's JNIEnv, and `thread`, `object` and `class` local
/// references in it.
unsafe extern "C" fn vm_object_alloc(
    _jvmti: *mut JvmtiEnv,
    jni: *mut JNIEnv,
    thread: jthread,
    object: jobject,
    class: jclass,
    _size: jlong,
) {
    // SAFETY: the JNIEnv the VM passed to this callback, on this thread.
    let jni = unsafe { Jni::from_raw(jni) };
    guard("VMObjectAlloc", (), || {
        if let Some(h) = host::get() {
            let a = Allocation {
                thread,
                object,
                class,
                size: 0,
            };
            h.events.vm_object_alloc(&jni, &a)
        }
    })
}

/// HotSpot sampled an allocation (the `alloc` mode).
///
/// # Safety
/// Only the VM calls this, as SampledObjectAlloc's callback, on the
/// allocating thread: `jni` is its JNIEnv, and `thread`, `object` and
/// `class` local references in it.
unsafe extern "C" fn sampled_object_alloc(
    _jvmti: *mut JvmtiEnv,
    jni: *mut JNIEnv,
    thread: jthread,
    object: jobject,
    class: jclass,
    size: jlong,
) {
    // SAFETY: the JNIEnv the VM passed to this callback, on this thread.
    let jni = unsafe { Jni::from_raw(jni) };
    guard("SampledObjectAlloc", (), || {
        if let Some(h) = host::get() {
            let a = Allocation {
                thread,
                object,
                class,
                size: size.max(0) as u64,
            };
            h.events.sampled_object_alloc(&jni, &a)
        }
    })
}

/// A thread is about to block on a monitor another thread owns (the `lock`
/// mode).
///
/// # Safety
/// Only the VM calls this, as MonitorContendedEnter's callback, on the
/// thread about to wait: `jni` is its JNIEnv, and `object` a local
/// reference in it.
unsafe extern "C" fn monitor_contended_enter(
    _jvmti: *mut JvmtiEnv,
    jni: *mut JNIEnv,
    thread: jthread,
    object: jobject,
) {
    // SAFETY: the JNIEnv the VM passed to this callback, on this thread.
    let jni = unsafe { Jni::from_raw(jni) };
    guard("MonitorContendedEnter", (), || {
        if let Some(h) = host::get() {
            h.events.monitor_contended_enter(&jni, thread, object)
        }
    })
}

/// A thread got the monitor it blocked on (the `lock` mode).
///
/// # Safety
/// Only the VM calls this, as MonitorContendedEntered's callback, on the
/// thread that waited: `jni` is its JNIEnv, and `thread` and `object` local
/// references in it.
unsafe extern "C" fn monitor_contended_entered(
    _jvmti: *mut JvmtiEnv,
    jni: *mut JNIEnv,
    thread: jthread,
    object: jobject,
) {
    // SAFETY: the JNIEnv the VM passed to this callback, on this thread.
    let jni = unsafe { Jni::from_raw(jni) };
    guard("MonitorContendedEntered", (), || {
        if let Some(h) = host::get() {
            h.events.monitor_contended_entered(&jni, thread, object)
        }
    })
}

/// A tagged object was collected (the ObjectFree of an environment a mode
/// made for its tags). Runs on a VM thread; calls nothing back, reads no
/// pointer.
extern "C" fn object_free(_jvmti: *mut JvmtiEnv, tag: jlong) {
    guard("ObjectFree", (), || {
        if let Some(h) = host::get() {
            h.events.object_free(tag)
        }
    })
}

/// A GC starts. Runs in the pause; reads no pointer.
extern "C" fn gc_start(_jvmti: *mut JvmtiEnv) {
    guard("GarbageCollectionStart", (), || {
        if let Some(h) = host::get() {
            h.events.gc_start()
        }
    })
}

/// A GC finishes, still in the pause. Reads no pointer.
extern "C" fn gc_finish(_jvmti: *mut JvmtiEnv) {
    guard("GarbageCollectionFinish", (), || {
        if let Some(h) = host::get() {
            h.events.gc_finish()
        }
    })
}

/// The JNI interception hook (runs inside the VM's guard, see vm::jni_table).
fn jni_alloc(jni: &Jni, object: jobject) {
    if let Some(h) = host::get() {
        h.events.jni_object_alloc(jni, object)
    }
}

/// The ClassFileLoadHook event.
///
/// # Safety
/// Only the VM calls this, as ClassFileLoadHook's callback: `jni` is the
/// calling thread's JNIEnv; `class_being_redefined` and `loader` local
/// references in it or null; `name` null or a NUL-terminated string and
/// `data` `len` bytes, both alive for the call; `new_len` and `new_data`
/// places for the new class file.
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
    // SAFETY: the JNIEnv the VM passed to this callback, on this thread.
    let jni = unsafe { Jni::from_raw(jni) };
    guard("ClassFileLoadHook", (), || {
        let Some(a) = agent::get() else { return };
        // SAFETY: the VM passes the class bytes, `len` of them, alive for
        // this call (the caller's promise); `len` is never negative.
        let bytes = unsafe { std::slice::from_raw_parts(data, len.max(0) as usize) };
        // SAFETY: null or a NUL-terminated name alive for this call (the
        // caller's promise).
        let name = unsafe { vm_string(name) };
        if let Some(out) = a.host.instrumenter.transform(
            a.host.jvmti,
            &jni,
            (loader, class_being_redefined),
            name.as_deref(),
            bytes,
        ) {
            if let Ok(p) = a.host.jvmti.allocate_copy(&out) {
                // SAFETY: the out-parameters the VM gave for this call (the
                // caller's promise); the VM takes `p`, JVMTI memory, and frees it.
                unsafe {
                    *new_len = out.len() as jint;
                    *new_data = p;
                }
            }
        }
    })
}

/// Body of every agent thread: runs the body it was given.
///
/// # Safety
/// Only the VM calls this, as the start function of an agent thread: `jni`
/// is that thread's JNIEnv, and `arg` one [`ThreadBody`] from
/// `Box::into_raw` ([`crate::host::Host::start_thread`]), which this thread
/// now owns.
unsafe extern "C" fn agent_thread(_jvmti: *mut JvmtiEnv, jni: *mut JNIEnv, arg: *mut c_void) {
    // SAFETY: `arg` is one ThreadBody from Box::into_raw, given to this
    // thread alone (the caller's promise); dropped when it ends.
    let body = unsafe { Box::from_raw(arg.cast::<ThreadBody>()) };
    // SAFETY: the JNIEnv the VM passed to this thread's start function.
    let jni = unsafe { Jni::from_raw(jni) };
    let ThreadBody { what, run } = *body;
    guard(what, (), || run(&jni))
}
