//! What tracking objects with JVMTI tags costs, against the weak references
//! the memory mode uses: a minimal agent for `profrj.harness.TagBench`.
//!
//!     cargo build --release -p profrj-agent --example tag_cost
//!     java -agentpath:target/release/examples/libtag_cost.so \
//!          -cp <harness classes> profrj.harness.TagBench target/release/examples/libtag_cost.so
//!
//! (`scripts/memory-bench` does both.) `Agent_OnLoad` adds `can_tag_objects`
//! and `can_generate_object_free_events` and counts ObjectFree events in an
//! atomic; `TagBench.tag(Object, long)` is one JNI call plus one `SetTag`, as
//! a tag-based tracker would pay per allocation. Self-contained: only the four
//! JVMTI functions used are declared, by their slot in `jvmtiInterface_1`.

use jni_sys::{jclass, jint, jlong, jobject, JNIEnv, JavaVM, JNI_OK};
use std::ffi::{c_char, c_void};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// `jvmtiEnv`: a pointer to the function table, read here as raw slots.
type JvmtiEnv = *const *const c_void;

const JVMTI_VERSION_1_2: jint = 0x3001_0200;
const JVMTI_ENABLE: jint = 1;
const JVMTI_EVENT_VM_INIT: usize = 50;
const JVMTI_EVENT_OBJECT_FREE: jint = 83;

// 1-based function numbers from jvmti.h ("/* 107 : Set Tag */" and so on);
// slot n of the table is at index n - 1 (slot 1 is reserved).
const SET_EVENT_NOTIFICATION_MODE: usize = 2;
const SET_TAG: usize = 107;
const SET_EVENT_CALLBACKS: usize = 122;
const ADD_CAPABILITIES: usize = 142;

type SetEventNotificationMode =
    unsafe extern "C" fn(*mut JvmtiEnv, jint, jint, *mut c_void, ...) -> jint;
type SetTag = unsafe extern "C" fn(*mut JvmtiEnv, jobject, jlong) -> jint;
type SetEventCallbacks = unsafe extern "C" fn(*mut JvmtiEnv, *const c_void, jint) -> jint;
type AddCapabilities = unsafe extern "C" fn(*mut JvmtiEnv, *const [u32; 4]) -> jint;
type ObjectFree = unsafe extern "C" fn(*mut JvmtiEnv, jlong);

static ENV: AtomicPtr<JvmtiEnv> = AtomicPtr::new(std::ptr::null_mut());
static SET_TAG_FN: AtomicPtr<c_void> = AtomicPtr::new(std::ptr::null_mut());
static FREES: AtomicU64 = AtomicU64::new(0);
static TAG_ERRORS: AtomicU64 = AtomicU64::new(0);

/// Slot `n` (1-based) of the environment's function table.
///
/// # Safety
/// `env` must be a live jvmtiEnv and `n` a slot number jvmti.h defines.
unsafe fn slot(env: *mut JvmtiEnv, n: usize) -> *const c_void {
    // SAFETY: per the contract, `*env` is the VM's table of at least `n` slots.
    unsafe { *(*env).add(n - 1) }
}

/// The ObjectFree callback: counts, and reads neither argument.
extern "C" fn object_free(_env: *mut JvmtiEnv, _tag: jlong) {
    FREES.fetch_add(1, Ordering::Relaxed);
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
        eprintln!("tag_cost: no JVMTI 1.2 environment ({rc})");
        return 1;
    }
    let env = env as *mut JvmtiEnv;
    // jvmtiCapabilities is 128 one-bit fields, allocated from the low bit up:
    // can_tag_objects is bit 0, can_generate_object_free_events bit 32.
    let caps: [u32; 4] = [1, 1, 0, 0];
    // jvmtiEventCallbacks: one pointer per event from VMInit (50) on.
    let mut callbacks = [std::ptr::null::<c_void>(); 40];
    callbacks[JVMTI_EVENT_OBJECT_FREE as usize - JVMTI_EVENT_VM_INIT] =
        object_free as ObjectFree as *const c_void;
    // SAFETY: each slot is cast to the type jvmti.h gives its function number;
    // the arguments are live locals of the layouts those functions read.
    let errors = unsafe {
        let add: AddCapabilities = std::mem::transmute(slot(env, ADD_CAPABILITIES));
        let set_callbacks: SetEventCallbacks = std::mem::transmute(slot(env, SET_EVENT_CALLBACKS));
        let notify: SetEventNotificationMode =
            std::mem::transmute(slot(env, SET_EVENT_NOTIFICATION_MODE));
        [
            add(env, &caps),
            set_callbacks(
                env,
                callbacks.as_ptr().cast(),
                std::mem::size_of_val(&callbacks) as jint,
            ),
            notify(
                env,
                JVMTI_ENABLE,
                JVMTI_EVENT_OBJECT_FREE,
                std::ptr::null_mut(),
            ),
        ]
    };
    if errors != [0, 0, 0] {
        eprintln!("tag_cost: JVMTI set-up failed: {errors:?}");
        return 1;
    }
    // SAFETY: as above, a valid environment and slot number.
    SET_TAG_FN.store(
        unsafe { slot(env, SET_TAG) } as *mut c_void,
        Ordering::Release,
    );
    ENV.store(env, Ordering::Release);
    0
}

/// `static native void tag(Object o, long tag)`: one SetTag.
///
/// # Safety
/// Called by the JVM through the native method binding.
#[no_mangle]
pub unsafe extern "system" fn Java_profrj_harness_TagBench_tag(
    _jni: *mut JNIEnv,
    _class: jclass,
    object: jobject,
    tag: jlong,
) {
    let env = ENV.load(Ordering::Acquire);
    if env.is_null() {
        // Loaded by System.load without -agentpath: no environment to tag with.
        TAG_ERRORS.fetch_add(1, Ordering::Relaxed);
        return;
    }
    // SAFETY: set once in Agent_OnLoad before any Java code ran; SetTag's type
    // is the one jvmti.h gives slot 107; `object` is a live local reference.
    let rc = unsafe {
        let set_tag: SetTag = std::mem::transmute(SET_TAG_FN.load(Ordering::Acquire));
        set_tag(env, object, tag)
    };
    if rc != 0 {
        TAG_ERRORS.fetch_add(1, Ordering::Relaxed);
    }
}

/// `static native long frees()`: ObjectFree events so far.
#[no_mangle]
pub extern "system" fn Java_profrj_harness_TagBench_frees(
    _jni: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    FREES.load(Ordering::Relaxed) as jlong
}

/// `static native long tagErrors()`: SetTag calls that failed (must stay 0).
#[no_mangle]
pub extern "system" fn Java_profrj_harness_TagBench_tagErrors(
    _jni: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    TAG_ERRORS.load(Ordering::Relaxed) as jlong
}

// --- JNI weak global references, the other per-object death signal ---

thread_local! {
    /// Weak references made by this thread, handed over by `flushWeak`.
    static MINE: std::cell::RefCell<Vec<usize>> = const { std::cell::RefCell::new(Vec::new()) };
}
/// Every thread's weak references once handed over: what `scanWeak` checks.
static ALL_WEAK: std::sync::Mutex<Vec<usize>> = std::sync::Mutex::new(Vec::new());

/// `static native void weakRef(Object o)`: one NewWeakGlobalRef, kept by
/// the calling thread (no lock), as a tracker would per allocation.
///
/// # Safety
/// Called by the JVM through the native method binding.
#[no_mangle]
pub unsafe extern "system" fn Java_profrj_harness_TagBench_weakRef(
    jni: *mut JNIEnv,
    _class: jclass,
    object: jobject,
) {
    // SAFETY: `jni` is the calling thread's environment; `object` a live local reference.
    let weak = unsafe { ((**jni).NewWeakGlobalRef.unwrap())(jni, object) };
    if weak.is_null() {
        TAG_ERRORS.fetch_add(1, Ordering::Relaxed);
        return;
    }
    MINE.with(|m| m.borrow_mut().push(weak as usize));
}

/// `static native void flushWeak()`: this thread's weak references join
/// the shared list (once per loop, not per object).
#[no_mangle]
pub extern "system" fn Java_profrj_harness_TagBench_flushWeak(_jni: *mut JNIEnv, _class: jclass) {
    let mine = MINE.with(|m| std::mem::take(&mut *m.borrow_mut()));
    ALL_WEAK.lock().unwrap().extend(mine);
}

/// `static native long scanWeak()`: checks every weak reference handed over
/// (IsSameObject with null: cleared by a GC), deletes the cleared ones and
/// returns how many there were: the frees a tracker would count.
///
/// # Safety
/// Called by the JVM through the native method binding.
#[no_mangle]
pub unsafe extern "system" fn Java_profrj_harness_TagBench_scanWeak(
    jni: *mut JNIEnv,
    _class: jclass,
) -> jlong {
    let mut all = ALL_WEAK.lock().unwrap();
    let mut freed = 0;
    // SAFETY: `jni` is the calling thread's environment; every entry is a
    // weak global reference made by `weakRef` and not yet deleted.
    all.retain(|&w| unsafe {
        let w = w as jobject;
        if ((**jni).IsSameObject.unwrap())(jni, w, std::ptr::null_mut()) != 0 {
            ((**jni).DeleteWeakGlobalRef.unwrap())(jni, w);
            freed += 1;
            false
        } else {
            true
        }
    });
    freed
}
