//! The only memory a recovery reads, each read checked before it is made
//! so none can fault in the handler: words of the thread's own stack (the
//! part certainly mapped), bytes of the interrupted code's blob, and the
//! registers of the signal's context. Apart because every rule reads
//! through it, and its `// SAFETY:` reasoning is the handler's.

use crate::sampler::signal::unwind::{Memory, Regs};
use crate::vm::hotspot;
use jni_sys::JNIEnv;
use std::ffi::c_void;

/// The part of this thread's stack that is certainly mapped: from the
/// handler's own frame (or, on an alternate signal stack, the interrupted
/// sp) up to the stack's base. Not the whole stack as HotSpot bounds it:
/// its lowest pages are guard zones (red, yellow, reserved), protected, and
/// a word read there (from a frame pointer that holds some other number,
/// say) would fault, and a fault in this handler ends the JVM.
///
/// # Safety
/// In the signal handler: `env` is this thread's JNIEnv; `ucontext` null or
/// the handler's.
pub(in crate::sampler::signal) unsafe fn stack_in_use(
    env: *mut JNIEnv,
    ucontext: *mut c_void,
) -> Option<(usize, usize)> {
    // SAFETY: the caller's promise.
    let (low, high) = unsafe { hotspot::stack_bounds(env) }?;
    let here = std::hint::black_box(&low) as *const usize as usize;
    let from = if (low..high).contains(&here) {
        here
    } else {
        interrupted_sp(ucontext).filter(|sp| (low..high).contains(sp))?
    };
    Some((from, high))
}

/// The interrupted stack pointer, from the handler's `ucontext` (null: none).
#[cfg(target_arch = "x86_64")]
fn interrupted_sp(ucontext: *mut c_void) -> Option<usize> {
    let uc = ucontext as *const libc::ucontext_t;
    // SAFETY: null or the kernel's ucontext_t for this signal (the callers'
    // promise, `stack_in_use`'s); read only.
    (!uc.is_null()).then(|| unsafe { (*uc).uc_mcontext.gregs[libc::REG_RSP as usize] } as usize)
}

#[cfg(not(target_arch = "x86_64"))]
fn interrupted_sp(_ucontext: *mut c_void) -> Option<usize> {
    None
}

/// This thread's stack words and the interrupted blob's bytes.
pub(in crate::sampler::signal) struct ThreadMemory {
    pub(in crate::sampler::signal) low: usize,
    pub(in crate::sampler::signal) high: usize,
    /// The blob the pc is in, if the code map knows it.
    pub(in crate::sampler::signal) code: Option<(usize, usize)>,
}

impl Memory for ThreadMemory {
    fn word(&self, at: usize) -> Option<usize> {
        let inside = at >= self.low && at.checked_add(8)? <= self.high && at.is_multiple_of(8);
        // SAFETY: an aligned word of this thread's own stack between the
        // handler's frame and the base (`stack_in_use`): mapped, and written
        // only by this thread, which is running this handler. Volatile:
        // memory of other frames, read as the machine has it.
        inside.then(|| unsafe { std::ptr::read_volatile(at as *const usize) })
    }

    fn is_code(&self, pc: usize) -> bool {
        hotspot::in_code_cache(pc)
    }

    fn byte(&self, at: usize) -> Option<u8> {
        let (start, end) = self.code?;
        // SAFETY: a byte of a blob of generated code the VM reported and has
        // not freed, or freed into code cache memory that stays committed
        // for the VM's life: mapped and readable. Volatile: the VM may patch
        // code meanwhile; any byte value is fine here.
        (start <= at && at < end).then(|| unsafe { std::ptr::read_volatile(at as *const u8) })
    }
}

/// The pc, sp and fp of a signal's context.
///
/// # Safety
/// `gregs` points into the live ucontext_t of the signal being handled.
#[cfg(target_arch = "x86_64")]
pub(in crate::sampler::signal) unsafe fn regs_of(gregs: *const [libc::greg_t; 23]) -> Regs {
    use libc::{REG_RBP, REG_RIP, REG_RSP};
    // SAFETY: the caller's promise; the indices are registers of x86-64's
    // gregs array.
    unsafe {
        Regs {
            pc: (*gregs)[REG_RIP as usize] as usize,
            sp: (*gregs)[REG_RSP as usize] as usize,
            fp: (*gregs)[REG_RBP as usize] as usize,
        }
    }
}
