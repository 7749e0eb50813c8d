//! Native frames in sampled stacks (`cstack=`), as async-profiler's
//! `cstack` option: the C and C++ frames above a thread's last Java frame
//! (a JNI library's code, libc, the JVM's own code under a runtime call),
//! walked in the signal handler from the signal's registers, then the Java
//! frames as AsyncGetCallTrace gives them.
//!
//! - `fp`: the frame-pointer chain (rbp), as async-profiler's default;
//!   exact in code built with frame pointers (libjvm is), loses frames (or
//!   stops) in code built without (libc).
//! - `dwarf`: each object's `.eh_frame` rules (`cfi.rs`), read from its file
//!   when the object appears; where an address has no rule, the frame
//!   pointer.
//!
//! Here: the mode, the sampler thread's side (the loaded objects, their
//! rules published for the handler, their symbols for names) and the walk
//! the handler calls. Apart: the ELF reader (`elf.rs`), the rules
//! (`cfi.rs`), the objects (`objects.rs`), the handler's copy (`table.rs`),
//! the walk (`walk.rs`), the names (`names.rs`) and the kernel's frames'
//! names (`kernel.rs`, for `kernel=on`'s chains).

mod cfi;
mod elf;
mod kernel;
mod names;
mod objects;
mod table;
mod walk;

pub use walk::{native_frames, Regs, Stack};

use crate::log;
use crate::vm::async_trace::{CallFrame, NATIVE_CODE_BCI};
use crate::vm::{fault_guard, hotspot};
use jni_sys::{jint, JNIEnv};
use objects::Loaded;
use parking_lot::Mutex;
use profrj_format::frame_types::FrameType;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

/// What went wrong reading an object's file.
#[derive(Debug, Clone, thiserror::Error)]
pub enum NativeError {
    #[error("reading native symbols: {0}")]
    Elf(String),
}

/// `cstack=`: how native frames are walked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CStack {
    No = 0,
    Fp = 1,
    Dwarf = 2,
}

impl CStack {
    /// The option's value (`no`, `fp`, `dwarf`); None for another word.
    pub fn from_word(w: &str) -> Option<CStack> {
        Some(match w {
            "no" => CStack::No,
            "fp" => CStack::Fp,
            "dwarf" => CStack::Dwarf,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            CStack::No => "no",
            CStack::Fp => "fp",
            CStack::Dwarf => "dwarf",
        }
    }
}

/// The session's mode, for the handler (only x86-64 walks).
static MODE: AtomicU8 = AtomicU8::new(CStack::No as u8);

pub fn mode() -> CStack {
    match MODE.load(Ordering::Acquire) {
        1 => CStack::Fp,
        2 => CStack::Dwarf,
        _ => CStack::No,
    }
}

/// Sets the session's mode and, unless `no`, reads the loaded objects now.
pub fn configure(mode: CStack) {
    let mode = if cfg!(target_arch = "x86_64") {
        mode
    } else {
        CStack::No
    };
    {
        let mut state = STATE.lock();
        if state.mode != Some(mode) {
            // Rules read or not: the objects are read again for this mode.
            *state = State {
                mode: Some(mode),
                ..State::default()
            };
        }
    }
    refresh();
    MODE.store(mode as u8, Ordering::Release);
}

/// One loaded object as the sampler side keeps it.
struct Object {
    loaded: Loaded,
    kind: u8,
    rows: Option<Arc<[cfi::Row]>>,
    symbols: names::Symbols,
}

#[derive(Default)]
struct State {
    mode: Option<CStack>,
    /// The loader's (added, removed) counts when the objects were read.
    generation: Option<(u64, u64)>,
    objects: Vec<Arc<Object>>,
}

static STATE: Mutex<State> = Mutex::new(State {
    mode: None,
    generation: None,
    objects: Vec::new(),
});

/// Sampler thread, each tick: if objects were loaded or unloaded since the
/// last look, reads the new ones (symbols; rules for `dwarf`) and publishes
/// the handler's copy. Cheap otherwise (one loader call that stops at the
/// first object).
pub fn refresh() {
    let mut state = STATE.lock();
    let Some(mode) = state.mode.filter(|&m| m != CStack::No) else {
        return;
    };
    let generation = objects::generation();
    if state.generation == Some(generation) {
        drop(state);
        table::reclaim();
        return;
    }
    let mut fresh = Vec::new();
    for loaded in objects::loaded() {
        let known = state.objects.iter().find(|o| o.loaded == loaded).cloned();
        fresh.push(known.unwrap_or_else(|| Arc::new(read_object(loaded, mode))));
    }
    let ranges = fresh
        .iter()
        .flat_map(|o| {
            o.loaded.code.iter().map(|&(start, end)| table::Range {
                start,
                end,
                kind: o.kind,
                rows: o.rows.clone(),
            })
        })
        .collect();
    table::publish(ranges);
    state.objects = fresh;
    state.generation = Some(generation);
}

fn read_object(loaded: Loaded, mode: CStack) -> Object {
    let kind = kind_of(&loaded);
    let want_cfi = mode == CStack::Dwarf;
    let parts = match &loaded.path {
        Some(path) => elf::read(path, want_cfi).unwrap_or_else(|e| {
            log::warn_once(
                "native-symbols",
                &format!("sampling: {e}; its frames are named [library+0xOFFSET]"),
            );
            elf::ElfParts::default()
        }),
        None => elf::ElfParts::default(),
    };
    let rows = parts
        .eh_frame
        .as_ref()
        .map(|(addr, bytes)| cfi::table(bytes, *addr, parts.text, loaded.bias).into());
    Object {
        kind,
        rows,
        symbols: names::Symbols::new(parts.symbols),
        loaded,
    }
}

/// The type of an object's frames: the VM's own (libjvm) or native.
fn kind_of(loaded: &Loaded) -> u8 {
    if loaded.is_jvm() {
        FrameType::Vm as u8
    } else {
        FrameType::Native as u8
    }
}

/// The name of a native frame at `pc` (sampler thread): its function's,
/// demangled, or `[library+0xOFFSET]`; None when `cstack=no` (then the
/// frame keeps its `[library]` name, as without this option).
pub fn frame_name(pc: usize) -> Option<String> {
    if kernel::is_kernel(pc) {
        return Some(kernel::frame_name(pc));
    }
    let state = STATE.lock();
    state.mode.filter(|&m| m != CStack::No)?;
    let object = state
        .objects
        .iter()
        .find(|o| o.loaded.code.iter().any(|&(s, e)| s <= pc && pc < e));
    Some(match object {
        Some(o) => {
            let offset = pc.wrapping_sub(o.loaded.bias);
            o.symbols
                .name(offset as u64)
                .unwrap_or_else(|| format!("[{}+{offset:#x}]", o.loaded.name))
        }
        None => "[unknown]".to_owned(),
    })
}

/// Is `pc` in the agent's own library? Its frames (a probe's JNI function,
/// a JVMTI callback) are left out of samples as its Java probe frames are.
pub fn is_agent_code(pc: usize) -> bool {
    static OWN: std::sync::OnceLock<Vec<(usize, usize)>> = std::sync::OnceLock::new();
    let own = OWN.get_or_init(|| {
        let here = is_agent_code as *const () as usize;
        objects::loaded()
            .into_iter()
            .find(|o| o.code.iter().any(|&(s, e)| s <= here && here < e))
            .map(|o| o.code)
            .unwrap_or_default()
    });
    own.iter().any(|&(s, e)| s <= pc && pc < e)
}

/// The handler's walk with native frames: those from the signal's
/// registers first, then `java`'s (AsyncGetCallTrace's, with its
/// recoveries) under them. With `cstack=no`, `java` alone. A walk whose
/// Java part fails gives the failure's code, as without native frames.
///
/// # Safety
/// In the signal handler, on the thread whose JNIEnv `env` is, `ucontext`
/// the handler's (or null), `frames` writable for `max` entries; `java`
/// walks into the frames and count it is given.
pub unsafe fn walk_with_java(
    env: *mut JNIEnv,
    frames: *mut CallFrame,
    max: jint,
    ucontext: *mut c_void,
    java: impl FnOnce(*mut CallFrame, jint) -> jint,
) -> jint {
    let mode = mode();
    // SAFETY: the handler's context (the caller's promise).
    let regs = unsafe { context_regs(ucontext) };
    // SAFETY: `env` is this thread's (the caller's promise).
    let bounds = unsafe { hotspot::stack_bounds(env) };
    let (Some(regs), Some((_, high)), true) = (regs, bounds, mode != CStack::No && max >= 2) else {
        return java(frames, max);
    };
    let stack = Stack { low: regs.sp, high };
    let mut call = NativeCall {
        mode,
        regs,
        stack,
        frames,
        max: max as usize - 1,
    };
    // SAFETY: `call` is live for the call; `call_native`'s promise: in the
    // handler, `regs.sp..high` is this thread's stack in use (its sp up to
    // its base; `native_frames` checks sp lies below the base), `frames` is
    // writable for `max` entries, one kept for the Java part. The walk owns
    // nothing a fault would leak but a reader's count of the published
    // table (its copies are then never freed, a leak, not a crash).
    let guarded = unsafe {
        fault_guard::call(
            env as usize,
            call_native,
            (&mut call as *mut NativeCall).cast(),
        )
    };
    // A walk that faulted (never expected: its reads are checked) keeps no frame.
    let k = guarded.map_or(0, |n| n as usize);
    // SAFETY: the caller's promise, `k < max` frames further on.
    let code = java(unsafe { frames.add(k) }, max - k as jint);
    if code < 0 || k == 0 {
        return code;
    }
    // A recovery that named the interrupted native pc as its top frame
    // (`recover::top_frame`) repeats the walk's first frame.
    // SAFETY: the Java part wrote `code > 0` frames from `k`; moving them
    // down by one stays inside the slot.
    unsafe {
        let first = &*frames.add(k);
        if code > 0 && first.bci == NATIVE_CODE_BCI && first.method as usize == regs.pc {
            std::ptr::copy(frames.add(k + 1), frames.add(k), code as usize - 1);
            return k as jint + code - 1;
        }
    }
    k as jint + code
}

/// How far above its sp a JVM thread's stack may be read: its bounds are
/// not known (no JavaThread holds them), so the walk is bounded by this
/// and by the fault guard, which ends it at an unmapped page. HotSpot's
/// native threads have stacks of 1 to 4 MiB (`VMThreadStackSize`,
/// `CompilerThreadStackSize`).
const JVM_THREAD_STACK_REACH: usize = 8 << 20;

/// A thread of the JVM itself (`jvmthreads`): its native frames from the
/// signal's registers, top first, into `frames` (at most `max`); how many.
/// None without `cstack=`, and none where the fault guard cannot be set
/// (`-Xcheck:jni`, a full table): with bounds not known, only a guarded
/// walk is safe.
///
/// # Safety
/// In the signal handler, on the interrupted thread, `ucontext` the
/// handler's (or null), `frames` writable for `max` entries.
pub unsafe fn walk_jvm_thread(ucontext: *mut c_void, frames: *mut CallFrame, max: usize) -> jint {
    let mode = mode();
    // SAFETY: the handler's context (the caller's promise).
    let Some(regs) = (unsafe { context_regs(ucontext) }) else {
        return 0;
    };
    if mode == CStack::No || max == 0 {
        return 0;
    }
    let stack = Stack {
        low: regs.sp,
        high: regs.sp.saturating_add(JVM_THREAD_STACK_REACH),
    };
    let mut call = NativeCall {
        mode,
        regs,
        stack,
        frames,
        max,
    };
    let key = crate::vm::async_trace::guard_key();
    // SAFETY: `call` is live for the call; its reads beyond the thread's
    // real stack (bounds not known) fault, and the guard then ends the walk
    // (`call_guarded` runs it only guarded); `frames` is writable for `max`.
    let guarded = unsafe {
        fault_guard::call_guarded(key, call_native, (&mut call as *mut NativeCall).cast())
    };
    // A walk that faulted keeps no frame (its last ones may be wrong).
    guarded.flatten().map_or(0, |n| n as jint)
}

/// [`native_frames`]' arguments, for the guarded call.
struct NativeCall {
    mode: CStack,
    regs: Regs,
    stack: Stack,
    frames: *mut CallFrame,
    max: usize,
}

/// # Safety
/// `arg` is a live [`NativeCall`] whose fields keep [`native_frames`]'
/// promise.
unsafe extern "C" fn call_native(arg: *mut c_void) -> i64 {
    // SAFETY: the caller's promise.
    let c = unsafe { &*(arg as *const NativeCall) };
    // SAFETY: as above.
    let (n, _) = unsafe { native_frames(c.mode, c.regs, c.stack, c.frames, c.max) };
    n as i64
}

/// The pc, sp and fp of a signal's context (None: none, or not x86-64).
///
/// # Safety
/// `ucontext` is null or the third argument of the signal handler running.
pub unsafe fn context_regs(ucontext: *mut c_void) -> Option<Regs> {
    #[cfg(target_arch = "x86_64")]
    {
        use libc::{REG_RBP, REG_RIP, REG_RSP};
        let uc = ucontext as *const libc::ucontext_t;
        if uc.is_null() {
            return None;
        }
        // SAFETY: non-null: the kernel's ucontext_t for the signal being
        // handled (the callers' promise), read only.
        let g = unsafe { &(*uc).uc_mcontext.gregs };
        Some(Regs {
            pc: g[REG_RIP as usize] as usize,
            sp: g[REG_RSP as usize] as usize,
            fp: g[REG_RBP as usize] as usize,
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = ucontext;
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// This thread's stack bounds (low, high).
    fn own_stack() -> (usize, usize) {
        // SAFETY: pthread_attr_t is plain data; getattr fills it for the
        // calling thread, getstack reads it, destroy frees it.
        unsafe {
            let mut attr: libc::pthread_attr_t = std::mem::zeroed();
            assert_eq!(libc::pthread_getattr_np(libc::pthread_self(), &mut attr), 0);
            let mut addr = std::ptr::null_mut();
            let mut size = 0;
            assert_eq!(libc::pthread_attr_getstack(&attr, &mut addr, &mut size), 0);
            libc::pthread_attr_destroy(&mut attr);
            (addr as usize, addr as usize + size)
        }
    }

    /// Walks from its own registers and names the first frames.
    #[inline(never)]
    #[cfg(target_arch = "x86_64")]
    fn capture(mode: CStack) -> Vec<String> {
        let (pc, sp, fp): (usize, usize, usize);
        // SAFETY: reads three registers, touches no memory.
        unsafe {
            std::arch::asm!("lea {0}, [rip]", "mov {1}, rsp", "mov {2}, rbp",
                out(reg) pc, out(reg) sp, out(reg) fp)
        };
        let mut frames = [CallFrame::new(0, std::ptr::null_mut()); 4];
        let (_, high) = own_stack();
        // SAFETY: sp..high is this thread's stack in use; `frames` holds 4.
        let (n, _) = unsafe {
            native_frames(
                mode,
                Regs { pc, sp, fp },
                Stack { low: sp, high },
                frames.as_mut_ptr(),
                frames.len(),
            )
        };
        frames[..n]
            .iter()
            .map(|f| frame_name(f.method as usize).unwrap())
            .collect()
    }

    #[inline(never)]
    #[cfg(target_arch = "x86_64")]
    fn caller_b(mode: CStack) -> Vec<String> {
        std::hint::black_box(capture(std::hint::black_box(mode)))
    }

    #[inline(never)]
    #[cfg(target_arch = "x86_64")]
    fn caller_a(mode: CStack) -> Vec<String> {
        std::hint::black_box(caller_b(std::hint::black_box(mode)))
    }

    /// This test binary's own frames (built without frame pointers) walked
    /// by its `.eh_frame` rules and named by its symbols, demangled.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn a_walk_by_dwarf_names_this_thread_s_own_callers() {
        configure(CStack::Dwarf);
        let names = caller_a(CStack::Dwarf);
        assert!(names.len() >= 3, "{names:?}");
        assert!(names[0].ends_with("::capture"), "{names:?}");
        assert!(names[1].ends_with("::caller_b"), "{names:?}");
        assert!(names[2].ends_with("::caller_a"), "{names:?}");
    }

    #[test]
    fn the_agent_s_own_code_is_told_apart() {
        assert!(is_agent_code(own_stack as *const () as usize));
        assert!(!is_agent_code(libc::getpid as *const () as usize));
        assert!(!is_agent_code(0));
    }

    #[test]
    fn libjvm_frames_are_the_vm_s_and_others_native() {
        let object = |name: &str| Loaded {
            path: Some(format!("/jdk/lib/server/{name}").into()),
            name: name.to_owned(),
            bias: 0,
            code: vec![(0x1000, 0x2000)],
        };
        let kind = |name| FrameType::from_code(kind_of(&object(name)));
        assert_eq!(kind("libjvm.so"), Some(FrameType::Vm));
        assert_eq!(kind("libc.so.6"), Some(FrameType::Native));
        assert_eq!(kind("libnative_frames.so"), Some(FrameType::Native));
        assert_eq!(CStack::from_word("dwarf"), Some(CStack::Dwarf));
        assert_eq!(CStack::from_word("lbr"), None);
        for m in [CStack::No, CStack::Fp, CStack::Dwarf] {
            assert_eq!(CStack::from_word(m.name()), Some(m));
        }
    }
}
