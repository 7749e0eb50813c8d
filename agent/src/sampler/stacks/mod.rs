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

use super::frames::{to_path, FrameKey, Namer};
use super::signal::handler::{self, CpuTimer};
use super::signal::{self, ring::Sample, Setup};
use super::tree::NodeId;
use super::Event;
use super::{Config, Counters, SamplerData};
use crate::code_map;
use crate::events::{Events, SampledStack, Samples};
use crate::stack::Frames;
use crate::threads::{Identity, ThreadId, Threads};
use crate::vm::async_trace::failure_name;
use crate::vm::sys::{
    JvmtiFrameInfo, JVMTI_JAVA_LANG_THREAD_STATE_MASK, JVMTI_JAVA_LANG_THREAD_STATE_RUNNABLE,
    JVMTI_THREAD_STATE_ALIVE, JVMTI_THREAD_STATE_IN_NATIVE,
};
use crate::vm::{hotspot, jthread, Jni, Jvmti};
use crate::{clock, log};

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

/// A request is given up (the thread blocks the signal, say) when the thread
/// has used this much CPU since it was asked, over at least [`GIVE_UP_TICKS`]
/// ticks, without answering, and the kernel does not have the signal on its
/// way to it; it is walked with JVMTI from then on.
const GIVE_UP_CPU_NS: u64 = 20_000_000;
const GIVE_UP_TICKS: u64 = 50;
/// A signal the kernel has on its way, or whose handler has not finished,
/// is waited for until the thread has used this much CPU (on a loaded
/// 2-core VM, busy threads were seen to wait over 50 ticks with SIGPROF
/// pending and their CPU clock still: descheduled; see `signal::pending`).
const GIVE_UP_ON_ITS_WAY_CPU_NS: u64 = 2_000_000_000;
/// CPU a thread may use after its signal handler read its clock (returning
/// from the signal, resuming a wait) and still count as not having run: a
/// signal must not make a sleeping thread look busy.
const SIGNAL_TAIL_NS: u64 = 20_000;
/// Synthetic frame of samples a thread never answered.
const NO_SIGNAL: &str = "[no_signal]";
/// Synthetic frame of samples owed by a thread that ended before answering.
const THREAD_EXIT: &str = "[thread_exit]";

#[derive(Default, Clone, Copy)]
enum Tid {
    #[default]
    Unknown,
    Known(i32),
    /// Not readable, or the thread does not take signals: JVMTI walks it.
    Unavailable,
}

/// A stack asked for and not yet arrived.
struct Pending {
    seq: u32,
    asked_tick: u64,
    asked_cpu: Option<u64>,
    /// The thread's state when asked ([`state_key`]), and whole (JVMTI's).
    state: i32,
    full_state: i32,
    /// Samples that will count on the stack when it arrives, and how many are hits.
    owed: u64,
    hits: u64,
}

/// Samples a signal walk could not place because the thread was inside the
/// VM (a GC, a safepoint, a call into the VM, deoptimisation), with the
/// failure they stand under if no stack can be had for them.
#[derive(Clone, Copy)]
struct Deferred {
    owed: u64,
    hits: u64,
    failure: &'static str,
    /// The thread's JVMTI state when the first of them was taken.
    state: i32,
}

/// AsyncGetCallTrace's codes for a thread busy inside the VM: GC active,
/// in the VM or native code without a walkable last Java frame, being
/// deoptimised, at a safepoint. Such a thread is not running Java code, so
/// in `event=wall` its stack is taken with JVMTI at the next tick (the
/// handshake does not wait for a blocked thread) and the samples counted
/// there, rather than under a synthetic frame.
const BUSY_IN_VM: [i32; 5] = [-2, -3, -4, -9, -10];

/// What the sampler remembers of a thread between ticks.
#[derive(Default)]
pub(super) struct ThreadState {
    last_cpu: Option<u64>,
    /// `last_cpu` was read by the signal handler (allow [`SIGNAL_TAIL_NS`]).
    cpu_from_signal: bool,
    /// Where the thread's last stack ended.
    leaf: Option<NodeId>,
    /// The thread's state ([`state_key`]) when that stack was taken.
    leaf_state: i32,
    /// The last signal walk failed (`leaf` is a synthetic frame).
    walk_failed: bool,
    /// `event=wall`: samples whose signal found the thread busy inside the
    /// VM, to count on its stack from JVMTI at the next tick.
    deferred: Option<Deferred>,
    tid: Tid,
    pending: Option<Pending>,
    timer: Option<CpuTimer>,
    timer_failed: bool,
    seen_tick: u64,
    missing: u32,
}

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
        }
    }

    pub fn set_active(&self, on: bool) {
        if let StackSource::Signal(_) = self.source {
            handler::set_active(on);
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
        for &thread in &live {
            let Some(Identity::Java(id)) = threads.identify(jvmti, jni, thread, 0) else {
                continue;
            };
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
        self.forget_vanished(data);
        let folded = data.counters.fold_ns - fold0;
        data.counters.vm_ns += (clock::now_ns() - t0).saturating_sub(folded);
    }

    /// An overdue request that will still be answered, with a stack: the
    /// kernel has the signal on its way to the thread (pending, not
    /// blocked), or has given it to the thread, whose handler has not
    /// finished (a thread descheduled in its handler). Not so if the thread
    /// blocks the signal or is gone.
    fn still_coming(&self, tid: &Tid, used: u64) -> bool {
        use signal::pending::{delivery, Delivery};
        let (StackSource::Signal(setup), Tid::Known(t)) = (self.source, tid) else {
            return false;
        };
        used < GIVE_UP_ON_ITS_WAY_CPU_NS
            && matches!(
                delivery(*t, setup.signo),
                Delivery::OnItsWay | Delivery::NotPending
            )
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
        for st in data.states.values_mut() {
            st.timer = None;
        }
        log::warn(&format!(
            "sampling: the application replaced profrj's {} handler; no more signals, stacks now come from JVMTI{}",
            signal::SIGNAL.1,
            if self.config.event == Event::Cpu { " (event=cpu: no more samples)" } else { "" }
        ));
    }

    fn wall_sample(
        &mut self,
        vm: &Vm<'_>,
        data: &mut SamplerData,
        thread: jthread,
        id: ThreadId,
        weight: u64,
    ) {
        let Vm {
            jvmti,
            jni,
            threads,
        } = *vm;
        let Ok(mut state) = jvmti.thread_state(thread) else {
            return;
        };
        if state & JVMTI_THREAD_STATE_ALIVE == 0 {
            return;
        }
        // A carrier runs whatever virtual thread is mounted on it: that
        // thread's state and frames are the carrier's sample.
        let mounted = self.config.get_virtual_thread.and_then(|f| {
            // SAFETY: `f` is what extension_function answered for
            // GetVirtualThread (Config::get_virtual_thread, from the agent's).
            unsafe { jvmti.mounted_virtual_thread(f, thread) }
        });
        if let Some(v) = mounted {
            state = jvmti.thread_state(v).unwrap_or(state);
        }
        let runnable =
            state & JVMTI_JAVA_LANG_THREAD_STATE_MASK == JVMTI_JAVA_LANG_THREAD_STATE_RUNNABLE;
        // CPU time is read before any walk, so a thread that runs during the
        // walk is walked again next time.
        let cpu = jvmti.thread_cpu_time(thread).ok().map(|c| c as u64);
        let tick = data.counters.ticks;
        let SamplerData {
            trees,
            states,
            names,
            keys,
            lines,
            stubs,
            libraries,
            counters,
            seq,
        } = data;
        let st = states.entry(id).or_default();
        st.seen_tick = tick;
        st.missing = 0;
        let tail = if st.cpu_from_signal {
            SIGNAL_TAIL_NS
        } else {
            0
        };
        let ran = match (cpu, st.last_cpu) {
            (Some(c), Some(l)) => c > l.saturating_add(tail),
            (None, _) => true, // no CPU clock: every sample needs a stack
            (Some(_), None) => false,
        };
        if cpu.is_some() && (ran || !st.cpu_from_signal) {
            st.last_cpu = cpu;
            st.cpu_from_signal = false;
        }
        // A late tick stands for the intervals it missed, but only those the
        // thread lived through.
        let weight = if weight > 1 {
            let started = threads.start_ns(id);
            let lived = clock::now_ns().saturating_sub(started);
            let interval = self.config.interval.as_nanos().max(1) as u64;
            weight.min(lived.div_ceil(interval).max(1))
        } else {
            weight
        };
        let hit = (runnable && ran) as u64 * weight;
        if let Some(p) = st.pending.as_mut() {
            p.owed += weight;
            p.hits += hit;
            let used = match (cpu, p.asked_cpu) {
                (Some(c), Some(a)) => c.saturating_sub(a),
                _ => 0,
            };
            let overdue = tick - p.asked_tick > GIVE_UP_TICKS && used > GIVE_UP_CPU_NS;
            if overdue && !self.still_coming(&st.tid, used) {
                let p = st.pending.take().expect("just seen");
                st.tid = Tid::Unavailable;
                st.leaf = None;
                let tree = trees.entry(id).or_default();
                let stack = SampledStack::Synthetic(NO_SIGNAL);
                publish(self.events, id, stack, state, (p.owed, p.hits));
                fold_synthetic(tree, names, keys, counters, NO_SIGNAL, p.owed, p.hits);
            }
            return;
        }
        if let Some(v) = mounted {
            // The virtual thread's sample: in its group's tree, its own
            // stack from its entry (JVMTI splices nothing of the carrier's:
            // no frames of the pool below it). Walked each time: the
            // carrier's next sample may be another thread's.
            st.leaf = None;
            let group = match threads.identify(jvmti, jni, v, 0) {
                Some(Identity::Java(g)) => g,
                _ => id,
            };
            let Some(frames) = self.jvmti_frames.stack(jvmti, v) else {
                return;
            };
            let t1 = clock::now_ns();
            let mut namer = Namer {
                jvmti,
                jni,
                names,
                keys,
                lines: self.config.lines.then_some(lines),
                stubs,
                libraries,
            };
            to_path(&mut namer, frames, self.config.depth, &mut self.path);
            trees
                .entry(group)
                .or_default()
                .add_samples(&self.path, weight, hit);
            // The recording follows the snapshot: the group's sample.
            let stack = SampledStack::Walked {
                jni,
                frames: Frames::Jvmti(frames),
                depth: self.config.depth,
            };
            publish(self.events, group, stack, state, (weight, hit));
            counters.walked += 1;
            counters.add_fold(clock::now_ns() - t1);
            return;
        }
        let tree = trees.entry(id).or_default();
        let idle = !ran && cpu.is_some();
        // A thread that has not run keeps its stack, unless its state changed
        // since that stack was taken: its CPU can move less than the signal's
        // tail between, say, a class initialiser and the sleep it went into.
        let key = state_key(state);
        let same_state = st.leaf_state == key;
        let deferred = st.deferred.take();
        let repeat = deferred.is_none() && !st.walk_failed && same_state;
        if let (true, Some(leaf), true) = (idle, st.leaf, repeat) {
            tree.repeat_samples(leaf, weight, 0);
            publish(self.events, id, SampledStack::Again, state, (weight, 0));
            counters.repeated += 1;
            return;
        }
        // A thread whose signal walk failed (waiting inside the VM, say) and
        // that has not run since is walked with JVMTI: it is not running, so
        // the handshake does not wait for it.
        //
        // Only a thread running Java (or VM) code is signalled. One in native
        // code or not RUNNABLE is walked with JVMTI: its stack ends at its
        // last Java frame anyway, the handshake does not wait for it, and a
        // signal could break a blocking call (JDK 11's accept() turns EINTR
        // into a SocketTimeoutException).
        let in_java = runnable && state & JVMTI_THREAD_STATE_IN_NATIVE == 0;
        let use_signal = in_java && !(idle && st.walk_failed) && deferred.is_none();
        let use_signal = use_signal && !self.signals_lost;
        if let (StackSource::Signal(setup), true) = (self.source, use_signal) {
            if let Some(tid) = resolve_tid(jni, threads, thread, id, &mut st.tid) {
                *seq = seq.wrapping_add(1);
                match handler::ask(tid, setup.signo, signal::token(id, *seq)) {
                    Ok(()) => {
                        counters.asked += 1;
                        // Its CPU from now on: `cpu` was read before, and a
                        // sampler descheduled between would count the
                        // thread's CPU from then as spent not answering.
                        let asked_cpu = jvmti.thread_cpu_time(thread).ok().map(|c| c as u64);
                        st.pending = Some(Pending {
                            seq: *seq,
                            asked_tick: tick,
                            asked_cpu: asked_cpu.or(cpu),
                            state: key,
                            full_state: state,
                            owed: weight,
                            hits: hit,
                        });
                        return;
                    }
                    // The thread is ending: no sample.
                    Err(e) if e.raw_os_error() == Some(libc::ESRCH) => return,
                    Err(_) => st.tid = Tid::Unavailable,
                }
            }
        }
        let Some(frames) = self.jvmti_frames.stack(jvmti, thread) else {
            if let Some(d) = deferred {
                let stack = SampledStack::Synthetic(d.failure);
                publish(self.events, id, stack, d.state, (d.owed, d.hits));
                fold_synthetic(tree, names, keys, counters, d.failure, d.owed, d.hits);
            }
            return;
        };
        if frames.is_empty() {
            // No Java frame at all (the Signal Dispatcher, busy in the VM):
            // deferred samples keep the failure they came with, and this
            // tick's count as a walk that found no Java frame, as a signal's.
            if let Some(d) = deferred {
                let stack = SampledStack::Synthetic(d.failure);
                publish(self.events, id, stack, d.state, (d.owed, d.hits));
                fold_synthetic(tree, names, keys, counters, d.failure, d.owed, d.hits);
            }
            let name = failure_name(0);
            publish(
                self.events,
                id,
                SampledStack::Synthetic(name),
                state,
                (weight, hit),
            );
            fold_synthetic(tree, names, keys, counters, name, weight, hit);
            st.leaf = None;
            st.walk_failed = true;
            return;
        }
        let t1 = clock::now_ns();
        let mut namer = Namer {
            jvmti,
            jni,
            names,
            keys,
            lines: self.config.lines.then_some(lines),
            stubs,
            libraries,
        };
        to_path(&mut namer, frames, self.config.depth, &mut self.path);
        let (weight, hit) = match deferred {
            Some(d) => {
                counters.deferred += d.owed;
                (weight + d.owed, hit + d.hits)
            }
            None => (weight, hit),
        };
        st.leaf = Some(tree.add_samples(&self.path, weight, hit));
        let stack = SampledStack::Walked {
            jni,
            frames: Frames::Jvmti(frames),
            depth: self.config.depth,
        };
        publish(self.events, id, stack, state, (weight, hit));
        st.leaf_state = key;
        st.walk_failed = false;
        counters.walked += 1;
        counters.add_fold(clock::now_ns() - t1);
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
        let Some(tid) = resolve_tid(jni, threads, thread, id, &mut st.tid) else {
            st.timer_failed = true;
            log::warn_once(
                "cpu-no-tid",
                "event=cpu: a thread's OS id could not be read; it is not sampled",
            );
            return;
        };
        let token = signal::token(id, 0);
        match CpuTimer::start(tid, setup.signo, self.config.interval, token) {
            Ok(t) => st.timer = Some(t),
            Err(e) => {
                st.timer_failed = true;
                log::warn_once(
                    "cpu-timer",
                    &format!("event=cpu: cannot create a thread CPU timer ({e}); that thread is not sampled"),
                );
            }
        }
    }

    /// Folds every stack the signal handler stored since the last tick.
    fn drain(&mut self, jvmti: Jvmti, jni: &Jni, data: &mut SamplerData) {
        let StackSource::Signal(setup) = self.source else {
            return;
        };
        let t0 = clock::now_ns();
        let event = self.config.event;
        let depth = self.config.depth;
        let path = &mut self.path;
        let with_lines = self.config.lines;
        let events = self.events;
        let SamplerData {
            trees,
            states,
            names,
            keys,
            lines,
            stubs,
            libraries,
            counters,
            ..
        } = data;
        setup.ring.drain(|s: Sample<'_>| {
            let Some((id, seq)) = signal::from_token(s.token) else {
                return;
            };
            let (owed, hits, state, full_state) = match event {
                Event::Cpu => {
                    let w = s.weight as u64;
                    (w, w, 0, JVMTI_JAVA_LANG_THREAD_STATE_RUNNABLE)
                }
                Event::Wall => {
                    // The awaited answer, from the thread it was asked of.
                    let st = states.get_mut(&id).filter(|st| match st.tid {
                        Tid::Known(t) => t == s.tid,
                        _ => true,
                    });
                    match st.and_then(|st| st.pending.take_if(|p| p.seq == seq)) {
                        Some(p) => (p.owed, p.hits, p.state, p.full_state),
                        None => {
                            counters.late += 1;
                            return;
                        }
                    }
                }
            };
            counters.arrived += 1;
            if event == Event::Wall && BUSY_IN_VM.contains(&s.code) {
                if let Some(st) = states.get_mut(&id) {
                    let d = st.deferred.get_or_insert(Deferred {
                        owed: 0,
                        hits: 0,
                        failure: failure_name(s.code),
                        state: full_state,
                    });
                    d.owed += owed;
                    d.hits += hits;
                    st.leaf = None;
                    st.walk_failed = true;
                    return;
                }
            }
            let tree = trees.entry(id).or_default();
            let leaf = if s.code > 0 {
                let mut namer = Namer {
                    jvmti,
                    jni,
                    names,
                    keys,
                    lines: with_lines.then_some(&mut *lines),
                    stubs,
                    libraries,
                };
                to_path(&mut namer, s.frames, depth, path);
                let stack = SampledStack::Walked {
                    jni,
                    frames: Frames::Async(s.frames),
                    depth,
                };
                publish(events, id, stack, full_state, (owed, hits));
                tree.add_samples(path, owed, hits)
            } else {
                let name = failure_name(s.code);
                let stack = SampledStack::Synthetic(name);
                publish(events, id, stack, full_state, (owed, hits));
                fold_synthetic(tree, names, keys, counters, name, owed, hits)
            };
            if let Some(st) = states.get_mut(&id) {
                st.leaf = Some(leaf);
                st.leaf_state = state;
                st.walk_failed = s.code <= 0;
                if s.cpu_ns > 0 && event == Event::Wall {
                    st.last_cpu = Some(s.cpu_ns);
                    st.cpu_from_signal = true;
                }
            }
        });
        counters.add_fold(clock::now_ns() - t0);
    }

    /// Threads that are gone: their timers deleted; after a second tick
    /// without them (an answer may still have been on its way), what they
    /// still owed is counted under [`THREAD_EXIT`].
    fn forget_vanished(&mut self, data: &mut SamplerData) {
        let tick = data.counters.ticks;
        let events = self.events;
        let SamplerData {
            trees,
            states,
            names,
            keys,
            counters,
            ..
        } = data;
        states.retain(|id, st| {
            if st.seen_tick == tick {
                return true;
            }
            st.timer = None;
            st.missing += 1;
            if st.missing < 2 {
                return true;
            }
            let tree = trees.entry(*id).or_default();
            if let Some(p) = st.pending.take() {
                let ended = crate::vm::sys::JVMTI_THREAD_STATE_TERMINATED;
                let stack = SampledStack::Synthetic(THREAD_EXIT);
                publish(events, *id, stack, ended, (p.owed, p.hits));
                fold_synthetic(tree, names, keys, counters, THREAD_EXIT, p.owed, p.hits);
            }
            fold_deferred(events, *id, st, tree, names, keys, counters);
            false
        });
    }

    /// After the last tick: waits briefly for stacks still on their way,
    /// stops the CPU timers, and counts what never came.
    pub fn finish(&mut self, jvmti: Jvmti, jni: &Jni, data: &mut SamplerData) {
        for st in data.states.values_mut() {
            st.timer = None;
        }
        if let StackSource::Signal(_) = self.source {
            for _ in 0..25 {
                self.drain(jvmti, jni, data);
                if data.states.values().all(|s| s.pending.is_none()) {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            self.drain(jvmti, jni, data);
        }
        let SamplerData {
            trees,
            states,
            names,
            keys,
            counters,
            ..
        } = data;
        for (id, st) in states.iter_mut() {
            if let Some(p) = st.pending.take() {
                counters.unanswered_at_stop += p.owed;
            }
            // No tick left to take their stack.
            if st.deferred.is_some() {
                fold_deferred(
                    self.events,
                    *id,
                    st,
                    trees.entry(*id).or_default(),
                    names,
                    keys,
                    counters,
                );
            }
            st.timer_failed = false;
        }
    }
}

impl JvmtiFrames {
    /// `thread`'s stack through JVMTI (a handshake with that thread alone).
    /// A mounted virtual thread is asked for itself: its stack from its
    /// entry, counted in its group (see `sample`).
    fn stack(&mut self, jvmti: Jvmti, thread: jthread) -> Option<&[JvmtiFrameInfo]> {
        jvmti.stack_trace(thread, &mut self.frames).ok()
    }
}

/// The OS id of `thread`: told by the thread itself at ThreadStart, else read
/// from the VM's structures once.
fn resolve_tid(
    jni: &Jni,
    threads: &Threads,
    thread: jthread,
    id: ThreadId,
    tid: &mut Tid,
) -> Option<i32> {
    if let Tid::Unknown = tid {
        *tid = match threads
            .tid(id)
            .or_else(|| hotspot::os_thread_id(jni, thread))
        {
            Some(t) => Tid::Known(t),
            None => Tid::Unavailable,
        };
    }
    match *tid {
        Tid::Known(t) => Some(t),
        _ => None,
    }
}

/// Counts samples under a one-frame synthetic stack (`[GC_active]`, …).
fn fold_synthetic(
    tree: &mut super::tree::CallTree,
    names: &mut crate::methods::MethodNames,
    keys: &mut super::FrameKeys,
    counters: &mut Counters,
    name: &'static str,
    owed: u64,
    hits: u64,
) -> NodeId {
    *counters.failures.entry(name).or_default() += owed;
    counters.failed_walks += 1;
    let key = keys.key(names.intern(name), super::NO_LINE);
    tree.add_samples(&[key], owed, hits)
}

/// Counts a thread's deferred samples (if any) under the failure they came
/// with: no stack could be taken for them (the thread ended, sampling stopped).
fn fold_deferred(
    events: &Events,
    id: ThreadId,
    st: &mut ThreadState,
    tree: &mut super::tree::CallTree,
    names: &mut crate::methods::MethodNames,
    keys: &mut super::FrameKeys,
    counters: &mut Counters,
) {
    if let Some(d) = st.deferred.take() {
        let stack = SampledStack::Synthetic(d.failure);
        publish(events, id, stack, d.state, (d.owed, d.hits));
        fold_synthetic(tree, names, keys, counters, d.failure, d.owed, d.hits);
    }
}

/// What of a thread's JVMTI state decides whether its last stack still
/// holds: its java.lang.Thread.State and whether it is in native code.
fn state_key(state: i32) -> i32 {
    state & (JVMTI_JAVA_LANG_THREAD_STATE_MASK | JVMTI_THREAD_STATE_IN_NATIVE)
}

/// Tells the listeners of `Kind::Sampled` (a recording) of samples as they
/// are folded: one load when nobody listens.
#[inline(always)]
fn publish(
    events: &Events,
    thread: ThreadId,
    stack: SampledStack<'_>,
    state: i32,
    (count, hits): (u64, u64),
) {
    events.sampled(&Samples {
        thread,
        stack,
        state,
        count,
        hits,
    });
}
