//! Raw JVMTI bindings, written by hand against JDK 17's `jvmti.h`.
//!
//! Only this module and its siblings in `vm/` touch raw pointers from the VM.
//! Error and event codes are integer newtypes, never Rust enums: a newer JVM may
//! return a code this file does not know, and an unknown enum discriminant is
//! undefined behaviour. Slots the agent does not call are kept as plain pointers
//! so the table's layout is exact; `const` asserts pin sizes and offsets, beside
//! what they pin.
//!
//! Here: the scalar types, codes and constants, capabilities, and the structs
//! JVMTI functions fill in. `table.rs` holds the function table, the long
//! list of slots the safe wrappers call; `callbacks.rs` the functions the VM
//! calls (events, agent threads, heap iteration) and the tables of them.
#![allow(non_snake_case, non_camel_case_types, dead_code)]

use jni_sys::{jint, jlong, jmethodID, jobject};
use std::ffi::{c_char, c_void};
use std::mem::size_of;

mod callbacks;
mod table;

pub use callbacks::*;
pub use table::JvmtiInterface;

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
    pub const RESOURCE_EXHAUSTED: Self = Self(80);
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
pub struct JvmtiThreadGroupInfo {
    pub parent: jthreadGroup,
    pub name: *mut c_char,
    pub max_priority: jint,
    pub is_daemon: jboolean,
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

/// A pointer's size: one slot of the tables (`table.rs`, `callbacks.rs`).
const PTR: usize = size_of::<*const c_void>();

// Layout checks of the structs above (the tables' are in their files).
const _: () = assert!(size_of::<JvmtiMonitorUsage>() == 40);
const _: () = assert!(size_of::<JvmtiMonitorStackDepthInfo>() == 16);
const _: () = assert!(size_of::<JvmtiCapabilities>() == 16);
const _: () = assert!(size_of::<JvmtiExtensionEventInfo>() == 40);
const _: () = assert!(size_of::<JvmtiFrameInfo>() == 16);
const _: () = assert!(size_of::<JvmtiStackInfo>() == 32);
const _: () = assert!(size_of::<JvmtiThreadInfo>() == 32);
const _: () = assert!(size_of::<JvmtiParamInfo>() == 24);
const _: () = assert!(size_of::<JvmtiExtensionFunctionInfo>() == 56);
