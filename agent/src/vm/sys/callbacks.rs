//! The functions the VM calls: event callbacks (their types and
//! `jvmtiEventCallbacks`), HotSpot's extension events, agent thread bodies
//! and the heap iteration's callbacks (`jvmtiHeapCallbacks`). Apart from
//! the function table because these are the agent's to implement, not the
//! VM's.
#![allow(non_snake_case, non_camel_case_types, dead_code)]

use super::{jthread, JvmtiEnv, PTR};
use jni_sys::{jclass, jint, jlong, jmethodID, jobject, jvalue, JNIEnv};
use std::ffi::{c_char, c_void};
use std::mem::{offset_of, size_of};

/// HotSpot's VirtualThreadMount and VirtualThreadUnmount extension events:
/// (env, jni, virtual thread), as jvmtiExport.cpp calls them through the
/// variadic `jvmtiExtensionEvent` type (the same registers on x86-64 and
/// aarch64 Linux as this fixed signature).
pub type EventVirtualThread = unsafe extern "C" fn(*mut JvmtiEnv, *mut JNIEnv, jthread);

pub type JvmtiStartFunction = Option<unsafe extern "C" fn(*mut JvmtiEnv, *mut JNIEnv, *mut c_void)>;

pub type EventVmInit = unsafe extern "C" fn(*mut JvmtiEnv, *mut JNIEnv, jthread);
pub type EventVmDeath = unsafe extern "C" fn(*mut JvmtiEnv, *mut JNIEnv);
/// ResourceExhausted: flags (JVMTI_RESOURCE_EXHAUSTED_*), reserved, a
/// description of the resource.
pub type EventResourceExhausted = unsafe extern "C" fn(
    *mut JvmtiEnv,
    *mut JNIEnv,
    jni_sys::jint,
    *const c_void,
    *const std::ffi::c_char,
);
pub type EventThreadStart = unsafe extern "C" fn(*mut JvmtiEnv, *mut JNIEnv, jthread);
pub type EventThreadEnd = unsafe extern "C" fn(*mut JvmtiEnv, *mut JNIEnv, jthread);
pub type EventDataDumpRequest = unsafe extern "C" fn(*mut JvmtiEnv);
/// (env, jni, thread, object, object's class, size in bytes)
/// VMObjectAlloc and SampledObjectAlloc: (env, jni, thread, object, class, size).
pub type EventVMObjectAlloc =
    unsafe extern "C" fn(*mut JvmtiEnv, *mut JNIEnv, jthread, jobject, jclass, jlong);
#[allow(clippy::type_complexity)]
pub type EventClassFileLoadHook = unsafe extern "C" fn(
    *mut JvmtiEnv,
    *mut JNIEnv,
    jclass,
    jobject,
    *const c_char,
    jobject,
    jint,
    *const u8,
    *mut jint,
    *mut *mut u8,
);

/// MonitorContendedEnter and MonitorContendedEntered: (env, jni, thread, object).
pub type EventMonitor = unsafe extern "C" fn(*mut JvmtiEnv, *mut JNIEnv, jthread, jobject);

/// ClassLoad and ClassPrepare: (env, jni, thread, class).
pub type EventClassLoad = unsafe extern "C" fn(*mut JvmtiEnv, *mut JNIEnv, jthread, jclass);
/// (env, method, code size, code address, map length, map, compile info)
pub type EventCompiledMethodLoad = unsafe extern "C" fn(
    *mut JvmtiEnv,
    jmethodID,
    jint,
    *const c_void,
    jint,
    *const c_void,
    *const c_void,
);
/// (env, method, code address)
pub type EventCompiledMethodUnload = unsafe extern "C" fn(*mut JvmtiEnv, jmethodID, *const c_void);
/// (env, name, address, length)
pub type EventDynamicCodeGenerated =
    unsafe extern "C" fn(*mut JvmtiEnv, *const c_char, *const c_void, jint);

/// `jvmtiEventCallbacks`, events 50 to 88 (JVMTI 21; an older VM copies
/// the part it knows). Callbacks the agent does not install
/// are plain pointers (always null).
#[repr(C)]
pub struct JvmtiEventCallbacks {
    /* 50 */ pub VMInit: Option<EventVmInit>,
    /* 51 */ pub VMDeath: Option<EventVmDeath>,
    /* 52 */ pub ThreadStart: Option<EventThreadStart>,
    /* 53 */ pub ThreadEnd: Option<EventThreadEnd>,
    /* 54 */ pub ClassFileLoadHook: Option<EventClassFileLoadHook>,
    /* 55 */ pub ClassLoad: Option<EventClassLoad>,
    /* 56 */ pub ClassPrepare: Option<EventClassLoad>,
    /* 57 */ pub VMStart: *const c_void,
    /* 58 */ pub Exception: *const c_void,
    /* 59 */ pub ExceptionCatch: *const c_void,
    /* 60 */ pub SingleStep: *const c_void,
    /* 61 */ pub FramePop: *const c_void,
    /* 62 */ pub Breakpoint: *const c_void,
    /* 63 */ pub FieldAccess: *const c_void,
    /* 64 */ pub FieldModification: *const c_void,
    /* 65 */ pub MethodEntry: *const c_void,
    /* 66 */ pub MethodExit: *const c_void,
    /* 67 */ pub NativeMethodBind: *const c_void,
    /* 68 */ pub CompiledMethodLoad: Option<EventCompiledMethodLoad>,
    /* 69 */ pub CompiledMethodUnload: Option<EventCompiledMethodUnload>,
    /* 70 */ pub DynamicCodeGenerated: Option<EventDynamicCodeGenerated>,
    /* 71 */ pub DataDumpRequest: Option<EventDataDumpRequest>,
    /* 72 */ pub reserved72: *const c_void,
    /* 73 */ pub MonitorWait: *const c_void,
    /* 74 */ pub MonitorWaited: *const c_void,
    /* 75 */ pub MonitorContendedEnter: Option<EventMonitor>,
    /* 76 */ pub MonitorContendedEntered: Option<EventMonitor>,
    /* 77 */ pub reserved77: *const c_void,
    /* 78 */ pub reserved78: *const c_void,
    /* 79 */ pub reserved79: *const c_void,
    /* 80 */ pub ResourceExhausted: Option<EventResourceExhausted>,
    /* 81 */ pub GarbageCollectionStart: Option<unsafe extern "C" fn(*mut JvmtiEnv)>,
    /* 82 */ pub GarbageCollectionFinish: Option<unsafe extern "C" fn(*mut JvmtiEnv)>,
    /* 83 */ pub ObjectFree: Option<unsafe extern "C" fn(*mut JvmtiEnv, jlong)>,
    /* 84 */ pub VMObjectAlloc: Option<EventVMObjectAlloc>,
    /* 85 */ pub reserved85: *const c_void,
    /* 86 */ pub SampledObjectAlloc: Option<EventVMObjectAlloc>,
    /* 87 */ pub VirtualThreadStart: *const c_void,
    /* 88 */ pub VirtualThreadEnd: Option<EventVirtualThread>,
}

impl Default for JvmtiEventCallbacks {
    fn default() -> Self {
        // SAFETY: every field is an Option of a fn pointer or a raw pointer, for
        // which all-zero bytes mean None / null.
        unsafe { std::mem::zeroed() }
    }
}

/// `jvmtiPrimitiveFieldCallback`: one primitive field of an object the
/// heap iteration visits (kind, the field's index, the class's tag, the
/// object's tag, the value, its type, the caller's data). Runs in the VM
/// operation, on the VM thread.
pub type PrimitiveFieldCallback =
    unsafe extern "C" fn(jint, *const jint, jlong, *mut jlong, jvalue, jint, *mut c_void) -> jint;

/// `jvmtiHeapReferenceCallback`: one reference FollowReferences follows
/// (kind, its info, the referee's class tag, the referrer's class tag,
/// the referee's size, its tag, the referrer's tag, an array's length, the
/// caller's data); returns whether to visit the referee's references
/// ([`JVMTI_VISIT_OBJECTS`]). Runs in the VM operation, on the VM thread.
pub type HeapReferenceCallback = unsafe extern "C" fn(
    jint,
    *const c_void,
    jlong,
    jlong,
    jlong,
    *mut jlong,
    *mut jlong,
    jint,
    *mut c_void,
) -> jint;

/// A heap reference callback's answer: follow the referee's references.
pub const JVMTI_VISIT_OBJECTS: jint = 0x100;

/// `jvmtiHeapCallbacks`: one slot per kind of heap callback, the first five
/// named, then eleven reserved (all null here but the primitive fields').
#[repr(C)]
pub struct JvmtiHeapCallbacks {
    pub heap_iteration_callback: *const c_void,
    pub heap_reference_callback: Option<HeapReferenceCallback>,
    pub primitive_field_callback: Option<PrimitiveFieldCallback>,
    pub array_primitive_value_callback: *const c_void,
    pub string_primitive_value_callback: *const c_void,
    pub reserved: [*const c_void; 11],
}

impl JvmtiHeapCallbacks {
    /// No callback at all (fill in the ones wanted).
    pub const fn none() -> Self {
        Self {
            heap_iteration_callback: std::ptr::null(),
            heap_reference_callback: None,
            primitive_field_callback: None,
            array_primitive_value_callback: std::ptr::null(),
            string_primitive_value_callback: std::ptr::null(),
            reserved: [std::ptr::null(); 11],
        }
    }
}

/// Heap filter: visit only objects whose class is tagged.
pub const JVMTI_HEAP_FILTER_CLASS_UNTAGGED: jint = 0x20;
/// `jvmtiPrimitiveType` of an `int`.
pub const JVMTI_PRIMITIVE_TYPE_INT: jint = 73;

// Layout checks: a callback in the wrong slot would be called for another
// event, with other arguments.
const _: () = assert!(offset_of!(JvmtiEventCallbacks, MonitorContendedEnter) == (75 - 50) * PTR);
const _: () = assert!(size_of::<JvmtiHeapCallbacks>() == 16 * PTR);
const _: () = assert!(offset_of!(JvmtiHeapCallbacks, primitive_field_callback) == 2 * PTR);
const _: () = assert!(size_of::<JvmtiEventCallbacks>() == 39 * PTR);
const _: () = assert!(offset_of!(JvmtiEventCallbacks, VirtualThreadEnd) == (88 - 50) * PTR);
const _: () = assert!(offset_of!(JvmtiEventCallbacks, DataDumpRequest) == (71 - 50) * PTR);
const _: () = assert!(offset_of!(JvmtiEventCallbacks, SampledObjectAlloc) == (86 - 50) * PTR);
