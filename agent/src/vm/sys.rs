//! Raw JVMTI bindings, written by hand against JDK 17's `jvmti.h`.
//!
//! Only this module and its siblings in `vm/` touch raw pointers from the VM.
//! Error and event codes are integer newtypes, never Rust enums: a newer JVM may
//! return a code this file does not know, and an unknown enum discriminant is
//! undefined behaviour. Slots the agent does not call are kept as plain pointers
//! so the table's layout is exact; `const` asserts below pin sizes and offsets.
#![allow(non_snake_case, non_camel_case_types, dead_code)]

use jni_sys::{jclass, jfieldID, jint, jlong, jmethodID, jobject, jvalue, JNIEnv};
use std::ffi::{c_char, c_void};
use std::mem::{offset_of, size_of};

pub type jthread = jobject;
pub type jthreadGroup = jobject;
/// JNI's `jboolean` as the C ABI has it (one byte). Kept as `u8`, not `bool`,
/// so a value the VM writes can never be an invalid Rust `bool`.
pub type jboolean = u8;

/// `jvmtiEnv` is a pointer to the function table.
pub type JvmtiEnv = *const JvmtiInterface;

pub const JVMTI_VERSION_1_2: jint = 0x3001_0200;

#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct JvmtiError(pub u32);

impl JvmtiError {
    pub const NONE: Self = Self(0);
    pub const INVALID_THREAD: Self = Self(10);
    pub const THREAD_NOT_ALIVE: Self = Self(15);
    pub const NOT_AVAILABLE: Self = Self(98);
    pub const MUST_POSSESS_CAPABILITY: Self = Self(99);
    pub const NULL_POINTER: Self = Self(100);
    pub const ABSENT_INFORMATION: Self = Self(101);
    pub const ILLEGAL_ARGUMENT: Self = Self(103);
    pub const WRONG_PHASE: Self = Self(112);
    pub const INTERNAL: Self = Self(113);
    pub const UNATTACHED_THREAD: Self = Self(115);
    pub const INVALID_ENVIRONMENT: Self = Self(116);
}

#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct JvmtiEvent(pub u32);

impl JvmtiEvent {
    pub const VM_INIT: Self = Self(50);
    pub const VM_DEATH: Self = Self(51);
    pub const THREAD_START: Self = Self(52);
    pub const THREAD_END: Self = Self(53);
    pub const CLASS_FILE_LOAD_HOOK: Self = Self(54);
    pub const CLASS_LOAD: Self = Self(55);
    pub const CLASS_PREPARE: Self = Self(56);
    pub const VM_START: Self = Self(57);
    pub const COMPILED_METHOD_LOAD: Self = Self(68);
    pub const COMPILED_METHOD_UNLOAD: Self = Self(69);
    pub const DYNAMIC_CODE_GENERATED: Self = Self(70);
    pub const DATA_DUMP_REQUEST: Self = Self(71);
    pub const GARBAGE_COLLECTION_START: Self = Self(81);
    pub const GARBAGE_COLLECTION_FINISH: Self = Self(82);
    pub const OBJECT_FREE: Self = Self(83);
    pub const VM_OBJECT_ALLOC: Self = Self(84);
    pub const SAMPLED_OBJECT_ALLOC: Self = Self(86);
    pub const MONITOR_CONTENDED_ENTER: Self = Self(75);
    pub const MONITOR_CONTENDED_ENTERED: Self = Self(76);
    /// JVMTI 21+: a virtual thread ends (on the virtual thread, after its
    /// last VirtualThreadUnmount).
    pub const VIRTUAL_THREAD_END: Self = Self(88);
}

#[repr(transparent)]
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct JvmtiEventMode(pub u32);

impl JvmtiEventMode {
    pub const ENABLE: Self = Self(1);
    pub const DISABLE: Self = Self(0);
}

pub const JVMTI_PHASE_ONLOAD: jint = 1;
pub const JVMTI_PHASE_PRIMORDIAL: jint = 2;
pub const JVMTI_PHASE_START: jint = 6;
pub const JVMTI_PHASE_LIVE: jint = 4;
pub const JVMTI_PHASE_DEAD: jint = 8;

pub const JVMTI_THREAD_STATE_ALIVE: jint = 0x0001;
pub const JVMTI_THREAD_STATE_TERMINATED: jint = 0x0002;
pub const JVMTI_THREAD_STATE_RUNNABLE: jint = 0x0004;
pub const JVMTI_THREAD_STATE_WAITING: jint = 0x0080;
pub const JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER: jint = 0x0400;
pub const JVMTI_THREAD_STATE_IN_NATIVE: jint = 0x0040_0000;
pub const JVMTI_THREAD_STATE_SUSPENDED: jint = 0x0010_0000;
pub const JVMTI_THREAD_STATE_PARKED: jint = 0x0200;
pub const JVMTI_THREAD_STATE_WAITING_INDEFINITELY: jint = 0x0010;
pub const JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT: jint = 0x0020;
pub const JVMTI_THREAD_STATE_SLEEPING: jint = 0x0040;
pub const JVMTI_THREAD_STATE_IN_OBJECT_WAIT: jint = 0x0100;
pub const JVMTI_JAVA_LANG_THREAD_STATE_MASK: jint =
    0x0001 | 0x0002 | 0x0004 | 0x0400 | 0x0080 | 0x0010 | 0x0020;
pub const JVMTI_JAVA_LANG_THREAD_STATE_RUNNABLE: jint =
    JVMTI_THREAD_STATE_ALIVE | JVMTI_THREAD_STATE_RUNNABLE;

pub const JVMTI_THREAD_NORM_PRIORITY: jint = 5;
pub const JVMTI_THREAD_MAX_PRIORITY: jint = 10;

/// `jvmtiCapabilities`: 44 one-bit fields then padding, 128 bits in all. GCC on
/// x86-64 and aarch64 packs bit-fields from the least significant bit of each
/// 32-bit word, so capability `n` (in declaration order) is bit `n % 32` of word `n / 32`.
#[repr(C)]
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct JvmtiCapabilities {
    pub words: [u32; 4],
}

/// Declaration-order index of each capability in `jvmtiCapabilities`.
#[derive(Clone, Copy, Debug)]
#[repr(u32)]
pub enum Capability {
    TagObjects = 0,
    GenerateFieldModificationEvents = 1,
    GenerateFieldAccessEvents = 2,
    GetBytecodes = 3,
    GetSyntheticAttribute = 4,
    GetOwnedMonitorInfo = 5,
    GetCurrentContendedMonitor = 6,
    GetMonitorInfo = 7,
    PopFrame = 8,
    RedefineClasses = 9,
    SignalThread = 10,
    GetSourceFileName = 11,
    GetLineNumbers = 12,
    GetSourceDebugExtension = 13,
    AccessLocalVariables = 14,
    MaintainOriginalMethodOrder = 15,
    GenerateSingleStepEvents = 16,
    GenerateExceptionEvents = 17,
    GenerateFramePopEvents = 18,
    GenerateBreakpointEvents = 19,
    Suspend = 20,
    RedefineAnyClass = 21,
    GetCurrentThreadCpuTime = 22,
    GetThreadCpuTime = 23,
    GenerateMethodEntryEvents = 24,
    GenerateMethodExitEvents = 25,
    GenerateAllClassHookEvents = 26,
    GenerateCompiledMethodLoadEvents = 27,
    GenerateMonitorEvents = 28,
    GenerateVmObjectAllocEvents = 29,
    GenerateNativeMethodBindEvents = 30,
    GenerateGarbageCollectionEvents = 31,
    GenerateObjectFreeEvents = 32,
    ForceEarlyReturn = 33,
    GetOwnedMonitorStackDepthInfo = 34,
    GetConstantPool = 35,
    SetNativeMethodPrefix = 36,
    RetransformClasses = 37,
    RetransformAnyClass = 38,
    GenerateResourceExhaustionHeapEvents = 39,
    GenerateResourceExhaustionThreadsEvents = 40,
    GenerateEarlyVmstart = 41,
    GenerateEarlyClassHookEvents = 42,
    GenerateSampledObjectAllocEvents = 43,
    /// JVMTI 21+ (JDK 21): the agent understands virtual threads.
    SupportVirtualThreads = 44,
}

impl JvmtiCapabilities {
    pub fn with(mut self, cap: Capability) -> Self {
        let n = cap as u32;
        self.words[(n / 32) as usize] |= 1 << (n % 32);
        self
    }
    pub fn has(&self, cap: Capability) -> bool {
        let n = cap as u32;
        self.words[(n / 32) as usize] & (1 << (n % 32)) != 0
    }
}

#[repr(C)]
pub struct JvmtiThreadInfo {
    pub name: *mut c_char,
    pub priority: jint,
    pub is_daemon: jboolean,
    pub thread_group: jthreadGroup,
    pub context_class_loader: jobject,
}

#[repr(C)]
#[derive(Clone, Copy)]
pub struct JvmtiFrameInfo {
    pub method: jmethodID,
    /// Bytecode index; -1 for a native frame.
    pub location: jlong,
}

/// One entry of a method's line number table.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct JvmtiLineNumberEntry {
    /// The first bytecode index of the line.
    pub start_location: jlong,
    pub line_number: jint,
}

#[repr(C)]
pub struct JvmtiStackInfo {
    pub thread: jthread,
    pub state: jint,
    pub frame_buffer: *mut JvmtiFrameInfo,
    pub frame_count: jint,
}

#[repr(C)]
pub struct JvmtiParamInfo {
    pub name: *mut c_char,
    pub kind: jint,
    pub base_type: jint,
    pub null_ok: jboolean,
}

/// A JVM-specific extension function (variadic after the environment).
pub type JvmtiExtensionFunction = unsafe extern "C" fn(*mut JvmtiEnv, ...) -> JvmtiError;

#[repr(C)]
pub struct JvmtiExtensionFunctionInfo {
    pub func: Option<JvmtiExtensionFunction>,
    pub id: *mut c_char,
    pub short_description: *mut c_char,
    pub param_count: jint,
    pub params: *mut JvmtiParamInfo,
    pub error_count: jint,
    pub errors: *mut JvmtiError,
}

/// `jvmtiExtensionEventInfo`: one JVM-specific event, enabled through
/// SetEventNotificationMode with its index.
#[repr(C)]
pub struct JvmtiExtensionEventInfo {
    pub extension_event_index: jint,
    pub id: *mut c_char,
    pub short_description: *mut c_char,
    pub param_count: jint,
    pub params: *mut JvmtiParamInfo,
}

/// HotSpot's VirtualThreadMount and VirtualThreadUnmount extension events:
/// (env, jni, virtual thread), as jvmtiExport.cpp calls them through the
/// variadic `jvmtiExtensionEvent` type (the same registers on x86-64 and
/// aarch64 Linux as this fixed signature).
pub type EventVirtualThread = unsafe extern "C" fn(*mut JvmtiEnv, *mut JNIEnv, jthread);

pub type JvmtiStartFunction = Option<unsafe extern "C" fn(*mut JvmtiEnv, *mut JNIEnv, *mut c_void)>;

pub type EventVmInit = unsafe extern "C" fn(*mut JvmtiEnv, *mut JNIEnv, jthread);
pub type EventVmDeath = unsafe extern "C" fn(*mut JvmtiEnv, *mut JNIEnv);
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

/// `jvmtiMonitorUsage`: a monitor's owner, entries and waiting threads.
#[repr(C)]
pub struct JvmtiMonitorUsage {
    pub owner: jthread,
    pub entry_count: jint,
    pub waiter_count: jint,
    pub waiters: *mut jthread,
    pub notify_waiter_count: jint,
    pub notify_waiters: *mut jthread,
}

/// `jvmtiMonitorStackDepthInfo`: a monitor a thread owns, and the depth of
/// the frame that entered it (-1: entered by JNI).
#[repr(C)]
pub struct JvmtiMonitorStackDepthInfo {
    pub monitor: jobject,
    pub stack_depth: jint,
}

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
    /* 80 */ pub ResourceExhausted: *const c_void,
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

/// The JVMTI function table (`jvmtiInterface_1`), all 156 slots in order.
/// Slot `n` (1-based, as numbered in `jvmti.h`) sits at byte offset `(n - 1) * 8`.
#[repr(C)]
pub struct JvmtiInterface {
    /*   1 */ pub reserved1: *const c_void,
    /*   2 */
    pub SetEventNotificationMode: Option<
        unsafe extern "C" fn(*mut JvmtiEnv, JvmtiEventMode, JvmtiEvent, jthread, ...) -> JvmtiError,
    >,
    /*   3 */
    pub GetAllModules:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, *mut jint, *mut *mut jobject) -> JvmtiError>,
    /*   4 */
    pub GetAllThreads:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, *mut jint, *mut *mut jthread) -> JvmtiError>,
    /*   5 */ pub SuspendThread: *const c_void,
    /*   6 */ pub ResumeThread: *const c_void,
    /*   7 */ pub StopThread: *const c_void,
    /*   8 */ pub InterruptThread: *const c_void,
    /*   9 */
    pub GetThreadInfo:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jthread, *mut JvmtiThreadInfo) -> JvmtiError>,
    /*  10 */ pub GetOwnedMonitorInfo: *const c_void,
    /*  11 */
    pub GetCurrentContendedMonitor:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jthread, *mut jobject) -> JvmtiError>,
    /*  12 */
    pub RunAgentThread: Option<
        unsafe extern "C" fn(
            *mut JvmtiEnv,
            jthread,
            JvmtiStartFunction,
            *const c_void,
            jint,
        ) -> JvmtiError,
    >,
    /*  13 */ pub GetTopThreadGroups: *const c_void,
    /*  14 */ pub GetThreadGroupInfo: *const c_void,
    /*  15 */ pub GetThreadGroupChildren: *const c_void,
    /*  16 */ pub GetFrameCount: *const c_void,
    /*  17 */
    pub GetThreadState:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jthread, *mut jint) -> JvmtiError>,
    /*  18 */
    pub GetCurrentThread: Option<unsafe extern "C" fn(*mut JvmtiEnv, *mut jthread) -> JvmtiError>,
    /*  19 */ pub GetFrameLocation: *const c_void,
    /*  20 */ pub NotifyFramePop: *const c_void,
    /*  21 */ pub GetLocalObject: *const c_void,
    /*  22 */ pub GetLocalInt: *const c_void,
    /*  23 */ pub GetLocalLong: *const c_void,
    /*  24 */ pub GetLocalFloat: *const c_void,
    /*  25 */ pub GetLocalDouble: *const c_void,
    /*  26 */ pub SetLocalObject: *const c_void,
    /*  27 */ pub SetLocalInt: *const c_void,
    /*  28 */ pub SetLocalLong: *const c_void,
    /*  29 */ pub SetLocalFloat: *const c_void,
    /*  30 */ pub SetLocalDouble: *const c_void,
    /*  31 */ pub CreateRawMonitor: *const c_void,
    /*  32 */ pub DestroyRawMonitor: *const c_void,
    /*  33 */ pub RawMonitorEnter: *const c_void,
    /*  34 */ pub RawMonitorExit: *const c_void,
    /*  35 */ pub RawMonitorWait: *const c_void,
    /*  36 */ pub RawMonitorNotify: *const c_void,
    /*  37 */ pub RawMonitorNotifyAll: *const c_void,
    /*  38 */ pub SetBreakpoint: *const c_void,
    /*  39 */ pub ClearBreakpoint: *const c_void,
    /*  40 */ pub GetNamedModule: *const c_void,
    /*  41 */ pub SetFieldAccessWatch: *const c_void,
    /*  42 */ pub ClearFieldAccessWatch: *const c_void,
    /*  43 */ pub SetFieldModificationWatch: *const c_void,
    /*  44 */ pub ClearFieldModificationWatch: *const c_void,
    /*  45 */
    pub IsModifiableClass:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jclass, *mut jboolean) -> JvmtiError>,
    /*  46 */
    pub Allocate: Option<unsafe extern "C" fn(*mut JvmtiEnv, jlong, *mut *mut u8) -> JvmtiError>,
    /*  47 */
    pub Deallocate: Option<unsafe extern "C" fn(*mut JvmtiEnv, *mut u8) -> JvmtiError>,
    /*  48 */
    pub GetClassSignature: Option<
        unsafe extern "C" fn(
            *mut JvmtiEnv,
            jclass,
            *mut *mut c_char,
            *mut *mut c_char,
        ) -> JvmtiError,
    >,
    /*  49 */ pub GetClassStatus: *const c_void,
    /*  50 */ pub GetSourceFileName: *const c_void,
    /*  51 */ pub GetClassModifiers: *const c_void,
    /*  52 */
    pub GetClassMethods: Option<
        unsafe extern "C" fn(*mut JvmtiEnv, jclass, *mut jint, *mut *mut jmethodID) -> JvmtiError,
    >,
    /*  53 */
    pub GetClassFields: Option<
        unsafe extern "C" fn(*mut JvmtiEnv, jclass, *mut jint, *mut *mut jfieldID) -> JvmtiError,
    >,
    /*  54 */
    pub GetImplementedInterfaces: Option<
        unsafe extern "C" fn(*mut JvmtiEnv, jclass, *mut jint, *mut *mut jclass) -> JvmtiError,
    >,
    /*  55 */ pub IsInterface: *const c_void,
    /*  56 */ pub IsArrayClass: *const c_void,
    /*  57 */
    pub GetClassLoader:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jclass, *mut jobject) -> JvmtiError>,
    /*  58 */
    pub GetObjectHashCode:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jobject, *mut jint) -> JvmtiError>,
    /*  59 */
    pub GetObjectMonitorUsage:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jobject, *mut JvmtiMonitorUsage) -> JvmtiError>,
    /*  60 */
    pub GetFieldName: Option<
        unsafe extern "C" fn(
            *mut JvmtiEnv,
            jclass,
            jfieldID,
            *mut *mut c_char,
            *mut *mut c_char,
            *mut *mut c_char,
        ) -> JvmtiError,
    >,
    /*  61 */ pub GetFieldDeclaringClass: *const c_void,
    /*  62 */
    pub GetFieldModifiers:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jclass, jfieldID, *mut jint) -> JvmtiError>,
    /*  63 */ pub IsFieldSynthetic: *const c_void,
    /*  64 */
    pub GetMethodName: Option<
        unsafe extern "C" fn(
            *mut JvmtiEnv,
            jmethodID,
            *mut *mut c_char,
            *mut *mut c_char,
            *mut *mut c_char,
        ) -> JvmtiError,
    >,
    /*  65 */
    pub GetMethodDeclaringClass:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jmethodID, *mut jclass) -> JvmtiError>,
    /*  66 */
    pub GetMethodModifiers:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jmethodID, *mut jint) -> JvmtiError>,
    /*  67 */ pub reserved67: *const c_void,
    /*  68 */ pub GetMaxLocals: *const c_void,
    /*  69 */ pub GetArgumentsSize: *const c_void,
    /*  70 */
    pub GetLineNumberTable: Option<
        unsafe extern "C" fn(
            *mut JvmtiEnv,
            jmethodID,
            *mut jint,
            *mut *mut JvmtiLineNumberEntry,
        ) -> JvmtiError,
    >,
    /*  71 */ pub GetMethodLocation: *const c_void,
    /*  72 */ pub GetLocalVariableTable: *const c_void,
    /*  73 */ pub SetNativeMethodPrefix: *const c_void,
    /*  74 */ pub SetNativeMethodPrefixes: *const c_void,
    /*  75 */ pub GetBytecodes: *const c_void,
    /*  76 */
    pub IsMethodNative:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jmethodID, *mut jboolean) -> JvmtiError>,
    /*  77 */ pub IsMethodSynthetic: *const c_void,
    /*  78 */
    pub GetLoadedClasses:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, *mut jint, *mut *mut jclass) -> JvmtiError>,
    /*  79 */ pub GetClassLoaderClasses: *const c_void,
    /*  80 */ pub PopFrame: *const c_void,
    /*  81 */ pub ForceEarlyReturnObject: *const c_void,
    /*  82 */ pub ForceEarlyReturnInt: *const c_void,
    /*  83 */ pub ForceEarlyReturnLong: *const c_void,
    /*  84 */ pub ForceEarlyReturnFloat: *const c_void,
    /*  85 */ pub ForceEarlyReturnDouble: *const c_void,
    /*  86 */ pub ForceEarlyReturnVoid: *const c_void,
    /*  87 */ pub RedefineClasses: *const c_void,
    /*  88 */
    pub GetVersionNumber: Option<unsafe extern "C" fn(*mut JvmtiEnv, *mut jint) -> JvmtiError>,
    /*  89 */
    pub GetCapabilities:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, *mut JvmtiCapabilities) -> JvmtiError>,
    /*  90 */ pub GetSourceDebugExtension: *const c_void,
    /*  91 */ pub IsMethodObsolete: *const c_void,
    /*  92 */ pub SuspendThreadList: *const c_void,
    /*  93 */ pub ResumeThreadList: *const c_void,
    /*  94 */
    pub AddModuleReads: Option<unsafe extern "C" fn(*mut JvmtiEnv, jobject, jobject) -> JvmtiError>,
    /*  95 */ pub AddModuleExports: *const c_void,
    /*  96 */
    pub AddModuleOpens:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jobject, *const c_char, jobject) -> JvmtiError>,
    /*  97 */ pub AddModuleUses: *const c_void,
    /*  98 */ pub AddModuleProvides: *const c_void,
    /*  99 */ pub IsModifiableModule: *const c_void,
    /* 100 */
    pub GetAllStackTraces: Option<
        unsafe extern "C" fn(
            *mut JvmtiEnv,
            jint,
            *mut *mut JvmtiStackInfo,
            *mut jint,
        ) -> JvmtiError,
    >,
    /* 101 */ pub GetThreadListStackTraces: *const c_void,
    /* 102 */
    pub GetThreadLocalStorage:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jthread, *mut *mut c_void) -> JvmtiError>,
    /* 103 */
    pub SetThreadLocalStorage:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jthread, *const c_void) -> JvmtiError>,
    /* 104 */
    pub GetStackTrace: Option<
        unsafe extern "C" fn(
            *mut JvmtiEnv,
            jthread,
            jint,
            jint,
            *mut JvmtiFrameInfo,
            *mut jint,
        ) -> JvmtiError,
    >,
    /* 105 */ pub reserved105: *const c_void,
    /* 106 */
    pub GetTag: Option<unsafe extern "C" fn(*mut JvmtiEnv, jobject, *mut jlong) -> JvmtiError>,
    /* 107 */
    pub SetTag: Option<unsafe extern "C" fn(*mut JvmtiEnv, jobject, jlong) -> JvmtiError>,
    /* 108 */
    pub ForceGarbageCollection: Option<unsafe extern "C" fn(*mut JvmtiEnv) -> JvmtiError>,
    /* 109 */ pub IterateOverObjectsReachableFromObject: *const c_void,
    /* 110 */ pub IterateOverReachableObjects: *const c_void,
    /* 111 */ pub IterateOverHeap: *const c_void,
    /* 112 */ pub IterateOverInstancesOfClass: *const c_void,
    /* 113 */ pub reserved113: *const c_void,
    /* 114 */ pub GetObjectsWithTags: *const c_void,
    /* 115 */ pub FollowReferences: *const c_void,
    /* 116 */
    pub IterateThroughHeap: Option<
        unsafe extern "C" fn(
            *mut JvmtiEnv,
            jint,
            jclass,
            *const JvmtiHeapCallbacks,
            *const c_void,
        ) -> JvmtiError,
    >,
    /* 117 */ pub reserved117: *const c_void,
    /* 118 */ pub reserved118: *const c_void,
    /* 119 */ pub reserved119: *const c_void,
    /* 120 */
    pub SetJNIFunctionTable: Option<
        unsafe extern "C" fn(*mut JvmtiEnv, *const jni_sys::JNINativeInterface_) -> JvmtiError,
    >,
    /* 121 */
    pub GetJNIFunctionTable: Option<
        unsafe extern "C" fn(*mut JvmtiEnv, *mut *mut jni_sys::JNINativeInterface_) -> JvmtiError,
    >,
    /* 122 */
    pub SetEventCallbacks:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, *const JvmtiEventCallbacks, jint) -> JvmtiError>,
    /* 123 */
    pub GenerateEvents: Option<unsafe extern "C" fn(*mut JvmtiEnv, JvmtiEvent) -> JvmtiError>,
    /* 124 */
    pub GetExtensionFunctions: Option<
        unsafe extern "C" fn(
            *mut JvmtiEnv,
            *mut jint,
            *mut *mut JvmtiExtensionFunctionInfo,
        ) -> JvmtiError,
    >,
    /* 125 */
    pub GetExtensionEvents: Option<
        unsafe extern "C" fn(
            *mut JvmtiEnv,
            *mut jint,
            *mut *mut JvmtiExtensionEventInfo,
        ) -> JvmtiError,
    >,
    /* 126 */
    pub SetExtensionEventCallback:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jint, Option<EventVirtualThread>) -> JvmtiError>,
    /* 127 */
    pub DisposeEnvironment: Option<unsafe extern "C" fn(*mut JvmtiEnv) -> JvmtiError>,
    /* 128 */
    pub GetErrorName:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, JvmtiError, *mut *mut c_char) -> JvmtiError>,
    /* 129 */ pub GetJLocationFormat: *const c_void,
    /* 130 */ pub GetSystemProperties: *const c_void,
    /* 131 */
    pub GetSystemProperty:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, *const c_char, *mut *mut c_char) -> JvmtiError>,
    /* 132 */ pub SetSystemProperty: *const c_void,
    /* 133 */
    pub GetPhase: Option<unsafe extern "C" fn(*mut JvmtiEnv, *mut jint) -> JvmtiError>,
    /* 134 */ pub GetCurrentThreadCpuTimerInfo: *const c_void,
    /* 135 */
    pub GetCurrentThreadCpuTime:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, *mut jlong) -> JvmtiError>,
    /* 136 */ pub GetThreadCpuTimerInfo: *const c_void,
    /* 137 */
    pub GetThreadCpuTime:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jthread, *mut jlong) -> JvmtiError>,
    /* 138 */ pub GetTimerInfo: *const c_void,
    /* 139 */ pub GetTime: *const c_void,
    /* 140 */
    pub GetPotentialCapabilities:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, *mut JvmtiCapabilities) -> JvmtiError>,
    /* 141 */ pub reserved141: *const c_void,
    /* 142 */
    pub AddCapabilities:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, *const JvmtiCapabilities) -> JvmtiError>,
    /* 143 */ pub RelinquishCapabilities: *const c_void,
    /* 144 */ pub GetAvailableProcessors: *const c_void,
    /* 145 */ pub GetClassVersionNumbers: *const c_void,
    /* 146 */ pub GetConstantPool: *const c_void,
    /* 147 */ pub GetEnvironmentLocalStorage: *const c_void,
    /* 148 */ pub SetEnvironmentLocalStorage: *const c_void,
    /* 149 */ pub AddToBootstrapClassLoaderSearch: *const c_void,
    /* 150 */ pub SetVerboseFlag: *const c_void,
    /* 151 */ pub AddToSystemClassLoaderSearch: *const c_void,
    /* 152 */
    pub RetransformClasses:
        Option<unsafe extern "C" fn(*mut JvmtiEnv, jint, *const jclass) -> JvmtiError>,
    /* 153 */
    pub GetOwnedMonitorStackDepthInfo: Option<
        unsafe extern "C" fn(
            *mut JvmtiEnv,
            jthread,
            *mut jint,
            *mut *mut JvmtiMonitorStackDepthInfo,
        ) -> JvmtiError,
    >,
    /* 154 */ pub GetObjectSize: *const c_void,
    /* 155 */ pub GetLocalInstance: *const c_void,
    /* 156 */
    pub SetHeapSamplingInterval: Option<unsafe extern "C" fn(*mut JvmtiEnv, jint) -> JvmtiError>,
}

/// `jvmtiPrimitiveFieldCallback`: one primitive field of an object the
/// heap iteration visits (kind, the field's index, the class's tag, the
/// object's tag, the value, its type, the caller's data). Runs in the VM
/// operation, on the VM thread.
pub type PrimitiveFieldCallback =
    unsafe extern "C" fn(jint, *const jint, jlong, *mut jlong, jvalue, jint, *mut c_void) -> jint;

/// `jvmtiHeapCallbacks`: one slot per kind of heap callback, the first five
/// named, then eleven reserved (all null here but the primitive fields').
#[repr(C)]
pub struct JvmtiHeapCallbacks {
    pub heap_iteration_callback: *const c_void,
    pub heap_reference_callback: *const c_void,
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
            heap_reference_callback: std::ptr::null(),
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

// Layout checks: a wrong slot would call the wrong function.
const PTR: usize = size_of::<*const c_void>();
const fn slot(n: usize) -> usize {
    (n - 1) * PTR
}
const _: () = assert!(size_of::<JvmtiInterface>() == 156 * PTR);
const _: () = assert!(offset_of!(JvmtiInterface, SetEventNotificationMode) == slot(2));
const _: () = assert!(offset_of!(JvmtiInterface, GetAllThreads) == slot(4));
const _: () = assert!(offset_of!(JvmtiInterface, GetThreadInfo) == slot(9));
const _: () = assert!(offset_of!(JvmtiInterface, RunAgentThread) == slot(12));
const _: () = assert!(offset_of!(JvmtiInterface, Allocate) == slot(46));
const _: () = assert!(offset_of!(JvmtiInterface, GetAllModules) == slot(3));
const _: () = assert!(offset_of!(JvmtiInterface, IsModifiableClass) == slot(45));
const _: () = assert!(offset_of!(JvmtiInterface, GetClassLoader) == slot(57));
const _: () = assert!(offset_of!(JvmtiInterface, GetLoadedClasses) == slot(78));
const _: () = assert!(offset_of!(JvmtiInterface, GetClassMethods) == slot(52));
const _: () = assert!(offset_of!(JvmtiInterface, AddModuleReads) == slot(94));
const _: () = assert!(offset_of!(JvmtiInterface, AddModuleOpens) == slot(96));
const _: () = assert!(offset_of!(JvmtiInterface, RetransformClasses) == slot(152));
const _: () = assert!(offset_of!(JvmtiInterface, Deallocate) == slot(47));
const _: () = assert!(offset_of!(JvmtiInterface, GetClassSignature) == slot(48));
const _: () = assert!(offset_of!(JvmtiInterface, GetMethodName) == slot(64));
const _: () = assert!(offset_of!(JvmtiInterface, GetMethodDeclaringClass) == slot(65));
const _: () = assert!(offset_of!(JvmtiInterface, IsMethodNative) == slot(76));
const _: () = assert!(offset_of!(JvmtiInterface, GetVersionNumber) == slot(88));
const _: () = assert!(offset_of!(JvmtiInterface, GetThreadState) == slot(17));
const _: () = assert!(offset_of!(JvmtiInterface, GetAllStackTraces) == slot(100));
const _: () = assert!(offset_of!(JvmtiInterface, GetStackTrace) == slot(104));
const _: () = assert!(offset_of!(JvmtiInterface, GetTag) == slot(106));
const _: () = assert!(offset_of!(JvmtiInterface, SetTag) == slot(107));
const _: () = assert!(offset_of!(JvmtiInterface, SetEventCallbacks) == slot(122));
const _: () = assert!(offset_of!(JvmtiInterface, GetExtensionFunctions) == slot(124));
const _: () = assert!(offset_of!(JvmtiInterface, DisposeEnvironment) == slot(127));
const _: () = assert!(offset_of!(JvmtiInterface, GetErrorName) == slot(128));
const _: () = assert!(offset_of!(JvmtiInterface, GetPhase) == slot(133));
const _: () = assert!(offset_of!(JvmtiInterface, GetCurrentThreadCpuTime) == slot(135));
const _: () = assert!(offset_of!(JvmtiInterface, GetThreadCpuTime) == slot(137));
const _: () = assert!(offset_of!(JvmtiInterface, GetPotentialCapabilities) == slot(140));
const _: () = assert!(offset_of!(JvmtiInterface, AddCapabilities) == slot(142));
const _: () = assert!(offset_of!(JvmtiInterface, SetHeapSamplingInterval) == slot(156));
const _: () = assert!(offset_of!(JvmtiInterface, GetCurrentContendedMonitor) == slot(11));
const _: () = assert!(offset_of!(JvmtiInterface, GetObjectMonitorUsage) == slot(59));
const _: () = assert!(offset_of!(JvmtiInterface, GetObjectHashCode) == slot(58));
const _: () = assert!(offset_of!(JvmtiInterface, GetOwnedMonitorStackDepthInfo) == slot(153));
const _: () = assert!(offset_of!(JvmtiEventCallbacks, MonitorContendedEnter) == (75 - 50) * PTR);
const _: () = assert!(offset_of!(JvmtiInterface, GetClassFields) == slot(53));
const _: () = assert!(offset_of!(JvmtiInterface, GetImplementedInterfaces) == slot(54));
const _: () = assert!(offset_of!(JvmtiInterface, GetFieldName) == slot(60));
const _: () = assert!(offset_of!(JvmtiInterface, GetFieldModifiers) == slot(62));
const _: () = assert!(offset_of!(JvmtiInterface, IterateThroughHeap) == slot(116));
const _: () = assert!(size_of::<JvmtiHeapCallbacks>() == 16 * PTR);
const _: () = assert!(offset_of!(JvmtiHeapCallbacks, primitive_field_callback) == 2 * PTR);
const _: () = assert!(size_of::<JvmtiMonitorUsage>() == 40);
const _: () = assert!(size_of::<JvmtiMonitorStackDepthInfo>() == 16);
const _: () = assert!(size_of::<JvmtiCapabilities>() == 16);
const _: () = assert!(size_of::<JvmtiEventCallbacks>() == 39 * PTR);
const _: () = assert!(offset_of!(JvmtiEventCallbacks, VirtualThreadEnd) == (88 - 50) * PTR);
const _: () = assert!(offset_of!(JvmtiInterface, GetThreadLocalStorage) == slot(102));
const _: () = assert!(offset_of!(JvmtiInterface, SetThreadLocalStorage) == slot(103));
const _: () = assert!(offset_of!(JvmtiInterface, GetExtensionEvents) == slot(125));
const _: () = assert!(offset_of!(JvmtiInterface, SetExtensionEventCallback) == slot(126));
const _: () = assert!(size_of::<JvmtiExtensionEventInfo>() == 40);
const _: () = assert!(offset_of!(JvmtiEventCallbacks, DataDumpRequest) == (71 - 50) * PTR);
const _: () = assert!(offset_of!(JvmtiEventCallbacks, SampledObjectAlloc) == (86 - 50) * PTR);
const _: () = assert!(size_of::<JvmtiFrameInfo>() == 16);
const _: () = assert!(size_of::<JvmtiStackInfo>() == 32);
const _: () = assert!(size_of::<JvmtiThreadInfo>() == 32);
const _: () = assert!(size_of::<JvmtiParamInfo>() == 24);
const _: () = assert!(size_of::<JvmtiExtensionFunctionInfo>() == 56);
