//! The session's heap dumps: the `heapdump` command, one with each snapshot
//! and one at exit (`heapdumps=`), each naming the allocation of every
//! object `memory` followed (`heap_dump`, the core's writer; the origins
//! come from the registry, which knows the mode that has them).

use super::{Reply, Sessions};
use crate::error::AgentError;
use crate::heap_dump::{self, Sources};
use crate::host::Host;
use crate::options::HeapDumps;
use crate::vm::sys::Capability;
use crate::vm::Jni;
use crate::vm::{Capabilities, JvmtiEvent};
use crate::{registry, snapshot};

impl Sessions {
    /// One heap dump now, as `heap` says (the `heapdump` command, or a
    /// session's own dumps).
    pub fn heap_dump(&self, jni: &Jni, heap: &HeapDumps) -> Reply {
        if self.vm_dead() {
            return Err(AgentError::Refused(
                "the JVM is shutting down; no heap dump can be written now".into(),
            ));
        }
        write_heap_dump(Some(self.host), jni, heap)
    }
}

/// JVMTI_RESOURCE_EXHAUSTED_OOM_ERROR: an OutOfMemoryError will be thrown.
const OOM_ERROR: i32 = 0x0001;

impl Sessions {
    /// ResourceExhausted: the first OutOfMemoryError's heap dump, if the
    /// session asks for one.
    pub fn resource_exhausted(&self, jni: &Jni, flags: i32) {
        let heap = (self.session.lock().as_ref())
            .filter(|s| s.options.heap.on_oom && s.stopped_ns.is_none())
            .map(|s| s.options.heap.clone());
        let Some(heap) = heap else {
            return;
        };
        if flags & OOM_ERROR == 0 || !heap_dump::claim_oom_dump() {
            return;
        }
        heap_dump::release_reserve(jni);
        match self.heap_dump(jni, &heap) {
            Ok(msg) => crate::log::info(&format!("OutOfMemoryError: {msg}")),
            Err(e) => crate::log::error(&format!("OutOfMemoryError: no heap dump: {e}")),
        }
    }

    /// What `heapdumps=oom` needs of the VM: its capability and event.
    pub(super) fn want_oom_events(
        &self,
        jni: &Jni,
        options: &crate::options::Options,
    ) -> Result<(), AgentError> {
        if !options.heap.on_oom {
            return Ok(());
        }
        heap_dump::prepare(jni)?;
        heap_dump::reserve_for_oom(jni);
        // JDK 17+ logs each ResourceExhausted it posts at error level, which
        // the default logging prints on stdout, the application's: that
        // output no longer shows jvmti's messages (`-Xlog` or `jcmd VM.log`
        // can show them again).
        if let Err(e) = jni.diagnostic_command("vmLog", &["output=stdout", "what=jvmti=off"]) {
            crate::log::warn(&format!(
                "heapdumps=oom: HotSpot will print a line on stdout at an OutOfMemoryError ({e})"
            ));
        }
        let jvmti = self.host.jvmti;
        let potential = jvmti
            .potential_capabilities()
            .map_err(|e| AgentError::jvmti(jvmti, "GetPotentialCapabilities", e))?;
        let mut caps = Capabilities::new(potential);
        if !caps.want(Capability::GenerateResourceExhaustionHeapEvents) {
            return Err(AgentError::Unsupported(
                "heapdumps=oom: this JVM cannot report an exhausted heap (JVMTI can_generate_resource_exhaustion_heap_events)".into(),
            ));
        }
        jvmti
            .add_capabilities(&caps.wanted())
            .map_err(|e| AgentError::jvmti(jvmti, "AddCapabilities", e))?;
        jvmti
            .set_event_enabled(JvmtiEvent::RESOURCE_EXHAUSTED, true)
            .map_err(|e| AgentError::jvmti(jvmti, "ResourceExhausted", e))
    }
}

/// A heap dump with `heap`'s options; `host`: the agent's (its allocation
/// origins), `None` when the agent is not running (every object keeps
/// HotSpot's empty trace, as in HotSpot's own dumps).
pub(crate) fn write_heap_dump(host: Option<&Host>, jni: &Jni, heap: &HeapDumps) -> Reply {
    let number = heap_dump::next_number();
    let path = snapshot::expand_path(
        &heap.template(),
        std::process::id(),
        snapshot::unix_now(),
        number,
    );
    let request = heap_dump::Request {
        path,
        all: heap.all,
        gz: heap.gz,
    };
    let sources = host.map(|host| Sources {
        origins: registry::heap_origins(host),
        host,
    });
    let written = heap_dump::write(jni, &request, sources)?;
    Ok(written.to_string())
}
