//! Virtual threads (JDK 21+) in the modes that keep state per thread.
//!
//! A virtual thread runs on a carrier (an OS thread) until it waits —
//! I/O, `sleep`, a lock — and then unmounts; it resumes on any carrier.
//! What a mode keeps per thread (open calls, a wait's start) must go with
//! it, or a call that waits would close on another thread's state. The
//! thread's record (`per_thread`) is what travels: HotSpot's
//! `VirtualThreadMount` and `VirtualThreadUnmount` extension events (posted
//! on the carrier, the virtual thread mounted) point the carrier's record
//! pointer at the virtual thread's record and back
//! (`per_thread::mounted`, `per_thread::unmounting`), and `VirtualThreadEnd`
//! ends it. This file finds those events and turns them on.
//!
//! The events need `can_support_virtual_threads` (`vthreads=on`, the
//! default), which HotSpot 21 and 25 grant at start-up and after a late
//! attach alike (tests/virtual_threads.rs checks both); where a JVM
//! refuses it, virtual threads share their carriers' records, as before.
//! They are turned on by the first mode that keeps such state, as it
//! starts (`Host::follow_virtual_threads`), and stay on for the JVM's life,
//! like the probes (turning them off could leave a carrier pointing at a
//! record that moved on). Their cost per mount or unmount is in
//! docs/VIRTUAL_THREADS.md.
//!
//! Virtual threads are counted in groups, not one by one (`threads`).

use crate::error::AgentError;
use crate::vm::sys::EventVirtualThread;
use crate::vm::{Jvmti, JvmtiEvent};
use jni_sys::jint;
use std::sync::OnceLock;

/// HotSpot's extension events, as found when the agent was created.
pub struct Support {
    mount: jint,
    unmount: jint,
    /// Set once the events are on (the first session that needs them).
    following: OnceLock<Result<(), AgentError>>,
}

/// The functions of the FFI edge the events call.
#[derive(Clone, Copy)]
pub struct Callbacks {
    pub mount: EventVirtualThread,
    pub unmount: EventVirtualThread,
}

impl Support {
    /// The mount and unmount events, if this JVM has them and granted
    /// `can_support_virtual_threads` (JDK 21+, `vthreads=on`).
    pub fn find(jvmti: Jvmti) -> Option<Support> {
        Some(Support {
            mount: jvmti.extension_event("com.sun.hotspot.events.VirtualThreadMount")?,
            unmount: jvmti.extension_event("com.sun.hotspot.events.VirtualThreadUnmount")?,
            following: OnceLock::new(),
        })
    }

    /// Follows virtual threads from now on (once per JVM; later calls
    /// answer the first one's outcome).
    pub fn follow(&self, jvmti: Jvmti, callbacks: Callbacks) -> Result<(), AgentError> {
        self.following
            .get_or_init(|| {
                let events = [
                    (self.mount, Some(callbacks.mount)),
                    (self.unmount, Some(callbacks.unmount)),
                ];
                for (index, callback) in events {
                    // SAFETY: the indices are HotSpot's VirtualThreadMount and
                    // VirtualThreadUnmount, posted with (env, JNIEnv, thread);
                    // the callbacks are the FFI edge's, written for them.
                    unsafe { jvmti.set_extension_event_callback(index, callback) }
                        .map_err(|e| AgentError::jvmti(jvmti, "SetExtensionEventCallback", e))?;
                }
                for event in [
                    JvmtiEvent(self.mount as u32),
                    JvmtiEvent(self.unmount as u32),
                    JvmtiEvent::VIRTUAL_THREAD_END,
                ] {
                    jvmti
                        .set_event_enabled(event, true)
                        .map_err(|e| AgentError::jvmti(jvmti, "SetEventNotificationMode", e))?;
                }
                Ok(())
            })
            .clone()
            .map_err(|e| {
                AgentError::Unsupported(format!(
                    "virtual threads cannot be followed across carriers: {e}"
                ))
            })
    }
}
