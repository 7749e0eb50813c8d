//! A snapshot's `count`: the objects alive at the end of its own GC
//! ([`Instant::LastGcEnd`]), whatever was made after it; under ZGC or
//! Shenandoah, at its censuses ([`Instant::Census`]).

use super::test_support::{census, counter, row};
use super::{Counters, Instant, Key, Kind};

/// A new counter of thread 1 for site 5 of `kind` in type 0's group,
/// `before` objects made, a GC, `after` objects made.
fn across_a_gc(counters: &Counters, kind: Kind, before: usize, after: usize) -> &super::Counter {
    let c = counter(counters, 1, 5, kind, counters.group(1, 0).unwrap());
    for _ in 0..before {
        c.made_one();
    }
    counters.gc_started();
    counters.gc_ended(false);
    for _ in 0..after {
        c.made_one();
    }
    c
}

fn alive(counters: &Counters, at: Instant, k: Key) -> i64 {
    row(counters, at, k).alive
}

/// Weak references: what was made by the GC's end less what it found dead;
/// what was made after is left out (its deaths are not known yet).
#[test]
fn weak_counts_are_taken_at_the_gcs_end() {
    let counters = Counters::default();
    // 10 before the GC, 5 after it: some of those may be dead already.
    let w = across_a_gc(&counters, Kind::Weak, 10, 5);
    counters.freed_by_index(w.index(), 4); // the scan of the GC
    assert_eq!(alive(&counters, Instant::LastGcEnd, Key::Site(5)), 6);
    assert_eq!(alive(&counters, Instant::LastGcEnd, Key::Type(0)), 6);
    assert_eq!(alive(&counters, Instant::Now, Key::Site(5)), 11);
}

/// Stamps: a pause collector's census walks every object in the heap, so
/// it also finds what was made since the GC, dead or not: less that, what
/// was alive at the GC's end.
#[test]
fn a_census_counts_what_was_alive_at_the_gcs_end() {
    let counters = Counters::default();
    let s = across_a_gc(&counters, Kind::Stamp, 100, 30);
    census(&counters, s, 80 + 30); // 80 of the 100 survived the GC
    assert_eq!(alive(&counters, Instant::LastGcEnd, Key::Site(5)), 80);
    assert_eq!(alive(&counters, Instant::Now, Key::Site(5)), 110);
}

/// ZGC and Shenandoah walk only what is reachable: the census is its own
/// moment's count.
#[test]
fn a_reachable_only_census_is_kept_as_counted() {
    let counters = Counters::default();
    counters.set_walks_see_only_reachable(true);
    let s = across_a_gc(&counters, Kind::Stamp, 100, 30);
    census(&counters, s, 95);
    assert_eq!(alive(&counters, Instant::LastGcEnd, Key::Site(5)), 95);
}

/// ZGC and Shenandoah: the census of the tags counts what is reachable at
/// its moment, on the tags' sites; their group's own count (each tag counts
/// on it too) gives way to its sites' census, so nothing counts twice.
#[test]
fn a_census_of_the_tags_is_the_snapshots_count() {
    let counters = Counters::default();
    counters.set_walks_see_only_reachable(true);
    let group = counters.group(1, 0).unwrap();
    let t = counter(&counters, 1, 5, Kind::Tag, group);
    let s = counter(&counters, 1, 6, Kind::Stamp, group);
    for _ in 0..50 {
        t.made_one();
        group.made_one_shared();
        s.made_one();
    }
    counters.object_freed(t.tag()); // one ObjectFree posted; 7 more dead
    let mut made = Vec::new();
    counters.census_moment(&mut made);
    let mut alive = vec![0; made.len()];
    alive[t.index()] = 42;
    counters.tags_counted(&alive, &made);
    alive[t.index()] = 0;
    alive[s.index()] = 30;
    let at = counters.census_moment(&mut made);
    counters.census_taken(&alive, &made, at);
    t.made_one(); // after the censuses: left out
    group.made_one_shared();
    assert_eq!(alive_of(&counters, Key::Site(5)), (42, 51));
    assert_eq!(alive_of(&counters, Key::Site(6)), (30, 50));
    assert_eq!(alive_of(&counters, Key::Type(0)), (72, 101));
}

fn alive_of(counters: &Counters, k: Key) -> (i64, i64) {
    let r = row(counters, Instant::Census, k);
    (r.alive, r.made)
}
