//! The OS thread id (Linux tid) of a Java thread that started before the
//! agent saw it, read from HotSpot's own structures: `java.lang.Thread.eetop`
//! holds the `JavaThread*`, and the VM's exported `gHotSpotVMStructs` table
//! gives the offsets of `Thread::_osthread` and `OSThread::_thread_id` (the
//! table the serviceability agent reads; async-profiler reads it too).
//! Threads that start later tell their tid themselves (ThreadStart runs on them).
//!
//! Memory is read with `process_vm_readv` on our own process, so a thread
//! that ends meanwhile (its JavaThread freed) yields an error, never a fault.

use super::jni::Jni;
use super::sys::jthread;
use jni_sys::jfieldID;
use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// What the tid look-up needs, found once.
struct Layout {
    /// `java.lang.Thread.eetop`, a `long`.
    eetop: jfieldID,
    osthread: u64,
    thread_id: u64,
}

// SAFETY: `eetop` is a field id, an opaque value the VM resolves: field ids
// are valid in every thread for the class's life (java.lang.Thread is never
// unloaded), and the agent never dereferences one.
unsafe impl Send for Layout {}
// SAFETY: as above; a Layout is never written after it is made.
unsafe impl Sync for Layout {}

static LAYOUT: OnceLock<Option<Layout>> = OnceLock::new();

/// The tid of `thread`, if the VM's structures can be read.
pub fn os_thread_id(jni: &Jni, thread: jthread) -> Option<i32> {
    let layout = LAYOUT.get_or_init(|| find_layout(jni)).as_ref()?;
    // SAFETY: `eetop` is a long field of java.lang.Thread, and `thread` a live
    // Thread reference (the `vm` convention for a jthread).
    let java_thread = unsafe { jni.long_field(thread, layout.eetop) } as u64;
    if java_thread == 0 {
        return None; // not started, or already ended
    }
    let os_thread: u64 = read_own(java_thread.checked_add(layout.osthread)?)?;
    if os_thread == 0 {
        return None;
    }
    let tid: u64 = read_own(os_thread.checked_add(layout.thread_id)?)?;
    let tid = tid as u32 as i32; // pid_t, the low half on little-endian x86-64/aarch64
    (tid > 0 && task_exists(tid)).then_some(tid)
}

fn find_layout(jni: &Jni) -> Option<Layout> {
    let class = jni.find_class("java/lang/Thread").ok()?;
    let eetop = jni.field_id(class, "eetop", "J");
    jni.delete_local_ref(class);
    let osthread = struct_offset(&["Thread", "JavaThread"], "_osthread")?;
    let thread_id = struct_offset(&["OSThread"], "_thread_id")?;
    Some(Layout {
        eetop: eetop.ok()?,
        osthread,
        thread_id,
    })
}

/// The value of a data symbol of libjvm.so (a `u64` or a pointer).
///
/// # Safety
/// The symbol `name`, if some loaded object exports it, must be a variable
/// of type `T`.
unsafe fn symbol<T: Copy>(name: &CStr) -> Option<T> {
    // SAFETY: RTLD_DEFAULT searches the objects already loaded; the name is
    // NUL-terminated.
    let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) };
    if p.is_null() {
        return None;
    }
    // SAFETY: the symbol is a variable of type T (the caller's promise), in
    // memory of its object, which is never unloaded (libjvm.so).
    Some(unsafe { *(p as *const T) })
}

/// The offset of field `field` of one of `types` in the VMStructs table.
pub(super) fn struct_offset(types: &[&str], field: &str) -> Option<u64> {
    struct_entry(types, field, false)
}

/// The address of static field `field` of `type_name`.
pub(super) fn static_address(type_name: &str, field: &str) -> Option<u64> {
    struct_entry(&[type_name], field, true)
}

/// An entry of the VMStructs table: a field's offset, or for a static field
/// (`want_static`) its address.
fn struct_entry(types: &[&str], field: &str, want_static: bool) -> Option<u64> {
    // SAFETY: HotSpot's vmStructs.cpp exports these for debuggers: the table's
    // address (`VMStructEntry*`) and the stride and field offsets of its
    // entries (`uint64_t`), with these types since JDK 6.
    let (entries, stride, type_at, field_at, offset_at, static_at, address_at) = unsafe {
        (
            symbol::<*const u8>(c"gHotSpotVMStructs")?,
            symbol::<u64>(c"gHotSpotVMStructEntryArrayStride")?,
            symbol::<u64>(c"gHotSpotVMStructEntryTypeNameOffset")?,
            symbol::<u64>(c"gHotSpotVMStructEntryFieldNameOffset")?,
            symbol::<u64>(c"gHotSpotVMStructEntryOffsetOffset")?,
            symbol::<u64>(c"gHotSpotVMStructEntryIsStaticOffset")?,
            symbol::<u64>(c"gHotSpotVMStructEntryAddressOffset")?,
        )
    };
    // SAFETY: the exported table, stride and type-name offset (above).
    let mut entries = unsafe { table_entries(entries, stride, type_at) };
    entries.find_map(|(entry, type_name)| {
        // SAFETY: `entry` is a live entry of the table (`table_entries`); the
        // offsets are the exported ones, so each read is of the field of
        // that type; names are NUL-terminated static strings.
        unsafe {
            let field_name = *(entry.add(field_at as usize) as *const *const c_char);
            if field_name.is_null() {
                return None;
            }
            let is_static = *(entry.add(static_at as usize) as *const i32) != 0;
            if types.iter().any(|w| w.as_bytes() == type_name)
                && CStr::from_ptr(field_name).to_bytes() == field.as_bytes()
                && is_static == want_static
            {
                let at = if want_static { address_at } else { offset_at };
                return Some(*(entry.add(at as usize) as *const u64));
            }
            None
        }
    })
}

/// The entries of one of the tables vmStructs.cpp exports (`stride` bytes
/// each), with each entry's type name (at `name_at`), up to the entry whose
/// type name is null, which ends the table (and at most 100,000).
///
/// # Safety
/// `entries`, `stride` and `name_at` are the VM's exported values for one
/// table (null or zero: no entries).
unsafe fn table_entries(
    entries: *const u8,
    stride: u64,
    name_at: u64,
) -> impl Iterator<Item = (*const u8, &'static [u8])> {
    let usable = !entries.is_null() && stride != 0;
    (0..100_000u64)
        .take_while(move |_| usable)
        .map(move |i| {
            // SAFETY: entry `i` lies inside the VM's static table: every entry
            // before it had a type name (the walk stops at the null one), and
            // its name field is at the exported offset; names are static,
            // NUL-terminated.
            unsafe {
                let entry = entries.add((i * stride) as usize);
                let name = *(entry.add(name_at as usize) as *const *const c_char);
                (
                    entry,
                    (!name.is_null()).then(|| CStr::from_ptr(name).to_bytes()),
                )
            }
        })
        .map_while(|(entry, name)| Some((entry, name?)))
}

/// The value of a `bool` flag of the VM (`-XX:` flags and those set by
/// options such as `-Xcheck:jni`), from the flag table VMStructs exports;
/// `None` if the table or the flag is not found.
pub fn bool_flag(name: &str) -> Option<bool> {
    let (type_name, flags_at) = ["JVMFlag", "Flag"]
        .into_iter()
        .find_map(|t| Some((t, static_address(t, "flags")?)))?;
    let table = read_own(flags_at)?;
    let count = read_own(static_address(type_name, "numFlags")?)?;
    let name_at = struct_offset(&[type_name], "_name")?;
    let addr_at = struct_offset(&[type_name], "_addr")?;
    let size = type_size(type_name)?;
    if table == 0 || size == 0 || count > 100_000 {
        return None;
    }
    table.checked_add(count.checked_mul(size)?)?;
    // The table is libjvm's static data, read in place as `struct_entry`
    // reads VMStructs (one system call per flag, as before, made this
    // start-up work cost ~1,200 of them).
    (0..count).find_map(|i| {
        let entry = (table + i * size) as *const u8;
        // SAFETY: entry `i` of the VM's static flag table (`count` entries
        // of `size` bytes, checked not to wrap above): its name field (a
        // static NUL-terminated string, or null) and its value's address,
        // both at VMStructs' offsets; the value a `bool` flag's variable.
        unsafe {
            let flag_name = *(entry.add(name_at as usize) as *const *const c_char);
            if flag_name.is_null() || CStr::from_ptr(flag_name).to_bytes() != name.as_bytes() {
                return None;
            }
            let value = *(entry.add(addr_at as usize) as *const *const u8);
            (!value.is_null()).then(|| *value != 0)
        }
    })
}

/// The size of a VM type, from the VMTypes table.
fn type_size(name: &str) -> Option<u64> {
    // SAFETY: exported by vmStructs.cpp as for `struct_entry`: the table's
    // address and its entries' stride and field offsets (`uint64_t`).
    let (entries, stride, name_at, size_at) = unsafe {
        (
            symbol::<*const u8>(c"gHotSpotVMTypes")?,
            symbol::<u64>(c"gHotSpotVMTypeEntryArrayStride")?,
            symbol::<u64>(c"gHotSpotVMTypeEntryTypeNameOffset")?,
            symbol::<u64>(c"gHotSpotVMTypeEntrySizeOffset")?,
        )
    };
    // SAFETY: the exported table, stride and type-name offset (above).
    let mut entries = unsafe { table_entries(entries, stride, name_at) };
    entries
        .find(|&(_, type_name)| type_name == name.as_bytes())
        // SAFETY: a live entry (`table_entries`); the size field is at the
        // exported offset.
        .map(|(entry, _)| unsafe { *(entry.add(size_at as usize) as *const u64) })
}

/// Reads 8 bytes at `addr` of this process without risking a fault.
pub(super) fn read_own(addr: u64) -> Option<u64> {
    let mut value = 0u64;
    let local = libc::iovec {
        iov_base: (&mut value as *mut u64).cast::<c_void>(),
        iov_len: 8,
    };
    let remote = libc::iovec {
        iov_base: addr as *mut c_void,
        iov_len: 8,
    };
    // SAFETY: the kernel copies into `value` (8 bytes, ours) and checks `addr`
    // itself, returning EFAULT for an unmapped address.
    let n = unsafe { libc::process_vm_readv(libc::getpid(), &local, 1, &remote, 1, 0) };
    (n == 8).then_some(value)
}

fn task_exists(tid: i32) -> bool {
    std::path::Path::new(&format!("/proc/self/task/{tid}")).exists()
}

/// The code cache's address range, for the signal handler's sanity checks.
static CODE_LOW: AtomicUsize = AtomicUsize::new(0);
static CODE_HIGH: AtomicUsize = AtomicUsize::new(0);

/// Reads the code cache's bounds (fixed once the VM is up); false if unknown.
pub fn learn_code_cache() -> bool {
    let read = |field| static_address("CodeCache", field).and_then(read_own);
    let (Some(low), Some(high)) = (read("_low_bound"), read("_high_bound")) else {
        return false;
    };
    if low == 0 || high <= low {
        return false;
    }
    CODE_LOW.store(low as usize, Ordering::Relaxed);
    CODE_HIGH.store(high as usize, Ordering::Release);
    true
}

/// Is `pc` inside the code cache (compiled code, the interpreter, stubs)?
/// Async-signal-safe.
pub fn in_code_cache(pc: usize) -> bool {
    let high = CODE_HIGH.load(Ordering::Acquire);
    high != 0 && CODE_LOW.load(Ordering::Relaxed) <= pc && pc < high
}

/// Where a signal handler finds its own thread's stack bounds: the
/// JavaThread is at a fixed distance below its JNIEnv (the env is a field of
/// it), and `Thread::_stack_base`/`_stack_size` come from VMStructs.
static STACK_ENV_OFFSET: AtomicUsize = AtomicUsize::new(0);
static STACK_BASE_AT: AtomicUsize = AtomicUsize::new(0);
static STACK_SIZE_AT: AtomicUsize = AtomicUsize::new(0);

/// Learns, on the calling Java thread, how to find a thread's stack bounds
/// from its JNIEnv; false if the VM's structures do not tell.
pub fn learn_stack_bounds(jni: &Jni, current: jthread) -> bool {
    let Some(layout) = LAYOUT.get_or_init(|| find_layout(jni)).as_ref() else {
        return false;
    };
    let (Some(base_at), Some(size_at)) = (
        struct_offset(&["Thread", "JavaThread"], "_stack_base"),
        struct_offset(&["Thread", "JavaThread"], "_stack_size"),
    ) else {
        return false;
    };
    // SAFETY: `eetop` is a long field of java.lang.Thread, and `current` a live
    // Thread reference (the `vm` convention for a jthread).
    let java_thread = unsafe { jni.long_field(current, layout.eetop) } as usize;
    let env = jni.env as usize;
    // The env lives inside the JavaThread, a few hundred bytes in.
    let Some(offset) = env
        .checked_sub(java_thread)
        .filter(|o| (1..1 << 16).contains(o))
    else {
        return false;
    };
    // Check the reading on this thread: its own stack must contain this frame.
    let here = &offset as *const usize as usize;
    let (Some(base), Some(size)) = (
        read_own((java_thread + base_at as usize) as u64),
        read_own((java_thread + size_at as usize) as u64),
    ) else {
        return false;
    };
    let (base, size) = (base as usize, size as usize);
    if !(base.saturating_sub(size) < here && here < base) {
        return false;
    }
    STACK_BASE_AT.store(base_at as usize, Ordering::Relaxed);
    STACK_SIZE_AT.store(size_at as usize, Ordering::Relaxed);
    STACK_ENV_OFFSET.store(offset, Ordering::Release);
    true
}

/// The stack (lowest, highest address) of the thread whose JNIEnv is `env`.
/// Async-signal-safe.
///
/// # Safety
/// `env` must be null or the calling thread's JNIEnv.
pub unsafe fn stack_bounds(env: *mut jni_sys::JNIEnv) -> Option<(usize, usize)> {
    let offset = STACK_ENV_OFFSET.load(Ordering::Acquire);
    if offset == 0 || env.is_null() {
        return None;
    }
    let java_thread = (env as usize).checked_sub(offset)?;
    // SAFETY: `env` is the calling thread's (the caller's promise), so
    // `java_thread` is its own JavaThread, alive while it runs; the offsets
    // (published before STACK_ENV_OFFSET, Acquire above) were checked on a
    // live thread by `learn_stack_bounds`.
    let (base, size) = unsafe {
        (
            *((java_thread + STACK_BASE_AT.load(Ordering::Relaxed)) as *const usize),
            *((java_thread + STACK_SIZE_AT.load(Ordering::Relaxed)) as *const usize),
        )
    };
    Some((base.checked_sub(size)?, base))
}

/// Bytes of stack left below the caller on the thread whose JNIEnv is
/// `env`, or `None` when unknown. Async-signal-safe: reads the current
/// thread's own JavaThread.
///
/// # Safety
/// `env` must be null or the calling thread's JNIEnv.
pub unsafe fn stack_room(env: *mut jni_sys::JNIEnv) -> Option<usize> {
    // SAFETY: the caller's promise is `stack_bounds`'s.
    let (low, _) = unsafe { stack_bounds(env) }?;
    let here = &low as *const usize as usize;
    here.checked_sub(low)
}

/// The calling thread's tid.
pub fn current_tid() -> i32 {
    // SAFETY: gettid takes no arguments and cannot fail.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// Where a thread's state and last-Java-frame anchor lie in its JavaThread
/// (`JavaThread::_thread_state`, `JavaThread::_anchor` and
/// `JavaFrameAnchor::_last_Java_sp/_pc/_fp` from VMStructs); 0 = unknown.
static STATE_AT: AtomicUsize = AtomicUsize::new(0);
static ANCHOR_SP_AT: AtomicUsize = AtomicUsize::new(0);
static ANCHOR_PC_AT: AtomicUsize = AtomicUsize::new(0);
static ANCHOR_FP_AT: AtomicUsize = AtomicUsize::new(0);

/// `JavaThreadState::_thread_in_vm`: running the VM's own code, which
/// blocks safepoints and handshakes, so no other thread walks its frames.
pub const THREAD_IN_VM: i32 = 6;

/// Learns where a thread's state and anchor lie (after
/// [`learn_stack_bounds`], which finds the JavaThread from a JNIEnv);
/// false if the VM's structures do not tell.
pub fn learn_thread_layout() -> bool {
    let found = (|| {
        let anchor = struct_offset(&["JavaThread"], "_anchor")?;
        Some((
            struct_offset(&["JavaThread"], "_thread_state")?,
            anchor.checked_add(struct_offset(&["JavaFrameAnchor"], "_last_Java_sp")?)?,
            anchor.checked_add(struct_offset(&["JavaFrameAnchor"], "_last_Java_pc")?)?,
            anchor.checked_add(struct_offset(&["JavaFrameAnchor"], "_last_Java_fp")?)?,
        ))
    })();
    let Some((state, sp, pc, fp)) = found else {
        return false;
    };
    // Each is a field of a JavaThread: a few KiB in at most.
    if [state, sp, pc, fp].iter().any(|&o| o == 0 || o >= 1 << 16) {
        return false;
    }
    ANCHOR_SP_AT.store(sp as usize, Ordering::Relaxed);
    ANCHOR_PC_AT.store(pc as usize, Ordering::Relaxed);
    ANCHOR_FP_AT.store(fp as usize, Ordering::Relaxed);
    STATE_AT.store(state as usize, Ordering::Release);
    true
}

/// The calling thread's own JavaThread, as the signal handler sees it.
pub struct OwnThread {
    java_thread: usize,
}

/// A thread's last Java frame as its anchor records it (0: none / not set).
#[derive(Clone, Copy, Debug)]
pub struct Anchor {
    pub sp: usize,
    pub pc: usize,
    pub fp: usize,
}

impl OwnThread {
    /// The JavaThread whose JNIEnv is `env`, if its layout is known.
    /// Async-signal-safe.
    ///
    /// # Safety
    /// `env` must be null or the calling thread's JNIEnv.
    pub unsafe fn of(env: *mut jni_sys::JNIEnv) -> Option<OwnThread> {
        let offset = STACK_ENV_OFFSET.load(Ordering::Acquire);
        if offset == 0 || env.is_null() || STATE_AT.load(Ordering::Acquire) == 0 {
            return None;
        }
        Some(OwnThread {
            java_thread: (env as usize).checked_sub(offset)?,
        })
    }

    fn field(&self, at: &AtomicUsize) -> usize {
        self.java_thread + at.load(Ordering::Relaxed)
    }

    /// `JavaThread::_thread_state`.
    pub fn state(&self) -> i32 {
        // SAFETY: a field of the calling thread's own JavaThread (`of`),
        // alive while it runs; the offset is VMStructs' (checked in
        // `learn_thread_layout`). Volatile: the VM writes it.
        unsafe { std::ptr::read_volatile(self.field(&STATE_AT) as *const i32) }
    }

    pub fn anchor(&self) -> Anchor {
        // SAFETY: as in `state`: fields of this thread's own anchor.
        unsafe {
            Anchor {
                sp: std::ptr::read_volatile(self.field(&ANCHOR_SP_AT) as *const usize),
                pc: std::ptr::read_volatile(self.field(&ANCHOR_PC_AT) as *const usize),
                fp: std::ptr::read_volatile(self.field(&ANCHOR_FP_AT) as *const usize),
            }
        }
    }

    /// Sets the anchor's frame, for a walk, to be set back before the
    /// handler returns.
    ///
    /// # Safety
    /// Only from the signal handler, with the thread in the VM
    /// ([`THREAD_IN_VM`]): then no other thread reads this thread's anchor
    /// (safepoints and handshakes wait for it), and the interrupted VM code
    /// does not run until the handler has put the old values back.
    pub unsafe fn set_anchor(&self, a: Anchor) {
        // SAFETY: fields of this thread's own anchor (as in `state`), which
        // only this thread uses now (the caller's promise).
        unsafe {
            std::ptr::write_volatile(self.field(&ANCHOR_SP_AT) as *mut usize, a.sp);
            std::ptr::write_volatile(self.field(&ANCHOR_FP_AT) as *mut usize, a.fp);
            std::ptr::write_volatile(self.field(&ANCHOR_PC_AT) as *mut usize, a.pc);
        }
    }
}
