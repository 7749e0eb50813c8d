//! The profiling modes behind one interface. A session opens the modes its
//! options name (the registry below) and from then on talks to them only
//! through [`Mode`]: start or resume, stop, a snapshot's section, a status
//! line. Adding a mode means: its folder with a `Mode` implementation, one
//! [`Registration`] in [`REGISTRY`], and the CLI's readers for its section.

use crate::instrument::Instrumenter;
use crate::options::Options;
use crate::snapshot::XmlWriter;
use crate::threads::{ThreadRecord, Threads};
use crate::vm::sys::{JvmtiEnv, JvmtiExtensionFunction};
use crate::vm::{AgentThreadEntry, AllocHook, Capabilities, Jni, Jvmti, Native, VmHandle};
use crate::{alloc, coverage, jfr, lock, memory, profile, sampler, trace};
use jni_sys::jlong;
use std::io;

/// The functions of the FFI edge (`entry`, each inside the panic guard) that
/// modes hand to the VM: agent-thread bodies, callbacks of a mode's own JVMTI
/// environment, the JNI interception hook. Given to the agent when it is
/// created, so no mode names `entry`. Their contracts, which the modes'
/// SAFETY comments rely on: `sampler_thread` takes one reference of an
/// `Arc<Sampler>` from `Arc::into_raw` as its argument; `memory_thread`
/// reads no argument; the GC and ObjectFree callbacks are written for those
/// events' calls.
#[derive(Clone, Copy)]
pub struct EntryPoints {
    pub sampler_thread: AgentThreadEntry,
    pub memory_thread: AgentThreadEntry,
    pub gc_start: unsafe extern "C" fn(*mut JvmtiEnv),
    pub gc_finish: unsafe extern "C" fn(*mut JvmtiEnv),
    pub object_free: unsafe extern "C" fn(*mut JvmtiEnv, jlong),
    pub jni_alloc: AllocHook,
}

/// What modes use of the agent, which they never see whole: its JVMTI
/// environment and VM, the thread table, the instrumenter, the FFI edge's
/// entry points and what a mode keeps for the JVM's lifetime.
#[derive(Clone, Copy)]
pub struct Host<'a> {
    pub jvmti: Jvmti,
    pub vm: VmHandle,
    pub threads: &'a Threads,
    pub instrumenter: &'a Instrumenter,
    pub entry_points: &'a EntryPoints,
    /// HotSpot's GetVirtualThread extension (JDK 21+), for sampling virtual threads.
    pub get_virtual_thread: Option<JvmtiExtensionFunction>,
    pub memory: &'a memory::Lifetime,
    pub profile: &'a profile::Lifetime,
    pub coverage: &'a coverage::Lifetime,
    /// Where SampledObjectAlloc finds the `alloc` session's recorder.
    pub alloc: &'a alloc::Slot,
    /// Where the monitor events find the `lock` session's recorder.
    pub lock: &'a lock::Slot,
    /// What `trace` keeps for the JVM's lifetime (its rings and writer).
    pub trace: &'a trace::Lifetime,
    /// What `jfr` keeps for the JVM's lifetime (its tables and writer).
    pub jfr: &'a jfr::Lifetime,
}

/// What a mode works with: the host, the calling thread's JNI, and the
/// session's options.
pub struct Cx<'a> {
    /// The agent lives as long as the JVM: what a mode keeps for the JVM's
    /// lifetime may be held by the session's mode value.
    pub host: Host<'static>,
    pub jni: &'a Jni,
    pub options: &'a Options,
}

/// One profiling mode of a session.
pub trait Mode: Send + Sync {
    /// Starts collecting, or resumes after [`Mode::stop`] with the data kept.
    fn start(&self, cx: &Cx) -> Result<(), String>;
    /// Stops collecting; the data stays for a snapshot and a resume.
    fn stop(&self);
    /// What a snapshot needs from this mode, taken before the thread records
    /// are read (a forced GC, counts read through JNI); the returned section
    /// writes it.
    fn snapshot(&self, cx: &Cx) -> Result<Box<dyn Section + '_>, String>;
    /// The VM is dying; its last snapshot follows (on this thread, `jni`'s).
    fn vm_dying(&self, _jni: &Jni) {}
    /// A call-tree mode's data so far as the OTLP model (cumulative: the
    /// push makes deltas of it), thread names from `threads`; `None` for
    /// a mode that is not a call tree.
    fn call_trees(&self, _threads: &[ThreadRecord]) -> Option<profrj_otlp::CallTrees> {
        None
    }
    /// What the mode did and cost, for `status` and the exit log.
    fn summary(&self) -> Option<String> {
        None
    }
}

/// A mode's part of one snapshot.
pub trait Section {
    /// Writes the section; `threads` are the thread records (indexed by
    /// ThreadId) and `window` the session's (start, end) in ns.
    fn write(
        &self,
        w: &mut XmlWriter,
        threads: &[ThreadRecord],
        window: (u64, u64),
    ) -> io::Result<()>;

    /// A section of profrj's own a contract mode adds, written after every
    /// mode's [`Section::write`] so the contract's four come first and in
    /// their order (`memory`'s `<sites>`).
    fn write_after(
        &self,
        _w: &mut XmlWriter,
        _threads: &[ThreadRecord],
        _window: (u64, u64),
    ) -> io::Result<()> {
        Ok(())
    }
}

/// The section of a mode whose output is a file of its own (`trace`,
/// `jfr`): it writes nothing into the snapshot.
pub struct NoSection;

impl Section for NoSection {
    fn write(&self, _: &mut XmlWriter, _: &[ThreadRecord], _: (u64, u64)) -> io::Result<()> {
        Ok(())
    }
}

/// One mode as the agent knows it before any session: its name, whether a
/// session's options ask for it, how to open it, and what the JVM must
/// grant or bind for it whether or not a session uses it yet.
pub struct Registration {
    /// The option and section name.
    pub name: &'static str,
    /// Whether a session's options ask for the mode.
    pub wanted: fn(&Options) -> bool,
    /// Opens it for a session (once; `start` then runs on every resume).
    pub open: fn(&Cx) -> Result<Box<dyn Mode>, String>,
    /// The probe class's natives its probes call. The probe class is defined
    /// once per JVM, so every mode's natives are bound then.
    pub natives: fn() -> Vec<Native>,
    /// JVMTI capabilities it needs (added when its session starts, or at
    /// start-up, where some can only be had); `Err` names one the JVM lacks.
    pub capabilities: fn(&mut Capabilities) -> Result<(), String>,
}

/// Every mode. Sections appear in a snapshot in this order, and modes start
/// in it: `jfr` (no section) first, so a recording sees every mode's first
/// events.
pub const REGISTRY: &[Registration] = &[
    jfr::mode::REGISTRATION,
    sampler::mode::REGISTRATION,
    profile::mode::REGISTRATION,
    memory::mode::REGISTRATION,
    coverage::mode::REGISTRATION,
    alloc::mode::REGISTRATION,
    lock::mode::REGISTRATION,
    trace::mode::REGISTRATION,
];

/// A mode opened for a session, with its registered name.
pub struct Opened {
    pub name: &'static str,
    pub mode: Box<dyn Mode>,
}

impl std::ops::Deref for Opened {
    type Target = dyn Mode;

    fn deref(&self) -> &(dyn Mode + 'static) {
        &*self.mode
    }
}

/// Prefixes an error with the mode's name, unless it names it already.
pub fn named(name: &str, e: String) -> String {
    if e.starts_with(name) {
        e
    } else {
        format!("{name}: {e}")
    }
}

/// The modes `cx.options` asks for, opened.
pub fn open(cx: &Cx) -> Result<Vec<Opened>, String> {
    REGISTRY
        .iter()
        .filter(|r| (r.wanted)(cx.options))
        .map(|r| {
            let mode = (r.open)(cx).map_err(|e| named(r.name, e))?;
            Ok(Opened { name: r.name, mode })
        })
        .collect()
}

/// Every mode's probe natives, bound when the probe class is defined.
pub fn all_natives() -> Vec<Native> {
    REGISTRY.iter().flat_map(|r| (r.natives)()).collect()
}

/// Asks for the capabilities of the modes `options` names.
pub fn capabilities(options: &Options, caps: &mut Capabilities) -> Result<(), String> {
    REGISTRY
        .iter()
        .filter(|r| (r.wanted)(options))
        .try_for_each(|r| (r.capabilities)(caps))
}

/// The ids the rewriter's probes pass, given out by the modes that read them.
pub struct ModeIds(pub Host<'static>);

impl crate::instrument::ProbeIds for ModeIds {
    fn coverage_method(&self, layout: crate::instrument::MethodLines) -> u32 {
        self.0.coverage.method_id(layout)
    }

    fn coverage_stripes(&self) -> u32 {
        self.0.coverage.stripes()
    }

    fn coverage_class(&self, class: &str, source: Option<String>, methods: &[u32]) {
        self.0.coverage.add_class(class, source, methods)
    }

    fn alloc_site(&self, place: crate::instrument::AllocPlace, java_type: &str) -> u32 {
        self.0.memory.site_id(place, java_type)
    }

    fn alloc_place(&self, place: crate::instrument::AllocPlace) -> u32 {
        self.0.memory.place_id(place)
    }
}

#[cfg(test)]
mod tests {
    use super::REGISTRY;
    use crate::options::Options;

    /// Each mode's name is the option that asks for it, and asks for it alone
    /// (`jfr` records other modes' events: alone, it comes with `sampling`).
    #[test]
    fn each_registered_name_is_its_option() {
        for r in REGISTRY {
            let options = Options::parse(Some(r.name)).expect(r.name);
            let asked: Vec<&str> = REGISTRY
                .iter()
                .filter(|m| (m.wanted)(&options))
                .map(|m| m.name)
                .collect();
            match r.name {
                "jfr" => assert_eq!(asked, ["jfr", "sampling"]),
                _ => assert_eq!(asked, [r.name]),
            }
        }
        assert!(REGISTRY.iter().all(|r| !(r.wanted)(&Options::default())));
    }
}
