//! Threads: the live ones, their names, states and CPU time, their stacks,
//! the agent's value stored per thread, and agent threads started.

use super::{check, Jvmti, JvmtiBuf, Result};
use crate::vm::sys::{
    jthread, jthreadGroup, JvmtiEnv, JvmtiError, JvmtiFrameInfo, JvmtiThreadGroupInfo,
    JvmtiThreadInfo,
};
use jni_sys::{jint, jlong, JNIEnv};
use std::ffi::c_void;

pub struct ThreadInfo {
    pub name: String,
}

impl Jvmti {
    /// Every live Java thread, as local references.
    pub fn all_threads(&self) -> Result<Vec<jthread>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        // SAFETY: out-pointers to two live locals.
        check(unsafe { jvmti_call!(self, GetAllThreads, &mut count, &mut ptr) })?;
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        };
        Ok(buf.as_slice().to_vec())
    }

    /// The calling thread, as a local reference.
    pub fn current_thread(&self) -> Result<jthread> {
        let mut t = std::ptr::null_mut();
        // SAFETY: a live out-pointer.
        check(unsafe { jvmti_call!(self, GetCurrentThread, &mut t) })?;
        Ok(t)
    }

    /// The name of a thread. The local references the VM returns (thread
    /// group, context loader) are released through `jni`.
    pub fn thread_info(&self, jni: &crate::vm::Jni, thread: jthread) -> Result<ThreadInfo> {
        let (name, group) = self.name_and_group(jni, thread)?;
        jni.delete_local_ref(group);
        Ok(ThreadInfo { name })
    }

    /// The name of `thread`'s thread group; `None` when it has none (it
    /// ended). Asks the VM alone: no Java code runs.
    pub fn thread_group_name(
        &self,
        jni: &crate::vm::Jni,
        thread: jthread,
    ) -> Result<Option<String>> {
        let (_, group) = self.name_and_group(jni, thread)?;
        if group.is_null() {
            return Ok(None);
        }
        // SAFETY: all-zero is a valid JvmtiThreadGroupInfo.
        let mut g: JvmtiThreadGroupInfo = unsafe { std::mem::zeroed() };
        // SAFETY: `group` is the live local reference GetThreadInfo gave;
        // `g` is a live, writable jvmtiThreadGroupInfo.
        let rc = check(unsafe { jvmti_call!(self, GetThreadGroupInfo, group, &mut g) });
        jni.delete_local_ref(group);
        rc?;
        jni.delete_local_ref(g.parent);
        // SAFETY: GetThreadGroupInfo allocated the name for us.
        Ok(Some(unsafe { self.take_string(g.name) }))
    }

    /// GetThreadInfo: the thread's name, and its thread group as a local
    /// reference (null when it ended) for the caller to release; the
    /// context loader's reference is released here.
    fn name_and_group(
        &self,
        jni: &crate::vm::Jni,
        thread: jthread,
    ) -> Result<(String, jthreadGroup)> {
        // SAFETY: all-zero is a valid JvmtiThreadInfo (null pointers, zero ints).
        let mut info: JvmtiThreadInfo = unsafe { std::mem::zeroed() };
        // SAFETY: a thread reference (the `vm` convention); `info` is a live,
        // writable jvmtiThreadInfo.
        check(unsafe { jvmti_call!(self, GetThreadInfo, thread, &mut info) })?;
        jni.delete_local_ref(info.context_class_loader);
        // SAFETY: GetThreadInfo allocated the name for us.
        let name = unsafe { self.take_string(info.name) };
        Ok((name, info.thread_group))
    }

    /// JVMTI thread state bits (`JVMTI_THREAD_STATE_*`).
    pub fn thread_state(&self, thread: jthread) -> Result<jint> {
        let mut state = 0;
        // SAFETY: a thread reference (the `vm` convention); a live out-pointer.
        check(unsafe { jvmti_call!(self, GetThreadState, thread, &mut state) })?;
        Ok(state)
    }

    pub fn thread_cpu_time(&self, thread: jthread) -> Result<jlong> {
        let mut t = 0;
        // SAFETY: a thread reference or null (the `vm` convention); a live out-pointer.
        check(unsafe { jvmti_call!(self, GetThreadCpuTime, thread, &mut t) })?;
        Ok(t)
    }

    /// `thread`'s stack, top frame first, into `buf` (its length is the maximum
    /// depth); returns the frames written. For another thread, HotSpot 15+
    /// takes it in a handshake with that thread alone, not a global safepoint.
    pub fn stack_trace<'a>(
        &self,
        thread: jthread,
        buf: &'a mut [JvmtiFrameInfo],
    ) -> Result<&'a [JvmtiFrameInfo]> {
        let mut count = 0;
        let max = buf.len().min(jint::MAX as usize) as jint;
        // SAFETY: `buf` holds `max` frames (max <= buf.len()); out-pointer to a live count.
        check(unsafe {
            jvmti_call!(
                self,
                GetStackTrace,
                thread,
                0,
                max,
                buf.as_mut_ptr(),
                &mut count
            )
        })?;
        Ok(&buf[..(count.max(0) as usize).min(buf.len())])
    }

    /// The calling thread's own stack, as [`Jvmti::stack_trace`]: a null
    /// thread asks for the current one, so HotSpot skips resolving a thread
    /// reference and searching the thread list for it (~30 ns of a
    /// ~1.5 µs walk, measured in `alloc`'s event).
    pub fn own_stack_trace<'a>(
        &self,
        buf: &'a mut [JvmtiFrameInfo],
    ) -> Result<&'a [JvmtiFrameInfo]> {
        self.stack_trace(std::ptr::null_mut(), buf)
    }

    /// The value the agent stored for the calling thread (JVMTI thread-local
    /// storage, null if none). On a carrier running a virtual thread this
    /// is the virtual thread's: HotSpot binds a mounted virtual thread's
    /// JVMTI state to its carrier, and reads it without a VM transition.
    pub fn current_thread_local(&self) -> *mut c_void {
        let mut p = std::ptr::null_mut();
        // SAFETY: a null thread means the calling one; a live out-pointer.
        let err = unsafe {
            jvmti_call!(
                self,
                GetThreadLocalStorage,
                std::ptr::null_mut::<jni_sys::_jobject>(),
                &mut p
            )
        };
        if err == JvmtiError::NONE {
            p
        } else {
            std::ptr::null_mut()
        }
    }

    /// Stores `value` for the calling thread (a mounted virtual thread's
    /// own, on a carrier); the VM only keeps the pointer.
    pub fn set_current_thread_local(&self, value: *const c_void) -> Result<()> {
        // SAFETY: a null thread means the calling one; the VM never reads
        // through `value`.
        check(unsafe {
            jvmti_call!(
                self,
                SetThreadLocalStorage,
                std::ptr::null_mut::<jni_sys::_jobject>(),
                value
            )
        })
    }

    /// Starts `thread` (a `java.lang.Thread` the caller created) running `proc`
    /// as a JVMTI agent thread.
    ///
    /// # Safety
    /// `proc` must be sound to call on the new thread with this environment,
    /// that thread's JNIEnv and `arg`.
    pub(in crate::vm) unsafe fn run_agent_thread(
        &self,
        thread: jthread,
        proc: unsafe extern "C" fn(*mut JvmtiEnv, *mut JNIEnv, *mut c_void),
        arg: *const c_void,
        priority: jint,
    ) -> Result<()> {
        // SAFETY: a new, unstarted Thread; `proc` is sound to call with `arg`
        // on the new thread (the caller's promise).
        check(unsafe { jvmti_call!(self, RunAgentThread, thread, Some(proc), arg, priority) })
    }
}
