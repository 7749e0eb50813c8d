//! What a heap census costs: a minimal agent for `profrj.harness.CensusBench`.
//!
//!     cargo build --release -p profrj-agent --example census_cost
//!     java -agentpath:target/release/examples/libcensus_cost.so \
//!          -cp <harness classes> profrj.harness.CensusBench 1000000 0
//!
//! `census` is JVMTI IterateThroughHeap with JVMTI_HEAP_FILTER_CLASS_UNTAGGED
//! (only objects of tagged classes reach a callback) and a primitive-field
//! callback that counts the long fields holding a stamp; `walk` visits every
//! object with a heap-iteration callback. Self-contained: only the JVMTI
//! functions used are declared, by their slot in `jvmtiInterface_1`.

use jni_sys::{jclass, jint, jlong, jlongArray, jobject, jvalue, JNIEnv, JavaVM, JNI_OK};
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};

type JvmtiEnv = *const *const c_void;

const JVMTI_VERSION_1_2: jint = 0x3001_0200;
const SET_TAG: usize = 107;
const ITERATE_THROUGH_HEAP: usize = 116;
const ADD_CAPABILITIES: usize = 142;
const FILTER_CLASS_UNTAGGED: jint = 0x20;
const PRIMITIVE_LONG: jint = 74;
const MAGIC: i64 = 0x5EA1 << 48;

type SetTag = unsafe extern "C" fn(*mut JvmtiEnv, jobject, jlong) -> jint;
type AddCapabilities = unsafe extern "C" fn(*mut JvmtiEnv, *const [u32; 4]) -> jint;
type HeapIteration = extern "C" fn(jlong, jlong, *mut jlong, jint, *mut c_void) -> jint;
type PrimitiveField =
    extern "C" fn(jint, *const jint, jlong, *mut jlong, jvalue, jint, *mut c_void) -> jint;
type IterateThroughHeap = unsafe extern "C" fn(
    *mut JvmtiEnv,
    jint,
    jclass,
    *const [*const c_void; 16],
    *const c_void,
) -> jint;

static ENV: AtomicPtr<JvmtiEnv> = AtomicPtr::new(std::ptr::null_mut());

/// Slot `n` (1-based) of the environment's function table.
///
/// # Safety
/// `env` must be a live jvmtiEnv and `n` a slot number jvmti.h defines.
unsafe fn slot(env: *mut JvmtiEnv, n: usize) -> *const c_void {
    // SAFETY: per the contract, `*env` is the VM's table of at least `n` slots.
    unsafe { *(*env).add(n - 1) }
}

/// # Safety
/// Called by the JVM with a valid `JavaVM`.
#[no_mangle]
pub unsafe extern "system" fn Agent_OnLoad(
    vm: *mut JavaVM,
    _options: *mut c_char,
    _reserved: *mut c_void,
) -> jint {
    let mut env: *mut c_void = std::ptr::null_mut();
    // SAFETY: `vm` is the VM's invocation interface; GetEnv is filled in every JVM.
    let rc = unsafe { ((**vm).GetEnv.unwrap())(vm, &mut env, JVMTI_VERSION_1_2) };
    if rc != JNI_OK || env.is_null() {
        return 1;
    }
    let env = env as *mut JvmtiEnv;
    let caps: [u32; 4] = [1, 0, 0, 0]; // can_tag_objects
                                       // SAFETY: slot 142 is AddCapabilities; `caps` outlives the call.
    let rc = unsafe {
        let add: AddCapabilities = std::mem::transmute(slot(env, ADD_CAPABILITIES));
        add(env, &caps)
    };
    if rc != 0 {
        return 1;
    }
    ENV.store(env, Ordering::Release);
    0
}

/// # Safety
/// Called by the JVM through the native method binding.
#[no_mangle]
pub unsafe extern "system" fn Java_profrj_harness_CensusBench_tagClass(
    _jni: *mut JNIEnv,
    _class: jclass,
    c: jclass,
) {
    let env = ENV.load(Ordering::Acquire);
    // SAFETY: slot 107 is SetTag; `c` is a live local reference.
    unsafe {
        let set: SetTag = std::mem::transmute(slot(env, SET_TAG));
        set(env, c, 1);
    }
}

extern "C" fn count_stamps(
    _kind: jint,
    _info: *const jint,
    class_tag: jlong,
    _tag: *mut jlong,
    value: jvalue,
    value_type: jint,
    user: *mut c_void,
) -> jint {
    if class_tag == 1 && value_type == PRIMITIVE_LONG {
        // SAFETY: a long field's value is its `j`.
        let v = unsafe { value.j };
        if v & (0xFFFF << 48) == MAGIC {
            // SAFETY: `user` is the &mut u64 `census` passed.
            unsafe { *(user as *mut u64) += 1 };
        }
    }
    0
}

extern "C" fn count_objects(
    _c: jlong,
    _s: jlong,
    _t: *mut jlong,
    _l: jint,
    user: *mut c_void,
) -> jint {
    // SAFETY: `user` is the &mut u64 `walk` passed.
    unsafe { *(user as *mut u64) += 1 };
    0
}

/// One IterateThroughHeap with `callbacks`; the count and the ns it took.
fn iterate(filter: jint, callbacks: [*const c_void; 16]) -> (u64, u64) {
    let env = ENV.load(Ordering::Acquire);
    let mut n: u64 = 0;
    let start = std::time::Instant::now();
    // SAFETY: slot 116 is IterateThroughHeap; the callbacks have the types
    // jvmti.h gives their slots; `n` outlives the call.
    unsafe {
        let it: IterateThroughHeap = std::mem::transmute(slot(env, ITERATE_THROUGH_HEAP));
        it(
            env,
            filter,
            std::ptr::null_mut(),
            &callbacks,
            &mut n as *mut u64 as *const c_void,
        );
    }
    (n, start.elapsed().as_nanos() as u64)
}

fn answer(jni: *mut JNIEnv, ns: jlongArray, (n, t): (u64, u64)) -> jlong {
    let v = [0, t as jlong];
    // SAFETY: `jni` is the caller's environment; `ns` a long[2].
    unsafe { ((**jni).SetLongArrayRegion.unwrap())(jni, ns, 0, 2, v.as_ptr()) };
    n as jlong
}

/// # Safety
/// Called by the JVM through the native method binding.
#[no_mangle]
pub unsafe extern "system" fn Java_profrj_harness_CensusBench_census(
    jni: *mut JNIEnv,
    _class: jclass,
    ns: jlongArray,
) -> jlong {
    let mut cb = [std::ptr::null::<c_void>(); 16];
    cb[2] = count_stamps as PrimitiveField as *const c_void;
    answer(jni, ns, iterate(FILTER_CLASS_UNTAGGED, cb))
}

/// # Safety
/// Called by the JVM through the native method binding.
#[no_mangle]
pub unsafe extern "system" fn Java_profrj_harness_CensusBench_walk(
    jni: *mut JNIEnv,
    _class: jclass,
    ns: jlongArray,
) -> jlong {
    let mut cb = [std::ptr::null::<c_void>(); 16];
    cb[0] = count_objects as HeapIteration as *const c_void;
    answer(jni, ns, iterate(0, cb))
}
