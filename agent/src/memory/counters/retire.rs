//! Counters of ended threads given back, so that the counters held stay
//! bounded by the threads alive and the objects still alive, not by every
//! thread the program ever ran (docs/THREADS.md).
//!
//! A thread the thread table folded into a group (`ended=N`) makes no more
//! objects; its counters are first marked *folded* (a snapshot still reads
//! them under their thread, which it then sums into the group, as before).
//! Once none of a folded counter's objects is alive anywhere in the heap,
//! nothing can name it any more, and it is *given back*: what it counted
//! (objects made, its peak) goes into its group's figures kept here, its
//! slot is zeroed and the next new counter takes it. When none is alive:
//! - weak references and tags: every object's death counted (`made ==
//!   freed`): no record and no tag names it any more;
//! - stamps: a census whose walk began after the counter was marked found
//!   no object with its stamp (a pass over the heap sees the dead too; one
//!   from the roots, under ZGC or Shenandoah, sees only the reachable, and
//!   a dead object it did not see is gone before any later pass over the
//!   heap, which always follows a full GC);
//! - a type's group: all its sites given back, and its own count (tags'
//!   objects, counted on the group too) all dead.
//!
//! A stamped object that lives for ever keeps its counter for ever (the
//! stamp is in the object): what stays is one counter per (thread, site)
//! with objects alive, a cost that follows the live objects.

use super::{Counter, Counters, Key, Kind, Tally, NO_GROUP};
use std::collections::HashMap;
use std::sync::atomic::Ordering::*;

/// A counter's state.
pub(super) const LIVE: u8 = 0;
/// Its thread was folded: given back once none of its objects is alive.
pub(super) const FOLDED: u8 = 1;
/// Stamps: a census after it was folded found none of its objects.
pub(super) const EMPTY: u8 = 2;
/// Given back: zeroed, free for the next new counter.
pub(super) const FREE: u8 = 3;

/// Who owns each counter, and what was given back.
#[derive(Default)]
pub(super) struct Owners {
    /// (thread, what) of each counter, by index.
    pub of: Vec<(i64, Key)>,
    /// Counters given back, to be taken again.
    pub free: Vec<u32>,
    /// The group each folded counter's figures go to.
    target: HashMap<u32, i64>,
    /// What the counters given back counted, by (group, what): nothing
    /// alive, the objects made, the highest of their peaks.
    retired: HashMap<(i64, Key), Tally>,
}

/// How many counters are held, and how many were given back so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterUse {
    pub held: u64,
    pub given_back: u64,
}

impl Counter {
    pub(super) fn state(&self) -> u8 {
        self.state.load(Acquire)
    }

    /// As new, in no group (a kind that no census or sum reads).
    fn reset(&self) {
        for f in [
            &self.made,
            &self.freed,
            &self.max,
            &self.census_alive,
            &self.census_made,
            &self.gc_end_made,
        ] {
            f.store(0, Relaxed);
        }
        self.group.store(NO_GROUP, Release);
        self.kind.store(Kind::Weak as u8, Release);
    }

    /// No object it counted is alive (of a site counter; a group's sites
    /// are looked at by the caller).
    fn none_alive(&self) -> bool {
        let (made, freed) = (self.made(), self.freed.load(Relaxed));
        match self.kind() {
            _ if made == 0 => true,
            Kind::Stamp => self.state() == EMPTY,
            _ => made == freed,
        }
    }
}

impl Counters {
    /// A counter given back, taken for `thread`'s `key` (owners locked).
    pub(super) fn reuse(
        &self,
        owners: &mut Owners,
        thread: i64,
        key: Key,
        kind: Kind,
        group: Option<&Counter>,
    ) -> Option<&Counter> {
        let index = owners.free.pop()?;
        let c = self.counter(index as usize)?;
        c.reset();
        c.kind.store(kind as u8, Release);
        c.group.store(group.map_or(NO_GROUP, |g| g.index), Release);
        c.state.store(LIVE, Release);
        owners.of[index as usize] = (thread, key);
        Some(c)
    }

    /// Holds (or lets go) giving counters back: while a heap dump reads
    /// which counter each of its objects names.
    pub fn hold_give_back(&self, on: bool) {
        let _walks = self.walks.lock();
        self.give_back_held.store(on, Release);
    }

    /// Held by a census from its walk to its record.
    pub fn walk_guard(&self) -> parking_lot::MutexGuard<'_, ()> {
        self.walks.lock()
    }

    /// A census recorded `alive[i]` stamped objects of counter `i`: a
    /// folded counter of which it found none is empty (census lock held).
    pub(super) fn note_empty(&self, c: &Counter, found: i64) {
        if found == 0 && c.state() == FOLDED {
            c.state.store(EMPTY, Release);
        }
    }

    /// Counters held and given back.
    pub fn use_now(&self) -> CounterUse {
        let owners = self.owners.lock();
        CounterUse {
            held: (owners.of.len() - owners.free.len()) as u64,
            given_back: self.given_back.load(Relaxed),
        }
    }

    /// Marks the counters of threads folded since the last look (`folds`:
    /// the thread table's count of folds, read before `folded_into` is
    /// asked), and gives back every folded counter none of whose objects
    /// is alive. `folded_into` answers, for each thread id, the group it
    /// was folded into. On the memory agent thread, after a GC's frees
    /// were counted; nothing here waits for the VM.
    pub fn give_back_folded(
        &self,
        folds: u64,
        folded_into: impl FnOnce(&[i64]) -> Vec<Option<i64>>,
    ) {
        let new_folds = folds != self.folds_seen.load(Acquire);
        if !new_folds && self.waiting.load(Acquire) == 0 {
            return;
        }
        let _walks = self.walks.lock();
        if self.give_back_held.load(Acquire) {
            return;
        }
        // Asked before the census lock: the thread table's lock may be held
        // by a thread that a GC's safepoint stopped, and a GC's start takes
        // the census lock.
        let into: HashMap<i64, i64> = match new_folds {
            true => {
                let mut threads: Vec<i64> = {
                    let owners = self.owners.lock();
                    (owners.of.iter().enumerate())
                        .filter(|(i, _)| self.counter(*i).is_some_and(|c| c.state() == LIVE))
                        .map(|(_, &(t, _))| t)
                        .collect()
                };
                threads.sort_unstable();
                threads.dedup();
                let groups = folded_into(&threads);
                (threads.into_iter().zip(groups))
                    .filter_map(|(t, g)| Some((t, g?)))
                    .collect()
            }
            false => HashMap::new(),
        };
        let _census = self.census_lock.lock();
        let gone = {
            let mut owners = self.owners.lock();
            self.mark_folded(&mut owners, &into);
            self.give_back(&mut owners)
        };
        // The groups' map after the owners' lock (`group` takes them in the
        // other order).
        if !gone.is_empty() {
            let mut groups = self.groups.lock();
            for k in gone {
                groups.remove(&k);
            }
        }
        self.folds_seen.store(folds, Release);
    }

    fn mark_folded(&self, owners: &mut Owners, into: &HashMap<i64, i64>) {
        if into.is_empty() {
            return;
        }
        for (i, &(thread, _)) in owners.of.iter().enumerate() {
            let Some(c) = self.counter(i).filter(|c| c.state() == LIVE) else {
                continue;
            };
            if let Some(&group) = into.get(&thread) {
                c.state.store(FOLDED, Release);
                owners.target.insert(i as u32, group);
                self.waiting.fetch_add(1, AcqRel);
            }
        }
    }

    /// Gives back the folded counters none of whose objects is alive, sites
    /// first, then the groups left without a site; the (thread, type) of
    /// each group given back.
    fn give_back(&self, owners: &mut Owners) -> Vec<(i64, u32)> {
        let len = owners.of.len();
        let waiting = |c: &Counter| matches!(c.state(), FOLDED | EMPTY);
        // Each group's sites not given back.
        let mut sites = vec![0u32; len];
        for c in (0..len).filter_map(|i| self.counter(i)) {
            if c.state() != FREE && c.kind() != Kind::Group {
                if let Some(n) = sites.get_mut(c.group.load(Acquire) as usize) {
                    *n += 1;
                }
            }
        }
        for i in 0..len {
            let Some(c) = self.counter(i) else { continue };
            if c.kind() != Kind::Group && waiting(c) && c.none_alive() {
                if let Some(n) = sites.get_mut(c.group.load(Acquire) as usize) {
                    *n -= 1;
                }
                self.retire(owners, i);
            }
        }
        let mut gone = Vec::new();
        for (i, &left) in sites.iter().enumerate() {
            let Some(c) = self.counter(i) else { continue };
            let own_dead = c.made() == c.freed.load(Relaxed);
            if c.kind() == Kind::Group && waiting(c) && left == 0 && own_dead {
                if let (thread, Key::Type(ty)) = owners.of[i] {
                    gone.push((thread, ty));
                }
                self.retire(owners, i);
            }
        }
        gone
    }

    /// Counter `i`'s figures into its group's kept ones, and the counter
    /// freed. A site's objects count on its type's row too, except tags'
    /// (which their type's group counted itself, given back with it).
    fn retire(&self, owners: &mut Owners, i: usize) {
        let Some(c) = self.counter(i) else { return };
        let (thread, key) = owners.of[i];
        let group = owners.target.remove(&(i as u32)).unwrap_or(thread);
        let (made, max) = (c.made(), c.max.load(Relaxed));
        let mut add = |key: Key, made: i64, max: i64| {
            let t = owners.retired.entry((group, key)).or_insert(Tally {
                thread: group,
                key,
                alive: 0,
                max: 0,
                made: 0,
            });
            t.made += made;
            t.max = t.max.max(max);
        };
        add(key, made, max);
        if let (Key::Site(_), false) = (key, c.kind() == Kind::Tag) {
            let ty = self
                .group_of(c)
                .and_then(|g| match owners.of.get(g.index()) {
                    Some(&(_, Key::Type(ty))) => Some(ty),
                    _ => None,
                });
            if let Some(ty) = ty {
                add(Key::Type(ty), made, 0);
            }
        }
        c.reset();
        c.state.store(FREE, Release);
        owners.free.push(i as u32);
        self.waiting.fetch_sub(1, AcqRel);
        self.given_back.fetch_add(1, Relaxed);
    }

    /// The figures of the counters given back, by (group, what).
    pub(super) fn retired(owners: &Owners) -> impl Iterator<Item = Tally> + '_ {
        owners.retired.values().copied()
    }
}
