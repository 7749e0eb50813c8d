//! `event=cpu,kernel=on`: a thread's CPU samples from a perf event (the
//! kernel's task clock of that thread) instead of a POSIX CPU timer, so that
//! each sample also carries the kernel's call chain where the thread was in
//! the kernel (a system call, a page fault), as async-profiler's `cpu`
//! engine does.
//!
//! Each thread's event signals that thread (`F_SETSIG`, `F_SETOWN_EX`) at
//! each period of its CPU time and writes a sample record, the kernel part
//! of the call chain only, into a two-page ring this module maps. The
//! handler finds the ring by the signal's file descriptor in [`SLOTS`]
//! (preallocated, read without a lock), takes the newest record's chain and
//! marks the ring read. The kernel refuses such events to an unprivileged
//! process where `perf_event_paranoid` > 1: the caller then falls back to
//! the POSIX timer, and says so once.
//!
//! Memory the handler reads: the slot table (agent memory, never freed once
//! made) and a ring that stays mapped at least until two sampler ticks after
//! its slot was cleared ([`reclaim`]).

use parking_lot::Mutex;
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Duration;

/// `perf_event_attr` as of `PERF_ATTR_SIZE_VER5` (112 bytes).
#[repr(C)]
#[derive(Default)]
struct Attr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved: u16,
}
const _: () = assert!(std::mem::size_of::<Attr>() == 112);

const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;
const PERF_SAMPLE_CALLCHAIN: u64 = 1 << 5;
const FLAG_DISABLED: u64 = 1 << 0;
const FLAG_EXCLUDE_HV: u64 = 1 << 6;
const FLAG_EXCLUDE_CALLCHAIN_USER: u64 = 1 << 22;
const PERF_EVENT_IOC_ENABLE: libc::c_ulong = 0x2400;
const PERF_EVENT_IOC_DISABLE: libc::c_ulong = 0x2401;
const PERF_RECORD_SAMPLE: u32 = 9;
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
/// Call-chain entries at or above this are context markers, not addresses.
const PERF_CONTEXT_MAX: u64 = (-4095i64) as u64;
const F_SETSIG: c_int = 10;
const F_SETOWN_EX: c_int = 15;
const F_OWNER_TID: c_int = 0;
/// `perf_event_mmap_page`: where the kernel's write position and our read
/// position are.
const DATA_HEAD: usize = 1024;
const DATA_TAIL: usize = 1032;
/// One page of data after the control page: a record with the longest
/// chain the kernel gives by default (127 entries) is about 1 KiB, and the
/// handler reads each one before the next is written.
const DATA_PAGES: usize = 1;

/// Descriptors the handler can find (one slot per descriptor number). A
/// thread whose event gets a higher number keeps the POSIX timer.
pub const MAX_FD: usize = 1 << 16;

/// What the handler needs of one event.
pub struct Slot {
    pub token: u64,
    ring: usize,
    page: usize,
}

/// fd → its slot, null when none.
static SLOTS: OnceLock<Box<[AtomicPtr<Slot>]>> = OnceLock::new();
/// Slots and rings dropped, with the tick they were dropped at: freed two
/// ticks later, when no handler can still be reading them.
static GRAVE: Mutex<Vec<(u64, Box<Slot>)>> = Mutex::new(Vec::new());
static TICK: AtomicU64 = AtomicU64::new(0);

fn slots() -> &'static [AtomicPtr<Slot>] {
    SLOTS.get_or_init(|| {
        (0..MAX_FD)
            .map(|_| AtomicPtr::new(std::ptr::null_mut()))
            .collect()
    })
}

/// One thread's perf event, its ring mapped.
pub struct PerfEvent {
    fd: c_int,
    slot: *mut Slot,
}

// SAFETY: a descriptor and a pointer to a slot only this value frees
// (through the grave); usable from any thread.
unsafe impl Send for PerfEvent {}

fn page_size() -> usize {
    // SAFETY: sysconf takes a constant and reads no memory of ours.
    let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if p > 0 {
        p as usize
    } else {
        4096
    }
}

impl PerfEvent {
    /// A task-clock event on thread `tid` that sends `signo` to it every
    /// `interval` of its CPU time, with `token` for the handler.
    pub fn open(tid: i32, signo: c_int, interval: Duration, token: u64) -> std::io::Result<Self> {
        let attr = Attr {
            kind: PERF_TYPE_SOFTWARE,
            size: std::mem::size_of::<Attr>() as u32,
            config: PERF_COUNT_SW_TASK_CLOCK,
            sample_period: interval.as_nanos().max(1) as u64,
            sample_type: PERF_SAMPLE_CALLCHAIN,
            flags: FLAG_DISABLED | FLAG_EXCLUDE_HV | FLAG_EXCLUDE_CALLCHAIN_USER,
            wakeup_events: 1,
            ..Attr::default()
        };
        // SAFETY: perf_event_open(attr, pid, cpu, group_fd, flags) reads the
        // attr (`size` bytes, a live local); an error is a -1 return.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const Attr,
                tid,
                -1,
                -1,
                PERF_FLAG_FD_CLOEXEC,
            )
        } as c_int;
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let close = |e: std::io::Error| {
            // SAFETY: the descriptor just opened, closed once on this path.
            unsafe { libc::close(fd) };
            e
        };
        if fd as usize >= MAX_FD {
            return Err(close(std::io::Error::other("descriptor beyond the table")));
        }
        let page = page_size();
        let len = page * (1 + DATA_PAGES);
        // SAFETY: maps the event's ring (a new mapping the kernel chooses);
        // an error is MAP_FAILED.
        let ring = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                fd,
                0,
            )
        };
        if ring == libc::MAP_FAILED {
            return Err(close(std::io::Error::last_os_error()));
        }
        let owner = [F_OWNER_TID, tid];
        // SAFETY: fcntl on our descriptor: O_ASYNC, the signal, and the
        // owner thread (`owner` is a live f_owner_ex: two ints).
        let ok = unsafe {
            libc::fcntl(fd, libc::F_SETFL, libc::O_ASYNC) == 0
                && libc::fcntl(fd, F_SETSIG, signo) == 0
                && libc::fcntl(fd, F_SETOWN_EX, owner.as_ptr()) == 0
        };
        let error = std::io::Error::last_os_error();
        let slot = Box::into_raw(Box::new(Slot {
            token,
            ring: ring as usize,
            page,
        }));
        // From here, dropping `event` closes the descriptor and unmaps the ring.
        let event = PerfEvent { fd, slot };
        if !ok {
            return Err(error);
        }
        slots()[fd as usize].store(slot, Ordering::Release);
        // SAFETY: an ioctl without argument on our descriptor.
        if unsafe { libc::ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(event)
    }
}

impl Drop for PerfEvent {
    fn drop(&mut self) {
        // SAFETY: our descriptor, disabled then closed once, here.
        unsafe {
            libc::ioctl(self.fd, PERF_EVENT_IOC_DISABLE, 0);
        }
        if let Some(s) = slots().get(self.fd as usize) {
            let _ = s.compare_exchange(
                self.slot,
                std::ptr::null_mut(),
                Ordering::AcqRel,
                Ordering::Relaxed,
            );
        }
        // SAFETY: as above.
        unsafe { libc::close(self.fd) };
        // SAFETY: `slot` came from Box::into_raw in `open` and only this
        // drop takes it back.
        let slot = unsafe { Box::from_raw(self.slot) };
        GRAVE.lock().push((TICK.load(Ordering::Relaxed), slot));
    }
}

/// Sampler tick: unmaps the rings dropped two ticks ago or earlier.
pub fn reclaim() {
    let now = TICK.fetch_add(1, Ordering::Relaxed) + 1;
    let mut grave = GRAVE.lock();
    grave.retain(|(at, slot)| {
        if now < at + 2 {
            return true;
        }
        // SAFETY: the ring `open` mapped, its slot cleared two ticks ago
        // (no handler still reads it), unmapped once: the slot is dropped here.
        unsafe { libc::munmap(slot.ring as *mut c_void, slot.page * (1 + DATA_PAGES)) };
        false
    });
}

/// The slot of the event whose signal carries descriptor `fd` (handler).
pub fn slot(fd: i32) -> Option<&'static Slot> {
    let p = SLOTS
        .get()?
        .get(usize::try_from(fd).ok()?)?
        .load(Ordering::Acquire);
    // SAFETY: a non-null slot is a leaked Box freed only two ticks after it
    // was cleared here (`reclaim`): live while a handler runs.
    (!p.is_null()).then(|| unsafe { &*p })
}

impl Slot {
    /// The newest sample's kernel call chain into `out` (top first, at most
    /// `out.len()`); how many. Marks the ring read.
    ///
    /// Reads only the mapped ring, each word at an index within it.
    pub fn kernel_chain(&self, out: &mut [usize]) -> usize {
        let base = self.ring;
        let data = base + self.page;
        let size = (self.page * DATA_PAGES) as u64;
        // SAFETY: the control page's head, written by the kernel.
        let head = unsafe { std::ptr::read_volatile((base + DATA_HEAD) as *const u64) };
        std::sync::atomic::fence(Ordering::Acquire);
        // SAFETY: the control page's tail, written only by this thread's handler.
        let tail = unsafe { std::ptr::read_volatile((base + DATA_TAIL) as *const u64) };
        // Records are 8-byte aligned and their sizes multiples of 8, so a
        // word never straddles the ring's end.
        let word = |at: u64| -> u64 {
            // SAFETY: `at % size` is an aligned offset inside the data pages.
            unsafe { std::ptr::read_volatile((data + (at % size) as usize) as *const u64) }
        };
        let mut newest = None;
        let mut at = tail.max(head.saturating_sub(size));
        while at + 8 <= head {
            let header = word(at);
            let (kind, len) = (header as u32, (header >> 48) as u64);
            if len < 8 {
                break;
            }
            if kind == PERF_RECORD_SAMPLE && len >= 16 {
                newest = Some((at, len));
            }
            at += len;
        }
        let mut n = 0;
        if let Some((at, len)) = newest {
            let nr = word(at + 8).min((len - 16) / 8);
            for i in 0..nr {
                let ip = word(at + 16 + 8 * i);
                if ip >= PERF_CONTEXT_MAX {
                    continue;
                }
                if n == out.len() {
                    break;
                }
                out[n] = ip as usize;
                n += 1;
            }
        }
        std::sync::atomic::fence(Ordering::Release);
        // SAFETY: the tail is ours to write: the kernel reads it to know
        // what it may overwrite.
        unsafe { std::ptr::write_volatile((base + DATA_TAIL) as *mut u64, head) };
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Busy in the kernel (reads of /dev/zero) long enough for samples.
    fn kernel_work(ms: u64) {
        use std::io::Read;
        let mut f = std::fs::File::open("/dev/zero").unwrap();
        let mut buf = vec![0u8; 1 << 20];
        let end = std::time::Instant::now() + Duration::from_millis(ms);
        while std::time::Instant::now() < end {
            f.read_exact(&mut buf).unwrap();
        }
    }

    /// Where the kernel allows it (root, or perf_event_paranoid <= 1), an
    /// event on this thread writes chains of kernel addresses; elsewhere
    /// opening it is refused, which the agent reports and falls back from.
    #[test]
    fn an_event_on_this_thread_gives_kernel_chains_where_allowed() {
        let tid = crate::vm::hotspot::current_tid();
        // A signal nobody handles here would kill the test: SIGURG's default is to ignore it.
        let event = match PerfEvent::open(tid, libc::SIGURG, Duration::from_millis(1), 7) {
            Ok(e) => e,
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(0);
                assert!(
                    [libc::EACCES, libc::EPERM, libc::ENOENT, libc::ENOSYS].contains(&errno),
                    "{e}"
                );
                return;
            }
        };
        kernel_work(50);
        let s = slot(event.fd).expect("slot");
        assert_eq!(s.token, 7);
        let mut chain = [0usize; 128];
        let n = s.kernel_chain(&mut chain);
        assert!(n > 0, "no kernel frame after 50 ms in read(2)");
        assert!(
            chain[..n].iter().all(|&pc| pc >= 0xffff_8000_0000_0000),
            "{:x?}",
            &chain[..n]
        );
        let fd = event.fd;
        drop(event);
        assert!(slot(fd).is_none());
    }
}
