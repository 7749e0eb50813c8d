//! HotSpot's `AsyncGetCallTrace` (exported by libjvm.so, undocumented but
//! stable since JDK 6): walks the *current* thread's Java stack from inside a
//! signal handler, between safepoints. Everything here that the handler calls
//! is async-signal-safe: no allocation, no lock, no JNI call, no panic path.

use super::handles::VmHandle;
use super::{Jni, Jvmti, JvmtiEvent, MAX_LOCAL_FRAME};
use jni_sys::{jint, jmethodID, JNIEnv, JavaVM};
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, AtomicUsize, Ordering};

/// One frame as AsyncGetCallTrace writes it (`ASGCT_CallFrame`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct CallFrame {
    /// Bytecode index of a Java frame, -3 for a native method, -1 when unknown.
    pub bci: jint,
    pub method: jmethodID,
}

/// `lineno` of a native method's frame.
pub const NATIVE_FRAME_BCI: jint = -3;

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
/// between safepoints (inlined frames everywhere).
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
    ] {
        jvmti
            .set_event_enabled(ev, true)
            .map_err(|e| super::VmError::jvmti(jvmti, format!("enabling event {}", ev.0), e))?;
    }
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
    let mut trace = CallTrace {
        env,
        num_frames: 0,
        frames,
    };
    // SAFETY: `f` is AsyncGetCallTrace's address (`init`: dlsym), whose C
    // signature this is; `trace` is a live CallTrace naming the caller's env
    // and frames, and the caller guarantees thread, context and room.
    unsafe {
        let agct: AsyncGetCallTrace = std::mem::transmute(f);
        agct(&mut trace, max, ucontext);
    }
    trace.num_frames
}

/// HotSpot's codes for a thread in Java code whose top frame it cannot use
/// (a method's entry or exit, a stub), and whose stack it cannot walk.
pub const UNKNOWN_JAVA: jint = -5;
pub const NOT_WALKABLE_JAVA: jint = -6;

/// [`walk`], and when it fails on a thread in Java code (the top frame is a
/// stub or a method's prologue or epilogue, with no frame set up), once more
/// from the caller: the return address on top of the stack, if it lies in
/// the code cache and the stack pointer in the thread's stack (as
/// async-profiler did before its own walker). The caller's stack then gets
/// a synthetic top frame (`bci` = the failure code, no method), so the
/// sample keeps its context but does not pretend to know the top.
///
/// # Safety
/// As [`walk`]; `ucontext` is modified during the retry and restored.
/// Arithmetic here wraps instead of checking, so no path can panic.
pub unsafe fn walk_recovering(
    env: *mut JNIEnv,
    frames: *mut CallFrame,
    max: jint,
    ucontext: *mut c_void,
) -> jint {
    // SAFETY: the caller's promise is `walk`'s.
    let code = unsafe { walk(env, frames, max, ucontext) };
    if (code != UNKNOWN_JAVA && code != NOT_WALKABLE_JAVA) || max < 2 || ucontext.is_null() {
        return code;
    }
    // SAFETY: the caller's promise, and `max >= 2`, `ucontext` non-null
    // (checked above).
    unsafe { retry_from_caller(env, frames, max, ucontext, code) }.unwrap_or(code)
}

/// The retry of [`walk_recovering`]: `walk` again from the caller's frame,
/// with the context's registers moved there and then restored.
///
/// # Safety
/// As [`walk`], with `max >= 2` and `ucontext` the handler's non-null
/// `ucontext_t`.
#[cfg(target_arch = "x86_64")]
unsafe fn retry_from_caller(
    env: *mut JNIEnv,
    frames: *mut CallFrame,
    max: jint,
    ucontext: *mut c_void,
    code: jint,
) -> Option<jint> {
    use libc::{REG_RBP, REG_RIP, REG_RSP};
    // SAFETY: `env` is the calling thread's own JNIEnv (the caller's promise).
    let (low, high) = unsafe { super::hotspot::stack_bounds(env) }?;
    let uc = ucontext as *mut libc::ucontext_t;
    // The registers stay behind a raw pointer, not a `&mut`: AsyncGetCallTrace
    // reads them through `ucontext` between our writes.
    // SAFETY: the kernel's ucontext_t for this signal (non-null, the caller's
    // promise), this handler's alone until it returns; no reference is made.
    let gregs = unsafe { std::ptr::addr_of_mut!((*uc).uc_mcontext.gregs) };
    let set = |pc: i64, sp: i64, fp: i64| {
        // SAFETY: `gregs` points into the live ucontext_t (above); the indices
        // are registers of x86-64's gregs array.
        unsafe {
            (*gregs)[REG_RIP as usize] = pc;
            (*gregs)[REG_RSP as usize] = sp;
            (*gregs)[REG_RBP as usize] = fp;
        }
    };
    // SAFETY: as for `set`.
    let saved = unsafe {
        (
            (*gregs)[REG_RIP as usize],
            (*gregs)[REG_RSP as usize],
            (*gregs)[REG_RBP as usize],
        )
    };
    // A word of this thread's stack, if `at` is an aligned address in it.
    let word = |at: usize| -> Option<usize> {
        let in_stack = at >= low && at.checked_add(8)? <= high && at.is_multiple_of(8);
        // SAFETY: an aligned word inside this thread's own stack, between its
        // bounds as HotSpot has them: mapped, and only this thread writes it.
        // Volatile: memory of other frames, read as the machine has it.
        in_stack.then(|| unsafe { std::ptr::read_volatile(at as *const usize) })
    };
    let (sp, fp) = (saved.1 as usize, saved.2 as usize);
    // Two guesses at the caller, as (pc, sp, fp): no frame set up yet (or
    // already torn down), so the return address is on top of the stack; or a
    // frame-pointer frame (stubs, the interpreter): return address above fp.
    let guesses = [
        word(sp).map(|ret| (ret, sp.wrapping_add(8), fp)),
        (fp > sp)
            .then(|| Some((word(fp.checked_add(8)?)?, fp.wrapping_add(16), word(fp)?)))
            .flatten(),
    ];
    let mut result = None;
    for (ret, new_sp, new_fp) in guesses.into_iter().flatten() {
        if !super::hotspot::in_code_cache(ret) {
            continue;
        }
        set(ret as i64, new_sp as i64, new_fp as i64);
        // SAFETY: `walk`'s promise holds as for the first walk; `frames + 1`
        // is writable for `max - 1` entries (`max >= 2`).
        let n = unsafe { walk(env, frames.add(1), max - 1, ucontext) };
        if n > 0 {
            result = Some(n + 1);
            break;
        }
    }
    set(saved.0, saved.1, saved.2);
    if result.is_some() {
        // SAFETY: `frames` is writable for `max >= 2` entries.
        unsafe {
            *frames = CallFrame {
                bci: code,
                method: std::ptr::null_mut(),
            }
        };
    }
    result
}

/// No retry on other architectures.
///
/// # Safety
/// None needed; `unsafe` only to match the x86-64 version.
#[cfg(not(target_arch = "x86_64"))]
unsafe fn retry_from_caller(
    _env: *mut JNIEnv,
    _frames: *mut CallFrame,
    _max: jint,
    _ucontext: *mut c_void,
    _code: jint,
) -> Option<jint> {
    None
}

/// Not one of HotSpot's codes: the function is missing or the thread has no JNIEnv.
pub const NO_FUNCTION: jint = -100;
/// Not one of HotSpot's codes: too little stack left to walk safely.
pub const NEAR_STACK_LIMIT: jint = -101;

/// The synthetic frame a failed walk's sample is counted under: HotSpot's own
/// names for its `ticks_*` codes (as async-profiler prints them).
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
        _ => "[unknown_failure]",
    }
}
