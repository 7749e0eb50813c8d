//! The JVMTI function table (`jvmtiInterface_1`), written by hand against
//! JDK 17's `jvmti.h`: every slot in order, typed where the agent calls it.
//! Apart from the types it names because it is long and only `jvmti/`'s
//! `jvmti_call!` reads it.
#![allow(non_snake_case, non_camel_case_types, dead_code)]

use super::*;
use jni_sys::{jclass, jfieldID, jint, jlong, jmethodID, jobject};
use std::ffi::{c_char, c_void};
use std::mem::{offset_of, size_of};

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
    /*  14 */
    pub GetThreadGroupInfo: Option<
        unsafe extern "C" fn(*mut JvmtiEnv, jthreadGroup, *mut JvmtiThreadGroupInfo) -> JvmtiError,
    >,
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
    /* 115 */
    pub FollowReferences: Option<
        unsafe extern "C" fn(
            *mut JvmtiEnv,
            jint,
            jclass,
            jobject,
            *const JvmtiHeapCallbacks,
            *const c_void,
        ) -> JvmtiError,
    >,
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

// Layout checks: a wrong slot would call the wrong function.
const fn slot(n: usize) -> usize {
    (n - 1) * PTR
}
const _: () = assert!(size_of::<JvmtiInterface>() == 156 * PTR);
const _: () = assert!(offset_of!(JvmtiInterface, SetEventNotificationMode) == slot(2));
const _: () = assert!(offset_of!(JvmtiInterface, GetAllThreads) == slot(4));
const _: () = assert!(offset_of!(JvmtiInterface, GetThreadInfo) == slot(9));
const _: () = assert!(offset_of!(JvmtiInterface, GetThreadGroupInfo) == slot(14));
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
const _: () = assert!(offset_of!(JvmtiInterface, GetClassFields) == slot(53));
const _: () = assert!(offset_of!(JvmtiInterface, GetImplementedInterfaces) == slot(54));
const _: () = assert!(offset_of!(JvmtiInterface, GetFieldName) == slot(60));
const _: () = assert!(offset_of!(JvmtiInterface, GetFieldModifiers) == slot(62));
const _: () = assert!(offset_of!(JvmtiInterface, IterateThroughHeap) == slot(116));
const _: () = assert!(offset_of!(JvmtiInterface, GetThreadLocalStorage) == slot(102));
const _: () = assert!(offset_of!(JvmtiInterface, SetThreadLocalStorage) == slot(103));
const _: () = assert!(offset_of!(JvmtiInterface, GetExtensionEvents) == slot(125));
const _: () = assert!(offset_of!(JvmtiInterface, SetExtensionEventCallback) == slot(126));
