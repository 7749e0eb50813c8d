//! `java.util.concurrent` locks: time parked on the way to acquiring one.
//! The agent's rewriter puts `Probe.parkEnter(blocker)` at the entry of
//! `LockSupport.park(Object)` and `parkNanos(Object, long)` and
//! `Probe.parkExit(blocker)` before they return; the probe calls the
//! natives below only when the blocker is an `AbstractOwnableSynchronizer`
//! (the `Sync` of a ReentrantLock, ReentrantReadWriteLock, Semaphore, …).
//! `Condition.await` parks with its ConditionObject, which is not one: it
//! waits for a condition, not for a lock, and is left out; so is
//! `CountDownLatch.await` (its `Sync` is one, told apart by its class).
//!
//! Each park is one wait: an acquisition that parks twice (woken, then
//! beaten to the lock by a thread that barged in) counts twice, its time
//! once in all.

use super::Lifetime;
use crate::vm::{Jni, Native};
use jni_sys::{jclass, jobject, JNIEnv};
use std::sync::atomic::Ordering::Relaxed;

/// The probe natives: (name, descriptor, function) for RegisterNatives.
pub fn natives() -> [Native; 2] {
    [
        ("parking", "(Ljava/lang/Object;)V", parking as *mut _),
        ("parked", "(Ljava/lang/Object;)V", parked as *mut _),
    ]
}

/// A thread is about to park for a lock.
extern "system" fn parking(env: *mut JNIEnv, _class: jclass, blocker: jobject) {
    crate::vm::guard("lock park probe", (), || {
        let Some(host) = crate::host::get() else {
            return;
        };
        let life = host.state::<Lifetime>();
        if life.current().is_some_and(|r| r.active.load(Relaxed)) {
            super::on_thread(|mine| mine.park_ns.set(crate::clock::now_ns().max(1)));
            // SAFETY: the JNIEnv the VM passed to this native method, on this thread.
            let jni = unsafe { Jni::from_raw(env) };
            super::publish_wait(host, &jni, blocker, false);
        }
    })
}

/// The thread is back from parking for the lock whose synchronizer is
/// `blocker`.
extern "system" fn parked(env: *mut JNIEnv, _class: jclass, blocker: jobject) {
    // SAFETY: the JNIEnv the VM passed to this native method, on this thread.
    let jni = unsafe { Jni::from_raw(env) };
    crate::vm::guard("lock park probe", (), || {
        let since = super::on_thread(|mine| mine.park_ns.replace(0)).unwrap_or(0);
        if since == 0 {
            return; // parked before the session started
        }
        let waited = crate::clock::now_ns().saturating_sub(since);
        let Some(host) = crate::host::get() else {
            return;
        };
        let life = host.state::<Lifetime>();
        let Some(r) = life.current().filter(|r| r.active.load(Relaxed)) else {
            return;
        };
        let Ok(thread) = host.jvmti.current_thread() else {
            return;
        };
        if host.thread_id(&jni, thread).is_some() {
            super::publish_wait(host, &jni, blocker, true);
            r.waited(host, &jni, (thread, blocker), waited, true);
        }
        jni.delete_local_ref(thread);
    })
}
