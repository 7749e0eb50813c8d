//! What the modes hand to a running recording, each where it folds an event
//! into its own tree: `sampling` its samples (a stack, a synthetic frame, or
//! the thread's last stack again), `alloc` its sampled objects, `lock` its
//! waits. Each returns at once when no recording runs (one load).

use super::{recording, Event, Kind};
use crate::sampler::Frame;
use crate::threads::ThreadId;
use crate::vm::{Jni, Jvmti};
use profrj_jfr::schema::thread_state as st;

/// Is a recording running? (For callers that must do work to call a hook.)
pub fn on() -> bool {
    recording().is_some()
}

/// `count` samples of `thread`, `hits` of them with the thread running, on
/// the stack `frames` (top first, deeper than `depth`: truncated);
/// `state`: the thread's JVMTI state.
#[allow(clippy::too_many_arguments)]
pub fn sample<F: Frame>(
    (jvmti, jni): (Jvmti, &Jni),
    thread: ThreadId,
    frames: &[F],
    depth: u32,
    state: i32,
    count: u64,
    hits: u64,
) {
    let Some(life) = recording() else {
        return;
    };
    let started = life.hand_over();
    let mut shared = life.shared.lock();
    let stack = shared.tables.stack(jvmti, jni, frames, depth);
    shared.last_stack.insert(thread.0, stack);
    samples(life, &mut shared, thread, stack, state, (count, hits));
    drop(shared);
    life.handed_over(started);
}

/// Samples on a one-frame synthetic stack (`[GC_active]`, …: a walk that
/// failed).
pub fn synthetic(thread: ThreadId, name: &'static str, state: i32, count: u64, hits: u64) {
    let Some(life) = recording() else {
        return;
    };
    let started = life.hand_over();
    let mut shared = life.shared.lock();
    let stack = shared.tables.synthetic_stack(name);
    shared.last_stack.insert(thread.0, stack);
    samples(life, &mut shared, thread, stack, state, (count, hits));
    drop(shared);
    life.handed_over(started);
}

/// Samples on the thread's last stack (it has not run since).
pub fn repeat(thread: ThreadId, state: i32, count: u64, hits: u64) {
    let Some(life) = recording() else {
        return;
    };
    let started = life.hand_over();
    let mut shared = life.shared.lock();
    let stack = shared.last_stack.get(&thread.0).copied().unwrap_or(0);
    samples(life, &mut shared, thread, stack, state, (count, hits));
    drop(shared);
    life.handed_over(started);
}

fn samples(
    life: &super::Lifetime,
    shared: &mut super::Shared,
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
        life.push(shared, e);
    }
    if count > hits {
        e.kind = Kind::Wall;
        e.state = state_key(state) as u8;
        e.a = count - hits;
        life.push(shared, e);
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

/// `alloc` sampled an object of `size` bytes of class `class` (as Java
/// writes it), standing for `weight` bytes, on the allocating thread.
pub fn allocation<F: Frame>(
    (jvmti, jni): (Jvmti, &Jni),
    thread: ThreadId,
    frames: &[F],
    depth: u32,
    class: &str,
    (size, weight): (u64, u64),
) {
    let Some(life) = recording() else {
        return;
    };
    let started = life.hand_over();
    let time = crate::clock::now_ns();
    let mut shared = life.shared.lock();
    let stack = shared.tables.stack(jvmti, jni, frames, depth);
    let class = shared.tables.class(class);
    let e = Event {
        kind: Kind::Allocation,
        state: 0,
        thread: thread.0 + 1,
        time,
        stack,
        class,
        a: weight,
        b: size,
    };
    life.push(&mut shared, e);
    drop(shared);
    life.handed_over(started);
}

/// `lock`: `thread` waited `waited` ns for the lock of an object of class
/// `class` (identity hash `hash`); `parked`: a `java.util.concurrent` lock.
#[allow(clippy::too_many_arguments)]
pub fn wait<F: Frame>(
    (jvmti, jni): (Jvmti, &Jni),
    thread: ThreadId,
    frames: &[F],
    depth: u32,
    class: &str,
    waited: u64,
    parked: bool,
    hash: i32,
) {
    let Some(life) = recording() else {
        return;
    };
    let started = life.hand_over();
    let now = crate::clock::now_ns();
    let mut shared = life.shared.lock();
    let stack = shared.tables.stack(jvmti, jni, frames, depth);
    let class = shared.tables.class(class);
    let e = Event {
        kind: if parked { Kind::Park } else { Kind::Monitor },
        state: 0,
        thread: thread.0 + 1,
        time: now.saturating_sub(waited),
        stack,
        class,
        a: waited,
        b: hash as u32 as u64,
    };
    life.push(&mut shared, e);
    drop(shared);
    life.handed_over(started);
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
