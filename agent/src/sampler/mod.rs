//! `sampling` mode: an agent thread takes every live Java thread's stack each
//! `interval` (JVMTI GetAllStackTraces) and folds it into that thread's call tree.

mod section;
pub mod tree;

pub use section::write_section;

use crate::log;
use crate::methods::{MethodNames, NameId};
use crate::threads::{Identity, ThreadId, Threads, AGENT_THREAD_TAG};
use crate::vm::sys::{JVMTI_JAVA_LANG_THREAD_STATE_MASK, JVMTI_JAVA_LANG_THREAD_STATE_RUNNABLE};
use crate::vm::{Jni, Jvmti};
use parking_lot::{Condvar, Mutex};
use std::collections::HashMap;
use std::time::{Duration, Instant};
use tree::CallTree;

/// Name of the synthetic node that holds stacks deeper than `depth`.
pub const TRUNCATED: &str = "[truncated]";

/// What a dump reads: every thread's tree and the names its nodes refer to.
pub struct SamplerData {
    pub trees: HashMap<ThreadId, CallTree>,
    pub names: MethodNames,
    pub samples: u64,
}

#[derive(Default)]
struct Control {
    stop: bool,
    running: bool,
}

pub struct Sampler {
    interval: Duration,
    depth: u32,
    control: Mutex<Control>,
    wake: Condvar,
    data: Mutex<SamplerData>,
}

impl Sampler {
    pub fn new(interval: Duration, depth: u32) -> Self {
        Self {
            interval,
            depth,
            control: Mutex::new(Control::default()),
            wake: Condvar::new(),
            data: Mutex::new(SamplerData {
                trees: HashMap::new(),
                names: MethodNames::default(),
                samples: 0,
            }),
        }
    }

    /// Creates the `profrj sampler` thread; it runs `entry` (which calls [`Sampler::run`]).
    pub fn start(
        &self,
        jvmti: Jvmti,
        jni: &Jni,
        entry: unsafe extern "C" fn(
            *mut crate::vm::sys::JvmtiEnv,
            *mut jni_sys::JNIEnv,
            *mut std::ffi::c_void,
        ),
    ) -> Result<(), String> {
        let thread = jni.new_thread_object("profrj sampler").map_err(|e| e.0)?;
        // Tagged before it starts, so neither ThreadStart nor the sampler counts it.
        jvmti
            .set_tag(thread, AGENT_THREAD_TAG)
            .map_err(|e| jvmti.error_name(e))?;
        self.control.lock().running = true;
        let r = jvmti.run_agent_thread(thread, entry, crate::vm::sys::JVMTI_THREAD_MAX_PRIORITY);
        jni.delete_local_ref(thread);
        r.map_err(|e| {
            self.control.lock().running = false;
            jvmti.error_name(e)
        })
    }

    /// The sampler thread's body: sample at a fixed rate until [`Sampler::stop`].
    pub fn run(&self, jvmti: Jvmti, jni: &Jni, threads: &Threads, profiling_start_ns: u64) {
        let mut next = Instant::now() + self.interval;
        let mut path = Vec::with_capacity(self.depth as usize + 1);
        loop {
            {
                let mut c = self.control.lock();
                while !c.stop && Instant::now() < next {
                    self.wake.wait_until(&mut c, next);
                }
                if c.stop {
                    break;
                }
            }
            jni.with_local_frame(64, || {
                self.sample_once(jvmti, jni, threads, profiling_start_ns, &mut path)
            });
            next += self.interval;
            let now = Instant::now();
            if next < now {
                // Fell behind (a long safepoint, a stopped machine): skip, don't burst.
                next = now + self.interval;
            }
        }
        let mut c = self.control.lock();
        c.running = false;
        self.wake.notify_all();
    }

    fn sample_once(
        &self,
        jvmti: Jvmti,
        jni: &Jni,
        threads: &Threads,
        start_ns: u64,
        path: &mut Vec<NameId>,
    ) {
        let depth = self.depth as i32;
        let traces = match jvmti.all_stack_traces(depth + 1) {
            Ok(t) => t,
            Err(e) => {
                log::error_once(
                    "GetAllStackTraces",
                    &format!("sampling failed: {}", jvmti.error_name(e)),
                );
                return;
            }
        };
        let count = traces.iter().count();
        jni.ensure_local_capacity(count * 3 + 16);
        let mut data = self.data.lock();
        let SamplerData {
            trees,
            names,
            samples,
        } = &mut *data;
        *samples += 1;
        for stack in traces.iter() {
            let Some(Identity::Java(id)) = threads.identify(jvmti, jni, stack.thread, start_ns)
            else {
                continue;
            };
            let runnable = stack.state & JVMTI_JAVA_LANG_THREAD_STATE_MASK
                == JVMTI_JAVA_LANG_THREAD_STATE_RUNNABLE;
            path.clear();
            let frames = if stack.frames.len() > self.depth as usize {
                path.push(names.intern(TRUNCATED));
                &stack.frames[..self.depth as usize]
            } else {
                stack.frames
            };
            // Frames come top first; the tree runs root first.
            for f in frames.iter().rev() {
                path.push(names.frame_name(jvmti, jni, f.method, f.location == -1));
            }
            trees.entry(id).or_default().add_sample(path, runnable);
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

    /// Runs `f` on the collected data; sampling waits meanwhile.
    pub fn with_data<R>(&self, f: impl FnOnce(&SamplerData) -> R) -> R {
        f(&self.data.lock())
    }
}
