//! What a clock read costs on this machine, for choosing the probes' time
//! sources (issue 4: per-call timing must stay near 35-45 ns).
//!
//!     cargo run --release -p profrj-agent --example clock_costs
//!
//! Compares rdtsc, CLOCK_MONOTONIC (vDSO), CLOCK_THREAD_CPUTIME_ID (a syscall)
//! and the thread's CPU time computed from a perf_event task-clock mmap page
//! (self-monitoring without a syscall), and checks the last against the second.

use std::time::Instant;

const N: u32 = 2_000_000;

fn bench(name: &str, mut f: impl FnMut() -> u64) -> f64 {
    let mut sink = 0u64;
    for _ in 0..N / 10 {
        sink = sink.wrapping_add(f());
    }
    let t = Instant::now();
    for _ in 0..N {
        sink = sink.wrapping_add(f());
    }
    let ns = t.elapsed().as_nanos() as f64 / N as f64;
    println!("{name:<44} {ns:>7.1} ns   (checksum {})", sink % 10);
    ns
}

fn clock(id: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes into a local timespec.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

#[cfg(target_arch = "x86_64")]
fn rdtsc() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86-64.
    unsafe { core::arch::x86_64::_rdtsc() }
}

/// The kernel's `struct perf_event_mmap_page`, up to the fields read here.
#[repr(C)]
struct MmapPage {
    version: u32,
    compat_version: u32,
    lock: u32,
    index: u32,
    offset: i64,
    time_enabled: u64,
    time_running: u64,
    capabilities: u64,
    pmc_width: u16,
    time_shift: u16,
    time_mult: u32,
    time_offset: u64,
}

/// This thread's task-clock (CPU time, ns) from the perf mmap page.
struct TaskClock {
    page: *const MmapPage,
}

impl TaskClock {
    fn open() -> Option<Self> {
        // perf_event_attr: type, size, config, then flags; zero means defaults.
        let mut attr = [0u64; 16];
        let size = 112u32; // PERF_ATTR_SIZE_VER5
        attr[0] = 1 | ((size as u64) << 32); // PERF_TYPE_SOFTWARE, size
        attr[1] = 1; // PERF_COUNT_SW_TASK_CLOCK
                     // SAFETY: perf_event_open reads `size` bytes of attr (we have 128).
        let fd = unsafe { libc::syscall(libc::SYS_perf_event_open, attr.as_ptr(), 0, -1, -1, 0) };
        if fd < 0 {
            println!(
                "perf_event_open failed: {}",
                std::io::Error::last_os_error()
            );
            return None;
        }
        // SAFETY: maps the event's first page read-only.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                4096,
                libc::PROT_READ,
                libc::MAP_SHARED,
                fd as i32,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        Some(Self { page: p.cast() })
    }

    fn read(&self) -> u64 {
        let pc = self.page;
        loop {
            // SAFETY: the page stays mapped; fields are read volatile under the seqlock.
            unsafe {
                let seq = std::ptr::read_volatile(&(*pc).lock);
                std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
                let running = std::ptr::read_volatile(&(*pc).time_running);
                let caps = std::ptr::read_volatile(&(*pc).capabilities);
                let shift = std::ptr::read_volatile(&(*pc).time_shift) as u32;
                let mult = std::ptr::read_volatile(&(*pc).time_mult) as u64;
                let toff = std::ptr::read_volatile(&(*pc).time_offset);
                let mut value = running;
                if caps & (1 << 3) != 0 {
                    // cap_user_time: add the time since the page was last updated.
                    let cyc = rdtsc();
                    let quot = cyc >> shift;
                    let rem = cyc & ((1u64 << shift) - 1);
                    let delta = toff
                        .wrapping_add(quot * mult)
                        .wrapping_add((rem * mult) >> shift);
                    value = value.wrapping_add(delta);
                }
                std::sync::atomic::compiler_fence(std::sync::atomic::Ordering::SeqCst);
                if std::ptr::read_volatile(&(*pc).lock) == seq {
                    return value;
                }
            }
        }
    }
}

fn main() {
    bench("rdtsc", rdtsc);
    bench("clock_gettime(CLOCK_MONOTONIC)", || {
        clock(libc::CLOCK_MONOTONIC)
    });
    bench("clock_gettime(CLOCK_THREAD_CPUTIME_ID)", || {
        clock(libc::CLOCK_THREAD_CPUTIME_ID)
    });
    match TaskClock::open() {
        Some(tc) => {
            // SAFETY: the page is mapped.
            let caps = unsafe { std::ptr::read_volatile(&(*tc.page).capabilities) };
            println!(
                "perf mmap page capabilities {caps:#x}: cap_user_time={} (without it the page is only updated when the thread is scheduled)",
                caps >> 3 & 1
            );
            bench("perf task-clock mmap page (no syscall)", || tc.read());
            // Agreement with the kernel's own thread clock over a busy stretch.
            let (a0, b0) = (tc.read(), clock(libc::CLOCK_THREAD_CPUTIME_ID));
            let mut x = 1u64;
            for i in 0..50_000_000u64 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
            }
            let (a1, b1) = (tc.read(), clock(libc::CLOCK_THREAD_CPUTIME_ID));
            println!(
                "busy stretch: task-clock page {:.3} ms, CLOCK_THREAD_CPUTIME_ID {:.3} ms (x={})",
                (a1 - a0) as f64 / 1e6,
                (b1 - b0) as f64 / 1e6,
                x % 7
            );
        }
        None => println!("perf task-clock mmap page: not available here"),
    }
}
