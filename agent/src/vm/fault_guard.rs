//! A fault inside AsyncGetCallTrace ends that walk, never the JVM.
//!
//! AsyncGetCallTrace reads the VM's memory from a signal handler, at any
//! instruction of the thread: frames being built or torn down, methods being
//! unloaded. HotSpot's own checks make a fault rare, not impossible (JDK
//! bugs such as JDK-8313796 were such faults), and the recovery
//! (`sampler::signal::recover`) calls it with frames it reconstructed. A
//! fault there would go to HotSpot's SIGSEGV handler, which would end the
//! JVM with an hs_err file.
//!
//! So the walk runs inside [`call`]: a small assembly routine that keeps the
//! callee-saved registers and the stack pointer, then calls it. This module
//! puts its own SIGSEGV/SIGBUS handler in front of HotSpot's; for a fault on
//! a thread inside [`call`] (found in a fixed table by a key naming the
//! thread, its JNIEnv: no system call per walk) it changes
//! the faulting context so the thread resumes in a second routine that puts
//! those registers back and returns "faulted" from [`call`], as a longjmp
//! would, with no Rust frame skipped (only HotSpot's C++ frames of the walk,
//! which hold no lock: AsyncGetCallTrace is written to be called from a
//! signal handler). Every other fault, and HotSpot's own `SafeFetch` faults
//! (which it resumes itself, and which AsyncGetCallTrace relies on to test a
//! pointer), go to HotSpot's handler unchanged.
//!
//! Not installed under `-Xcheck:jni`: HotSpot then checks that its handlers
//! are still in place and prints a warning on the application's stdout if
//! not. Walks run unguarded there, as before.

use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Threads that can be inside [`call`] at once (one per thread in a signal
/// handler); beyond that a walk runs unguarded (counted).
const SLOTS: usize = 256;
/// Slots a key may use, from its home slot on: the fault handler looks at
/// these only, so a fault outside any walk (HotSpot's own, e.g. an implicit
/// null check) costs a few loads, with no counter shared by all threads.
const PROBES: usize = 8;

static INSTALLED: AtomicBool = AtomicBool::new(false);

/// One thread's place while it is inside [`call`]: its key (0: free) and
/// where its registers are saved. A cache line each: a thread claims, fills
/// and frees its slot on every walk, and a line shared by two threads'
/// slots would be written by both cores in turn.
#[repr(C, align(64))]
struct Slot {
    key: AtomicUsize,
    frame: AtomicUsize,
}

static TABLE: [Slot; SLOTS] = [const {
    Slot {
        key: AtomicUsize::new(0),
        frame: AtomicUsize::new(0),
    }
}; SLOTS];
/// The function that gives the calling thread's key in the fault handler.
static KEY_OF: AtomicUsize = AtomicUsize::new(0);
static FAULTS: AtomicU64 = AtomicU64::new(0);
static UNGUARDED: AtomicU64 = AtomicU64::new(0);
/// HotSpot's handlers, as they were when ours went in front: 0 SIGSEGV, 1 SIGBUS.
static PREVIOUS: [AtomicUsize; 2] = [const { AtomicUsize::new(0) }; 2];

/// Why the guard is not in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotGuarded {
    /// `-Xcheck:jni` is on (or the VM's flags could not be read).
    CheckedJni,
    /// Not on this architecture.
    Architecture,
    /// sigaction refused.
    Refused,
}

static STATE: OnceLock<Result<(), NotGuarded>> = OnceLock::new();

/// Puts the fault handler in front of HotSpot's (once; later calls answer
/// as the first did). `key_of` gives the calling thread's key, the one its
/// [`call`]s pass (non-zero; async-signal-safe: it runs in the handler).
pub fn install(key_of: fn() -> usize) -> Result<(), NotGuarded> {
    *STATE.get_or_init(|| {
        if !cfg!(target_arch = "x86_64") {
            return Err(NotGuarded::Architecture);
        }
        if super::hotspot::bool_flag("CheckJNICalls") != Some(false) {
            return Err(NotGuarded::CheckedJni);
        }
        put_in_front(key_of)
    })
}

/// What [`install`] answered; `None` before it ran.
pub fn state() -> Option<Result<(), NotGuarded>> {
    STATE.get().copied()
}

/// [`install`]'s work, without the check of the VM's flags.
fn put_in_front(key_of: fn() -> usize) -> Result<(), NotGuarded> {
    KEY_OF.store(key_of as usize, Ordering::Release);
    {
        for (k, sig) in [libc::SIGSEGV, libc::SIGBUS].into_iter().enumerate() {
            // SAFETY: sigaction with a zeroed struct to fill (the current
            // action) and then a complete one of ours; the previous action
            // is kept (leaked: read by the handler for the VM's life).
            unsafe {
                let mut old: libc::sigaction = std::mem::zeroed();
                if libc::sigaction(sig, std::ptr::null(), &mut old) != 0 {
                    return Err(NotGuarded::Refused);
                }
                PREVIOUS[k].store(Box::into_raw(Box::new(old)) as usize, Ordering::Release);
                let mut ours: libc::sigaction = std::mem::zeroed();
                ours.sa_sigaction = on_fault as *const () as usize;
                ours.sa_mask = old.sa_mask;
                ours.sa_flags = (old.sa_flags | libc::SA_SIGINFO) & !libc::SA_RESETHAND;
                if libc::sigaction(sig, &ours, std::ptr::null_mut()) != 0 {
                    return Err(NotGuarded::Refused);
                }
            }
        }
        INSTALLED.store(true, Ordering::Release);
        Ok(())
    }
}

/// Walks that a fault ended, and walks run unguarded because the table was full.
pub fn counts() -> (u64, u64) {
    (
        FAULTS.load(Ordering::Relaxed),
        UNGUARDED.load(Ordering::Relaxed),
    )
}

/// Whether faults in [`call`] are caught.
pub fn installed() -> bool {
    INSTALLED.load(Ordering::Acquire)
}

/// Runs `f(arg)` for the thread whose key (as [`install`]'s `key_of` gives
/// it) is `key`; `None` if it faulted (only once [`install`] succeeded;
/// before, a fault is HotSpot's, as without this module).
///
/// # Safety
/// `f` must be safe to call with `arg` on this thread; if it faults, none
/// of its frames is resumed: it must own nothing that needs dropping or
/// unlocking (a C function reading memory, as AsyncGetCallTrace).
/// Async-signal-safe.
pub unsafe fn call(
    key: usize,
    f: unsafe extern "C" fn(*mut c_void) -> i64,
    arg: *mut c_void,
) -> Option<i64> {
    if !installed() || key == 0 {
        // SAFETY: the caller's promise.
        return Some(unsafe { f(arg) });
    }
    let Some(slot) = claim(key) else {
        UNGUARDED.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller's promise.
        return Some(unsafe { f(arg) });
    };
    // SAFETY: the caller's promise; the slot was just claimed.
    unsafe { call_in(slot, f, arg) }
}

/// As [`call`], but only guarded: `None` without calling `f` where no
/// guard can be set (not installed, no key, no free slot), for a walk
/// whose reads are safe only because a fault ends it.
///
/// # Safety
/// As [`call`]. Async-signal-safe.
pub unsafe fn call_guarded(
    key: usize,
    f: unsafe extern "C" fn(*mut c_void) -> i64,
    arg: *mut c_void,
) -> Option<Option<i64>> {
    if !installed() || key == 0 {
        return None;
    }
    let Some(slot) = claim(key) else {
        UNGUARDED.fetch_add(1, Ordering::Relaxed);
        return None;
    };
    // SAFETY: the caller's promise; the slot was just claimed.
    Some(unsafe { call_in(slot, f, arg) })
}

/// Calls `f(arg)` guarded in `slot` (claimed by this thread), then frees it.
///
/// # Safety
/// As [`call`].
unsafe fn call_in(
    slot: usize,
    f: unsafe extern "C" fn(*mut c_void) -> i64,
    arg: *mut c_void,
) -> Option<i64> {
    let mut saved = [0u64; 8];
    TABLE[slot]
        .frame
        .store(saved.as_mut_ptr() as usize, Ordering::Release);
    // SAFETY: `saved` is 8 writable words for the routine's registers, live
    // until it returns; `f(arg)` is the caller's promise.
    let r = unsafe { asm::profrj_guarded_call(f, arg, saved.as_mut_ptr()) };
    TABLE[slot].frame.store(0, Ordering::Release);
    TABLE[slot].key.store(0, Ordering::Release);
    (r != asm::FAULTED).then_some(r)
}

/// The slots a key may use, in the order it tries them. Keys are pointers
/// (or, in tests, thread ids: numbers close together), so the home slot is
/// taken from all their bits (Fibonacci hashing): two threads' keys rarely
/// share a home, and a thread seldom reads another's line.
fn probe(key: usize) -> impl Iterator<Item = usize> {
    let start = home(key);
    (0..PROBES).map(move |k| (start + k) % SLOTS)
}

fn home(key: usize) -> usize {
    const _: () = assert!(SLOTS.is_power_of_two());
    // The product's top bits, as many as number a slot.
    ((key as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOTS.trailing_zeros())) as usize
}

/// A free slot of the table, now this thread's.
fn claim(key: usize) -> Option<usize> {
    probe(key).find(|&i| {
        TABLE[i]
            .key
            .compare_exchange(0, key, Ordering::AcqRel, Ordering::Relaxed)
            .is_ok()
    })
}

/// The saved registers of this thread's [`call`], if it is inside one.
fn frame_of(key: usize) -> Option<usize> {
    probe(key)
        .find(|&i| TABLE[i].key.load(Ordering::Acquire) == key)
        .map(|i| TABLE[i].frame.load(Ordering::Acquire))
        .filter(|&f| f != 0)
}

/// The calling thread's key, from the function [`install`] was given.
fn own_key() -> Option<usize> {
    let f = KEY_OF.load(Ordering::Acquire);
    if f == 0 {
        return None;
    }
    // SAFETY: a non-zero KEY_OF is a `fn() -> usize` stored by `put_in_front`.
    let key_of: fn() -> usize = unsafe { std::mem::transmute(f) };
    Some(key_of()).filter(|&k| k != 0)
}

/// The handler in front of HotSpot's.
///
/// # Safety
/// Only the kernel calls this, as an SA_SIGINFO handler for SIGSEGV/SIGBUS.
unsafe extern "C" fn on_fault(sig: i32, info: *mut libc::siginfo_t, uc: *mut c_void) {
    if !uc.is_null() {
        if let Some(frame) = own_key().and_then(frame_of) {
            // SAFETY: the kernel's siginfo and ucontext for this fault.
            if unsafe { redirect(info, uc, frame) } {
                FAULTS.fetch_add(1, Ordering::Relaxed);
                return;
            }
        }
    }
    // SAFETY: the kernel's arguments, passed on unchanged.
    unsafe { chain(sig, info, uc) }
}

/// Makes the faulting thread resume in `profrj_guard_resume` with `frame`,
/// unless the fault is one HotSpot resumes itself (`SafeFetch`).
///
/// # Safety
/// `info` and `uc` are the kernel's, for a fault on this thread.
#[cfg(target_arch = "x86_64")]
unsafe fn redirect(info: *mut libc::siginfo_t, uc: *mut c_void, frame: usize) -> bool {
    let uc = uc as *mut libc::ucontext_t;
    // SAFETY: the kernel's ucontext_t (the caller's promise).
    let gregs = unsafe { &mut (*uc).uc_mcontext.gregs };
    let pc = gregs[libc::REG_RIP as usize] as usize;
    let addr = if info.is_null() {
        0
    } else {
        // SAFETY: the kernel's siginfo_t (the caller's promise).
        unsafe { (*info).si_addr() as usize }
    };
    if addr != pc && is_safefetch(pc) {
        return false;
    }
    gregs[libc::REG_RIP as usize] = asm::profrj_guard_resume as *const () as usize as i64;
    gregs[libc::REG_RDI as usize] = frame as i64;
    true
}

#[cfg(not(target_arch = "x86_64"))]
unsafe fn redirect(_: *mut libc::siginfo_t, _: *mut c_void, _: usize) -> bool {
    false
}

/// HotSpot's SafeFetch: a load that may fault, which HotSpot's handler
/// resumes at the next instruction with the caller's default value. Its
/// bytes on x86-64: JDK 11–20's generated stub loads into esi/rsi and moves
/// it to eax/rax (`8b 37` / `48 8b 37`, then `48 89 f0`); JDK 21's
/// assembly loads into eax/rax and returns (`8b 07 c3` / `48 8b 07 c3`),
/// its continuation `89 f0 c3` / `48 89 f0 c3`.
fn is_safefetch(pc: usize) -> bool {
    const PATTERNS: [&[u8]; 4] = [
        &[0x8b, 0x37, 0x48, 0x89, 0xf0],
        &[0x48, 0x8b, 0x37, 0x48, 0x89, 0xf0],
        &[0x8b, 0x07, 0xc3, 0x89, 0xf0, 0xc3],
        &[0x48, 0x8b, 0x07, 0xc3, 0x48, 0x89, 0xf0, 0xc3],
    ];
    let mut bytes = [0u8; 8];
    let local = libc::iovec {
        iov_base: bytes.as_mut_ptr().cast(),
        iov_len: 8,
    };
    let remote = libc::iovec {
        iov_base: pc as *mut c_void,
        iov_len: 8,
    };
    // SAFETY: the kernel copies from `pc` (checking it) into `bytes`, ours;
    // async-signal-safe (a system call). A short read keeps zeros.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    n > 0 && PATTERNS.iter().any(|p| bytes.starts_with(p))
}

/// Hands the fault to the handler that was there before ours (HotSpot's).
///
/// # Safety
/// The kernel's arguments for a SIGSEGV or SIGBUS on this thread.
unsafe fn chain(sig: i32, info: *mut libc::siginfo_t, uc: *mut c_void) {
    let k = usize::from(sig == libc::SIGBUS);
    let old = PREVIOUS[k].load(Ordering::Acquire) as *const libc::sigaction;
    // SAFETY: set once by `install` before ours went in, never freed.
    let Some(old) = (unsafe { old.as_ref() }) else {
        return;
    };
    match old.sa_sigaction {
        libc::SIG_DFL => {
            // Die of it as without us: the default action, and the faulting
            // instruction runs again when this handler returns.
            // SAFETY: a zeroed sigaction is SIG_DFL with no flags.
            unsafe {
                let dfl: libc::sigaction = std::mem::zeroed();
                libc::sigaction(sig, &dfl, std::ptr::null_mut());
            }
        }
        libc::SIG_IGN => {}
        h if old.sa_flags & libc::SA_SIGINFO != 0 => {
            // SAFETY: an SA_SIGINFO handler's address, called as the kernel
            // would call it, with the same arguments.
            unsafe {
                let h: unsafe extern "C" fn(i32, *mut libc::siginfo_t, *mut c_void) =
                    std::mem::transmute(h);
                h(sig, info, uc)
            }
        }
        h => {
            // SAFETY: a plain handler's address, called with the signal number.
            unsafe {
                let h: unsafe extern "C" fn(i32) = std::mem::transmute(h);
                h(sig)
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod asm {
    use std::ffi::c_void;

    /// What `profrj_guarded_call` answers when the call faulted.
    pub const FAULTED: i64 = i64::MIN;

    // profrj_guarded_call(f: rdi, arg: rsi, saved: rdx) -> rax:
    // keeps rbx, rbp, r12-r15 and rsp (pointing at the return address) in
    // saved[0..7], calls f(arg) with the stack aligned, returns its value.
    // profrj_guard_resume(saved: rdi): entered instead of the faulting
    // instruction; puts those registers back and returns FAULTED to
    // profrj_guarded_call's caller.
    std::arch::global_asm!(
        ".pushsection .text.profrj_guard,\"ax\",@progbits",
        ".p2align 4",
        ".globl profrj_guarded_call",
        ".hidden profrj_guarded_call",
        ".type profrj_guarded_call,@function",
        "profrj_guarded_call:",
        "mov [rdx], rbx",
        "mov [rdx + 8], rbp",
        "mov [rdx + 16], r12",
        "mov [rdx + 24], r13",
        "mov [rdx + 32], r14",
        "mov [rdx + 40], r15",
        "mov [rdx + 48], rsp",
        "mov rax, rdi",
        "mov rdi, rsi",
        "sub rsp, 8",
        "call rax",
        "add rsp, 8",
        "ret",
        ".size profrj_guarded_call, . - profrj_guarded_call",
        ".p2align 4",
        ".globl profrj_guard_resume",
        ".hidden profrj_guard_resume",
        ".type profrj_guard_resume,@function",
        "profrj_guard_resume:",
        "mov rbx, [rdi]",
        "mov rbp, [rdi + 8]",
        "mov r12, [rdi + 16]",
        "mov r13, [rdi + 24]",
        "mov r14, [rdi + 32]",
        "mov r15, [rdi + 40]",
        "mov rsp, [rdi + 48]",
        "movabs rax, 0x8000000000000000",
        "cld",
        "ret",
        ".size profrj_guard_resume, . - profrj_guard_resume",
        ".popsection",
    );

    extern "C" {
        pub fn profrj_guarded_call(
            f: unsafe extern "C" fn(*mut c_void) -> i64,
            arg: *mut c_void,
            saved: *mut u64,
        ) -> i64;
        pub fn profrj_guard_resume();
    }
}

#[cfg(not(target_arch = "x86_64"))]
mod asm {
    use std::ffi::c_void;

    pub const FAULTED: i64 = i64::MIN;

    /// No guard: a plain call.
    pub unsafe fn profrj_guarded_call(
        f: unsafe extern "C" fn(*mut c_void) -> i64,
        arg: *mut c_void,
        _saved: *mut u64,
    ) -> i64 {
        unsafe { f(arg) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// # Safety
    /// `arg` is a live, writable u64.
    unsafe extern "C" fn add_one(arg: *mut c_void) -> i64 {
        // SAFETY: the test passes a live u64.
        unsafe { *(arg as *mut u64) += 1 };
        41
    }

    /// The tests that take slots run one at a time: one test's claims must
    /// not move another's.
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

    fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The test threads' key: their tid (any per-thread non-zero number).
    fn test_key() -> usize {
        // SAFETY: gettid takes no arguments and cannot fail.
        unsafe { libc::syscall(libc::SYS_gettid) as usize }
    }

    #[test]
    fn a_call_that_does_not_fault_returns_its_value() {
        let _serial = one_at_a_time();
        let mut x = 1u64;
        let mut saved = [0u64; 8];
        // SAFETY: add_one with a live u64; `saved` has 8 words.
        let r = unsafe {
            asm::profrj_guarded_call(add_one, (&mut x as *mut u64).cast(), saved.as_mut_ptr())
        };
        assert_eq!((r, x), (41, 2));
        // SAFETY: as above, through `call` (a plain call unless the fault
        // test installed the guard first).
        let r = unsafe { call(test_key(), add_one, (&mut x as *mut u64).cast()) };
        assert_eq!(r, Some(41));
        assert_eq!(x, 3);
    }

    /// # Safety
    /// Only inside a guarded [`call`] with the guard installed: it faults.
    unsafe extern "C" fn read_unmapped(_: *mut c_void) -> i64 {
        let v: i64;
        // SAFETY: a load from address 16, which is never mapped: it faults,
        // and the guard (installed by the test) resumes after the call.
        unsafe { std::arch::asm!("mov {}, qword ptr [{}]", out(reg) v, in(reg) 16usize) };
        v
    }

    /// A real fault inside `call` ends the call, not the process; the
    /// thread carries on with its registers and stack as before it.
    #[test]
    fn a_fault_inside_the_call_is_caught() {
        let _serial = one_at_a_time();
        put_in_front(test_key).expect("handler in front");
        let before = counts().0;
        let mut x = 5u64;
        for _ in 0..3 {
            // SAFETY: read_unmapped owns nothing, and the guard is in place.
            let r = unsafe { call(test_key(), read_unmapped, std::ptr::null_mut()) };
            assert_eq!(r, None);
            // SAFETY: add_one gets a live u64.
            let r = unsafe { call(test_key(), add_one, (&mut x as *mut u64).cast()) };
            assert_eq!(r, Some(41));
        }
        assert_eq!(x, 8);
        assert_eq!(counts().0 - before, 3);
    }

    #[test]
    fn safefetch_bytes_are_known_and_others_are_not() {
        let jdk17 = [0x48u8, 0x8b, 0x37, 0x48, 0x89, 0xf0, 0xc3, 0x90];
        let jdk21 = [0x8bu8, 0x07, 0xc3, 0x89, 0xf0, 0xc3, 0x90, 0x90];
        let other = [0x48u8, 0x8b, 0x07, 0x48, 0x89, 0xc3, 0x90, 0x90];
        assert!(is_safefetch(jdk17.as_ptr() as usize));
        assert!(is_safefetch(jdk21.as_ptr() as usize));
        assert!(!is_safefetch(other.as_ptr() as usize));
        assert!(!is_safefetch(8)); // unmapped: no bytes, no match, no fault
    }

    #[test]
    fn slots_are_claimed_found_and_freed() {
        let _serial = one_at_a_time();
        let key = 0x7f00_1234_5670;
        let slot = claim(key).expect("a free slot");
        TABLE[slot].frame.store(0x1234, Ordering::Release);
        assert_eq!(frame_of(key), Some(0x1234));
        TABLE[slot].frame.store(0, Ordering::Release);
        TABLE[slot].key.store(0, Ordering::Release);
        assert_eq!(frame_of(key), None);
    }

    #[test]
    fn a_key_uses_its_own_few_slots_and_no_more() {
        let _serial = one_at_a_time();
        // Nine keys with one home slot, none of the other tests' keys.
        let keys: Vec<usize> = (1usize << 40..)
            .filter(|&k| home(k) == 200)
            .take(PROBES + 1)
            .collect();
        let slots: Vec<usize> = keys[..PROBES]
            .iter()
            .map(|&k| claim(k).expect("a free slot"))
            .collect();
        assert_eq!(slots, (200..200 + PROBES).collect::<Vec<_>>());
        assert_eq!(claim(keys[PROBES]), None, "all its slots taken");
        for s in slots {
            TABLE[s].key.store(0, Ordering::Release);
        }
        assert_eq!(claim(keys[PROBES]), Some(200));
        TABLE[200].key.store(0, Ordering::Release);
    }

    /// The calling thread's CPU time: a line two cores fight over stalls
    /// both, and the stall is CPU time; a thread waiting for a core is not.
    fn thread_cpu_ns() -> u64 {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes the timespec it is given.
        unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
        t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
    }

    /// Not a test: the cost of one guarded call with 1, 2, ... threads
    /// calling at once (`scripts/fault-guard-bench`). Prints, asserts nothing.
    #[test]
    #[ignore]
    fn guarded_call_cost() {
        let _serial = one_at_a_time();
        put_in_front(test_key).expect("handler in front");
        let most: usize = std::env::var("GUARD_BENCH_THREADS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(2);
        const CALLS: u64 = 20_000_000;
        for threads in 1..=most {
            let start = std::sync::Barrier::new(threads);
            let ns: Vec<f64> = std::thread::scope(|s| {
                let hs: Vec<_> = (0..threads)
                    .map(|_| {
                        s.spawn(|| {
                            let key = test_key();
                            let mut x = 0u64;
                            start.wait();
                            let t = thread_cpu_ns();
                            for _ in 0..CALLS {
                                // SAFETY: add_one gets a live u64.
                                unsafe { call(key, add_one, (&mut x as *mut u64).cast()) };
                            }
                            assert_eq!(x, CALLS);
                            (thread_cpu_ns() - t) as f64 / CALLS as f64
                        })
                    })
                    .collect();
                hs.into_iter().map(|h| h.join().unwrap()).collect()
            });
            let mean = ns.iter().sum::<f64>() / ns.len() as f64;
            println!(
                "guarded call, {threads} thread(s) at once: {mean:.1} ns of thread CPU per call per thread"
            );
        }
    }
}
