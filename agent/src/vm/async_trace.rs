//! HotSpot's `AsyncGetCallTrace` (exported by libjvm.so, undocumented but
//! stable since JDK 6): walks the *current* thread's Java stack from inside a
//! signal handler, between safepoints. Everything here that the handler calls
//! is async-signal-safe: no allocation, no lock, no JNI call, no panic path.

use super::fault_guard;
use super::handles::VmHandle;
use super::{Jni, Jvmti, JvmtiEvent, MAX_LOCAL_FRAME};
use jni_sys::{jint, jmethodID, JNIEnv, JavaVM};
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

/// One frame as AsyncGetCallTrace writes it (`ASGCT_CallFrame`), and how
/// it ran: `kind` lies in the padding between `lineno` and `method_id`,
/// which AsyncGetCallTrace never writes (the layout is asserted below), so
/// the handler sets it after a walk.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CallFrame {
    /// Bytecode index of a Java frame, -3 for a native method, -1 when unknown.
    pub bci: jint,
    /// How the frame ran: a [`profrj_format::frame_types::FrameType`]'s
    /// code, 0 when not known.
    pub kind: u8,
    pub method: jmethodID,
}

const _: () = assert!(std::mem::size_of::<CallFrame>() == 8 + std::mem::size_of::<jmethodID>());
const _: () = assert!(std::mem::offset_of!(CallFrame, method) == 8);

impl CallFrame {
    /// A frame whose type is not (yet) known.
    pub const fn new(bci: jint, method: jmethodID) -> CallFrame {
        CallFrame {
            bci,
            kind: 0,
            method,
        }
    }
}

/// `lineno` of a native method's frame.
pub const NATIVE_FRAME_BCI: jint = -3;

/// `bci` of a frame that names a stub (or other generated code that is no
/// Java method); its `method` is the name's number in the code map.
pub const STUB_FRAME_BCI: jint = -0x5354;

/// `bci` of a frame in machine code outside the code cache (the VM's own,
/// a library's); its `method` is the pc.
pub const NATIVE_CODE_BCI: jint = -0x4e43;

/// `ASGCT_CallTrace`.
#[repr(C)]
struct CallTrace {
    env: *mut JNIEnv,
    num_frames: jint,
    frames: *mut CallFrame,
}

type AsyncGetCallTrace = unsafe extern "C" fn(*mut CallTrace, jint, *mut c_void);

/// The function, once found (0 = not found yet or absent).
static AGCT: AtomicUsize = AtomicUsize::new(0);
/// The JavaVM, for the handler's GetEnv: null, or a [`VmHandle`]'s pointer
/// (only `init` stores here). An atomic, since the handler reads it.
static VM: AtomicPtr<JavaVM> = AtomicPtr::new(std::ptr::null_mut());

/// Looks the function up in the loaded libjvm.so and remembers the VM. False
/// on a JVM that does not export it (then stacks come from JVMTI).
pub fn init(vm: VmHandle) -> bool {
    VM.store(vm.as_raw(), Ordering::Release);
    if AGCT.load(Ordering::Acquire) != 0 {
        return true;
    }
    let name = c"AsyncGetCallTrace";
    // SAFETY: dlsym with RTLD_DEFAULT searches the objects already loaded
    // (the launcher loads libjvm.so globally); the name is NUL-terminated.
    let mut f = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if f.is_null() {
        // An embedding that loaded libjvm.so locally: open that copy by name.
        // SAFETY: a NUL-terminated name; RTLD_NOLOAD only returns a handle to
        // an object already loaded, so no library code (constructors) runs.
        let lib =
            unsafe { libc::dlopen(c"libjvm.so".as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if !lib.is_null() {
            // SAFETY: a handle dlopen just gave and a NUL-terminated name.
            f = unsafe { libc::dlsym(lib, name.as_ptr()) };
        }
    }
    AGCT.store(f as usize, Ordering::Release);
    !f.is_null()
}

/// Makes AsyncGetCallTrace usable: found in libjvm.so, a jmethodID for
/// every method of the classes loaded so far and, from ClassPrepare on
/// ([`class_prepared`]), of every later one (it names only methods that have
/// one), and CompiledMethodLoad enabled, so the JIT keeps debug information
/// between safepoints (inlined frames everywhere). CompiledMethodUnload and
/// DynamicCodeGenerated are enabled too, and all three replayed once for
/// the code generated before (GenerateEvents): the agent's map of
/// generated code (`crate::code_map`) is built from them.
pub fn prepare(vm: VmHandle, jvmti: Jvmti, jni: &Jni) -> Result<(), super::VmError> {
    if !init(vm) {
        return Err(super::VmError::Missing(
            "this JVM does not export AsyncGetCallTrace".into(),
        ));
    }
    for ev in [
        JvmtiEvent::CLASS_LOAD,
        JvmtiEvent::CLASS_PREPARE,
        JvmtiEvent::COMPILED_METHOD_LOAD,
        JvmtiEvent::COMPILED_METHOD_UNLOAD,
        JvmtiEvent::DYNAMIC_CODE_GENERATED,
    ] {
        jvmti
            .set_event_enabled(ev, true)
            .map_err(|e| super::VmError::jvmti(jvmti, format!("enabling event {}", ev.0), e))?;
    }
    static REPLAYED: std::sync::Once = std::sync::Once::new();
    REPLAYED.call_once(|| {
        // Without the replay, stubs and methods compiled before go unnamed
        // (their samples are still walked when AsyncGetCallTrace can).
        for ev in [
            JvmtiEvent::DYNAMIC_CODE_GENERATED,
            JvmtiEvent::COMPILED_METHOD_LOAD,
        ] {
            if let Err(e) = jvmti.generate_events(ev) {
                crate::log::warn_once(
                    "generate-events",
                    &format!(
                        "sampling: the JVM did not replay event {} ({}); code generated before sampling started is not named",
                        ev.0,
                        jvmti.error_name(e)
                    ),
                );
            }
        }
    });
    jni.with_local_frame(MAX_LOCAL_FRAME, || {
        let Ok(classes) = jvmti.loaded_classes() else {
            return;
        };
        for class in classes {
            // Not yet prepared classes answer an error; ClassPrepare covers them.
            let _ = jvmti.prepare_method_ids(class);
            jni.delete_local_ref(class);
        }
    });
    Ok(())
}

/// A class was prepared: its methods get jmethodIDs now, outside any signal.
pub fn class_prepared(jvmti: Jvmti, class: jni_sys::jclass) {
    let _ = jvmti.prepare_method_ids(class);
}

/// The current thread's JNIEnv, or null for a thread that is not a Java
/// thread or before [`init`]. Async-signal-safe: HotSpot's GetEnv reads a
/// thread-local and allocates nothing.
pub fn current_env() -> *mut JNIEnv {
    let vm = VM.load(Ordering::Acquire);
    if vm.is_null() {
        return std::ptr::null_mut();
    }
    // SAFETY: only `init` stores into VM, a VmHandle's pointer: the process's
    // JavaVM.
    let vm = unsafe { VmHandle::from_raw(vm) };
    vm.get_env(jni_sys::JNI_VERSION_1_6)
        .map_or(std::ptr::null_mut(), |env| env.as_ptr().cast())
}

/// The calling thread's key in the fault guard: its JNIEnv, or for a
/// thread without one (a GC worker, the VM thread: `jvmthreads`) its id,
/// odd so it is never an env's address. Async-signal-safe.
pub fn guard_key() -> usize {
    let env = current_env();
    if env.is_null() {
        ((super::hotspot::current_tid() as u32 as usize) << 1) | 1
    } else {
        env as usize
    }
}

/// Walks the interrupted thread's stack into `frames` (top first, at most
/// `max`). Returns the number of frames, or a negative `ticks_*` code.
///
/// # Safety
/// Only from a signal handler running on the thread whose `env` this is, with
/// `ucontext` the handler's third argument (or null); `frames` must be
/// writable for `max` entries.
pub unsafe fn walk(
    env: *mut JNIEnv,
    frames: *mut CallFrame,
    max: jint,
    ucontext: *mut c_void,
) -> jint {
    let f = AGCT.load(Ordering::Acquire);
    if f == 0 || env.is_null() {
        return NO_FUNCTION;
    }
    let mut call = Call {
        agct: f,
        trace: CallTrace {
            env,
            num_frames: 0,
            frames,
        },
        max,
        ucontext,
    };
    // SAFETY: `call` is live for the call and `call_agct`'s promise holds
    // (the caller's); AsyncGetCallTrace owns nothing a fault would leak (it
    // is written for signal handlers: no lock, no allocation).
    match unsafe { fault_guard::call(env as usize, call_agct, (&mut call as *mut Call).cast()) } {
        Some(_) => call.trace.num_frames,
        None => WALK_FAULT,
    }
}

/// AsyncGetCallTrace's arguments, for the guarded call.
struct Call {
    agct: usize,
    trace: CallTrace,
    max: jint,
    ucontext: *mut c_void,
}

/// Every `TEST_FAULT_EVERY`th walk faults on purpose (a load from an
/// unmapped page) before calling AsyncGetCallTrace: the tests' way to show
/// the fault guard at work. 0 (the default): never. Set only while the guard
/// is installed.
static TEST_FAULT_EVERY: AtomicU64 = AtomicU64::new(0);
static TEST_FAULT_COUNT: AtomicU64 = AtomicU64::new(0);

/// Puts the fault guard around every walk (not under `-Xcheck:jni`:
/// [`fault_guard`]), each thread known to it by its JNIEnv; then reads
/// `PROFRJ_TEST_WALK_FAULT` (a period in walks). On the sampler's side.
pub fn guard_walks() -> Result<(), fault_guard::NotGuarded> {
    let state = fault_guard::install(guard_key);
    configure_test_fault();
    state
}

fn configure_test_fault() {
    let every = std::env::var("PROFRJ_TEST_WALK_FAULT")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    if fault_guard::installed() {
        TEST_FAULT_EVERY.store(every, Ordering::Release);
    }
}

/// # Safety
/// `arg` is a live [`Call`] whose `agct` is AsyncGetCallTrace's address and
/// whose trace, depth and context satisfy [`walk`]'s promise.
unsafe extern "C" fn call_agct(arg: *mut c_void) -> i64 {
    let every = TEST_FAULT_EVERY.load(Ordering::Relaxed);
    if every > 0
        && TEST_FAULT_COUNT
            .fetch_add(1, Ordering::Relaxed)
            .is_multiple_of(every)
    {
        // SAFETY: a load from address 16, never mapped: a fault, which the
        // guard (installed: `configure_test_fault`) turns into WALK_FAULT.
        unsafe { std::arch::asm!("mov {0}, qword ptr [{0}]", inout(reg) 16usize => _) };
    }
    // SAFETY: the caller's promise.
    let call = unsafe { &mut *(arg as *mut Call) };
    // SAFETY: `agct` is AsyncGetCallTrace's address (`init`: dlsym), whose C
    // signature this is; `trace` is a live CallTrace naming the caller's env
    // and frames, and the caller guarantees thread, context and room.
    unsafe {
        let agct: AsyncGetCallTrace = std::mem::transmute(call.agct);
        agct(&mut call.trace, call.max, call.ucontext);
    }
    0
}

/// HotSpot's codes for a thread in Java code whose top frame it cannot use
/// (a method's entry or exit, a stub), and whose stack it cannot walk.
pub const UNKNOWN_JAVA: jint = -5;
pub const NOT_WALKABLE_JAVA: jint = -6;
/// The same for a thread in the VM or native code: no usable last Java
/// frame, or one it cannot walk from.
pub const UNKNOWN_NOT_JAVA: jint = -3;
pub const NOT_WALKABLE_NOT_JAVA: jint = -4;

/// Not one of HotSpot's codes: the function is missing or the thread has no JNIEnv.
pub const NO_FUNCTION: jint = -100;
/// Not one of HotSpot's codes: too little stack left to walk safely.
pub const NEAR_STACK_LIMIT: jint = -101;
/// Not one of HotSpot's codes: the walk faulted and the guard ended it.
pub const WALK_FAULT: jint = -102;

/// Not a failure: the frame the sampler puts where a walk skipped a virtual
/// thread's frames still frozen in its heap stack chunk (JDK 21+: HotSpot
/// thaws only a mounted continuation's top frames, and AsyncGetCallTrace
/// goes from the last thawed frame straight to `Continuation.enterSpecial`).
pub const FROZEN_FRAMES: jint = -103;

/// The synthetic frame a failed walk's sample is counted under: HotSpot's own
/// names for its `ticks_*` codes (as async-profiler prints them), and the
/// sampler's own marks.
pub fn failure_name(code: jint) -> &'static str {
    match code {
        0 => "[no_Java_frame]",
        -1 => "[no_class_load]",
        -2 => "[GC_active]",
        -3 => "[unknown_not_Java]",
        -4 => "[not_walkable_not_Java]",
        -5 => "[unknown_Java]",
        -6 => "[not_walkable_Java]",
        -7 => "[unknown_state]",
        -8 => "[thread_exit]",
        -9 => "[deopt]",
        -10 => "[safepoint]",
        NO_FUNCTION => "[not_Java_thread]",
        NEAR_STACK_LIMIT => "[near_stack_limit]",
        WALK_FAULT => "[walk_fault]",
        FROZEN_FRAMES => "[frozen_frames]",
        _ => "[unknown_failure]",
    }
}
