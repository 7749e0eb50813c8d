//! `memory` as a [`Mode`]: how deaths are seen (weak references or tags) is
//! chosen when the first memory session opens, and so is stamping
//! (`stamps=`); objects the VM or native code makes are reported through
//! VMObjectAlloc and the intercepted JNI table.

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
use std::sync::atomic::Ordering::Relaxed;

/// `memory`: live and peak object counts per thread and class.
pub const REGISTRATION: Registration = Registration {
    name: "memory",
    options: ModeOptions {
        options: &[
            Opt {
                syntax: "memory",
                default: "",
                takes: Takes::Start,
                meaning: "live objects per allocating thread and class, and the most alive at the ends of full GCs and at snapshots (the <memory> section)",
                read: Some(options::read_flag_value),
            },
            Opt {
                syntax: "tracker=auto|weak|tags",
                default: "auto",
                takes: Takes::Start,
                meaning: "memory: how the death of an object without a stamp (stamps=) is seen; weak: a JNI weak reference per object, checked after each GC (serial, parallel and G1 collectors, which clear them in their pauses; the cheapest); tags: JVMTI tags, counted by a census from the roots at snapshots and, on G1, Parallel or Serial, after full GCs within the census= budget (any collector); auto: weak where the collector allows, else tags. Fixed for the JVM's life by the first memory session",
                read: Some(|k, v| options::choice(k, v, &["auto", "weak", "tags"], "valid: auto, weak, tags")),
            },
            Opt {
                syntax: "stamps=on|off",
                default: "on",
                takes: Takes::Start,
                meaning: "memory: on: objects of the application's classes defined once memory has started carry a stamp (a 4-byte field the agent adds to their class) and are counted by a heap census, with no per-object handle, so the cost per allocation does not grow with the threads allocating; arrays, the JDK's objects, classes loaded before the mode started and objects made on virtual threads use the tracker (tracker=). off: the tracker for every object of the session (classes given the field keep it). Stamping starts with the first session that asks for it; a running trace turns it off (docs/MEMORY.md)",
                read: Some(options::read_on_off),
            },
            Opt {
                syntax: "census=PERCENT",
                default: "5%",
                takes: Takes::Start,
                meaning: "memory with stamps (or tracker=tags on G1, Parallel or Serial): the most of the time the heap censuses after full GCs (ZGC, Shenandoah: after GCs) may take (each stops every thread for one pass over the heap), 1% to 100%; a full GC no census follows is not an instant of the stamps' (tags') max. A snapshot always takes one",
                read: Some(read_percent),
            },
        ],
        default_mode: false,
        records_others: false,
        check: |o| {
            options::belongs_to(o, "stamps", "memory", "memory,stamps=off")?;
            options::belongs_to(o, "census", "memory", "memory,census=20%")
        },
    },
    open,
    natives: super::natives,
    capabilities,
    probes: |_| Probes {
        memory: true,
        ..Probes::NONE
    },
};

/// `census=`'s share when not given, in %.
const DEFAULT_CENSUS_PERCENT: u8 = 5;

/// `census=`'s share, if given.
fn census_percent(o: &options::Options) -> Option<u8> {
    o.number("census").map(|n| n as u8)
}

/// `census=PERCENT`: 1% to 100% (the `%` may be left out).
fn read_percent(key: &str, value: Option<&str>) -> Result<options::Value, options::OptionError> {
    let v = options::required(key, value)?;
    match v.strip_suffix('%').unwrap_or(v).parse::<u8>() {
        Ok(n) if (1..=100).contains(&n) => Ok(options::Value::Number(u32::from(n))),
        _ => Err(options::bad_value(key, v, "a percentage from 1% to 100%")),
    }
}

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
    life.counters
        .set_walks_see_only_reachable(tracking.walks_see_only_reachable());
    life.note_full_collections();
    host.events.subscribe(life, &super::KINDS);
    if mechanism == Mechanism::Tags {
        tracking.env(host)?;
    }
    let stamps = &life.stamps;
    stamps.publish(cx.jni)?;
    if cx.options.switch("stamps") != Some(false) {
        if let Err(e) = stamps.start(host, cx.jni) {
            log::warn(&format!(
                "memory: {e}; every object is followed with {}",
                match mechanism {
                    Mechanism::WeakRefs => "a weak reference",
                    Mechanism::Tags => "a tag",
                }
            ));
        }
    }
    // A full collection's peak is taken after its finish, on the agent
    // thread (frees counted, ObjectFree events posted, a census).
    host.want(life, Kind::GcStart, true)?;
    host.want(life, Kind::GcFinish, true)?;
    tracking.start_thread(host, cx.jni, life)?;
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
    fn start(&self, cx: &Cx) -> Result<(), AgentError> {
        // An object counts for the thread (a virtual thread's group) that
        // made it, whichever carrier ran it.
        cx.host.follow_virtual_threads("memory");
        let life = self.life;
        life.set_active(true);
        self.host.events.set_every_object_tracked(true);
        life.stamps
            .set_budget(census_percent(cx.options).unwrap_or(DEFAULT_CENSUS_PERCENT));
        // A trace wants each object's free: no stamps while one runs.
        let stamp = cx.options.switch("stamps") != Some(false)
            && !cx.options.given("trace")
            && life.stamps.on();
        life.stamps.set_mode(if stamp {
            super::stamps::STAMP
        } else {
            super::stamps::WEAK
        });
        Ok(())
    }

    fn stop(&self) {
        self.life.stamps.set_mode(super::stamps::OFF);
        self.life.set_active(false);
        self.host.events.set_every_object_tracked(false);
        self.host.unfollow_virtual_threads("memory");
    }

    /// Forces a GC first, so `count` holds only objects still reachable.
    fn snapshot(&self, cx: &Cx) -> Result<Box<dyn Capture + '_>, AgentError> {
        let life = self.life;
        let jvmti = match life.tracking.mechanism() {
            Mechanism::Tags => life.tracking.made_env()?,
            Mechanism::WeakRefs => cx.host.jvmti,
        };
        let counts = life
            .live_counts(jvmti, &cx.host.sites, &cx.host.threads.fold_targets())
            .map_err(|e| e.in_mode("memory"))?;
        Ok(Box::new(Captured(counts)))
    }

    /// A concurrent collector can no longer run a GC for the last snapshot.
    fn vm_dying(&self, _jni: &crate::vm::Jni) {
        self.life.tracking.vm_dying();
    }

    fn summary(&self) -> Option<String> {
        let stamped = self.host.instrumenter.stamped.load(Relaxed);
        self.life.cost_summary(stamped)
    }
}

struct Captured(Counts);

impl Capture for Captured {
    /// `<memory>`, and `<sites>` after the contract's sections.
    fn sections(
        self: Box<Self>,
        _: &[std::sync::Arc<ThreadRecord>],
        _: (u64, u64),
    ) -> Vec<Section> {
        vec![
            super::model::rows(&self.0.rows),
            super::model::sites(&self.0.sites, &self.0.censuses, &self.0.counters),
        ]
    }
}
