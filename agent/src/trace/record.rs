//! How an event goes into its thread's ring: a [`Kind::Switch`] first when
//! the ring last held another Java thread's events, a `Lost` count after a
//! gap, and a full ring waits for the writer or drops (the module's
//! comment, `mod.rs`).

use super::event::{Event, Kind};
use super::{ring, Lifetime, Own, ThreadRing};
use std::sync::atomic::Ordering::*;

/// Puts `e` into the thread's ring; a full ring waits or drops (see the
/// module's comment).
#[inline(always)]
pub(super) fn record(life: &Lifetime, tr: &ThreadRing, own: &mut Own, e: Event) {
    if tr.last.get() != own.key && !switch(life, tr, own.key, e.time) {
        own.dropped += 1;
        life.lost.fetch_add(1, Relaxed);
        return;
    }
    if own.dropped > 0
        && tr
            .ring
            .push(Event::new(Kind::Lost, 0, e.time, own.dropped, 0))
            .is_ok()
    {
        own.dropped = 0;
    }
    if own.dropped > 0 {
        own.dropped += 1;
        life.lost.fetch_add(1, Relaxed);
        return;
    }
    match tr.ring.push(e) {
        Ok(()) => {
            if tr.ring.pending() == ring::SLOTS as u64 / 2 {
                life.wake_writer();
            }
        }
        Err(e) => {
            if !full(life, tr, e) {
                own.dropped += 1;
                life.lost.fetch_add(1, Relaxed);
            }
        }
    }
}

/// The ring's next events are those of the Java thread `key`: a
/// [`Kind::Switch`] says so (a thread's first event, and a virtual
/// thread's after another thread ran on the carrier). False if it was
/// dropped (the ring full, `overflow=drop`): so is the event, and the next
/// one tries again.
#[cold]
#[inline(never)]
fn switch(life: &Lifetime, tr: &ThreadRing, key: u64, time: u64) -> bool {
    let e = Event::new(Kind::Switch, 0, time, key, 0);
    let pushed = tr.ring.push(e).is_ok() || full(life, tr, e);
    if pushed {
        tr.last.set(key);
    }
    pushed
}

/// `e` met a full ring: waits for the writer (`overflow=wait`), unless the
/// trace drops (`overflow=drop`, or it cannot write). True once pushed.
#[cold]
#[inline(never)]
fn full(life: &Lifetime, tr: &ThreadRing, e: Event) -> bool {
    life.waits.fetch_add(1, Relaxed);
    life.wake_writer();
    let mut e = e;
    let mut spins = 0u32;
    while !life.drop_when_full.load(Relaxed) && !life.failed.load(Relaxed) {
        match tr.ring.push(e) {
            Ok(()) => return true,
            Err(back) => e = back,
        }
        spins += 1;
        if spins < 64 {
            std::hint::spin_loop();
        } else {
            life.wake_writer();
            std::thread::sleep(std::time::Duration::from_micros(50));
        }
    }
    false
}
