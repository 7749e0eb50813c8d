//! One sampler tick: for each live thread, whether a new stack is needed and
//! where it comes from, and the stacks that signals brought back folded in.
//!
//! `event=wall`: every live thread is counted once per tick. A thread whose CPU
//! time has not moved since its previous sample has not executed anything, so
//! its last stack counts again, with no signal and no handshake. Otherwise it
//! is signalled (or walked with JVMTI) and the sample is counted when its
//! stack arrives; ticks that pass before that are owed to the same stack.
//! A sample is a hit (`hits`/`cumulated`) when the thread was RUNNABLE and its
//! CPU time moved since its previous sample; a first sample has no previous
//! one and is never a hit.
//!
//! `event=cpu`: each thread has a timer on its own CPU clock that signals it
//! every `interval` of CPU it uses; each such sample is a hit.
//!
//! Here: where stacks come from (`StackSource`), the tick itself, the CPU
//! timers of `event=cpu`, and what happens when a thread or the session ends.
//! Apart: what is remembered of a thread (`thread_state.rs`), `event=wall`'s
//! choice for each thread (`wall.rs`), the answers signals bring back
//! (`answers.rs`), and how samples are counted and published (`fold.rs`).

mod answers;
mod cpu_credit;
mod cpu_timers;
mod fold;
mod frozen;
mod jvm_threads;
mod kernel_stack;
mod thread_state;
mod wall;

pub(super) use cpu_timers::CPU_TIMERS;
pub(super) use jvm_threads::JvmThreads;
pub(super) use thread_state::ThreadState;

use super::frames::FrameKey;
use super::signal::{self, Setup};
use super::signal::{cpu_timer::CpuTimer, handler};
use super::Event;
use super::{Config, SamplerData};
use crate::code_map;
use crate::events::{Events, SampledStack};
use crate::threads::{Identity, ThreadId, Threads};
use crate::vm::async_trace::CallFrame;
use crate::vm::sys::JvmtiFrameInfo;
use crate::vm::{jthread, Jni, Jvmti};
use crate::{clock, log};
use cpu_timers::Found;
use fold::{fold_deferred, fold_synthetic, publish};
use thread_state::{resolve_tid, Tid};

/// Where stacks come from for a session.
pub enum StackSource {
    Signal(Setup),
    /// JVMTI handshakes; `why` says why not signals (`None`: `stacks=jvmti`).
    Jvmti {
        why: Option<String>,
    },
}

impl StackSource {
    pub fn describe(&self) -> String {
        match self {
            StackSource::Signal(_) => format!(
                "{} + AsyncGetCallTrace, {}",
                signal::SIGNAL.1,
                match crate::vm::fault_guard::state() {
                    Some(Ok(())) => "faults in a walk caught",
                    Some(Err(crate::vm::fault_guard::NotGuarded::CheckedJni)) =>
                        "faults in a walk not caught under -Xcheck:jni",
                    _ => "faults in a walk not caught",
                }
            ),
            StackSource::Jvmti { why: None } => "JVMTI (stacks=jvmti)".into(),
            StackSource::Jvmti { why: Some(w) } => format!("JVMTI, because {w}"),
        }
    }

    /// Samples the signal handler could not store (every slot full).
    pub fn dropped(&self) -> u64 {
        match self {
            StackSource::Signal(s) => s.ring.dropped(),
            StackSource::Jvmti { .. } => 0,
        }
    }
}

/// Synthetic frame of samples owed by a thread that ended before answering.
const THREAD_EXIT: &str = "[thread_exit]";

/// The VM handles a tick works with.
struct Vm<'a> {
    jvmti: Jvmti,
    jni: &'a Jni,
    threads: &'a Threads,
}

/// Reused buffers, so a tick allocates nothing per thread.
pub(super) struct Walker<'a> {
    config: &'a Config,
    /// Where each sample folded is published (`jfr` records them).
    events: &'a Events,
    source: &'a StackSource,
    /// Someone replaced the signal handler: no more signals, JVMTI walks only.
    signals_lost: bool,
    jvmti_frames: JvmtiFrames,
    path: Vec<FrameKey>,
    /// The path's frame types, root first.
    kinds: Vec<u8>,
    /// JDK 21+: the methods at a continuation's bottom, looked up on the
    /// first stack from a signal (`None` until then; `Some(None)`: none).
    continuations: Option<Option<frozen::Continuations>>,
    /// A signal's stack with `[frozen_frames]` put in (`frozen.rs`).
    marked: Vec<CallFrame>,
}

/// Buffers for stacks taken with JVMTI.
struct JvmtiFrames {
    frames: Vec<JvmtiFrameInfo>,
}

impl<'a> Walker<'a> {
    pub fn new(config: &'a Config, source: &'a StackSource, events: &'a Events) -> Self {
        let empty = JvmtiFrameInfo {
            method: std::ptr::null_mut(),
            location: 0,
        };
        // One frame more than `depth`, to tell a stack of exactly `depth` from a deeper one.
        let n = config.depth as usize + 1;
        Self {
            config,
            events,
            source,
            signals_lost: false,
            jvmti_frames: JvmtiFrames {
                frames: vec![empty; n],
            },
            path: Vec::with_capacity(n),
            kinds: Vec::with_capacity(n),
            continuations: None,
            marked: Vec::with_capacity(n + 1),
        }
    }

    pub fn set_active(&self, on: bool) {
        if let StackSource::Signal(setup) = self.source {
            handler::set_active(on);
            if on && self.config.event == Event::Cpu {
                // Threads that start from now on are timed from their start.
                CPU_TIMERS.arm(owner(setup), setup.signo, self.config.interval);
            }
        }
    }

    /// No more timers armed at ThreadStart (those waiting are deleted).
    fn disarm(&self) {
        if let StackSource::Signal(setup) = self.source {
            CPU_TIMERS.disarm(owner(setup));
        }
    }

    /// One tick: fold what arrived, then sample (or time) every live thread.
    /// `weight`: intervals this tick stands for (more than 1 after a late wake-up).
    pub fn tick(
        &mut self,
        jvmti: Jvmti,
        jni: &Jni,
        threads: &Threads,
        data: &mut SamplerData,
        weight: u64,
    ) {
        let t0 = clock::now_ns();
        let fold0 = data.counters.fold_ns;
        data.counters.ticks += 1;
        data.counters.caught_up += weight - 1;
        data.counters.largest_catch_up = data.counters.largest_catch_up.max(weight - 1);
        if let StackSource::Signal(_) = self.source {
            // Code compiled or generated since the last tick, for the handler.
            code_map::publish();
            // Native libraries loaded since, for `cstack=`.
            crate::native::refresh();
        }
        self.drain(jvmti, jni, data);
        self.check_handler(data);
        let live = match jvmti.all_threads() {
            Ok(t) => t,
            Err(e) => {
                log::error_once(
                    "GetAllThreads",
                    &format!("sampling failed: {}", jvmti.error_name(e)),
                );
                return;
            }
        };
        jni.ensure_local_capacity(live.len() * 3 + 16);
        let jvm_threads = self.jvm_threads();
        for &thread in &live {
            let Some(Identity::Java(id)) = threads.identify(jvmti, jni, thread, 0) else {
                continue;
            };
            if jvm_threads.is_some() {
                // Every live Java thread's OS id, so that none is taken for the JVM's.
                let st = data.states.entry(id).or_default();
                // (One the sampler stopped signalling still has the id it told.)
                let tid = resolve_tid(jni, threads, thread, id, &mut st.tid);
                data.jvm.java_thread(tid.or_else(|| threads.tid(id)));
            }
            match self.config.event {
                Event::Wall => {
                    let vm = Vm {
                        jvmti,
                        jni,
                        threads,
                    };
                    self.wall_sample(&vm, data, thread, id, weight)
                }
                Event::Cpu => self.keep_timer(jni, threads, data, thread, id),
            }
        }
        if let Some(setup) = jvm_threads {
            let cx = jvm_threads::Cx {
                threads,
                setup,
                events: self.events,
                event: self.config.event,
                interval: self.config.interval,
                tick: data.counters.ticks,
            };
            let SamplerData {
                jvm,
                trees,
                tables,
                counters,
                ..
            } = data;
            jvm.tick(&cx, trees, tables, counters, weight);
        }
        self.forget_vanished(threads, data);
        if let (Event::Cpu, StackSource::Signal(setup)) = (self.config.event, self.source) {
            CPU_TIMERS.sweep(owner(setup));
            crate::sampler::signal::cpu_timer::reclaim();
        }
        fold_ended_trees(threads, data);
        let folded = data.counters.fold_ns - fold0;
        data.counters.vm_ns += (clock::now_ns() - t0).saturating_sub(folded);
    }

    /// The signal setup, when the JVM's own threads are sampled
    /// (`jvmthreads`, signals still ours).
    fn jvm_threads(&self) -> Option<&'a Setup> {
        match self.source {
            StackSource::Signal(setup) if self.config.jvm_threads && !self.signals_lost => {
                Some(setup)
            }
            _ => None,
        }
    }

    /// Stops signalling if the application took the signal over.
    fn check_handler(&mut self, data: &mut SamplerData) {
        let StackSource::Signal(setup) = self.source else {
            return;
        };
        if self.signals_lost || handler::still_ours(setup.signo) {
            return;
        }
        self.signals_lost = true;
        self.disarm();
        for st in data.states.values_mut() {
            st.timer = None;
            // Nothing more is credited: no tail at a thread's end.
            st.credit.armed(None);
        }
        data.jvm.signals_lost();
        log::warn(&format!(
            "sampling: the application replaced profrj's {} handler; no more signals, stacks now come from JVMTI{}",
            signal::SIGNAL.1,
            if self.config.event == Event::Cpu { " (event=cpu: no more samples)" } else { "" }
        ));
    }

    /// `event=cpu`: makes sure `thread` has its CPU timer.
    fn keep_timer(
        &mut self,
        jni: &Jni,
        threads: &Threads,
        data: &mut SamplerData,
        thread: jthread,
        id: ThreadId,
    ) {
        let tick = data.counters.ticks;
        let st = data.states.entry(id).or_default();
        st.seen_tick = tick;
        st.missing = 0;
        if st.timer.is_some() || st.timer_failed || self.signals_lost {
            return;
        }
        let StackSource::Signal(setup) = self.source else {
            return;
        };
        // (Its OS id also reads its CPU clock when sampling stops.)
        let tid = resolve_tid(jni, threads, thread, id, &mut st.tid);
        // Armed at the thread's start, or claimed here for arming.
        if let Found::Armed(timer) = CPU_TIMERS.claim(owner(setup), id) {
            st.credit.armed_earlier(timer.armed_cpu_ns());
            st.timer = Some(timer);
            return;
        }
        let Some(tid) = tid else {
            st.timer_failed = true;
            log::warn_once(
                "cpu-no-tid",
                "event=cpu: a thread's OS id could not be read; it is not sampled",
            );
            return;
        };
        let token = signal::token(id, 0);
        match CpuTimer::start(tid, setup.signo, self.config.interval, token) {
            Ok(t) => {
                st.credit.armed(t.armed_cpu_ns());
                st.timer = Some(t);
            }
            Err(e) => {
                st.timer_failed = true;
                log::warn_once(
                    "cpu-timer",
                    &format!("event=cpu: cannot create a thread CPU timer ({e}); that thread is not sampled"),
                );
            }
        }
    }

    /// Threads that are gone: their timers deleted; after a second tick
    /// without them (an answer may still have been on its way), what they
    /// still owed is counted under [`THREAD_EXIT`].
    fn forget_vanished(&mut self, threads: &Threads, data: &mut SamplerData) {
        let tick = data.counters.ticks;
        let events = self.events;
        let cpu_interval = match self.config.event {
            Event::Cpu => Some(self.config.interval.as_nanos() as u64),
            Event::Wall => None,
        };
        let owner = match self.source {
            StackSource::Signal(setup) => Some(owner(setup)),
            StackSource::Jvmti { .. } => None,
        };
        data.states.retain(|id, st| {
            if st.seen_tick == tick {
                return true;
            }
            st.timer = None;
            st.missing += 1;
            if st.missing < 2 {
                return true;
            }
            if let Some(owner) = owner {
                CPU_TIMERS.forget(owner, *id);
            }
            let (tables, counters) = (&mut data.tables, &mut data.counters);
            let tree = data.trees.entry(*id).or_default();
            if let (Some(interval), Some(cpu)) = (cpu_interval, threads.cpu_at_end(*id)) {
                credit_tail(events, *id, st, tree, cpu, interval);
            }
            if let Some(p) = st.pending.take() {
                let ended = crate::vm::sys::JVMTI_THREAD_STATE_TERMINATED;
                let stack = SampledStack::Synthetic(THREAD_EXIT);
                publish(events, *id, stack, ended, (p.owed, p.hits));
                fold_synthetic(tree, tables, counters, THREAD_EXIT, p.owed, p.hits);
            }
            fold_deferred(events, *id, st, tree, tables, counters);
            false
        });
    }

    /// After the last tick: waits briefly for stacks still on their way,
    /// stops the CPU timers, and counts what never came.
    pub fn finish(&mut self, jvmti: Jvmti, jni: &Jni, threads: &Threads, data: &mut SamplerData) {
        self.disarm();
        // Each thread's CPU clock as its timer stops (or as it ended, for
        // one not forgotten yet), for what it used since its last signal
        // (`credit_tail`, once the ring is drained).
        let mut stopped_at = Vec::new();
        for (id, st) in data.states.iter_mut() {
            let timed = st.timer.take().is_some() || st.missing > 0;
            let cpu = match (threads.cpu_at_end(*id), st.tid) {
                (Some(cpu), _) => Some(cpu),
                (None, Tid::Known(tid)) => clock::thread_cpu_ns(tid),
                (None, _) => None,
            };
            if let (true, Some(cpu)) = (timed, cpu) {
                stopped_at.push((*id, cpu));
            }
        }
        data.jvm.signals_lost();
        if let StackSource::Signal(_) = self.source {
            for _ in 0..25 {
                self.drain(jvmti, jni, data);
                if data.states.values().all(|s| s.pending.is_none()) && !data.jvm.any_pending() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            self.drain(jvmti, jni, data);
        }
        data.jvm.stop(&mut data.counters);
        let interval = self.config.interval.as_nanos() as u64;
        for (id, cpu) in stopped_at {
            if let (Some(st), Some(tree)) = (data.states.get_mut(&id), data.trees.get_mut(&id)) {
                credit_tail(self.events, id, st, tree, cpu, interval);
            }
        }
        for (id, st) in data.states.iter_mut() {
            if let Some(p) = st.pending.take() {
                data.counters.unanswered_at_stop += p.owed;
            }
            // No tick left to take their stack.
            if st.deferred.is_some() {
                let tree = data.trees.entry(*id).or_default();
                fold_deferred(
                    self.events,
                    *id,
                    st,
                    tree,
                    &mut data.tables,
                    &mut data.counters,
                );
            }
            st.timer_failed = false;
        }
    }
}

/// `event=cpu`: the whole intervals of CPU a thread used after its last
/// signal, read from its CPU clock when its timer is gone (the thread
/// ended, or sampling stops), counted where its last sample was. The
/// kernel delivers a thread CPU timer's signal late on a loaded machine
/// (gaps of up to 356 ms of CPU between signals measured: `cpu_credit.rs`); a later signal
/// makes up for it with its overrun, but none comes after a thread's end.
/// What a late signal's overrun gives its stack, this gives the last one.
fn credit_tail(
    events: &Events,
    id: ThreadId,
    st: &mut ThreadState,
    tree: &mut crate::sampler::tree::CallTree,
    cpu_ns: u64,
    interval_ns: u64,
) {
    let Some(leaf) = st.leaf.filter(|_| st.credit.known()) else {
        return;
    };
    let w = st.credit.weigh(cpu_ns, 0, interval_ns);
    if w == 0 {
        return;
    }
    tree.repeat_typed_samples(leaf, &st.leaf_kinds, w, w);
    let running = crate::vm::sys::JVMTI_JAVA_LANG_THREAD_STATE_RUNNABLE;
    publish(events, id, SampledStack::Again, running, (w, w));
}

/// Which session's timers [`CPU_TIMERS`] holds: its signal ring's address.
pub(super) fn owner(setup: &Setup) -> usize {
    setup.ring as *const _ as usize
}

impl JvmtiFrames {
    /// `thread`'s stack through JVMTI (a handshake with that thread alone).
    /// A mounted virtual thread is asked for itself: its stack from its
    /// entry, counted in its group (see `wall.rs`).
    fn stack(&mut self, jvmti: Jvmti, thread: jthread) -> Option<&[JvmtiFrameInfo]> {
        jvmti.stack_trace(thread, &mut self.frames).ok()
    }
}

/// The trees of threads the thread table folded into a group
/// (docs/THREADS.md), once the sampler forgot them (no state: nothing
/// more will come for them), added into their groups' and dropped: the
/// agent keeps no tree per ended thread. Only after a thread was folded
/// since the last look; a tree remade later by a late answer goes at the
/// next fold, or into the group when a snapshot is written.
fn fold_ended_trees(threads: &Threads, data: &mut SamplerData) {
    let SamplerData {
        trees,
        states,
        folded_at,
        ..
    } = data;
    // Every fold looked at (a tick is rare beside a thread's end), once
    // the thread's state is gone.
    let batch = (1, |id: ThreadId| !states.contains_key(&id));
    crate::calltree::fold_ended_with(trees, threads, folded_at, batch, |group, tree| {
        group.absorb(tree)
    });
}
