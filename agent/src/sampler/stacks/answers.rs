//! The stacks signal handlers stored since the last tick, folded into the
//! trees: each matched to the request it answers (a late answer is only
//! counted as late), and a walk that found its thread busy inside the VM
//! kept for JVMTI at the next tick. Apart from `wall.rs`, which asks: this
//! is the other half of a request, and `event=cpu`'s only half.

use super::fold::{fold_synthetic, publish};
use super::frozen::Continuations;
use super::thread_state::{Deferred, Tid};
use super::{owner, StackSource, Walker, CPU_TIMERS};
use crate::clock;
use crate::events::SampledStack;
use crate::sampler::frames::{kinds_of, to_path, Namer};
use crate::sampler::signal::{self, ring::Sample};
use crate::sampler::{Event, SamplerData};
use crate::stack::Frames;
use crate::vm::async_trace::failure_name;
use crate::vm::sys::JVMTI_JAVA_LANG_THREAD_STATE_RUNNABLE;
use crate::vm::{Jni, Jvmti};

/// AsyncGetCallTrace's codes for a thread busy inside the VM: GC active,
/// in the VM or native code without a walkable last Java frame, being
/// deoptimised, at a safepoint. Such a thread is not running Java code, so
/// in `event=wall` its stack is taken with JVMTI at the next tick (the
/// handshake does not wait for a blocked thread) and the samples counted
/// there, rather than under a synthetic frame.
const BUSY_IN_VM: [i32; 5] = [-2, -3, -4, -9, -10];

impl Walker<'_> {
    /// Folds every stack the signal handler stored since the last tick.
    pub(super) fn drain(&mut self, jvmti: Jvmti, jni: &Jni, data: &mut SamplerData) {
        let StackSource::Signal(setup) = self.source else {
            return;
        };
        let t0 = clock::now_ns();
        // Virtual threads' frames are only followed with vthreads on.
        let continuations = match self.config.get_virtual_thread {
            Some(_) => *self
                .continuations
                .get_or_insert_with(|| Continuations::look_up(jni)),
            None => None,
        };
        let marked = &mut self.marked;
        let event = self.config.event;
        let interval_ns = self.config.interval.as_nanos() as u64;
        let depth = self.config.depth;
        let path = &mut self.path;
        let kinds = &mut self.kinds;
        let with_lines = self.config.lines;
        let events = self.events;
        let SamplerData {
            trees,
            states,
            tables,
            counters,
            jvm,
            ..
        } = data;
        setup.ring.drain(|s: Sample<'_>| {
            if signal::is_jvm_token(s.token) {
                let vm = (jvmti, jni);
                let sampling = (event, interval_ns);
                jvm.answer(
                    &s, vm, sampling, depth, events, trees, tables, counters, path,
                );
                return;
            }
            let Some((id, seq)) = signal::from_token(s.token) else {
                return;
            };
            let (owed, hits, state, full_state) = match event {
                Event::Cpu => {
                    // The intervals of CPU since its previous sample
                    // (`cpu_credit.rs`); none whole yet: nothing to count.
                    // A thread no tick saw yet has the mark its ThreadStart's
                    // timer took; one the sampler forgot (a signal later
                    // than its end), the kernel's count: its tail is counted.
                    let early = || CPU_TIMERS.armed_cpu_ns(owner(setup), id);
                    let w = match states.get_mut(&id) {
                        Some(st) => {
                            if !st.credit.known() {
                                st.credit.armed_earlier(early());
                            }
                            st.credit.weigh(s.cpu_ns, s.weight as u64, interval_ns)
                        }
                        None => match early() {
                            Some(armed) => {
                                let st = states.entry(id).or_default();
                                st.credit.armed(Some(armed));
                                st.credit.weigh(s.cpu_ns, s.weight as u64, interval_ns)
                            }
                            None => s.weight as u64,
                        },
                    };
                    if w == 0 {
                        return;
                    }
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
                let frames = match continuations {
                    Some(c) if c.mark(s.frames, marked) => &marked[..],
                    _ => s.frames,
                };
                let mut namer = Namer::new(jvmti, jni, tables, with_lines);
                to_path(&mut namer, frames, depth, path);
                kinds_of(frames, depth, path.len(), kinds);
                let stack = SampledStack::Walked {
                    jni,
                    frames: Frames::Async(frames),
                    depth,
                };
                publish(events, id, stack, full_state, (owed, hits));
                tree.add_typed_samples(path, kinds, owed, hits)
            } else {
                let name = failure_name(s.code);
                let stack = SampledStack::Synthetic(name);
                publish(events, id, stack, full_state, (owed, hits));
                fold_synthetic(tree, tables, counters, name, owed, hits)
            };
            if let Some(st) = states.get_mut(&id) {
                st.leaf = Some(leaf);
                st.leaf_state = state;
                st.leaf_kinds.clear();
                if s.code > 0 {
                    st.leaf_kinds.extend_from_slice(kinds);
                }
                st.walk_failed = s.code <= 0;
                if s.cpu_ns > 0 && event == Event::Wall {
                    st.last_cpu = Some(s.cpu_ns);
                    st.cpu_from_signal = true;
                }
            }
        });
        counters.add_fold(clock::now_ns() - t0);
    }
}
