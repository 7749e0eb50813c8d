//! HPROF's MONITOR DUMP, taken at a snapshot: every Java thread's state
//! (R runnable, S suspended, CW waiting for a condition — `Object.wait`,
//! parked, sleeping —, MW waiting to enter a monitor) with its stack, every
//! monitor a thread owns or waits for with its owner, entry count and the
//! threads waiting to enter it and to be notified, and each cycle of
//! threads waiting for monitors or locks the next one owns (a deadlock).
//!
//! `java.util.concurrent` locks too: a parked thread whose `parkBlocker`
//! (what `LockSupport.park(Object)` sets) is an AbstractOwnableSynchronizer
//! waits for that lock, owned by its `getExclusiveOwnerThread()` (none for
//! a shared one: a Semaphore, a read lock).
//!
//! The threads are not stopped while the dump is taken, so a thread that
//! moves on meanwhile may be seen in two places; a deadlock does not move.

use crate::host::Host;
use crate::methods::MethodNames;
use crate::model::{DumpMonitor, DumpThread, MonitorDump};
use crate::threads::Identity;
use crate::vm::sys::{
    JvmtiFrameInfo, JVMTI_THREAD_STATE_ALIVE, JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER,
    JVMTI_THREAD_STATE_PARKED, JVMTI_THREAD_STATE_SUSPENDED, JVMTI_THREAD_STATE_WAITING,
};
use crate::vm::{jthread, Jni, MAX_LOCAL_FRAME};
use jni_sys::jobject;

/// The most frames kept of a thread's stack in the dump.
const DUMP_DEPTH: usize = 64;

/// Takes the dump (on an agent thread, with its JNI environment).
pub fn take(host: &Host, jni: &Jni, depth: usize) -> MonitorDump {
    jni.with_local_frame(MAX_LOCAL_FRAME, || take_in_frame(host, jni, depth))
}

fn take_in_frame(host: &Host, jni: &Jni, depth: usize) -> MonitorDump {
    let jvmti = host.jvmti;
    let mut dump = MonitorDump::default();
    let Ok(all) = jvmti.all_threads() else {
        return dump;
    };
    let id_of = |t: jthread| match host.threads.identify(jvmti, jni, t, 0) {
        Some(Identity::Java(id)) => Some(id.0 + 1),
        _ => None,
    };
    let mut names = MethodNames::default();
    let mut buf = vec![
        JvmtiFrameInfo {
            method: std::ptr::null_mut(),
            location: 0,
        };
        depth.clamp(1, DUMP_DEPTH)
    ];
    // Monitors and locks as local references, each once.
    let mut objects: Vec<jobject> = Vec::new();
    let mut index = |o: jobject| match objects.iter().position(|&m| jni.is_same_object(m, o)) {
        Some(i) => i,
        None => {
            objects.push(o);
            objects.len() - 1
        }
    };
    // The java.util.concurrent locks among them: (index, owner).
    let mut locks: Vec<(usize, Option<u32>)> = Vec::new();
    for t in all {
        let Some(id) = id_of(t) else {
            continue; // the agent's own threads
        };
        let state = jvmti.thread_state(t).unwrap_or(0);
        if state & JVMTI_THREAD_STATE_ALIVE == 0 {
            continue;
        }
        let name = jvmti
            .thread_info(jni, t)
            .map(|i| i.name)
            .unwrap_or_default();
        let frames = jvmti
            .stack_trace(t, &mut buf)
            .map(|fr| {
                fr.iter()
                    .map(|f| {
                        let n = names.frame_name(jvmti, jni, f.method, f.location == -1);
                        names.get(n).to_owned()
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut waits_for = jvmti
            .current_contended_monitor(t)
            .ok()
            .flatten()
            .map(&mut index);
        if waits_for.is_none() && state & JVMTI_THREAD_STATE_PARKED != 0 {
            if let Some((lock, owner)) = parked_for(jni, t) {
                let i = index(lock);
                if !locks.iter().any(|l| l.0 == i) {
                    locks.push((i, owner.and_then(id_of)));
                }
                waits_for = Some(i);
            }
        }
        for (m, _) in jvmti.owned_monitors(t).unwrap_or_default() {
            index(m);
        }
        dump.threads.push(DumpThread {
            id,
            name,
            state: state_letters(state),
            frames,
            waits_for,
        });
    }
    for (i, &o) in objects.iter().enumerate() {
        let class = jni.object_class(o);
        let sig = jvmti.class_signature(class);
        jni.delete_local_ref(class);
        let class = sig.map(|s| super::class_name(&s)).unwrap_or_default();
        let hash = jvmti.object_hash_code(o).ok();
        if let Some(&(_, owner)) = locks.iter().find(|l| l.0 == i) {
            let waiting = dump
                .threads
                .iter()
                .filter(|t| t.waits_for == Some(i))
                .map(|t| t.id)
                .collect();
            dump.monitors.push(DumpMonitor {
                lock: true,
                class,
                hash,
                owner,
                entry_count: 0,
                waiting,
                notify: Vec::new(),
            });
            continue;
        }
        let usage = jvmti.monitor_usage(o).ok();
        let ids = |v: &[jthread]| v.iter().filter_map(|&t| id_of(t)).collect::<Vec<_>>();
        let notify = usage
            .as_ref()
            .map_or(Vec::new(), |u| ids(&u.notify_waiters));
        // Before JDK 23 `waiters` also lists the threads in Object.wait.
        let mut waiting = usage.as_ref().map_or(Vec::new(), |u| ids(&u.waiters));
        waiting.retain(|t| !notify.contains(t));
        dump.monitors.push(DumpMonitor {
            lock: false,
            class,
            hash,
            owner: usage.as_ref().and_then(|u| u.owner).and_then(id_of),
            entry_count: usage.as_ref().map_or(0, |u| u.entry_count),
            waiting,
            notify,
        });
    }
    dump.deadlocks = cycles(&dump);
    dump
}

/// The lock a parked thread waits for (its `parkBlocker`, when that is an
/// AbstractOwnableSynchronizer) and the lock's exclusive owner, if any.
fn parked_for(jni: &Jni, thread: jthread) -> Option<(jobject, Option<jthread>)> {
    let blocker = jni
        .object_field(
            thread,
            "java/lang/Thread",
            "parkBlocker",
            "Ljava/lang/Object;",
        )
        .ok()
        .filter(|b| !b.is_null())?;
    let owner = jni
        .call_object(
            blocker,
            "java/util/concurrent/locks/AbstractOwnableSynchronizer",
            "getExclusiveOwnerThread",
            "()Ljava/lang/Thread;",
        )
        .ok()?;
    Some((blocker, (!owner.is_null()).then_some(owner)))
}

/// HPROF's letters for a JVMTI thread state.
fn state_letters(state: i32) -> &'static str {
    if state & JVMTI_THREAD_STATE_SUSPENDED != 0 {
        "S"
    } else if state & JVMTI_THREAD_STATE_BLOCKED_ON_MONITOR_ENTER != 0 {
        "MW"
    } else if state & JVMTI_THREAD_STATE_WAITING != 0 {
        "CW"
    } else {
        "R"
    }
}

/// Cycles of threads each waiting to enter a monitor the next one owns.
fn cycles(dump: &MonitorDump) -> Vec<Vec<u32>> {
    // Each MW thread waits for at most one owner: a functional graph.
    let next = |id: u32| -> Option<u32> {
        let t = dump.threads.iter().find(|t| t.id == id)?;
        let m = dump.monitors.get(t.waits_for?)?;
        // A thread in Object.wait names its monitor too: that is no wait
        // for its owner.
        if t.state != "MW" && !m.lock {
            return None;
        }
        m.owner.filter(|&o| o != id)
    };
    waits_for_cycles(dump.threads.iter().map(|t| t.id), next)
}

/// The cycles of the graph `next` over `ids`, each once, starting at its
/// smallest id.
fn waits_for_cycles(
    ids: impl Iterator<Item = u32>,
    next: impl Fn(u32) -> Option<u32>,
) -> Vec<Vec<u32>> {
    let mut found: Vec<Vec<u32>> = Vec::new();
    for start in ids {
        let mut path = vec![start];
        let mut at = start;
        while let Some(n) = next(at) {
            if let Some(pos) = path.iter().position(|&p| p == n) {
                let mut cycle = path[pos..].to_vec();
                let min = cycle
                    .iter()
                    .enumerate()
                    .min_by_key(|(_, &v)| v)
                    .map_or(0, |(i, _)| i);
                cycle.rotate_left(min);
                if !found.contains(&cycle) {
                    found.push(cycle);
                }
                break;
            }
            path.push(n);
            at = n;
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::waits_for_cycles;

    #[test]
    fn cycles_are_found_once_from_their_smallest_id() {
        // 1 -> 2 -> 1 (deadlock), 3 -> 1 (waits on the cycle), 4 -> 5 -> 6 -> 4.
        let next = |id: u32| match id {
            1 => Some(2),
            2 => Some(1),
            3 => Some(1),
            4 => Some(5),
            5 => Some(6),
            6 => Some(4),
            _ => None,
        };
        assert_eq!(
            waits_for_cycles(1..=7, next),
            vec![vec![1, 2], vec![4, 5, 6]]
        );
        assert!(waits_for_cycles(1..=3, |i| (i < 3).then_some(i + 1)).is_empty());
    }
}
