//! The rule for ended threads (`ended=N`, docs/THREADS.md): which keep
//! their own rows, the groups the others fold into, and the folded
//! threads' records, which give way to their group's shared placeholder.

use super::{group_name, ThreadId, ThreadRecord, Threads, ENDED_GROUP, MAX_GROUPS};
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The folding rule and what it decided so far.
#[derive(Default)]
pub(super) struct Ended {
    /// `ended=N`: how many ended threads of a pattern keep their own rows
    /// (`None`: all; the agent's default before a session sets it).
    keep: Option<usize>,
    /// Per pattern: how many ended threads were kept, and its group.
    patterns: HashMap<String, (usize, Option<ThreadId>)>,
    /// Groups made ([`MAX_GROUPS`] at most, then [`ENDED_GROUP`]).
    groups: usize,
    /// [`ENDED_GROUP`], once made.
    overflow: Option<ThreadId>,
    /// Each group's placeholder: the record every thread folded into it
    /// has in the table once its own has gone.
    placeholders: HashMap<ThreadId, Arc<ThreadRecord>>,
    /// The CPU time of each thread folded in the last [`CPU_KEPT_NS`], and
    /// when each was folded, oldest first: the sampler reads a thread's CPU
    /// at its end for the samples it still owed it (within two ticks).
    recent_cpu: HashMap<ThreadId, u64>,
    recent: std::collections::VecDeque<(ThreadId, u64)>,
}

/// How long a folded thread's CPU time at its end is kept.
const CPU_KEPT_NS: u64 = 30_000_000_000;

impl Ended {
    /// The CPU time at its end of `id`, folded in the last [`CPU_KEPT_NS`].
    pub(super) fn cpu_at_end(&self, id: ThreadId) -> Option<u64> {
        self.recent_cpu.get(&id).copied()
    }

    /// `id` was folded at `now`: its record gives way to its group's
    /// placeholder (the table keeps a pointer per ended thread, not a
    /// record), its CPU time kept for [`CPU_KEPT_NS`].
    fn compact(&mut self, records: &mut [Arc<ThreadRecord>], id: ThreadId, now: u64) {
        let Some(r) = records.get(id.0 as usize) else {
            return;
        };
        let (Some(g), cpu) = (r.folded_into, r.cpu_ns) else {
            return;
        };
        let shared = self.placeholder(g, || records[g.0 as usize].name.clone());
        records[id.0 as usize] = shared;
        self.recent_cpu.insert(id, cpu);
        self.recent.push_back((id, now));
        while let Some(&(old, at)) = self.recent.front() {
            if at.saturating_add(CPU_KEPT_NS) > now {
                break;
            }
            self.recent.pop_front();
            self.recent_cpu.remove(&old);
        }
    }

    /// The record of a thread folded into `group` (named `name`): ended,
    /// folded, nothing of its own (its CPU and lifetime are the group's now).
    fn placeholder(&mut self, group: ThreadId, name: impl FnOnce() -> String) -> Arc<ThreadRecord> {
        (self.placeholders.entry(group))
            .or_insert_with(|| {
                let mut r = ThreadRecord::platform(name(), 0);
                r.end_ns = Some(0);
                r.folded_into = Some(group);
                Arc::new(r)
            })
            .clone()
    }
}

/// The most name patterns of ended threads counted one by one; threads of
/// a pattern past them fold into [`ENDED_GROUP`] at once.
pub(super) const MAX_PATTERNS: usize = 4096;

impl Threads {
    /// `id` ended at `now`: kept as it is, or folded into its pattern's
    /// group by the rule (docs/THREADS.md). Under both locks, `ended` first.
    pub(super) fn end(
        &self,
        ended: &mut Ended,
        records: &mut Vec<Arc<ThreadRecord>>,
        id: ThreadId,
        now: u64,
    ) {
        let r = &records[id.0 as usize];
        if r.end_ns.is_some() || r.is_group() || r.is_ended_group() {
            return;
        }
        let r = Arc::make_mut(&mut records[id.0 as usize]);
        r.end_ns = Some(now);
        let Some(keep) = ended.keep else {
            return;
        };
        let pattern = group_name(&r.name);
        let (start, cpu, lived) = (r.start_ns, r.cpu_ns, now.saturating_sub(r.start_ns));
        let jvm = r.jvm;
        let known = ended.patterns.get(&pattern).copied();
        // Past MAX_PATTERNS names, a new one is not counted: its threads
        // fold into the overflow group at once (the table stays bounded).
        let unlisted = known.is_none() && ended.patterns.len() >= MAX_PATTERNS;
        let (kept, group) = match known {
            Some(k) => k,
            None if unlisted => (keep, ended.overflow),
            None => (0, None),
        };
        if kept < keep {
            ended.patterns.insert(pattern, (kept + 1, None));
            return;
        }
        let g = match group {
            Some(g) => g,
            None => {
                let overflow = ended.groups >= MAX_GROUPS || unlisted;
                let g = match ended.overflow {
                    Some(g) if overflow => g,
                    _ => {
                        let name = if overflow {
                            ENDED_GROUP.to_owned()
                        } else {
                            pattern.clone()
                        };
                        records.push(Arc::new(ThreadRecord::ended_group(name, start)));
                        let g = ThreadId(records.len() as u32 - 1);
                        if overflow {
                            ended.overflow = Some(g);
                        }
                        ended.groups += 1;
                        g
                    }
                };
                if !unlisted {
                    ended.patterns.insert(pattern, (kept, Some(g)));
                }
                g
            }
        };
        let group = Arc::make_mut(&mut records[g.0 as usize]);
        group.start_ns = group.start_ns.min(start);
        group.end_ns = Some(group.end_ns.map_or(now, |e| e.max(now)));
        group.cpu_ns += cpu;
        group.lived_ns += lived;
        group.ended_threads += 1;
        // A group of the JVM's threads (`C2 CompilerThre`s come and go) keeps their kind.
        group.jvm = group.jvm.or(jvm);
        Arc::make_mut(&mut records[id.0 as usize]).folded_into = Some(g);
        ended.compact(records, id, now);
        self.folds.fetch_add(1, Ordering::Release);
    }

    /// Sets the folding rule (a session's `ended=`): threads that end from
    /// now on follow it.
    pub fn set_fold_rule(&self, keep: Option<usize>) {
        self.ended.lock().keep = keep;
    }

    /// How many threads were folded so far: a mode that keeps data per
    /// thread compares it with the count it last folded at.
    pub fn folds(&self) -> u64 {
        self.folds.load(Ordering::Acquire)
    }

    /// The group `id` was folded into, if it was.
    pub fn folded_into(&self, id: ThreadId) -> Option<ThreadId> {
        self.records.lock().get(id.0 as usize)?.folded_into
    }

    /// The group each of `ids` was folded into, if it was (one look at
    /// the table for them all).
    pub fn folded_into_each(&self, ids: &[i64]) -> Vec<Option<ThreadId>> {
        let records = self.records.lock();
        (ids.iter())
            .map(|&id| records.get(usize::try_from(id).ok()?)?.folded_into)
            .collect()
    }

    /// Every folded thread's group: a mode that keeps figures per thread
    /// without a tree of its own (`memory`'s counters) sums them by group
    /// before it builds anything per thread, so a dump's work and memory
    /// follow the groups, not the threads ever ended.
    pub fn fold_targets(&self) -> HashMap<ThreadId, ThreadId> {
        (self.records.lock().iter().enumerate())
            .filter_map(|(i, r)| Some((ThreadId(i as u32), r.folded_into?)))
            .collect()
    }
}
