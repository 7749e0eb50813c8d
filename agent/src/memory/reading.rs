//! A snapshot's reading of the counters: its GC, every free that GC found
//! counted, the censuses, then each counter's figures at the instant they
//! are exact (`counters::Instant`), folded by thread as the snapshot's
//! threads are; and what the censuses cost, for `<sites>`.

use super::{counters, stamps, tag_census, Lifetime, Mechanism};
use crate::vm::Jvmti;
use std::collections::HashMap;
use std::sync::atomic::Ordering::Relaxed;

/// One row of the `<memory>` section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    /// The agent's thread id (`-1`: a thread it does not know).
    pub thread: i64,
    pub class: String,
    pub count: i64,
    pub max: i64,
}

/// One allocation site's counts in one thread (a `<sites>` class frame).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SiteRow {
    /// The agent's thread id (`-1`: a thread it does not know).
    pub thread: i64,
    /// The method and line as a frame (`pkg.Cls.m():12`).
    pub place: String,
    pub class: String,
    pub count: i64,
    pub max: i64,
    /// Objects the site ever made (while tracked).
    pub allocated: i64,
}

/// What a memory snapshot holds: per thread and type, and per thread and
/// site; and what the censuses cost.
pub struct Counts {
    pub rows: Vec<Row>,
    pub sites: Vec<SiteRow>,
    pub censuses: CensusCost,
    /// The counters held, and those of ended threads given back.
    pub counters: counters::CounterUse,
}

/// What the heap censuses (of the stamps, and of the tags under ZGC or
/// Shenandoah) cost this JVM so far, each a pause of every Java thread.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CensusCost {
    /// The pause of the census this snapshot's counts come from (ns; the
    /// two summed where both ran).
    pub last_ns: u64,
    pub censuses: u64,
    pub total_ns: u64,
    pub longest_ns: u64,
    /// Full GCs (ZGC, Shenandoah: GCs) the budget left without one.
    pub skipped: u64,
}

/// Live counts now: a full GC, every free it found counted (weak
/// references: its scan; tags: every ObjectFree posted), then every
/// counter. Runs on the dumping thread.
impl Lifetime {
    pub fn live_counts(
        &self,
        jvmti: Jvmti,
        sites: &crate::sites::Sites,
        folded: &HashMap<crate::threads::ThreadId, crate::threads::ThreadId>,
    ) -> Result<Counts, crate::error::AgentError> {
        // `count`: the objects alive at the end of the snapshot's own GC;
        // under ZGC or Shenandoah, at the censuses after it.
        // With tags (ZGC's and Shenandoah's default, or `tracker=tags`),
        // at the census of the tags after it (`one_reading`).
        let instant = if self.tracking.walks_see_only_reachable()
            || self.tracking.mechanism() == Mechanism::Tags
        {
            counters::Instant::Census
        } else {
            counters::Instant::LastGcEnd
        };
        // A GC of the program's own between the snapshot's and the reading
        // (a young one, under churn: the census alone takes a while) would
        // mix two GCs' figures: the frees of one, what was made by the end
        // of the other. Then all again, at most three times.
        // Ended threads' counters marked before the census, so that it can
        // find which have none of their objects left (given back below).
        self.give_back_ended_threads();
        let mut tries = 0;
        let all = loop {
            // After the snapshot's GC (which may be several: Parallel
            // scavenges before its full GC), no other may start.
            let after_ours = self.one_reading(jvmti)?;
            // Its census may have found the last objects of ended threads'
            // counters: given back now, in the same figures.
            self.give_back_ended_threads();
            let all = self.counters.all(instant);
            tries += 1;
            let others = self.counters.gcs_started() != after_ours;
            if self.tracking.walks_see_only_reachable() || !others || tries == 3 {
                break all;
            }
        };
        let tables = sites.tables();
        let mut counts = Counts {
            rows: Vec::new(),
            sites: Vec::new(),
            censuses: self.census_cost(instant),
            counters: self.counters.use_now(),
        };
        for t in merged(all, folded) {
            let (thread, count, max) = (t.thread, t.alive, t.max);
            match t.key {
                counters::Key::Type(ty) => counts.rows.push(Row {
                    thread,
                    class: tables.type_name(ty),
                    count,
                    max,
                }),
                counters::Key::Site(site) => {
                    let Some(&(place, ty)) = tables.sites.get(site as usize) else {
                        continue;
                    };
                    counts.sites.push(SiteRow {
                        thread,
                        place: tables.place_frame(place),
                        class: tables.type_name(ty),
                        count,
                        max,
                        allocated: t.made,
                    })
                }
            }
        }
        Ok(counts)
    }
}

impl Lifetime {
    /// The snapshot's GC (none at an exit under ZGC or Shenandoah, where
    /// it would wait forever for the stopped threads), every free it found
    /// counted (weak references: its scan), then the censuses: of the tags
    /// (from the roots) where tags follow objects, and of the stamps; the
    /// GCs started by the end of the snapshot's.
    ///
    /// The tags' frees are not waited for: the only way to make the VM post
    /// them now is to flush its ObjectFree events (enabling the event
    /// again), and on HotSpot 17.0.6+, 21 and 25 that can hang the JVM
    /// (JDK-8256811 serialised the flushes, and one flusher waits for the
    /// other without a safepoint check: if the one posting stops for a
    /// safepoint meanwhile, neither moves; seen once, JDK 21 at load 10,
    /// docs/MEMORY.md). The census counts the tagged objects reachable at
    /// its moment instead, exactly, whatever frees are still to be posted.
    fn one_reading(&self, jvmti: Jvmti) -> Result<u64, crate::error::AgentError> {
        let gc = !self.tracking.gc_impossible_now();
        if gc {
            jvmti
                .force_garbage_collection()
                .map_err(|e| crate::error::AgentError::jvmti(jvmti, "ForceGarbageCollection", e))?;
        }
        let after_ours = self.counters.gcs_started();
        match self.tracking.mechanism() {
            Mechanism::WeakRefs => {
                self.weak.count_frees(false, &self.counters);
            }
            Mechanism::Tags => {
                tag_census::take(jvmti, &self.counters, &self.tag_census)
                    .map_err(|e| crate::error::AgentError::Internal(format!("memory: {e}")))?;
            }
        }
        // No GC before an exit under ZGC or Shenandoah: a pass over their
        // heap would still find what only a dead object's tag holds.
        let walk = match gc {
            false => stamps::census::Walk::FromRoots,
            true => stamps::census::Walk::Heap,
        };
        self.stamps
            .census_now(&self.counters, walk)
            .map_err(|e| crate::error::AgentError::Internal(format!("memory: {e}")))?;
        Ok(after_ours)
    }
}

impl Lifetime {
    /// What the censuses cost so far; the last one's (of the stamps, plus
    /// of the tags where `instant` counts them) as this snapshot's.
    fn census_cost(&self, instant: counters::Instant) -> CensusCost {
        let s = self.stamps.cost();
        let t = &self.tag_census;
        let tags = instant == counters::Instant::Census;
        CensusCost {
            last_ns: s.last_ns.load(Relaxed) + if tags { t.last_ns.load(Relaxed) } else { 0 },
            censuses: s.censuses.load(Relaxed) + t.censuses.load(Relaxed),
            total_ns: s.ns.load(Relaxed) + t.ns.load(Relaxed),
            longest_ns: s.longest_ns.load(Relaxed).max(t.longest_ns.load(Relaxed)),
            skipped: s.skipped.load(Relaxed),
        }
    }
}

/// The counters' figures, one per (thread, what): a thread may have two
/// counters for one site (a stamp counter per Java thread-local, one per
/// tracker), and an ended thread folded into a group (`folded`,
/// docs/THREADS.md) counts as its group, summed here; their `max` is the
/// larger one or the sum of their counts, a peak never above the true one
/// (the rule `fold_ended` applies to every section's peaks).
fn merged(
    all: Vec<counters::Tally>,
    folded: &HashMap<crate::threads::ThreadId, crate::threads::ThreadId>,
) -> Vec<counters::Tally> {
    let mut at: HashMap<(i64, counters::Key), usize> = HashMap::new();
    let mut out: Vec<counters::Tally> = Vec::new();
    for mut t in all {
        let id = u32::try_from(t.thread).ok().map(crate::threads::ThreadId);
        if let Some(group) = id.and_then(|id| folded.get(&id)) {
            t.thread = group.0 as i64;
        }
        match at.get(&(t.thread, t.key)) {
            Some(&i) => {
                let m = &mut out[i];
                m.alive += t.alive;
                m.made += t.made;
                m.max = m.max.max(t.max).max(m.alive);
            }
            None => {
                at.insert((t.thread, t.key), out.len());
                out.push(t);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::counters::{Key, Tally};
    use super::merged;
    use crate::threads::ThreadId;
    use std::collections::HashMap;

    fn tally(thread: i64, alive: i64, max: i64, made: i64) -> Tally {
        Tally {
            thread,
            key: Key::Type(7),
            alive,
            max,
            made,
        }
    }

    /// Two ended threads folded into group 9 count as one row of the
    /// group: objects alive and made summed, the peak the higher one raised
    /// to what is alive; a live thread keeps its own.
    #[test]
    fn folded_threads_count_as_their_group() {
        let folded = HashMap::from([(ThreadId(1), ThreadId(9)), (ThreadId(2), ThreadId(9))]);
        let all = vec![tally(1, 3, 5, 10), tally(0, 1, 1, 1), tally(2, 4, 4, 6)];
        let out = merged(all, &folded);
        assert_eq!(out, vec![tally(9, 7, 7, 16), tally(0, 1, 1, 1)]);
    }
}
