//! One thread's event ring: the thread (the only producer) writes events
//! into preallocated slots and publishes them with one release store; the
//! trace's writer thread (the only consumer) reads what was published and
//! hands the slots back the same way. No lock and no system call on the
//! producer's side, and no allocation after the ring is made.

use super::event::Event;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::*};

/// Slots per ring (a power of two): 512 KiB of events per thread.
pub const SLOTS: usize = 1 << 14;

/// Keeps the producer's and the consumer's counters on cache lines of
/// their own, so publishing does not slow the other side's reads.
#[repr(align(64))]
struct Padded(AtomicU64);

pub struct Ring {
    slots: Box<[UnsafeCell<Event>]>,
    /// Events published so far (written by the producer only).
    head: Padded,
    /// Events consumed so far (written by the consumer only).
    tail: Padded,
    /// The producer will write no more (its thread ended).
    closed: AtomicBool,
}

// SAFETY: a slot is written only by the producer while it is free (between
// `tail` and `tail + SLOTS`, not yet published) and read only by the consumer
// once published (below `head`); the release/acquire pairs on `head` and
// `tail` order those accesses. Each side is a single thread (see `push` and
// `drain`).
unsafe impl Sync for Ring {}
// SAFETY: as above; a ring holds no thread-bound data.
unsafe impl Send for Ring {}

impl Ring {
    pub fn new() -> Self {
        Ring {
            slots: zeroed_slots(),
            head: Padded(AtomicU64::new(0)),
            tail: Padded(AtomicU64::new(0)),
            closed: AtomicBool::new(false),
        }
    }

    /// Publishes `e` unless the ring is full (then gives it back). Only the
    /// ring's own thread may call this.
    #[inline(always)]
    pub fn push(&self, e: Event) -> Result<(), Event> {
        let head = self.head.0.load(Relaxed);
        if head - self.tail.0.load(Acquire) >= SLOTS as u64 {
            return Err(e);
        }
        let slot = &self.slots[head as usize & (SLOTS - 1)];
        // SAFETY: the slot is free (checked against `tail` above, whose
        // acquire orders the consumer's last read of it before this write) and
        // only this thread writes slots.
        unsafe { *slot.get() = e };
        self.head.0.store(head + 1, Release);
        Ok(())
    }

    /// Events published and not yet consumed.
    pub fn pending(&self) -> u64 {
        self.head.0.load(Acquire) - self.tail.0.load(Relaxed)
    }

    /// Hands every published event to `f`, oldest first, then frees their
    /// slots. Only the trace's writer thread may call this.
    pub fn drain(&self, mut f: impl FnMut(&Event)) -> usize {
        let head = self.head.0.load(Acquire);
        let tail = self.tail.0.load(Relaxed);
        for i in tail..head {
            let slot = &self.slots[i as usize & (SLOTS - 1)];
            // SAFETY: published (below `head`, whose acquire orders the
            // producer's write before this read) and not yet freed.
            f(unsafe { &*slot.get() });
        }
        self.tail.0.store(head, Release);
        (head - tail) as usize
    }

    /// Marks the ring as finished (its thread ended).
    pub fn close(&self) {
        self.closed.store(true, Release);
    }

    pub fn is_closed(&self) -> bool {
        self.closed.load(Acquire)
    }
}

/// The slots, zeroed by the allocator (calloc): a page is touched only when
/// the ring reaches it, so a thread with few events costs little memory.
fn zeroed_slots() -> Box<[UnsafeCell<Event>]> {
    let layout = std::alloc::Layout::array::<UnsafeCell<Event>>(SLOTS).expect("a fixed size");
    // SAFETY: the layout is non-zero-sized.
    let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<UnsafeCell<Event>>();
    if p.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    // SAFETY: `p` holds SLOTS events, allocated with the global allocator and
    // this layout (what a boxed slice is freed with), all bytes zero: a valid
    // `Event` (`Kind::Entry` is 0, the rest integers).
    unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(p, SLOTS)) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::event::Kind;
    use std::sync::Arc;

    #[test]
    fn a_full_ring_refuses_until_drained() {
        let r = Ring::new();
        for i in 0..SLOTS as u64 {
            assert!(r.push(Event::new(Kind::Entry, 1, i, i, 0)).is_ok());
        }
        assert!(r.push(Event::new(Kind::Entry, 1, 0, 0, 0)).is_err());
        let mut seen = 0;
        r.drain(|e| {
            assert_eq!(e.time, seen);
            seen += 1;
        });
        assert_eq!(seen, SLOTS as u64);
        assert!(r.push(Event::new(Kind::Exit, 1, 0, 0, 0)).is_ok());
    }

    #[test]
    fn a_consumer_sees_every_event_in_order() {
        let r = Arc::new(Ring::new());
        let producer = {
            let r = r.clone();
            std::thread::spawn(move || {
                for i in 0..1_000_000u64 {
                    let mut e = Event::new(Kind::Entry, 7, i, i, 0);
                    while let Err(back) = r.push(e) {
                        e = back;
                        std::hint::spin_loop();
                    }
                }
                r.close();
            })
        };
        let mut next = 0u64;
        loop {
            let closed = r.is_closed();
            r.drain(|e| {
                assert_eq!((e.time, e.b), (next, next));
                next += 1;
            });
            if closed && r.pending() == 0 {
                break;
            }
        }
        producer.join().unwrap();
        assert_eq!(next, 1_000_000);
    }
}
