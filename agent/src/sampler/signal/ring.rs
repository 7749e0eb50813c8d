//! Preallocated slots the signal handler writes stacks into and the sampler
//! thread drains. Claiming and publishing a slot are single atomic operations,
//! so the handler takes no lock and allocates nothing; a full ring drops the
//! sample and counts it.

use crate::error::AgentError;
use crate::vm::async_trace::CallFrame;
use std::sync::atomic::{AtomicI32, AtomicU32, AtomicU64, AtomicUsize, Ordering};

const FREE: u32 = 0;
const WRITING: u32 = 1;
const READY: u32 = 2;
/// Being drained: a sampler thread that stopped late may drain the ring at
/// the same time as the next session's.
const READING: u32 = 3;

/// One sample's header; its frames live in the ring's frame area.
#[repr(align(64))]
#[derive(Default)]
struct Slot {
    state: AtomicU32,
    /// Frames written, or AsyncGetCallTrace's negative failure code.
    code: AtomicI32,
    /// Who asked for the sample (see `super::Token`).
    token: AtomicU64,
    /// Samples this one stands for (a CPU timer's overruns add to it).
    weight: AtomicU32,
    tid: AtomicI32,
    /// The thread's CPU time as the handler finished, ns.
    cpu_ns: AtomicU64,
}

/// A sample as the sampler thread reads it.
pub struct Sample<'a> {
    pub token: u64,
    pub weight: u32,
    pub tid: i32,
    /// The thread's CPU time as its handler finished, ns (0 if unknown).
    pub cpu_ns: u64,
    /// Frames written, or a negative AsyncGetCallTrace code.
    pub code: i32,
    /// Top frame first; empty when `code <= 0`.
    pub frames: &'a [CallFrame],
}

pub struct Ring {
    slots: Box<[Slot]>,
    /// `slots.len() * stride` frames, mapped once and never freed.
    frames: *mut CallFrame,
    /// Frames per slot.
    stride: usize,
    cursor: AtomicUsize,
    dropped: AtomicU64,
}

// SAFETY: `frames` is the only non-atomic state. A slot's part of it is
// written only by the one `record` that moved the slot FREE -> WRITING, and
// read only by the one `drain` that moved it READY -> READING (each a
// compare-exchange; Acquire pairs the writer's Release of READY), until
// that drain makes it FREE again (Release).
unsafe impl Sync for Ring {}
// SAFETY: the mapping belongs to no thread; see Sync.
unsafe impl Send for Ring {}

impl Ring {
    /// A ring of `slots` (rounded up to a power of two) of `stride` frames
    /// each; never freed, since a late signal may still write into it.
    pub fn leak(slots: usize, stride: usize) -> Result<&'static Ring, AgentError> {
        let n = slots.max(2).next_power_of_two();
        let bytes = n
            .checked_mul(stride)
            .and_then(|f| f.checked_mul(std::mem::size_of::<CallFrame>()))
            .ok_or(AgentError::Unsupported("sample ring too large".into()))?;
        // SAFETY: a new anonymous private mapping, at an address the kernel
        // picks (no existing memory is touched). The kernel commits pages only
        // when touched, so deep `depth` settings cost address space, not memory.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(crate::error::io(
                format!("cannot map {bytes} bytes for samples"),
                std::io::Error::last_os_error(),
            ));
        }
        let slots = (0..n).map(|_| Slot::default()).collect();
        Ok(Box::leak(Box::new(Ring {
            slots,
            frames: p.cast(),
            stride,
            cursor: AtomicUsize::new(0),
            dropped: AtomicU64::new(0),
        })))
    }

    pub fn stride(&self) -> usize {
        self.stride
    }

    /// Samples lost because every slot was full.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }

    /// Signal handler side: claims a free slot, lets `walk` fill its frames
    /// (it gets the frame area and its length, and returns a count or code
    /// and the thread's CPU time after the walk), and publishes it. Async-signal-safe: atomics only, no panic path (the
    /// slot count is a power of two, so indexing is a mask).
    pub fn record(
        &self,
        token: u64,
        weight: u32,
        tid: i32,
        walk: impl FnOnce(*mut CallFrame, usize) -> (i32, u64),
    ) {
        let n = self.slots.len();
        let start = self.cursor.fetch_add(1, Ordering::Relaxed);
        for k in 0..n {
            let i = start.wrapping_add(k) & (n - 1);
            // SAFETY: `n` is a power of two (`leak`), so `i = .. & (n - 1) < n`.
            let slot = unsafe { self.slots.get_unchecked(i) };
            if slot
                .state
                .compare_exchange(FREE, WRITING, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            // SAFETY: the mapping holds `n * stride` frames (`leak`) and `i < n`,
            // so the offset stays inside it; slot `i`'s frames start there.
            let frames = unsafe { self.frames.add(i * self.stride) };
            let (code, cpu_ns) = walk(frames, self.stride);
            slot.cpu_ns.store(cpu_ns, Ordering::Relaxed);
            slot.code.store(code, Ordering::Relaxed);
            slot.token.store(token, Ordering::Relaxed);
            slot.weight.store(weight, Ordering::Relaxed);
            slot.tid.store(tid, Ordering::Relaxed);
            slot.state.store(READY, Ordering::Release);
            return;
        }
        self.dropped.fetch_add(weight as u64, Ordering::Relaxed);
    }

    /// Sampler thread side: hands every published sample to `f`, then frees its slot.
    pub fn drain(&self, mut f: impl FnMut(Sample<'_>)) {
        for (i, slot) in self.slots.iter().enumerate() {
            if slot
                .state
                .compare_exchange(READY, READING, Ordering::Acquire, Ordering::Relaxed)
                .is_err()
            {
                continue;
            }
            let code = slot.code.load(Ordering::Relaxed);
            let len = if code > 0 {
                (code as usize).min(self.stride)
            } else {
                0
            };
            // SAFETY: READY (Acquire) means the handler finished writing `len`
            // (<= stride) frames of slot `i`, inside the mapping (as in
            // `record`); READING keeps writers and other drains off them
            // until this one makes the slot FREE, after `f` is done with them.
            let frames =
                unsafe { std::slice::from_raw_parts(self.frames.add(i * self.stride), len) };
            f(Sample {
                token: slot.token.load(Ordering::Relaxed),
                weight: slot.weight.load(Ordering::Relaxed),
                tid: slot.tid.load(Ordering::Relaxed),
                cpu_ns: slot.cpu_ns.load(Ordering::Relaxed),
                code,
                frames,
            });
            slot.state.store(FREE, Ordering::Release);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(ring: &Ring, token: u64, depth: usize) {
        ring.record(token, 1, 7, |frames, max| {
            let n = depth.min(max);
            for k in 0..n {
                // SAFETY: the ring gives `max` frames.
                unsafe { *frames.add(k) = CallFrame::new(k as i32, std::ptr::null_mut()) };
            }
            (n as i32, 0)
        });
    }

    #[test]
    fn samples_come_back_once_and_a_full_ring_counts_drops() {
        let ring = Ring::leak(4, 8).unwrap();
        for t in 1..=6 {
            write(ring, t, t as usize);
        }
        assert_eq!(ring.dropped(), 2);
        let mut seen = Vec::new();
        ring.drain(|s| {
            assert_eq!(s.frames.len(), (s.token as usize).min(8));
            assert_eq!(s.tid, 7);
            seen.push(s.token)
        });
        seen.sort();
        assert_eq!(seen, vec![1, 2, 3, 4]);
        ring.drain(|_| panic!("drained twice"));
        write(ring, 9, 20);
        ring.drain(|s| assert_eq!((s.token, s.frames.len()), (9, 8)));
    }

    #[test]
    fn threads_writing_at_once_lose_nothing_the_ring_can_hold() {
        let ring = Ring::leak(1024, 4).unwrap();
        std::thread::scope(|s| {
            for t in 0..4u64 {
                s.spawn(move || {
                    for k in 0..200 {
                        write(ring, t * 1000 + k + 1, 3);
                    }
                });
            }
        });
        let mut n = 0;
        ring.drain(|s| {
            assert_eq!(s.code, 3);
            n += 1
        });
        assert_eq!(n + ring.dropped(), 800);
        assert_eq!(ring.dropped(), 0);
    }
}
