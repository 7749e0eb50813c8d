//! Monitors: the one a thread waits for, the ones it owns, and who owns and
//! waits on an object's monitor (the lock mode's dump).

use super::{check, Jvmti, JvmtiBuf, Result};
use crate::vm::sys::{jthread, JvmtiMonitorUsage};
use jni_sys::{jint, jobject};

/// What GetObjectMonitorUsage says of a monitor (threads as local references).
pub struct MonitorUsage {
    pub owner: Option<jthread>,
    pub entry_count: jint,
    /// Threads waiting to enter (or re-enter) it.
    pub waiters: Vec<jthread>,
    /// Threads in `Object.wait` on it.
    pub notify_waiters: Vec<jthread>,
}

impl Jvmti {
    /// The object whose monitor `thread` waits to enter (or to re-enter
    /// after `Object.wait`), as a local reference; `None` if none.
    pub fn current_contended_monitor(&self, thread: jthread) -> Result<Option<jobject>> {
        let mut monitor = std::ptr::null_mut();
        // SAFETY: a thread reference (the `vm` convention); a live out-pointer.
        check(unsafe { jvmti_call!(self, GetCurrentContendedMonitor, thread, &mut monitor) })?;
        Ok((!monitor.is_null()).then_some(monitor))
    }

    /// The monitors `thread` owns, as local references, each with the depth
    /// of the frame that entered it (-1: entered through JNI).
    pub fn owned_monitors(&self, thread: jthread) -> Result<Vec<(jobject, jint)>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        // SAFETY: a thread reference (the `vm` convention); out-pointers to
        // two live locals.
        check(unsafe {
            jvmti_call!(
                self,
                GetOwnedMonitorStackDepthInfo,
                thread,
                &mut count,
                &mut ptr
            )
        })?;
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        };
        Ok(buf
            .as_slice()
            .iter()
            .map(|m| (m.monitor, m.stack_depth))
            .collect())
    }

    /// Who owns `object`'s monitor, how many times, and the threads waiting
    /// to enter it and to be notified (local references).
    pub fn monitor_usage(&self, object: jobject) -> Result<MonitorUsage> {
        let mut u = JvmtiMonitorUsage {
            owner: std::ptr::null_mut(),
            entry_count: 0,
            waiter_count: 0,
            waiters: std::ptr::null_mut(),
            notify_waiter_count: 0,
            notify_waiters: std::ptr::null_mut(),
        };
        // SAFETY: an object reference (the `vm` convention); a live out-pointer.
        check(unsafe { jvmti_call!(self, GetObjectMonitorUsage, object, &mut u) })?;
        let waiters = JvmtiBuf {
            jvmti: *self,
            ptr: u.waiters,
            len: u.waiter_count.max(0) as usize,
        };
        let notify = JvmtiBuf {
            jvmti: *self,
            ptr: u.notify_waiters,
            len: u.notify_waiter_count.max(0) as usize,
        };
        Ok(MonitorUsage {
            owner: (!u.owner.is_null()).then_some(u.owner),
            entry_count: u.entry_count,
            waiters: waiters.as_slice().to_vec(),
            notify_waiters: notify.as_slice().to_vec(),
        })
    }
}
