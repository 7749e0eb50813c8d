//! Counters of folded threads given back once none of their objects is
//! alive, their figures kept under the group, their slots taken again.

use super::test_support::{census, counter};
use super::{Counters, Instant, Key, Kind, Tally};

/// Thread 7 folded into group 100; thread 8 alive.
fn folded(ids: &[i64]) -> Vec<Option<i64>> {
    ids.iter().map(|&t| (t == 7).then_some(100)).collect()
}

/// One look by the agent (thread 7 folded, as the table says): the
/// counters given back so far.
fn look(counters: &Counters) -> u64 {
    counters.give_back_folded(1, folded);
    counters.use_now().given_back
}

/// Every tally of `key`, (thread, alive, max, made), sorted.
fn tallies(counters: &Counters, key: Key) -> Vec<(i64, i64, i64, i64)> {
    let mut v: Vec<_> = (counters.all(Instant::Now).into_iter())
        .filter(|t: &Tally| t.key == key)
        .map(|t| (t.thread, t.alive, t.max, t.made))
        .collect();
    v.sort_unstable();
    v
}

#[test]
fn weak_counters_are_given_back_once_their_objects_are_dead() {
    let counters = Counters::default();
    let group = counters.group(7, 3).unwrap();
    let site = counter(&counters, 7, 1, Kind::Weak, group);
    let other = counter(&counters, 8, 1, Kind::Weak, counters.group(8, 3).unwrap());
    for _ in 0..5 {
        site.made_one();
    }
    other.made_one();
    site.max.store(4, std::sync::atomic::Ordering::Relaxed);
    counters.freed_by_index(site.index(), 3);
    counters.give_back_folded(1, folded);
    // Two still alive: kept under thread 7 (the reading sums it into 100).
    assert_eq!(counters.use_now().given_back, 0);
    assert_eq!(
        tallies(&counters, Key::Site(1)),
        vec![(7, 2, 4, 5), (8, 1, 1, 1)]
    );
    counters.freed_by_index(site.index(), 2);
    counters.give_back_folded(1, |_| unreachable!("no new fold: not asked"));
    // The site, then its group left without a site.
    assert_eq!(counters.use_now().given_back, 2);
    assert_eq!(counters.use_now().held, 2);
    assert_eq!(
        tallies(&counters, Key::Site(1)),
        vec![(8, 1, 1, 1), (100, 0, 4, 5)]
    );
    assert_eq!(
        tallies(&counters, Key::Type(3)),
        vec![(8, 1, 1, 1), (100, 0, 0, 5)]
    );
    // The next counters take the slots given back.
    let again = counters.group(9, 4).unwrap();
    let reused = counter(&counters, 9, 2, Kind::Stamp, again);
    let mut slots = [again.index(), reused.index()];
    slots.sort_unstable();
    let mut freed = [group.index(), site.index()];
    freed.sort_unstable();
    assert_eq!(slots, freed);
    assert_eq!((reused.made(), reused.kind()), (0, Kind::Stamp));
    assert_eq!(counters.use_now().held, 4);
}

#[test]
fn stamp_counters_wait_for_a_census_that_finds_none() {
    let counters = Counters::default();
    let group = counters.group(7, 3).unwrap();
    let site = counter(&counters, 7, 1, Kind::Stamp, group);
    for _ in 0..4 {
        site.made_one();
    }
    // A census before the thread was seen folded proves nothing.
    census(&counters, site, 0);
    assert_eq!(look(&counters), 0);
    census(&counters, site, 2);
    assert_eq!(look(&counters), 0, "two still stamped");
    census(&counters, site, 0);
    assert_eq!(look(&counters), 2);
    assert_eq!(tallies(&counters, Key::Site(1)), vec![(100, 0, 0, 4)]);
    assert_eq!(tallies(&counters, Key::Type(3)), vec![(100, 0, 0, 4)]);
}

#[test]
fn tag_counters_go_with_their_group_once_every_free_came() {
    let counters = Counters::default();
    let group = counters.group(7, 3).unwrap();
    let site = counter(&counters, 7, 1, Kind::Tag, group);
    for _ in 0..3 {
        site.made_one();
        group.made_one_shared();
    }
    counters.object_freed(site.tag());
    assert_eq!(look(&counters), 0);
    counters.object_freed(site.tag());
    counters.object_freed(site.tag());
    assert_eq!(look(&counters), 2);
    // The type's objects counted once: the group's own count.
    assert_eq!(tallies(&counters, Key::Site(1)), vec![(100, 0, 0, 3)]);
    assert_eq!(tallies(&counters, Key::Type(3)), vec![(100, 0, 0, 3)]);
}

#[test]
fn a_live_threads_counters_stay() {
    let counters = Counters::default();
    let site = counter(&counters, 8, 1, Kind::Weak, counters.group(8, 3).unwrap());
    site.made_one();
    counters.freed_by_index(site.index(), 1);
    counters.give_back_folded(1, folded);
    assert_eq!(
        counters.use_now(),
        super::CounterUse {
            held: 2,
            given_back: 0
        }
    );
}
