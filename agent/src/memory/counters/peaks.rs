//! What is alive, and the most ever alive: at each GC start (objects die
//! only in a collection, so the peak of the objects not yet collected is
//! reached just before one starts), at each census of the stamps, and in a
//! snapshot.
//!
//! A stamp counter has no frees; between collections its objects alive are
//! known two ways. Exactly, after a census and until the next GC starts:
//! those alive at the census plus those made since. As a lower bound
//! otherwise: those made since the last GC ended (not collected yet by
//! definition), the objects that survived that GC being unknown until a
//! census counts them. So a stamp counter's `max` is exact at every GC a
//! census preceded, and never above the true peak in between.

use super::{Counter, Counters, Key, Kind};
use std::collections::HashMap;
use std::sync::atomic::Ordering::*;

/// One counter's figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tally {
    pub thread: i64,
    pub key: Key,
    /// Objects alive (not seen dead).
    pub alive: i64,
    /// The most alive at once.
    pub max: i64,
    /// Objects ever tracked.
    pub made: i64,
}

/// Which moment [`Counters::all`] counts the objects alive at.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Instant {
    /// The end of the last GC (a snapshot's own, forced just before): the
    /// objects made by then less those found dead. Exact: what died after
    /// it is not known yet, so what was made after it is left out too.
    LastGcEnd,
    /// Now: everything made less what was found dead, the dead not yet
    /// collected included (when no GC could be forced).
    Now,
}

/// A site counter's objects alive; `fresh`: no GC started since the last
/// census (stamps: exact, else a lower bound).
fn site_alive(c: &Counter, fresh: bool) -> i64 {
    match c.kind() {
        Kind::Stamp if fresh => {
            c.census_alive.load(Relaxed) + c.made() - c.census_made.load(Relaxed)
        }
        Kind::Stamp => c.made() - c.gc_end_made.load(Relaxed),
        _ => c.alive(),
    }
}

impl Counters {
    /// Has no GC started since the last census?
    fn stamps_fresh(&self) -> bool {
        self.census_at.load(Acquire) == self.gc_starts.load(Acquire)
    }

    /// GarbageCollectionStart (in the pause): every counter's `max` catches
    /// up with what is alive before this GC frees anything (weak references:
    /// after the frees of every earlier GC are counted), each group's with
    /// its sum. The census lock is only ever held for plain memory writes,
    /// never across a VM call, so the pause waits a moment at most.
    pub fn note_peaks(&self) {
        let _census = self.census_lock.lock();
        let fresh = self.stamps_fresh();
        self.gc_starts.fetch_add(1, AcqRel);
        self.observe(fresh, false);
    }

    /// GarbageCollectionFinish (in the pause): what each counter had made
    /// when this GC ended. A stamp counter's objects made since are all
    /// alive until the next GC starts; and a snapshot counts what was alive
    /// at the end of its own GC ([`Instant::LastGcEnd`]): the objects made
    /// before it less those it (or an earlier GC) found dead, since the
    /// deaths of what was made after it are not known yet.
    pub fn gc_ended(&self) {
        for c in self.made_so_far() {
            c.gc_end_made.store(c.made(), Relaxed);
        }
        self.gc_finishes.fetch_add(1, AcqRel);
    }

    /// Raises every `max` to what is alive now, each group's to its sum.
    /// `stamps_only` (at a census, which may fall between a GC's end and
    /// the weak references' scan of it, or before its ObjectFree events):
    /// only stamp counters and the groups made of them alone, whose figures
    /// the census has just made exact; the others would count objects that
    /// GC freed, a `max` above the true peak.
    fn observe(&self, fresh: bool, stamps_only: bool) {
        // Indexed by counter (a group's index is below its sites'): one flat
        // allocation, no hashing per counter. `None` in a group's place once
        // a figure of it may not be exact now.
        let mut sums: Vec<Option<Option<i64>>> = vec![None; self.len.load(Acquire)];
        for c in self.made_so_far() {
            let exact = !stamps_only || c.kind() == Kind::Stamp;
            let (alive, into) = match c.kind() {
                Kind::Group => (c.alive(), Some(c.index())),
                Kind::Tag => (c.alive(), None),
                _ => (site_alive(c, fresh), self.group_of(c).map(|g| g.index())),
            };
            if c.kind() != Kind::Group && exact {
                c.max.fetch_max(alive, Relaxed);
            }
            if let Some(sum) = into.and_then(|g| sums.get_mut(g)) {
                // A group's own (tags') count is exact only when it is 0.
                let exact = exact || (c.kind() == Kind::Group && alive == 0);
                *sum = match (*sum, exact) {
                    (Some(None), _) | (_, false) => Some(None),
                    (Some(Some(s)), true) => Some(Some(s + alive)),
                    (None, true) => Some(Some(alive)),
                };
            }
        }
        for (g, sum) in sums.into_iter().enumerate() {
            if let (Some(Some(sum)), Some(g)) = (sum, self.counter(g)) {
                g.max.fetch_max(sum, Relaxed);
            }
        }
    }

    /// Inside a census's VM operation (every Java thread stopped): each
    /// counter's `made` now and at the last GC's end, into `made`, and the
    /// GCs started by now; `None` inside a concurrent collector's cycle (ZGC,
    /// Shenandoah: between its start and finish), which may yet free objects
    /// the census counts.
    pub fn census_moment(&self, made: &mut Vec<(i64, i64)>) -> Option<u64> {
        made.clear();
        made.extend(
            self.made_so_far()
                .map(|c| (c.made(), c.gc_end_made.load(Relaxed))),
        );
        let starts = self.gc_starts.load(Acquire);
        (starts == self.gc_finishes.load(Acquire)).then_some(starts)
    }

    /// Records a census: `alive[i]` stamped objects of counter `i` in the
    /// heap and `made[i]` made at its moment and at the last GC's end, when
    /// `at` GCs had started (`None`: in a collector's cycle); every `max`
    /// catches up (stamps: exact while no GC started since).
    ///
    /// The pause collectors' census walks every object in the heap, dead
    /// or not: those made since the last GC ended are all there (no GC has
    /// run since to free any), reachable or not. So what it counts less
    /// what was made since that GC is what was alive at that GC's end,
    /// exactly, and that is what a counter keeps (`census_alive`, with
    /// `census_made` the `made` of that moment): a snapshot's `count` is
    /// taken there ([`Instant::LastGcEnd`]), and what is alive later is at
    /// most it plus what was made since. ZGC's and Shenandoah's walk only
    /// the objects reachable at its moment: the census is that moment's
    /// count, exact, kept as it is.
    pub fn census_taken(&self, alive: &[u32], made: &[(i64, i64)], at: Option<u64>) {
        let _census = self.census_lock.lock();
        self.census_at.store(u64::MAX, Release);
        let reachable_only = self.walks_reachable_only.load(Acquire);
        for (i, &(m, at_gc_end)) in made.iter().enumerate() {
            let Some(c) = self.counter(i).filter(|c| c.kind() == Kind::Stamp) else {
                continue;
            };
            let n = alive.get(i).copied().unwrap_or(0) as i64;
            let (alive, made) = if reachable_only {
                (n, m)
            } else {
                ((n - (m - at_gc_end)).max(0), at_gc_end)
            };
            c.census_alive.store(alive, Relaxed);
            c.census_made.store(made, Relaxed);
        }
        self.census_at.store(at.unwrap_or(u64::MAX), Release);
        self.census_recorded.store(true, Release);
        let fresh = self.stamps_fresh();
        self.observe(fresh, true);
    }

    /// Every counter's figures at `instant`, each group's as the sum of its
    /// sites and of its own.
    pub fn all(&self, instant: Instant) -> Vec<Tally> {
        let owners = self.owners.lock().clone();
        let census = self.census_recorded.load(Acquire);
        let fresh = census && self.stamps_fresh();
        let at_gc_end = instant == Instant::LastGcEnd && self.gc_finishes.load(Acquire) > 0;
        let site_alive = |c: &Counter| match c.kind() {
            Kind::Stamp if at_gc_end && fresh => c.census_alive.load(Relaxed),
            Kind::Stamp => site_alive(c, census),
            _ if at_gc_end => c.alive_at_gc_end(),
            _ => c.alive(),
        };
        let own_alive = |c: &Counter| {
            if at_gc_end {
                c.alive_at_gc_end()
            } else {
                c.alive()
            }
        };
        // Per group: its sites' (alive, made).
        let mut sums = vec![(0i64, 0i64); owners.len()];
        for c in (0..owners.len()).filter_map(|i| self.counter(i)) {
            if matches!(c.kind(), Kind::Group | Kind::Tag) {
                continue;
            }
            if let Some(sum) = self.group_of(c).and_then(|g| sums.get_mut(g.index())) {
                sum.0 += site_alive(c);
                sum.1 += c.made();
            }
        }
        // A group of virtual threads has a site's counter on each carrier
        // that ran it: one tally, whose `max` bounds the peak from above.
        let mut tallies: Vec<Tally> = Vec::with_capacity(owners.len());
        let mut at: HashMap<(i64, Key), usize> = HashMap::new();
        for (i, (thread, key)) in owners.into_iter().enumerate() {
            let Some(c) = self.counter(i) else { continue };
            let (alive, made) = match c.kind() {
                Kind::Group => (own_alive(c) + sums[i].0, c.made() + sums[i].1),
                _ => (site_alive(c), c.made()),
            };
            let max = c.max.load(Relaxed).max(alive);
            match at.get(&(thread, key)) {
                Some(&t) => {
                    let t = &mut tallies[t];
                    t.alive += alive;
                    t.max += max;
                    t.made += made;
                }
                None => {
                    at.insert((thread, key), tallies.len());
                    tallies.push(Tally {
                        thread,
                        key,
                        alive,
                        max,
                        made,
                    });
                }
            }
        }
        tallies
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn make(c: &Counter, n: usize) {
        for _ in 0..n {
            c.made_one();
        }
    }

    fn get(counters: &Counters, k: Key) -> (i64, i64, i64) {
        let rows = counters.all(Instant::Now);
        let r = rows.iter().find(|r| r.key == k).unwrap();
        (r.alive, r.max, r.made)
    }

    #[test]
    fn tags_name_their_counters_and_frees_come_back() {
        let counters = Counters::default();
        let group = counters.group(7, 3).unwrap();
        let a = counters
            .new_counter(7, Key::Site(1), Kind::Tag, Some(group))
            .unwrap();
        assert!(super::super::is_memory_tag(a.tag()));
        assert!(
            !super::super::is_memory_tag(5) && !super::super::is_memory_tag(-1),
            "thread tags are not ours"
        );
        for _ in 0..3 {
            a.made_one_with_peak();
            group.made_one_with_peak();
        }
        counters.object_freed(a.tag());
        a.made_one_with_peak();
        group.made_one_with_peak();
        counters.object_freed(5); // a thread's tag: ignored
        assert_eq!(get(&counters, Key::Site(1)), (3, 3, 4));
        assert_eq!(get(&counters, Key::Type(3)), (3, 3, 4));
    }

    /// Weak references: `max` moves only when a GC starts (and at a
    /// snapshot), from what was alive before that GC's frees; a group's
    /// `max` is the peak of its sites' sum, not the sum of their peaks.
    #[test]
    fn weak_peaks_are_taken_before_each_gc_frees() {
        let counters = Counters::default();
        let group = counters.group(3, 0).unwrap();
        let a = counters
            .new_counter(3, Key::Site(10), Kind::Weak, Some(group))
            .unwrap();
        let b = counters
            .new_counter(3, Key::Site(11), Kind::Weak, Some(group))
            .unwrap();
        make(a, 4);
        counters.note_peaks(); // a 4, group 4
        counters.freed_by_index(a.index(), 4);
        make(b, 3);
        counters.note_peaks(); // b 3, group 3
        counters.freed_by_index(b.index(), 1);
        assert_eq!(get(&counters, Key::Site(10)), (0, 4, 4));
        assert_eq!(get(&counters, Key::Site(11)), (2, 3, 3));
        assert_eq!(get(&counters, Key::Type(0)), (2, 4, 7), "max: not 4 + 3");
    }

    /// Stamps: exact after a census until the next GC starts; in between,
    /// what was made since the last GC ended (the survivors unknown).
    #[test]
    fn stamp_peaks_are_exact_after_a_census_and_a_lower_bound_between() {
        let counters = Counters::default();
        let group = counters.group(1, 0).unwrap();
        let s = counters
            .new_counter(1, Key::Site(5), Kind::Stamp, Some(group))
            .unwrap();
        let w = counters
            .new_counter(1, Key::Site(6), Kind::Weak, Some(group))
            .unwrap();
        make(s, 400); // a wave
        make(w, 2);
        counters.note_peaks(); // GC 1 starts: nothing ever collected, 400 exact
        counters.gc_ended(); // the wave died
        make(s, 300);
        counters.note_peaks(); // GC 2: no census, 300 made since GC 1 (exact here)
        counters.gc_ended();
        assert_eq!(get(&counters, Key::Site(5)).1, 400);
        // A census after GC 2: 100 of the 300 survived.
        let mut made = Vec::new();
        let at = counters.census_moment(&mut made);
        let mut alive = vec![0; made.len()];
        alive[s.index()] = 100;
        counters.census_taken(&alive, &made, at);
        make(s, 350);
        counters.note_peaks(); // GC 3: 100 + 350, exact
        counters.gc_ended();
        assert_eq!(get(&counters, Key::Site(5)).1, 450);
        assert_eq!(
            get(&counters, Key::Type(0)).1,
            452,
            "the group: 450 + 2 weak"
        );
        // A snapshot's census: 20 alive.
        let at = counters.census_moment(&mut made);
        let mut alive = vec![0; made.len()];
        alive[s.index()] = 20;
        counters.census_taken(&alive, &made, at);
        make(s, 5);
        assert_eq!(get(&counters, Key::Site(5)), (25, 450, 1055));
        assert_eq!(get(&counters, Key::Type(0)), (27, 452, 1057));
    }

    /// A census inside a concurrent collector's cycle (between its start
    /// and finish) may count objects the cycle frees: the next GC start
    /// does not build on it (a lower bound there).
    #[test]
    fn a_census_inside_a_collectors_cycle_is_not_built_on() {
        let counters = Counters::default();
        let group = counters.group(1, 0).unwrap();
        let s = counters
            .new_counter(1, Key::Site(5), Kind::Stamp, Some(group))
            .unwrap();
        make(s, 100);
        counters.note_peaks(); // a cycle starts: 100
        let mut made = Vec::new();
        let at = counters.census_moment(&mut made);
        assert_eq!(at, None, "inside the cycle");
        let mut alive = vec![0; made.len()];
        alive[s.index()] = 100; // the cycle has not freed them yet
        counters.census_taken(&alive, &made, at);
        counters.gc_ended(); // it freed all 100
        make(s, 30);
        counters.note_peaks(); // not 100 + 30: the 30 made since
        assert_eq!(s.max.load(Relaxed), 100);
    }

    /// A census may fall after a GC freed weakly referenced objects and
    /// before the agent thread's scan counts them (MemoryTruth's waves of
    /// arrays, one freed by each GC): it raises no weak counter's `max`,
    /// nor a group's with a weak site in it; stamp-only groups still rise.
    #[test]
    fn a_census_before_the_scan_raises_no_weak_peak() {
        let counters = Counters::default();
        let arrays = counters.group(1, 0).unwrap();
        let w = counters
            .new_counter(1, Key::Site(6), Kind::Weak, Some(arrays))
            .unwrap();
        let objects = counters.group(1, 1).unwrap();
        let s = counters
            .new_counter(1, Key::Site(5), Kind::Stamp, Some(objects))
            .unwrap();
        make(w, 1); // wave 1's array
        counters.note_peaks(); // GC 1 starts: 1
        counters.gc_ended(); // it freed the array; the scan has not run
        make(w, 1); // wave 2's array: 1 alive, 2 by the counters
        make(s, 7);
        let mut made = Vec::new();
        let at = counters.census_moment(&mut made);
        let mut alive = vec![0; made.len()];
        alive[s.index()] = 7;
        counters.census_taken(&alive, &made, at);
        assert_eq!(w.max.load(Relaxed), 1, "the weak site: not 2");
        assert_eq!(arrays.max.load(Relaxed), 1, "its group: not 2");
        assert_eq!(s.max.load(Relaxed), 7);
        assert_eq!(objects.max.load(Relaxed), 7, "a stamp-only group rises");
        counters.freed_by_index(w.index(), 1); // the scan
        counters.note_peaks(); // GC 2 starts: 1
        assert_eq!(get(&counters, Key::Type(0)).1, 1);
    }
}
