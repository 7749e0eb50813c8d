//! `max`: taken at the ends of full collections once their figures are
//! known, each group at its sites' sum, never the garbage (`peaks`).

use super::test_support::{census, counter, row};
use super::{Counter, Counters, Instant, Key, Kind, Known};
use std::sync::atomic::Ordering::Relaxed;

fn make(c: &Counter, n: usize) {
    for _ in 0..n {
        c.made_one();
    }
}

fn get(counters: &Counters, k: Key) -> (i64, i64, i64) {
    let r = row(counters, Instant::Now, k);
    (r.alive, r.max, r.made)
}

/// A GC's pause as the memory mode sees it: `full` or young.
fn gc(counters: &Counters, full: bool) {
    counters.gc_started();
    counters.gc_ended(full);
}

/// The weak references' frees counted through every GC so far.
fn weak(counters: &Counters) -> Known {
    Known {
        weak_through: counters.gcs_finished(),
    }
}

#[test]
fn tags_name_their_counters_and_frees_come_back() {
    let counters = Counters::default();
    let group = counters.group(7, 3).unwrap();
    let a = counter(&counters, 7, 1, Kind::Tag, group);
    assert!(super::is_memory_tag(a.tag()));
    assert!(
        !super::is_memory_tag(5) && !super::is_memory_tag(-1),
        "thread tags are not ours"
    );
    // A census of the tags marks the objects it counted: still ours,
    // still naming the counter.
    let marked = super::with_epoch(a.tag(), 9);
    assert!(super::is_memory_tag(marked));
    assert_eq!(super::memory_index(marked), a.index());
    assert_eq!(super::tag_epoch(marked), 9);
    assert_eq!(super::tag_epoch(a.tag()), 0);
    for _ in 0..3 {
        a.made_one();
        group.made_one_shared();
    }
    counters.object_freed(marked);
    a.made_one();
    group.made_one_shared();
    counters.object_freed(5); // a thread's tag: ignored
    assert_eq!(get(&counters, Key::Site(1)), (3, 3, 4));
    assert_eq!(get(&counters, Key::Type(3)), (3, 3, 4));
    let e = counters.next_tag_epoch();
    assert!(e != 0 && counters.next_tag_epoch() != e);
}

/// `max` moves only at the end of a full collection, once its frees
/// are counted: a young one does not know which old objects died, and
/// the garbage made before a GC is never counted alive. A group's `max`
/// is the peak of its sites' sum, not the sum of their peaks.
#[test]
fn weak_peaks_are_taken_at_full_collections_ends() {
    let counters = Counters::default();
    let group = counters.group(3, 0).unwrap();
    let a = counter(&counters, 3, 10, Kind::Weak, group);
    let b = counter(&counters, 3, 11, Kind::Weak, group);
    make(a, 9);
    gc(&counters, false); // young: 4 of a died
    counters.freed_by_index(a.index(), 4);
    counters.take_pending_peak(weak(&counters));
    assert_eq!(a.max.load(Relaxed), 0, "no instant yet");
    gc(&counters, true); // full: 5 alive
    assert!(counters.peak_pending());
    counters.take_pending_peak(weak(&counters));
    assert!(!counters.peak_pending(), "taken once");
    counters.freed_by_index(a.index(), 5);
    make(b, 5);
    gc(&counters, true); // full: b 5, a 0
    counters.take_pending_peak(weak(&counters));
    assert_eq!(get(&counters, Key::Site(10)), (0, 5, 9));
    assert_eq!(get(&counters, Key::Site(11)), (5, 5, 5));
    assert_eq!(get(&counters, Key::Type(0)), (5, 5, 14), "max: not 5 + 5");
}

/// Tags under a pause collector: a full collection's end is no instant
/// of theirs (the VM posts its frees in its own time); a census of the
/// tags after it is, and the group counts its tags' objects once (on
/// itself), not again through its sites.
#[test]
fn tag_peaks_are_taken_at_their_censuses() {
    let counters = Counters::default();
    let group = counters.group(3, 0).unwrap();
    let t = counter(&counters, 3, 10, Kind::Tag, group);
    for _ in 0..6 {
        t.made_one();
        group.made_one_shared();
    }
    gc(&counters, true);
    counters.object_freed(t.tag()); // one free posted so far
    counters.take_pending_peak(Known { weak_through: 0 });
    assert_eq!(t.max.load(Relaxed), 0, "the GC's end: not known");
    assert_eq!(group.max.load(Relaxed), 0);
    // The census: 4 reachable (the VM has two frees still to post).
    let mut made = Vec::new();
    counters.census_moment(&mut made);
    let mut alive = vec![0; made.len()];
    alive[t.index()] = 4;
    counters.tags_counted(&alive, &made);
    counters.raise_to_tag_census();
    assert_eq!(t.max.load(Relaxed), 4);
    assert_eq!(group.max.load(Relaxed), 4, "not 4 + 4");
    let r = row(&counters, Instant::Census, Key::Type(0));
    assert_eq!((r.alive, r.max), (4, 4));
}

/// A full collection's peak is lost once another GC has started: its
/// frees may be counted in part, and stamps made since counted dead.
#[test]
fn a_gc_started_since_loses_the_full_collections_peak() {
    let counters = Counters::default();
    let group = counters.group(3, 0).unwrap();
    let w = counter(&counters, 3, 10, Kind::Weak, group);
    make(w, 8);
    gc(&counters, true);
    counters.freed_by_index(w.index(), 3);
    let scanned = weak(&counters);
    gc(&counters, true); // a GC between the scan and the peak
    counters.take_pending_peak(scanned);
    assert_eq!(w.max.load(Relaxed), 0, "its frees not counted");
    counters.gc_started();
    assert!(!counters.peak_pending());
    counters.take_pending_peak(weak(&counters));
    assert_eq!(w.max.load(Relaxed), 0);
}

/// Stamps: the census after a full collection counts what was alive at
/// its end; without one (the budget), the stamps' part of that instant
/// is unknown, and so is any group with stamps in it.
#[test]
fn stamp_peaks_are_taken_at_a_census_after_a_full_collection() {
    let counters = Counters::default();
    let group = counters.group(1, 0).unwrap();
    let s = counter(&counters, 1, 5, Kind::Stamp, group);
    let w = counter(&counters, 1, 6, Kind::Weak, group);
    make(s, 400); // a wave, held across a full GC
    make(w, 2);
    gc(&counters, true);
    census(&counters, s, 400);
    counters.take_pending_peak(weak(&counters));
    assert_eq!(s.max.load(Relaxed), 400);
    assert_eq!(group.max.load(Relaxed), 402);
    make(s, 300); // dropped, then a young GC's census: no instant
    gc(&counters, false);
    census(&counters, s, 250);
    counters.take_pending_peak(weak(&counters));
    assert_eq!(s.max.load(Relaxed), 400);
    make(s, 500);
    make(w, 5);
    gc(&counters, true); // no census: the weak site alone
    counters.take_pending_peak(weak(&counters));
    assert_eq!(s.max.load(Relaxed), 400);
    assert_eq!(w.max.load(Relaxed), 7);
    assert_eq!(group.max.load(Relaxed), 402, "its stamps unknown");
}

/// ZGC and Shenandoah: each census counts what is reachable at its own
/// moment, an instant for the stamps and the groups of stamps alone.
#[test]
fn reachable_only_censuses_are_instants_of_their_own() {
    let counters = Counters::default();
    counters.set_walks_see_only_reachable(true);
    let stamped = counters.group(1, 0).unwrap();
    let s = counter(&counters, 1, 5, Kind::Stamp, stamped);
    let mixed = counters.group(1, 1).unwrap();
    let t = counter(&counters, 1, 6, Kind::Tag, mixed);
    let s2 = counter(&counters, 1, 7, Kind::Stamp, mixed);
    make(s, 100);
    make(s2, 10);
    t.made_one();
    mixed.made_one_shared();
    gc(&counters, false);
    census(&counters, s, 60);
    census(&counters, s, 80);
    assert_eq!(s.max.load(Relaxed), 80);
    assert_eq!(stamped.max.load(Relaxed), 80);
    assert_eq!(mixed.max.load(Relaxed), 0, "its tag's object not counted");
}
