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
//! ends it. This file finds those events and turns them on and off.
//!
//! The events need `can_support_virtual_threads` (`vthreads=on`, the
//! default), which HotSpot 21 and 25 grant at start-up and after a late
//! attach alike (tests/virtual_threads/ checks both); where a JVM
//! refuses it, virtual threads share their carriers' records, as before.
//!
//! The mount and unmount events cost on every switch, so they are on only
//! while a mode that keeps such state runs: the first such mode to start
//! turns them on ([`Support::follow`]), the last to stop turns them off
//! ([`Support::unfollow`]). A carrier may then still point at the record
//! of a virtual thread it ran (its unmount no longer comes): the
//! following's generation, which every redirect is stamped with and every
//! lookup checks, makes such a pointer dead the moment following stops
//! (`per_thread::start_following`, `stop_following` say why that is safe).
//! `VirtualThreadEnd` stays on once turned on: a virtual thread that ends
//! while nothing follows still frees its record, and the thread table still
//! counts it out of its group; it costs once per virtual thread, not per
//! switch. The capability is kept too: relinquishing it would not make
//! HotSpot's switches cheaper (see docs/VIRTUAL_THREADS.md, "Cost").
//!
//! Virtual threads are counted in groups, not one by one (`threads`).

use crate::error::AgentError;
use crate::vm::sys::EventVirtualThread;
use crate::vm::{Jvmti, JvmtiEvent};
use jni_sys::jint;
use parking_lot::Mutex;
use std::collections::BTreeSet;

/// HotSpot's extension events, as found when the agent was created.
pub struct Support {
    mount: jint,
    unmount: jint,
    state: Mutex<Following>,
}

/// Who follows virtual threads now, and what was turned on for them.
#[derive(Default)]
struct Following {
    /// The running modes that need the events, by name: a mode that starts
    /// twice (a resume) or stops without having started counts once.
    modes: BTreeSet<&'static str>,
    /// The outcome of the first try to set the callbacks and turn
    /// VirtualThreadEnd on (kept: later calls answer the same).
    set_up: Option<Result<(), AgentError>>,
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
            state: Mutex::new(Following::default()),
        })
    }

    /// `mode` follows virtual threads from now on: the events go on if no
    /// other mode had them on.
    pub fn follow(
        &self,
        jvmti: Jvmti,
        callbacks: Callbacks,
        mode: &'static str,
    ) -> Result<(), AgentError> {
        let mut state = self.state.lock();
        let set_up = state
            .set_up
            .get_or_insert_with(|| {
                jvmti
                    .set_event_enabled(JvmtiEvent::VIRTUAL_THREAD_END, true)
                    .map_err(|e| AgentError::jvmti(jvmti, "SetEventNotificationMode", e))
            })
            .clone();
        set_up.map_err(unsupported)?;
        if !state.modes.is_empty() {
            state.modes.insert(mode);
            return Ok(());
        }
        // The generation first: a mount posted from now on may redirect.
        crate::per_thread::start_following(jvmti);
        if let Err(e) = self.switch(jvmti, Some(callbacks)) {
            crate::per_thread::stop_following();
            let _ = self.switch(jvmti, None);
            return Err(unsupported(e));
        }
        state.modes.insert(mode);
        Ok(())
    }

    /// `mode` stopped: the events go off if it was the last that needed
    /// them.
    pub fn unfollow(&self, jvmti: Jvmti, mode: &'static str) -> Result<(), AgentError> {
        let mut state = self.state.lock();
        if !state.modes.remove(mode) || !state.modes.is_empty() {
            return Ok(());
        }
        // The generation first: from here on no carrier uses a record a
        // mount pointed it at, whether or not its unmount is still posted.
        crate::per_thread::stop_following();
        self.switch(jvmti, None).map_err(unsupported)
    }

    /// Are the events on (some mode follows virtual threads)?
    pub fn following(&self) -> bool {
        !self.state.lock().modes.is_empty()
    }

    /// Whether virtual threads are followed now, and the mounts seen so
    /// far, for `status`.
    pub fn status(&self) -> String {
        format!(
            "virtual threads {}, {} mounts seen",
            if self.following() {
                "followed"
            } else {
                "not followed"
            },
            crate::per_thread::mounts_seen()
        )
    }

    /// Turns the mount and unmount events on (with `callbacks`) or off.
    fn switch(&self, jvmti: Jvmti, callbacks: Option<Callbacks>) -> Result<(), AgentError> {
        let events = [
            (self.mount, callbacks.map(|c| c.mount)),
            (self.unmount, callbacks.map(|c| c.unmount)),
        ];
        for (index, callback) in events {
            let on = callback.is_some();
            if !on {
                jvmti
                    .set_event_enabled(JvmtiEvent(index as u32), false)
                    .map_err(|e| AgentError::jvmti(jvmti, "SetEventNotificationMode", e))?;
            }
            // SAFETY: the indices are HotSpot's VirtualThreadMount and
            // VirtualThreadUnmount, posted with (env, JNIEnv, thread);
            // the callbacks are the FFI edge's, written for them (none:
            // the event is not posted to this environment any more).
            unsafe { jvmti.set_extension_event_callback(index, callback) }
                .map_err(|e| AgentError::jvmti(jvmti, "SetExtensionEventCallback", e))?;
            if on {
                jvmti
                    .set_event_enabled(JvmtiEvent(index as u32), true)
                    .map_err(|e| AgentError::jvmti(jvmti, "SetEventNotificationMode", e))?;
            }
        }
        Ok(())
    }
}

fn unsupported(e: AgentError) -> AgentError {
    AgentError::Unsupported(format!(
        "virtual threads cannot be followed across carriers: {e}"
    ))
}
