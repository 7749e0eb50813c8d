//! What is alive, and the most ever alive (`max`).
//!
//! `max` is taken only at instants where what is alive is known exactly,
//! so floating garbage (dead, not collected yet) never counts as alive:
//!
//! - the end of each collection that finds every dead object in the heap:
//!   a full collection of Serial, Parallel or G1 (`System.gc()`, a heap
//!   that filled up, a snapshot's own GC). Its figure is read once its
//!   frees are counted (the weak references' scan, the ObjectFree events
//!   posted) and, for stamps, a census after it, before any other GC
//!   starts; a later GC first makes that figure unknowable, and that
//!   collection is then not an instant (`take_pending_peak`);
//! - each snapshot's count;
//! - ZGC and Shenandoah (whose collections never stop the program to
//!   find the dead): each census of the stamps, which counts what is
//!   reachable at its own moment. Their tags' `max` moves at snapshots.
//!
//! A young collection is never an instant: it does not know which old
//! objects died. So under a collector that never needs a full collection,
//! `max` is the most any snapshot counted.

use super::{Counter, Counters, Key, Kind};

/// A full collection whose peak is still to be taken.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Pending {
    /// GCs started when it ended: any GC started since makes it stale.
    starts: u64,
    /// Its number among the GCs finished (the first is 1).
    finish: u64,
}

/// Through which GC (by its number among those finished) each tracker's
/// frees are all counted: the weak references' scan, the ObjectFree
/// events the VM posted (0: none known).
#[derive(Clone, Copy, Debug, Default)]
pub struct Known {
    pub weak_through: u64,
    pub tags_through: u64,
}
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
    /// collected included (the unit tests' view).
    #[cfg(test)]
    Now,
    /// ZGC, Shenandoah: what the censuses of the stamps and of the tags
    /// just found reachable, each at its own moment (every Java thread
    /// stopped), exactly; what was made after them left out.
    Census,
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

    /// Was a census recorded after the last GC, with none started since?
    /// (Then another would count the same: the agent thread's after a
    /// snapshot's GC, or a snapshot's after the agent thread's.)
    pub fn census_fresh(&self) -> bool {
        self.census_recorded.load(Acquire) && self.stamps_fresh()
    }

    /// GarbageCollectionStart (in the pause).
    pub fn gc_started(&self) {
        let _census = self.census_lock.lock();
        self.gc_starts.fetch_add(1, AcqRel);
    }

    /// GarbageCollectionFinish (in the pause): what each counter had made
    /// when this GC ended; a snapshot counts what was alive at the end of
    /// its own GC ([`Instant::LastGcEnd`]): the objects made before it less
    /// those it (or an earlier GC) found dead, since the deaths of what was
    /// made after it are not known yet. `complete`: this GC found every
    /// dead object (a full collection), its end a peak instant.
    ///
    /// ZGC's and Shenandoah's events are their pauses, not their cycles:
    /// none is complete, and their snapshots count by census
    /// ([`Instant::Census`]).
    pub fn gc_ended(&self, complete: bool) {
        let _census = self.census_lock.lock();
        for c in self.made_so_far() {
            c.gc_end_made.store(c.made(), Relaxed);
        }
        let finish = self.gc_finishes.fetch_add(1, AcqRel) + 1;
        // GCs started by now, not this GC's number: a session that began
        // inside a pause saw its finish alone.
        let starts = self.gc_starts.load(Acquire);
        *self.peak_pending.lock() = complete.then_some(Pending { starts, finish });
    }

    /// GCs finished so far (the number of the last one).
    pub fn gcs_finished(&self) -> u64 {
        self.gc_finishes.load(Acquire)
    }

    /// Did the last GC that ended find every dead object, with no GC
    /// started since, and its peak not taken yet? (The agent thread then
    /// takes a census of the stamps, within the budget.)
    pub fn peak_pending(&self) -> bool {
        let pending = *self.peak_pending.lock();
        pending.is_some_and(|p| p.starts == self.gc_starts.load(Acquire))
    }

    /// Takes the pending peak of the last complete GC, if no GC started
    /// since it ended: every counter whose figure at that GC's end is
    /// known (`known`) raises its `max` to it, each group to its sites'
    /// sum when all of them are known. Once only: a GC that starts first
    /// takes what it can (the weak references, their frees counted in its
    /// pause before it frees anything), and the rest of that instant is lost.
    ///
    /// `known` must have been read before this call: a tracker whose frees
    /// are counted only through an earlier GC is not known at this one.
    pub fn take_pending_peak(&self, known: Known) {
        let _census = self.census_lock.lock();
        // Taken once; not at all if a GC started since that one ended (its
        // frees may be partly counted, and stamps made since counted dead).
        let Some(p) = self.peak_pending.lock().take() else {
            return;
        };
        if p.starts != self.gc_starts.load(Acquire) {
            return;
        }
        let (weak, tags) = (
            known.weak_through >= p.finish,
            known.tags_through >= p.finish,
        );
        let stamps = self.census_recorded.load(Acquire) && self.stamps_fresh();
        self.raise(|c| match c.kind() {
            Kind::Weak if weak => Some(c.alive_at_gc_end()),
            Kind::Tag if tags => Some(c.alive_at_gc_end()),
            Kind::Stamp if stamps => Some(c.census_alive.load(Relaxed)),
            // A group's own (tags') count, exact when known or none.
            Kind::Group if tags || c.alive_at_gc_end() == 0 => Some(c.alive_at_gc_end()),
            _ => None,
        })
    }

    /// Raises every counter's `max` to `alive(c)` where that is known,
    /// each group's to the sum of its own and its sites' when all are.
    fn raise(&self, alive: impl Fn(&Counter) -> Option<i64>) {
        // Indexed by counter (a group's index is below its sites'): one flat
        // allocation, no hashing per counter. `Some(None)` in a group's place
        // once a part of it is not known.
        let mut sums: Vec<Option<Option<i64>>> = vec![None; self.len.load(Acquire)];
        for c in self.made_so_far() {
            let a = alive(c);
            if let (Some(a), false) = (a, c.kind() == Kind::Group) {
                c.max.fetch_max(a, Relaxed);
            }
            let into = match c.kind() {
                Kind::Group => Some(c.index()),
                // A group counts its tags' objects itself (its own figure).
                Kind::Tag => None,
                _ => self.group_of(c).map(|g| g.index()),
            };
            if let Some(sum) = into.and_then(|g| sums.get_mut(g)) {
                *sum = match (*sum, a) {
                    (Some(None), _) | (_, None) => Some(None),
                    (Some(Some(s)), Some(a)) => Some(Some(s + a)),
                    (None, Some(a)) => Some(Some(a)),
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
    /// GCs started by now; `None` inside a GC's pause (its start seen, not
    /// its finish), whose frees may not all be counted yet.
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
    /// `at` GCs had started (`None`: inside a GC's pause). Under ZGC and
    /// Shenandoah it is an instant of `max` for the stamps; the pause
    /// collectors' is their full GC's end ([`Counters::take_pending_peak`]).
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
        // ZGC's and Shenandoah's census counts what is reachable at its own
        // moment: an instant of its own for the stamps (and the groups of
        // stamps alone). The pause collectors' is taken at their GC's end
        // (`take_pending_peak`).
        if reachable_only && self.stamps_fresh() {
            self.raise(|c| match c.kind() {
                Kind::Stamp => Some(c.census_alive.load(Relaxed)),
                Kind::Group if c.alive() == 0 => Some(0),
                _ => None,
            })
        }
    }

    /// A census of the tags (`memory::tag_census`): `alive[i]` tagged
    /// objects of counter `i` reachable at its moment, when counter `i`
    /// had made `made[i].0`.
    pub fn tags_counted(&self, alive: &[u32], made: &[(i64, i64)]) {
        for (i, &(m, _)) in made.iter().enumerate() {
            if let Some(c) = self.counter(i).filter(|c| c.kind() == Kind::Tag) {
                let n = alive.get(i).copied().unwrap_or(0) as i64;
                c.census_alive.store(n, Relaxed);
                c.census_made.store(m, Relaxed);
            }
        }
    }

    /// Every counter's figures at `instant`, each group's as the sum of its
    /// sites and of its own.
    pub fn all(&self, instant: Instant) -> Vec<Tally> {
        let owners = self.owners.lock().clone();
        let census = self.census_recorded.load(Acquire);
        let fresh = census && self.stamps_fresh();
        let at_gc_end = instant == Instant::LastGcEnd && self.gc_finishes.load(Acquire) > 0;
        let counted = instant == Instant::Census;
        let site_alive = |c: &Counter| match c.kind() {
            Kind::Stamp | Kind::Tag if counted => c.census_alive.load(Relaxed),
            Kind::Stamp if at_gc_end && fresh => c.census_alive.load(Relaxed),
            Kind::Stamp => site_alive(c, census),
            _ if at_gc_end => c.alive_at_gc_end(),
            _ => c.alive(),
        };
        // A group's own objects are its tags' sites' (each counted on both):
        // after a census of the tags, those sites' figures instead.
        let own_alive = |c: &Counter| {
            if counted {
                0
            } else if at_gc_end {
                c.alive_at_gc_end()
            } else {
                c.alive()
            }
        };
        // Per group: its sites' (alive, made).
        let mut sums = vec![(0i64, 0i64); owners.len()];
        for c in (0..owners.len()).filter_map(|i| self.counter(i)) {
            match c.kind() {
                Kind::Group => continue,
                Kind::Tag if !counted => continue,
                _ => {}
            }
            if let Some(sum) = self.group_of(c).and_then(|g| sums.get_mut(g.index())) {
                sum.0 += site_alive(c);
                if c.kind() != Kind::Tag {
                    sum.1 += c.made(); // the group counts its tags' own
                }
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

    /// A GC's pause as the memory mode sees it: `full` or young.
    fn gc(counters: &Counters, full: bool) {
        counters.gc_started();
        counters.gc_ended(full);
    }

    /// The weak references' frees counted through every GC so far.
    fn weak(counters: &Counters) -> Known {
        Known {
            weak_through: counters.gcs_finished(),
            tags_through: 0,
        }
    }

    /// A census now finding `found` objects on counter `c`.
    fn census(counters: &Counters, c: &Counter, found: u32) {
        let mut made = Vec::new();
        let at = counters.census_moment(&mut made);
        let mut alive = vec![0; made.len()];
        alive[c.index()] = found;
        counters.census_taken(&alive, &made, at);
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
        // A census of the tags marks the objects it counted: still ours,
        // still naming the counter.
        let marked = super::super::with_epoch(a.tag(), 9);
        assert!(super::super::is_memory_tag(marked));
        assert_eq!(super::super::memory_index(marked), a.index());
        assert_eq!(super::super::tag_epoch(marked), 9);
        assert_eq!(super::super::tag_epoch(a.tag()), 0);
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
        let a = counters
            .new_counter(3, Key::Site(10), Kind::Weak, Some(group))
            .unwrap();
        let b = counters
            .new_counter(3, Key::Site(11), Kind::Weak, Some(group))
            .unwrap();
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

    /// Tags under a pause collector: a full collection's end, once its
    /// ObjectFree events are posted; the group counts its tags' objects
    /// once (on itself), not again through its sites.
    #[test]
    fn tag_peaks_are_taken_once_the_frees_are_posted() {
        let counters = Counters::default();
        let group = counters.group(3, 0).unwrap();
        let t = counters
            .new_counter(3, Key::Site(10), Kind::Tag, Some(group))
            .unwrap();
        for _ in 0..6 {
            t.made_one();
            group.made_one_shared();
        }
        gc(&counters, true);
        counters.object_freed(t.tag()); // 5 alive at its end
        t.made_one(); // made since: left out
        group.made_one_shared();
        let tags = Known {
            weak_through: 0,
            tags_through: counters.gcs_finished(),
        };
        counters.take_pending_peak(tags);
        assert_eq!(t.max.load(Relaxed), 5);
        assert_eq!(group.max.load(Relaxed), 5, "not 5 + 5");
    }

    /// A full collection's peak is lost once another GC has started: its
    /// frees may be counted in part, and stamps made since counted dead.
    #[test]
    fn a_gc_started_since_loses_the_full_collections_peak() {
        let counters = Counters::default();
        let group = counters.group(3, 0).unwrap();
        let w = counters
            .new_counter(3, Key::Site(10), Kind::Weak, Some(group))
            .unwrap();
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
        let s = counters
            .new_counter(1, Key::Site(5), Kind::Stamp, Some(group))
            .unwrap();
        let w = counters
            .new_counter(1, Key::Site(6), Kind::Weak, Some(group))
            .unwrap();
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
        let s = counters
            .new_counter(1, Key::Site(5), Kind::Stamp, Some(stamped))
            .unwrap();
        let mixed = counters.group(1, 1).unwrap();
        let t = counters
            .new_counter(1, Key::Site(6), Kind::Tag, Some(mixed))
            .unwrap();
        let s2 = counters
            .new_counter(1, Key::Site(7), Kind::Stamp, Some(mixed))
            .unwrap();
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
}
