//! `event=wall`: each live thread's sample at a tick, and where its stack
//! comes from: its last stack again (it has not run), a signal (it runs Java
//! code), JVMTI (it is blocked, in native code, or does not answer), or its
//! mounted virtual thread's. Apart because it is the one long decision of
//! the tick (see `mod.rs`'s comment for the rules).

use super::fold::{fold_synthetic, publish};
use super::kernel_stack;
use super::thread_state::{resolve_tid, state_key, Pending, Tid};
use super::{StackSource, Vm, Walker};
use crate::clock;
use crate::events::SampledStack;
use crate::sampler::frames::{kinds_of, to_path, Namer, NO_LINE};
use crate::sampler::signal::{self, handler};
use crate::sampler::SamplerData;
use crate::stack::Frames;
use crate::threads::{Identity, ThreadId};
use crate::vm::async_trace::failure_name;
use crate::vm::jthread;
use crate::vm::sys::{
    JVMTI_JAVA_LANG_THREAD_STATE_MASK, JVMTI_JAVA_LANG_THREAD_STATE_RUNNABLE,
    JVMTI_THREAD_STATE_ALIVE, JVMTI_THREAD_STATE_IN_NATIVE,
};
use profrj_format::frame_types::FrameType;

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

impl Walker<'_> {
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

    pub(super) fn wall_sample(
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
            tables,
            counters,
            seq,
            ..
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
            // Once the application took the signal over, no request still
            // out will be answered (its handler takes the signal): given up
            // at once, so the thread is walked with JVMTI from the next
            // tick, not after seconds of its CPU.
            if self.signals_lost || (overdue && !self.still_coming(&st.tid, used)) {
                let p = st.pending.take().expect("just seen");
                st.tid = Tid::Unavailable;
                st.leaf = None;
                let tree = trees.entry(id).or_default();
                let stack = SampledStack::Synthetic(NO_SIGNAL);
                publish(self.events, id, stack, state, (p.owed, p.hits));
                fold_synthetic(tree, tables, counters, NO_SIGNAL, p.owed, p.hits);
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
            let mut namer = Namer::new(jvmti, jni, tables, self.config.lines);
            to_path(&mut namer, frames, self.config.depth, &mut self.path);
            kinds_of(frames, self.config.depth, self.path.len(), &mut self.kinds);
            trees
                .entry(group)
                .or_default()
                .add_typed_samples(&self.path, &self.kinds, weight, hit);
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
            tree.repeat_typed_samples(leaf, &st.leaf_kinds, weight, 0);
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
        // With `cstack=`, one in native code that ran since its last sample
        // (computing, not blocked) is signalled too: its native frames are
        // the sample.
        let in_java = runnable && state & JVMTI_THREAD_STATE_IN_NATIVE == 0;
        let native_running = runnable && ran && crate::native::mode() != crate::native::CStack::No;
        let use_signal =
            (in_java || native_running) && !(idle && st.walk_failed) && deferred.is_none();
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
                fold_synthetic(tree, tables, counters, d.failure, d.owed, d.hits);
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
                fold_synthetic(tree, tables, counters, d.failure, d.owed, d.hits);
            }
            let name = failure_name(0);
            publish(
                self.events,
                id,
                SampledStack::Synthetic(name),
                state,
                (weight, hit),
            );
            fold_synthetic(tree, tables, counters, name, weight, hit);
            st.leaf = None;
            st.walk_failed = true;
            return;
        }
        let t1 = clock::now_ns();
        let mut namer = Namer::new(jvmti, jni, tables, self.config.lines);
        to_path(&mut namer, frames, self.config.depth, &mut self.path);
        kinds_of(frames, self.config.depth, self.path.len(), &mut self.kinds);
        if self.config.kernel {
            // Where in the kernel it waits, on top (`kernel=on`).
            if let Some(tid) = resolve_tid(jni, threads, thread, id, &mut st.tid) {
                let mut kernel = Vec::new();
                kernel_stack::read(tid, &mut kernel);
                for name in kernel.iter().rev() {
                    let name = tables.names.intern(name);
                    self.path.push(tables.keys.key(name, NO_LINE));
                    self.kinds.push(FrameType::Kernel as u8);
                }
            }
        }
        let (weight, hit) = match deferred {
            Some(d) => {
                counters.deferred += d.owed;
                (weight + d.owed, hit + d.hits)
            }
            None => (weight, hit),
        };
        st.leaf = Some(tree.add_typed_samples(&self.path, &self.kinds, weight, hit));
        st.leaf_kinds.clone_from(&self.kinds);
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
}
