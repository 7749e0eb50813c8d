//! `jvmthreads`: the JVM's own threads (GC workers, JIT compiler threads,
//! the VM thread, other native threads of the process), sampled with the
//! same event as Java threads.
//!
//! Found in /proc/self/task, re-read when the process's thread count
//! (the directory's link count, one stat(2) per tick, at most every [`SCAN_EVERY`])
//! changed, while a new thread waits to be taken, and at least every
//! [`FULL_SCAN_EVERY`] (a thread that ended as another started); GC
//! workers start lazily on JDK 17+, compiler threads come and go. Listing
//! the directory each tick doubled the sampler's own CPU. A thread is the JVM's
//! when it is none of the live Java threads JVMTI lists (their OS ids are
//! resolved each tick) and not the agent's own (named `profrj …`). A new
//! thread is taken at the second read that finds it so: a Java thread
//! exists in /proc a moment before JVMTI lists it. If a live Java thread's
//! OS id cannot be known, no new thread is taken (it could be that one).
//!
//! Each is registered in the thread table with its OS name and kind
//! ([`JvmKind`]), so it is a `<thread jvmThread=…>` like any other. Its
//! samples carry a [`signal::jvm_token`]: the handler walks no Java stack
//! (leaving the place where a native unwinder walks its C stack), and the
//! sample counts under the kind's root frame (`[jvm_gc]`…).
//!
//! `event=cpu`: a CPU-time timer per thread, started when it is found and
//! deleted when it leaves /proc. `event=wall`: every tick, one sample per
//! thread; a thread whose CPU moved since its last sample (less the
//! handler's own, which it reads as it finishes) is signalled (its sample
//! counted when the answer comes, a hit), one whose CPU did not is
//! counted again where its last sample ended, with no signal (as for Java
//! threads: a sleeping GC worker is not woken).

use super::cpu_credit::CpuCredit;
use super::fold::publish;
use crate::clock;
use crate::events::{Events, SampledStack};
use crate::log;
use crate::sampler::frames::{kinds_of, to_path, FrameKey, NameTables, Namer};
use crate::sampler::signal::{self, ring::Sample, Setup};
use crate::sampler::signal::{cpu_timer::CpuTimer, handler};
use crate::sampler::tree::{CallTree, NodeId};
use crate::sampler::{Counters, Event, NO_LINE};
use crate::threads::{JvmKind, ThreadId, Threads};
use crate::vm::sys::JVMTI_JAVA_LANG_THREAD_STATE_RUNNABLE;
use crate::vm::{Jni, Jvmti};
use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

/// The shortest time between two looks at the thread count.
const SCAN_EVERY: Duration = Duration::from_millis(10);
/// The longest time between two reads of /proc/self/task.
const FULL_SCAN_EVERY: Duration = Duration::from_secs(1);
/// `event=wall`: ticks a signal may stay unanswered before its samples are
/// counted without it (a thread that blocks SIGPROF, or is stopped).
const GIVE_UP_TICKS: u64 = 50;
/// CPU a thread may use after its signal handler read its clock (returning
/// from the signal, resuming its wait) and still count as not having run:
/// else each answer would make the next tick signal it again (as
/// `wall.rs`'s for a Java thread).
const SIGNAL_TAIL_NS: u64 = 20_000;
/// The JVMTI state a JVM thread's sample is published with when it ran
/// (a recording's jdk.ExecutionSample), else none (a wall-clock sample).
const RAN: i32 = JVMTI_JAVA_LANG_THREAD_STATE_RUNNABLE;

/// One JVM thread being sampled.
struct JvmThread {
    tid: i32,
    kind: JvmKind,
    timer: Option<CpuTimer>,
    /// `event=cpu`: the CPU its samples were credited with (`cpu_credit.rs`).
    credit: CpuCredit,
    /// Its CPU time at its last sample (`event=wall`).
    last_cpu: Option<u64>,
    /// `last_cpu` was read by the signal handler, as it finished: the
    /// thread's return from the signal may add [`SIGNAL_TAIL_NS`] to it.
    cpu_from_signal: bool,
    /// Where its last sample ended (`event=wall`: counted again there).
    leaf: Option<NodeId>,
    pending: Option<Pending>,
}

/// `event=wall`: a signal sent and not yet answered.
struct Pending {
    seq: u32,
    asked_tick: u64,
    /// The thread's CPU time when asked, and whether the asking tick's
    /// sample was a hit.
    asked_cpu: Option<u64>,
    first_hit: u64,
    owed: u64,
    hits: u64,
}

impl Pending {
    /// The hits among the samples owed, now that the handler read the
    /// thread's CPU (`cpu_ns`, 0 unknown) as it finished: the ticks that
    /// passed while the signal was on its way found the CPU moving, but
    /// if no more moved than the signal's own delivery and handler, it
    /// was ours, not the thread's (a sleeping thread woken by the signal).
    fn hits_for(&self, cpu_ns: u64) -> u64 {
        match self.asked_cpu {
            Some(a) if cpu_ns > 0 && cpu_ns <= a + SIGNAL_TAIL_NS => self.first_hit,
            _ => self.hits,
        }
    }
}

/// What the sampler knows of the JVM's threads between ticks.
#[derive(Default)]
pub(in crate::sampler) struct JvmThreads {
    sampled: HashMap<ThreadId, JvmThread>,
    by_tid: HashMap<i32, ThreadId>,
    /// Not Java, not the agent's, seen at the last read: taken at the next.
    candidates: HashSet<i32>,
    /// The agent's own threads (not read again while they live).
    agents: HashSet<i32>,
    /// The live Java threads' OS ids, gathered during the tick.
    java: HashSet<i32>,
    /// A live Java thread whose OS id is unknown was met this tick.
    unresolved: bool,
    /// The last look at the thread count, and the last full read.
    last_look: Option<Instant>,
    last_scan: Option<Instant>,
    /// The process's thread count at the last full read.
    count: Option<u64>,
    seq: u32,
    /// Threads found, and the samples counted on them.
    pub(in crate::sampler) found: u64,
    pub(in crate::sampler) samples: u64,
}

/// Everything a tick of JVM threads works with.
pub(super) struct Cx<'a> {
    pub threads: &'a Threads,
    pub setup: &'a Setup,
    pub events: &'a Events,
    pub event: Event,
    pub interval: Duration,
    pub tick: u64,
}

impl JvmThreads {
    /// A live Java thread this tick, with its OS id if known.
    pub(super) fn java_thread(&mut self, tid: Option<i32>) {
        match tid {
            Some(t) => {
                self.java.insert(t);
            }
            None => self.unresolved = true,
        }
    }

    /// After the Java threads of a tick: finds new and ended JVM threads
    /// (when due), keeps their timers (`event=cpu`) or samples them
    /// (`event=wall`, `weight` intervals).
    pub(super) fn tick(
        &mut self,
        cx: &Cx<'_>,
        trees: &mut HashMap<ThreadId, CallTree>,
        tables: &mut NameTables,
        counters: &mut Counters,
        weight: u64,
    ) {
        if self.scan_due() {
            self.last_scan = Some(Instant::now());
            match std::fs::read_dir("/proc/self/task") {
                Ok(dir) => {
                    let present: HashSet<i32> = dir
                        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
                        .collect();
                    self.scan(cx, &present, trees, tables);
                }
                Err(e) => log::warn_once(
                    "jvmthreads-proc",
                    &format!("jvmthreads: cannot read /proc/self/task ({e}); the JVM's threads are not sampled"),
                ),
            }
        }
        self.java.clear();
        self.unresolved = false;
        match cx.event {
            Event::Cpu => self.keep_timers(cx),
            Event::Wall => self.wall(cx, trees, tables, counters, weight),
        }
    }

    /// Whether /proc/self/task is to be read now (see the module's comment).
    fn scan_due(&mut self) -> bool {
        if self.last_look.is_some_and(|t| t.elapsed() < SCAN_EVERY) {
            return false;
        }
        self.last_look = Some(Instant::now());
        let count = thread_count();
        let changed = count.is_none() || count != self.count;
        self.count = count;
        changed
            || !self.candidates.is_empty()
            || self
                .last_scan
                .is_none_or(|t| t.elapsed() >= FULL_SCAN_EVERY)
    }

    /// One read of /proc/self/task (`present`): ends the threads that left
    /// it, takes the candidates still there, notes the new ones.
    fn scan(
        &mut self,
        cx: &Cx<'_>,
        present: &HashSet<i32>,
        trees: &mut HashMap<ThreadId, CallTree>,
        tables: &mut NameTables,
    ) {
        let gone: Vec<ThreadId> = (self.sampled.iter())
            .filter(|(_, t)| !present.contains(&t.tid) || self.java.contains(&t.tid))
            .map(|(&id, _)| id)
            .collect();
        for id in gone {
            let t = self.sampled.remove(&id).expect("listed above");
            self.by_tid.remove(&t.tid);
            if let Some(p) = t.pending {
                // Its answer will not come: its samples count without it.
                let tree = trees.entry(id).or_default();
                add_at_root(tree, tables, t.kind, p.owed, p.hits);
                self.samples += p.owed;
            }
            if let Some(cpu) = clock::thread_cpu_ns(t.tid) {
                cx.threads.set_cpu(id, cpu);
            }
            cx.threads.jvm_ended(id);
        }
        self.agents.retain(|t| present.contains(t));
        let before: HashSet<i32> = std::mem::take(&mut self.candidates);
        for &tid in present {
            if self.by_tid.contains_key(&tid) || self.agents.contains(&tid) {
                continue;
            }
            if self.java.contains(&tid) || self.unresolved {
                continue;
            }
            if !before.contains(&tid) {
                self.candidates.insert(tid);
                continue;
            }
            let Some(name) = comm(tid) else {
                continue; // gone since the read
            };
            if crate::threads::jvm_kind::is_agents(&name) {
                self.agents.insert(tid);
                continue;
            }
            let kind = JvmKind::of(&name);
            let id = cx.threads.register_jvm(name, kind, tid);
            if let Some(cpu) = clock::thread_cpu_ns(tid) {
                cx.threads.set_cpu(id, cpu);
            }
            self.by_tid.insert(tid, id);
            self.sampled.insert(
                id,
                JvmThread {
                    tid,
                    kind,
                    timer: None,
                    credit: CpuCredit::default(),
                    last_cpu: None,
                    cpu_from_signal: false,
                    leaf: None,
                    pending: None,
                },
            );
            self.found += 1;
        }
        for (&id, t) in &self.sampled {
            if let Some(cpu) = clock::thread_cpu_ns(t.tid) {
                cx.threads.set_cpu(id, cpu);
            }
        }
    }

    /// `event=cpu`: each thread's CPU-time timer, started once.
    fn keep_timers(&mut self, cx: &Cx<'_>) {
        for (&id, t) in self.sampled.iter_mut() {
            if t.timer.is_some() {
                continue;
            }
            let token = signal::jvm_token(id, 0);
            match CpuTimer::start(t.tid, cx.setup.signo, cx.interval, token) {
                Ok(timer) => {
                    t.credit.armed(timer.armed_cpu_ns());
                    t.timer = Some(timer);
                }
                // The thread is gone (the next read ends it) or timers
                // are refused: no samples of it, said once.
                Err(e) => log::warn_once(
                    "jvmthreads-timer",
                    &format!("jvmthreads: cannot create a thread CPU timer ({e}); that thread is not sampled"),
                ),
            }
        }
    }

    /// `event=wall`: each thread's sample of this tick.
    fn wall(
        &mut self,
        cx: &Cx<'_>,
        trees: &mut HashMap<ThreadId, CallTree>,
        tables: &mut NameTables,
        counters: &mut Counters,
        weight: u64,
    ) {
        for (&id, t) in self.sampled.iter_mut() {
            let cpu = clock::thread_cpu_ns(t.tid);
            let tail = if t.cpu_from_signal { SIGNAL_TAIL_NS } else { 0 };
            let ran = matches!((cpu, t.last_cpu), (Some(c), Some(l)) if c > l + tail);
            let first = t.last_cpu.is_none();
            if cpu.is_some() && (ran || !t.cpu_from_signal) {
                t.last_cpu = cpu;
                t.cpu_from_signal = false;
            }
            let hit = ran as u64 * weight;
            let tree = trees.entry(id).or_default();
            if let Some(p) = t.pending.as_mut() {
                p.owed += weight;
                p.hits += hit;
                if cx.tick - p.asked_tick > GIVE_UP_TICKS {
                    let p = t.pending.take().expect("just seen");
                    t.leaf = Some(add_at_root(tree, tables, t.kind, p.owed, p.hits));
                    self.samples += p.owed;
                }
                continue;
            }
            if !ran && !first {
                let leaf = match t.leaf {
                    Some(leaf) => {
                        tree.repeat_samples(leaf, weight, 0);
                        leaf
                    }
                    None => add_at_root(tree, tables, t.kind, weight, 0),
                };
                t.leaf = Some(leaf);
                publish(cx.events, id, SampledStack::Again, 0, (weight, 0));
                counters.repeated += 1;
                self.samples += weight;
                continue;
            }
            self.seq = self.seq.wrapping_add(1);
            let token = signal::jvm_token(id, self.seq);
            match handler::ask(t.tid, cx.setup.signo, token) {
                Ok(()) => {
                    counters.asked += 1;
                    t.pending = Some(Pending {
                        seq: self.seq,
                        asked_tick: cx.tick,
                        asked_cpu: cpu,
                        first_hit: hit,
                        owed: weight,
                        hits: hit,
                    });
                }
                // Gone (the next read ends it), or refused: counted unwalked.
                Err(_) => {
                    t.leaf = Some(add_at_root(tree, tables, t.kind, weight, hit));
                    self.samples += weight;
                }
            }
        }
    }

    /// A signal's answer from a JVM thread (`s.token` is a
    /// [`signal::jvm_token`]): its samples counted under the thread's root
    /// frame, with the native frames the handler walked (none yet) above.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn answer(
        &mut self,
        s: &Sample<'_>,
        (jvmti, jni): (Jvmti, &Jni),
        (event, interval_ns): (Event, u64),
        depth: u32,
        events: &Events,
        trees: &mut HashMap<ThreadId, CallTree>,
        tables: &mut NameTables,
        counters: &mut Counters,
        path: &mut Vec<FrameKey>,
    ) {
        let Some((id, seq)) = signal::from_token(s.token) else {
            return;
        };
        let Some(t) = self.sampled.get_mut(&id) else {
            counters.late += 1; // ended, its timer deleted since
            return;
        };
        let (owed, hits) = match event {
            Event::Cpu => match t.credit.weigh(s.cpu_ns, s.weight as u64, interval_ns) {
                // No whole interval of CPU since its previous sample.
                0 => return,
                w => (w, w),
            },
            Event::Wall => match t.pending.take_if(|p| p.seq == seq && t.tid == s.tid) {
                Some(p) => (p.owed, p.hits_for(s.cpu_ns)),
                None => {
                    counters.late += 1;
                    return;
                }
            },
        };
        counters.arrived += 1;
        self.samples += owed;
        if event == Event::Wall && s.cpu_ns > 0 {
            t.last_cpu = Some(s.cpu_ns);
            t.cpu_from_signal = true;
        }
        let tree = trees.entry(id).or_default();
        let state = if hits > 0 { RAN } else { 0 };
        let root = tables.names.intern(t.kind.root_frame());
        let root = tables.keys.key(root, NO_LINE);
        if s.code > 0 {
            let mut namer = Namer::new(jvmti, jni, tables, false);
            to_path(&mut namer, s.frames, depth, path);
            // The native frames' types (vm, native), the root's unknown.
            let mut kinds = Vec::with_capacity(path.len() + 1);
            kinds_of(s.frames, depth, path.len(), &mut kinds);
            kinds.insert(0, 0);
            path.insert(0, root);
            let stack = SampledStack::Walked {
                jni,
                frames: crate::stack::Frames::Async(s.frames),
                depth,
            };
            publish(events, id, stack, state, (owed, hits));
            t.leaf = Some(tree.add_typed_samples(path, &kinds, owed, hits));
        } else {
            publish(
                events,
                id,
                SampledStack::Synthetic(t.kind.root_frame()),
                state,
                (owed, hits),
            );
            t.leaf = Some(tree.add_samples(&[root], owed, hits));
        }
    }

    /// Sampling stops: timers deleted; signals still unanswered counted as such.
    pub(super) fn stop(&mut self, counters: &mut Counters) {
        for t in self.sampled.values_mut() {
            t.timer = None;
            if let Some(p) = t.pending.take() {
                counters.unanswered_at_stop += p.owed;
            }
        }
    }

    /// The application took the signal over: no more timers.
    pub(super) fn signals_lost(&mut self) {
        for t in self.sampled.values_mut() {
            t.timer = None;
        }
    }

    /// Requests still unanswered (the end of sampling waits for them).
    pub(super) fn any_pending(&self) -> bool {
        self.sampled.values().any(|t| t.pending.is_some())
    }
}

/// Counts samples on `kind`'s root frame alone (no stack walked).
fn add_at_root(
    tree: &mut CallTree,
    tables: &mut NameTables,
    kind: JvmKind,
    owed: u64,
    hits: u64,
) -> NodeId {
    let root = tables.names.intern(kind.root_frame());
    let key = tables.keys.key(root, NO_LINE);
    tree.add_samples(&[key], owed, hits)
}

/// The process's thread count: the link count of /proc/self/task is its
/// entries' plus 2 (`.` and `..`), one stat(2) with nothing to parse.
fn thread_count() -> Option<u64> {
    use std::os::unix::fs::MetadataExt;
    let links = std::fs::metadata("/proc/self/task").ok()?.nlink();
    links.checked_sub(2)
}

/// Thread `tid`'s OS name (`/proc/self/task/TID/comm`, 15 bytes at most).
fn comm(tid: i32) -> Option<String> {
    let text = std::fs::read(format!("/proc/self/task/{tid}/comm")).ok()?;
    let text = String::from_utf8_lossy(&text);
    Some(text.trim_end_matches('\n').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Other tests start threads meanwhile: read until the listing holds
    /// still around the count.
    #[test]
    fn the_thread_count_is_the_tasks_listed() {
        let listed = || std::fs::read_dir("/proc/self/task").unwrap().count() as u64;
        for _ in 0..1000 {
            let (before, count, after) = (listed(), thread_count(), listed());
            if before == after {
                assert_eq!(count, Some(before));
                return;
            }
        }
        panic!("the thread count never held still");
    }
}
