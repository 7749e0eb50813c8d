//! `memory` as a [`Mode`]: how deaths are seen (weak references or tags) is
//! chosen when the first memory session opens; objects the VM or native code
//! makes are reported through VMObjectAlloc and the intercepted JNI table.

use super::{Counts, Lifetime, Mechanism};
use crate::error::AgentError;
use crate::events::Kind;
use crate::host::Host;
use crate::instrument::Probes;
use crate::log;
use crate::mode::{Capture, Cx, Mode, Registration};
use crate::model::Section;
use crate::options::{self, ModeOptions, Opt, Takes};
use crate::threads::ThreadRecord;
use crate::vm::sys::Capability;
use crate::vm::Capabilities;

/// `memory`: live and peak object counts per thread and class.
pub const REGISTRATION: Registration = Registration {
    name: "memory",
    options: ModeOptions {
        options: &[
            Opt {
                syntax: "memory",
                default: "",
                takes: Takes::Start,
                meaning: "live objects per allocating thread and class, and the most ever alive (the <memory> section)",
                read: Some(options::read_flag_value),
            },
            Opt {
                syntax: "tracker=auto|weak|tags",
                default: "auto",
                takes: Takes::Start,
                meaning: "memory: how object deaths are seen; weak: a JNI weak reference per object, checked after each GC (serial, parallel and G1 collectors, which clear them in their pauses; the cheapest, and the most ever alive exact at every GC); tags: JVMTI tags and ObjectFree (any collector); auto: weak where the collector allows, else tags. Fixed for the JVM's life by the first memory session",
                read: Some(|k, v| options::choice(k, v, &["auto", "weak", "tags"], "valid: auto, weak, tags")),
            },
        ],
        default_mode: false,
        records_others: false,
        check: ModeOptions::no_check,
    },
    open,
    natives: || super::natives().to_vec(),
    capabilities,
    probes: |_| Probes {
        memory: true,
        ..Probes::NONE
    },
};

/// The rewriter's, GC events (weak references), and VMObjectAlloc for
/// objects the VM makes for Java code (reflection, clone); without it those
/// go uncounted, said once.
fn capabilities(caps: &mut Capabilities) -> Result<(), AgentError> {
    crate::instrument::capabilities(caps)?;
    caps.want(Capability::GenerateGarbageCollectionEvents);
    if !caps.want(Capability::GenerateVmObjectAllocEvents) {
        crate::log::warn("memory: this JVM cannot report VM allocations (VMObjectAlloc); objects made by reflection, clone or JNI are not counted");
    }
    Ok(())
}

/// The session's view of the JVM-lifetime state its probes write.
struct Memory {
    host: &'static Host,
    life: &'static Lifetime,
}

fn open(cx: &Cx) -> Result<Box<dyn Mode>, AgentError> {
    let host = cx.host;
    let life = host.state::<Lifetime>();
    let tracking = &life.tracking;
    let tracker = super::mechanism::Tracker::of(cx.options);
    let mechanism = tracking.choose(host, cx.jni, tracker)?;
    host.events.subscribe(life, &super::KINDS);
    match mechanism {
        Mechanism::WeakRefs => {
            host.want(life, Kind::GcStart, true)?;
            host.want(life, Kind::GcFinish, true)?;
            tracking.start_thread(host, cx.jni, life)?;
        }
        Mechanism::Tags => {
            tracking.env(host)?;
        }
    }
    if let Err(e) = host.want(life, Kind::JniObjectAlloc, true) {
        log::warn(&format!(
            "memory: cannot intercept JNI ({e}); objects native code makes are not counted"
        ));
    }
    if let Err(e) = host.want(life, Kind::VmObjectAlloc, true) {
        log::warn(&format!(
            "memory: no VMObjectAlloc events ({e}); objects made by reflection, clone or JNI are not counted"
        ));
    }
    Ok(Box::new(Memory { host, life }))
}

impl Mode for Memory {
    fn start(&self, _cx: &Cx) -> Result<(), AgentError> {
        self.life.set_active(true);
        self.host.events.set_every_object_tracked(true);
        Ok(())
    }

    fn stop(&self) {
        self.life.set_active(false);
        self.host.events.set_every_object_tracked(false);
    }

    /// Forces a GC first, so `count` holds only objects still reachable.
    fn snapshot(&self, cx: &Cx) -> Result<Box<dyn Capture + '_>, AgentError> {
        let life = self.life;
        let jvmti = match life.tracking.mechanism() {
            Mechanism::Tags => life.tracking.made_env()?,
            Mechanism::WeakRefs => cx.host.jvmti,
        };
        let counts = life
            .live_counts(jvmti, &cx.host.sites)
            .map_err(|e| e.in_mode("memory"))?;
        Ok(Box::new(Captured(counts)))
    }

    /// A concurrent collector can no longer run a GC for the last snapshot.
    fn vm_dying(&self, _jni: &crate::vm::Jni) {
        self.life.tracking.vm_dying();
    }

    fn summary(&self) -> Option<String> {
        self.life.cost_summary()
    }
}

struct Captured(Counts);

impl Capture for Captured {
    /// `<memory>`, and `<sites>` after the contract's sections.
    fn sections(self: Box<Self>, _: &[ThreadRecord], _: (u64, u64)) -> Vec<Section> {
        vec![
            super::model::rows(&self.0.rows),
            super::model::sites(&self.0.sites),
        ]
    }
}
