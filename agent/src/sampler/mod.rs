//! `sampling` mode: an agent thread takes every live Java thread's stack each
//! `interval` (JVMTI GetAllStackTraces) and folds it into that thread's call tree.

mod section;
pub mod tree;

pub use section::write_section;

use crate::methods::{MethodNames, NameId};
use crate::threads::{Identity, ThreadId, Threads};
use crate::vm::sys::{
    JvmtiExtensionFunction, JvmtiFrameInfo, JVMTI_JAVA_LANG_THREAD_STATE_MASK,
    JVMTI_JAVA_LANG_THREAD_STATE_RUNNABLE, JVMTI_THREAD_STATE_ALIVE,
};
use crate::vm::{AgentThreadEntry, Jni, Jvmti};
use crate::{clock, log};
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tree::{CallTree, NodeId};

/// Name of the synthetic node that holds stacks deeper than `depth`.
pub const TRUNCATED: &str = "[truncated]";

/// What a dump reads: every thread's tree and the names its nodes refer to.
#[derive(Default)]
pub struct SamplerData {
    pub trees: HashMap<ThreadId, CallTree>,
    /// Per thread: its CPU time at its last full stack walk and where that stack ended.
    last: HashMap<ThreadId, (u64, NodeId)>,
    pub names: MethodNames,
    pub samples: u64,
    /// Thread samples counted again without a stack walk (the thread had not run since).
    pub repeated: u64,
    /// Thread samples taken with a stack walk.
    pub walked: u64,
    /// Wall time spent getting thread states and stacks from the VM, ns.
    pub vm_ns: u64,
    /// Wall time spent folding stacks into trees, ns.
    pub fold_ns: u64,
}

/// When samples are taken: one per `interval`-long slot, at a uniformly random
/// point inside the slot. The mean rate is exactly one per interval, but no
/// periodic activity in the program can stay in lockstep with the sampler
/// (a fixed rate measured 100%/0% on a 50/50 workload with a 10 ms period).
struct Schedule {
    interval: Duration,
    slot: Instant,
    rng: u64,
}

impl Schedule {
    fn new(interval: Duration, seed: u64) -> Self {
        Self {
            interval,
            slot: Instant::now(),
            rng: seed | 1,
        }
    }

    /// The instant of the next sample, in the next slot.
    fn next_sample(&mut self) -> Instant {
        let now = Instant::now();
        if self.slot + self.interval < now {
            // Fell behind (a long pause, a stopped machine): resume from now, don't burst.
            self.slot = now;
        }
        // xorshift64*: plenty for picking an offset, and no dependency.
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let r = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d);
        let offset = r % self.interval.as_nanos().max(1) as u64;
        let at = self.slot + Duration::from_nanos(offset);
        self.slot += self.interval;
        at
    }
}

/// Reused by every sample, so sampling allocates nothing per thread.
struct Buffers {
    frames: Vec<JvmtiFrameInfo>,
    /// A mounted virtual thread's frames, and those spliced onto its carrier's.
    virtual_frames: Vec<JvmtiFrameInfo>,
    spliced: Vec<JvmtiFrameInfo>,
    path: Vec<NameId>,
}

#[derive(Default)]
struct Control {
    stop: bool,
    running: bool,
    /// The sampler threads' own CPU time and wall time, summed over runs, ns.
    own_cpu_ns: u64,
    own_wall_ns: u64,
}

pub struct Sampler {
    interval: Duration,
    depth: u32,
    /// JDK 21+: finds the virtual thread mounted on a carrier.
    get_virtual_thread: Option<JvmtiExtensionFunction>,
    control: Mutex<Control>,
    wake: Condvar,
    data: Mutex<SamplerData>,
}

impl Sampler {
    pub fn new(
        interval: Duration,
        depth: u32,
        get_virtual_thread: Option<JvmtiExtensionFunction>,
    ) -> Self {
        Self {
            interval,
            depth,
            get_virtual_thread,
            control: Mutex::new(Control::default()),
            wake: Condvar::new(),
            data: Mutex::new(SamplerData::default()),
        }
    }

    /// Starts (or, after [`Sampler::stop`], restarts) the `profrj sampler`
    /// thread; `entry` gets `me` as its argument and calls [`Sampler::run`].
    pub fn start(
        &self,
        jvmti: Jvmti,
        jni: &Jni,
        me: Arc<Sampler>,
        entry: AgentThreadEntry,
    ) -> Result<(), String> {
        {
            let mut c = self.control.lock();
            c.stop = false;
            c.running = true;
        }
        let arg = Arc::into_raw(me);
        crate::vm::start_agent_thread(jvmti, jni, "profrj sampler", entry, arg.cast()).map_err(
            |e| {
                // SAFETY: the thread did not start, so the reference is still ours.
                drop(unsafe { Arc::from_raw(arg) });
                self.control.lock().running = false;
                format!("cannot start the sampler thread: {e}")
            },
        )
    }

    pub fn samples(&self) -> u64 {
        self.data.lock().samples
    }

    /// The sampler thread's body: sample at a fixed rate until [`Sampler::stop`].
    pub fn run(&self, jvmti: Jvmti, jni: &Jni, threads: &Threads) {
        let started = clock::now_ns();
        let mut schedule = Schedule::new(self.interval, started);
        let mut buf = Buffers {
            // One frame more than `depth`, to tell a stack of exactly `depth` from a deeper one.
            frames: vec![
                JvmtiFrameInfo {
                    method: std::ptr::null_mut(),
                    location: 0
                };
                self.depth as usize + 1
            ],
            virtual_frames: vec![
                JvmtiFrameInfo {
                    method: std::ptr::null_mut(),
                    location: 0
                };
                self.depth as usize + 1
            ],
            spliced: Vec::with_capacity(2 * self.depth as usize + 2),
            path: Vec::with_capacity(self.depth as usize + 1),
        };
        loop {
            let next = schedule.next_sample();
            {
                let mut c = self.control.lock();
                while !c.stop && Instant::now() < next {
                    self.wake.wait_until(&mut c, next);
                }
                if c.stop {
                    break;
                }
            }
            // One local reference per thread, plus a few per newly seen thread or method.
            let refs = threads.count() as i32 + 64;
            jni.with_local_frame(refs, || self.sample_once(jvmti, jni, threads, &mut buf));
        }
        let mut c = self.control.lock();
        c.own_cpu_ns += jvmti.thread_cpu_time(std::ptr::null_mut()).unwrap_or(0) as u64;
        c.own_wall_ns += clock::now_ns() - started;
        c.running = false;
        self.wake.notify_all();
    }

    /// Takes one sample of every live Java thread. Each stack is taken on its
    /// own (GetStackTrace: a handshake with that thread only), so the other
    /// threads keep running; GetAllStackTraces would stop them all at a global
    /// safepoint, which measured 0.5-8 ms per sample on 2 cores.
    fn sample_once(&self, jvmti: Jvmti, jni: &Jni, threads: &Threads, buf: &mut Buffers) {
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
        let mut data = self.data.lock();
        let SamplerData {
            trees,
            last,
            names,
            samples,
            repeated,
            walked,
            vm_ns,
            fold_ns,
        } = &mut *data;
        *samples += 1;
        for &thread in &live {
            let t0 = clock::now_ns();
            let Some(Identity::Java(id)) = threads.identify(jvmti, jni, thread, 0) else {
                continue;
            };
            let Ok(mut state) = jvmti.thread_state(thread) else {
                continue;
            };
            if state & JVMTI_THREAD_STATE_ALIVE == 0 {
                continue;
            }
            // A carrier runs whatever virtual thread is mounted on it: that
            // thread's state and frames are the carrier's sample.
            let mounted = self
                .get_virtual_thread
                .and_then(|f| jvmti.mounted_virtual_thread(f, thread));
            if let Some(v) = mounted {
                state = jvmti.thread_state(v).unwrap_or(state);
            }
            let runnable =
                state & JVMTI_JAVA_LANG_THREAD_STATE_MASK == JVMTI_JAVA_LANG_THREAD_STATE_RUNNABLE;
            let tree = trees.entry(id).or_default();
            // A thread that has not used a nanosecond of CPU since its last walk
            // has not executed anything, so its stack is unchanged: count that
            // stack again, with no handshake. CPU time is read before the walk,
            // so a thread that runs during the walk is walked again next time.
            let cpu = jvmti.thread_cpu_time(thread).ok().map(|c| c as u64);
            if let (Some(cpu), Some(&(last_cpu, leaf))) = (cpu, last.get(&id)) {
                if cpu == last_cpu {
                    tree.repeat_sample(leaf, runnable);
                    *repeated += 1;
                    *vm_ns += clock::now_ns() - t0;
                    continue;
                }
            }
            let Ok(carrier) = jvmti.stack_trace(thread, &mut buf.frames) else {
                continue;
            };
            let frames = match mounted {
                None => carrier,
                Some(v) => {
                    let Ok(top) = jvmti.stack_trace(v, &mut buf.virtual_frames) else {
                        continue;
                    };
                    buf.spliced.clear();
                    buf.spliced.extend_from_slice(top);
                    buf.spliced.extend_from_slice(carrier);
                    &buf.spliced[..]
                }
            };
            let t1 = clock::now_ns();
            let path = &mut buf.path;
            path.clear();
            let kept = if frames.len() > self.depth as usize {
                path.push(names.intern(TRUNCATED));
                &frames[..self.depth as usize]
            } else {
                frames
            };
            // Frames come top first; the tree runs root first.
            for f in kept.iter().rev() {
                path.push(names.frame_name(jvmti, jni, f.method, f.location == -1));
            }
            let leaf = tree.add_sample(path, runnable);
            if let Some(cpu) = cpu {
                last.insert(id, (cpu, leaf));
            }
            *walked += 1;
            *vm_ns += t1 - t0;
            *fold_ns += clock::now_ns() - t1;
        }
    }

    /// Asks the sampler thread to finish and waits for it (at most 5 s, so a
    /// stuck VM operation can never hang the JVM's exit).
    pub fn stop(&self) {
        let mut c = self.control.lock();
        c.stop = true;
        self.wake.notify_all();
        let deadline = Instant::now() + Duration::from_secs(5);
        while c.running {
            if self.wake.wait_until(&mut c, deadline).timed_out() {
                log::warn("sampler thread did not stop within 5 s; writing the snapshot anyway");
                break;
            }
        }
    }

    /// One line on what sampling cost, for the log at exit.
    pub fn cost_summary(&self) -> String {
        let (cpu, wall) = {
            let c = self.control.lock();
            (c.own_cpu_ns, c.own_wall_ns.max(1))
        };
        let d = self.data.lock();
        let n = d.samples.max(1);
        format!(
            "sampling: {} samples every {:?} ({} stacks walked, {} repeated unchanged); \
             per sample {} us taking stacks, {} us folding; sampler CPU {} ms = {:.2}% of one core",
            d.samples,
            self.interval,
            d.walked,
            d.repeated,
            d.vm_ns / n / 1000,
            d.fold_ns / n / 1000,
            cpu / 1_000_000,
            cpu as f64 * 100.0 / wall as f64
        )
    }

    /// Runs `f` on the collected data; sampling waits meanwhile.
    pub fn with_data<R>(&self, f: impl FnOnce(&SamplerData) -> R) -> R {
        f(&self.data.lock())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_sample_per_slot_at_a_varying_offset() {
        let interval = Duration::from_millis(10);
        let mut s = Schedule::new(interval, 42);
        let start = s.slot;
        let mut offsets = Vec::new();
        for k in 0..1000u32 {
            let at = s.next_sample();
            let slot = start + interval * k;
            assert!(
                at >= slot && at < slot + interval,
                "sample {k} outside its slot"
            );
            offsets.push((at - slot).as_nanos() as f64 / interval.as_nanos() as f64);
        }
        // Uniform on [0, 1): mean near 0.5, both halves used.
        let mean = offsets.iter().sum::<f64>() / offsets.len() as f64;
        assert!((mean - 0.5).abs() < 0.05, "mean offset {mean}");
        let low = offsets.iter().filter(|&&o| o < 0.5).count();
        assert!((400..600).contains(&low), "{low} of 1000 in the first half");
    }
}
