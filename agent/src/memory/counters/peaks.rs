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

/// Through which GC (by its number among those finished) the weak
/// references' frees are all counted (0: none known). The tags' are never
/// known at a GC's end: the VM posts them in its own time
/// ([`Counters::raise_to_tag_census`] instead).
#[derive(Clone, Copy, Debug, Default)]
pub struct Known {
    pub weak_through: u64,
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
    #[cfg(test)]
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
        let weak = known.weak_through >= p.finish;
        let stamps = self.census_recorded.load(Acquire) && self.stamps_fresh();
        self.raise(|c| match c.kind() {
            Kind::Weak if weak => Some(c.alive_at_gc_end()),
            Kind::Stamp if stamps => Some(c.census_alive.load(Relaxed)),
            // A group's own (tags') count: known only when it has none.
            Kind::Group if c.alive_at_gc_end() == 0 => Some(0),
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
            self.note_empty(c, n);
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

    /// After a census of the tags that is an instant of its own (a pause
    /// collector's full GC under `tracker=tags`): each tag counter's `max`
    /// raised to its count, and each group's to its tags' sum where the
    /// group has no other site (stamps, counted at another instant).
    pub fn raise_to_tag_census(&self) {
        let _census = self.census_lock.lock();
        let mut own = vec![0i64; self.len.load(Acquire)];
        for c in self.made_so_far().filter(|c| c.kind() == Kind::Tag) {
            if let Some(sum) = self.group_of(c).and_then(|g| own.get_mut(g.index())) {
                *sum += c.census_alive.load(Relaxed);
            }
        }
        self.raise(|c| match c.kind() {
            Kind::Tag => Some(c.census_alive.load(Relaxed)),
            Kind::Group => own.get(c.index()).copied(),
            _ => None,
        })
    }

    /// Every counter's figures at `instant`, each group's as the sum of its
    /// sites and of its own.
    pub fn all(&self, instant: Instant) -> Vec<Tally> {
        // Held throughout: a counter given back meanwhile would count twice
        // or not at all.
        let guard = self.owners.lock();
        let owners = &guard.of;
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
                _ if c.state() == super::retire::FREE => continue,
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
        for (i, &(thread, key)) in owners.iter().enumerate() {
            let Some(c) = self.counter(i).filter(|c| c.state() != super::retire::FREE) else {
                continue;
            };
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
        // What the counters given back counted (one tally per group and
        // what, summed with the group's others by the reading).
        tallies.extend(Counters::retired(&guard));
        tallies
    }
}
