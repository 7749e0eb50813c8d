//! What the counters' tests share: a counter made in a group, a census
//! that finds a number of one counter's objects, and one row as a snapshot
//! would read it.

use super::{Counter, Counters, Instant, Key, Kind, Tally};

/// A new counter of `thread` for `site`, of `kind`, in `group`.
pub(super) fn counter<'a>(
    counters: &'a Counters,
    thread: i64,
    site: u32,
    kind: Kind,
    group: &Counter,
) -> &'a Counter {
    counters
        .new_counter(thread, Key::Site(site), kind, Some(group))
        .unwrap()
}

/// A census now that finds `found` objects of `c`.
pub(super) fn census(counters: &Counters, c: &Counter, found: u32) {
    let mut made = Vec::new();
    let at = counters.census_moment(&mut made);
    let mut alive = vec![0; made.len()];
    alive[c.index()] = found;
    counters.census_taken(&alive, &made, at);
}

/// Key `k`'s row at `at`.
pub(super) fn row(counters: &Counters, at: Instant, k: Key) -> Tally {
    let rows = counters.all(at);
    rows.into_iter().find(|r| r.key == k).unwrap()
}
