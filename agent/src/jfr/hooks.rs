//! What a running recording hears of the modes' events, each published
//! where the mode folds it into its own tree: `sampling`'s samples (a
//! stack, a synthetic frame, or the thread's last stack again), `alloc`'s
//! sampled objects, `lock`'s waits. Each returns at once when no recording
//! runs (two loads).

use super::{Event, Kind, Lifetime, Shared};
use crate::events::{Listener, LockWaited, ObjectSampled, SampledStack, Samples};
use crate::stack::Frames;
use crate::threads::ThreadId;
use crate::vm::{Jni, Jvmti};
use profrj_jfr::schema::thread_state as st;

/// The kinds of events a recording hears.
pub const KINDS: [crate::events::Kind; 3] = {
    use crate::events::Kind::*;
    [Sampled, ObjectSampled, LockWaited]
};

impl Listener for Lifetime {
    fn sampled(&self, s: &Samples<'_>) {
        let Some(host) = self.recording() else {
            return;
        };
        let started = self.hand_over();
        let mut shared = self.shared.lock();
        let stack = match s.stack {
            SampledStack::Walked { jni, frames, depth } => {
                let stack = intern(&mut shared, host.jvmti, jni, frames, depth);
                shared.last_stack.insert(s.thread.0, stack);
                stack
            }
            SampledStack::Synthetic(name) => {
                let stack = shared.tables.synthetic_stack(name);
                shared.last_stack.insert(s.thread.0, stack);
                stack
            }
            SampledStack::Again => shared.last_stack.get(&s.thread.0).copied().unwrap_or(0),
        };
        self.samples(&mut shared, s.thread, stack, s.state, (s.count, s.hits));
        drop(shared);
        self.handed_over(started);
    }

    fn object_sampled(&self, jni: &Jni, o: &ObjectSampled<'_>) {
        let Some(host) = self.recording() else {
            return;
        };
        let started = self.hand_over();
        let time = crate::clock::now_ns();
        let mut shared = self.shared.lock();
        let stack = intern(&mut shared, host.jvmti, jni, o.frames, o.depth);
        let class = shared.tables.class(o.class);
        let e = Event {
            kind: Kind::Allocation,
            state: 0,
            thread: o.thread.0 + 1,
            time,
            stack,
            class,
            a: o.weight,
            b: o.size,
        };
        self.push(&mut shared, e);
        drop(shared);
        self.handed_over(started);
    }

    fn lock_waited(&self, jni: &Jni, w: &LockWaited<'_>) {
        let Some(host) = self.recording() else {
            return;
        };
        let started = self.hand_over();
        let hash = host.jvmti.object_hash_code(w.object).unwrap_or(0);
        let now = crate::clock::now_ns();
        let mut shared = self.shared.lock();
        let stack = intern(&mut shared, host.jvmti, jni, w.frames, w.depth);
        let class = shared.tables.class(w.class);
        let e = Event {
            kind: if w.parked { Kind::Park } else { Kind::Monitor },
            state: 0,
            thread: w.thread.0 + 1,
            time: now.saturating_sub(w.waited),
            stack,
            class,
            a: w.waited,
            b: hash as u32 as u64,
        };
        self.push(&mut shared, e);
        drop(shared);
        self.handed_over(started);
    }
}

/// The recording's id of the stack `frames` (see [`super::tables::Tables::stack`]).
fn intern(shared: &mut Shared, jvmti: Jvmti, jni: &Jni, frames: Frames<'_>, depth: u32) -> u32 {
    match frames {
        Frames::Jvmti(f) => shared.tables.stack(jvmti, jni, f, depth),
        Frames::Async(f) => shared.tables.stack(jvmti, jni, f, depth),
    }
}

impl Lifetime {
    /// Queues `count` samples of `thread` on `stack`, `hits` of them with
    /// the thread running (`jdk.ExecutionSample`), the others as wall-clock
    /// samples in the thread's state.
    fn samples(
        &self,
        shared: &mut Shared,
        thread: ThreadId,
        stack: u32,
        state: i32,
        (count, hits): (u64, u64),
    ) {
        let time = crate::clock::now_ns();
        let mut e = Event {
            kind: Kind::Execution,
            state: st::RUNNABLE as u8,
            thread: thread.0 + 1,
            time,
            stack,
            class: 0,
            a: hits,
            b: 0,
        };
        if hits > 0 {
            self.push(shared, e);
        }
        if count > hits {
            e.kind = Kind::Wall;
            e.state = state_key(state) as u8;
            e.a = count - hits;
            self.push(shared, e);
        }
    }
}

/// The JFR thread state of a thread found not running in JVMTI state
/// `state` (a RUNNABLE thread that did not run, as async-profiler says of
/// a thread off the CPU, is sleeping).
fn state_key(state: i32) -> u64 {
    use crate::vm::sys::*;
    let has = |bit: i32| state & bit != 0;
    if state & JVMTI_THREAD_STATE_ALIVE == 0 {
        return if has(JVMTI_THREAD_STATE_TERMINATED) {
            st::TERMINATED
        } else {
            st::NEW
        };
    }
    let timed = has(JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT);
    if has(JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER) {
        st::BLOCKED_ON_MONITOR_ENTER
    } else if has(JVMTI_THREAD_STATE_IN_OBJECT_WAIT) {
        if timed {
            st::IN_OBJECT_WAIT_TIMED
        } else {
            st::IN_OBJECT_WAIT
        }
    } else if has(JVMTI_THREAD_STATE_PARKED) {
        if timed {
            st::PARKED_TIMED
        } else {
            st::PARKED
        }
    } else {
        // Thread.sleep, a RUNNABLE thread that did not run, or a wait of the
        // VM's own.
        st::SLEEPING
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::sys::*;

    #[test]
    fn states() {
        let alive = JVMTI_THREAD_STATE_ALIVE;
        let waiting = alive | JVMTI_THREAD_STATE_WAITING;
        assert_eq!(
            state_key(
                waiting | JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT | JVMTI_THREAD_STATE_SLEEPING
            ),
            st::SLEEPING
        );
        assert_eq!(
            state_key(
                waiting | JVMTI_THREAD_STATE_WAITING_INDEFINITELY | JVMTI_THREAD_STATE_PARKED
            ),
            st::PARKED
        );
        assert_eq!(
            state_key(
                waiting
                    | JVMTI_THREAD_STATE_WAITING_WITH_TIMEOUT
                    | JVMTI_THREAD_STATE_IN_OBJECT_WAIT
            ),
            st::IN_OBJECT_WAIT_TIMED
        );
        assert_eq!(
            state_key(alive | JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER),
            st::BLOCKED_ON_MONITOR_ENTER
        );
        assert_eq!(state_key(alive | JVMTI_THREAD_STATE_RUNNABLE), st::SLEEPING);
        assert_eq!(state_key(JVMTI_THREAD_STATE_TERMINATED), st::TERMINATED);
    }
}
