//! What a profiling mode is to the agent: a [`Registration`] (its name,
//! whether a session's options ask for it, how to open it, what the JVM
//! must grant it) and, opened for a session, a [`Mode`]: start or resume,
//! stop, a snapshot's part ([`Capture`], which hands the format-neutral
//! [`crate::model`]), a status line. The list of modes is
//! `crate::registry`; a mode sees the agent only through [`Cx`].

use crate::error::AgentError;
use crate::host::Host;
use crate::instrument::Probes;
use crate::model::Section;
use crate::options::{ModeOptions, Options};
use crate::threads::ThreadRecord;
use crate::vm::{Capabilities, Jni, Native};

/// What a mode works with: the host, the calling thread's JNI, and the
/// session's options.
pub struct Cx<'a> {
    pub host: &'static Host,
    pub jni: &'a Jni,
    pub options: &'a Options,
}

/// One profiling mode of a session.
pub trait Mode: Send + Sync {
    /// Starts collecting, or resumes after [`Mode::stop`] with the data kept.
    fn start(&self, cx: &Cx) -> Result<(), AgentError>;
    /// Stops collecting; the data stays for a snapshot and a resume.
    fn stop(&self);
    /// What a snapshot needs from this mode, taken before the thread
    /// records are read (a forced GC, counts read through JNI).
    fn snapshot(&self, cx: &Cx) -> Result<Box<dyn Capture + '_>, AgentError>;
    /// The VM is dying; its last snapshot follows (on this thread, `jni`'s).
    /// (What must happen at death whatever the session's state is a
    /// [`crate::events::Kind::VmDeath`] listener's.)
    fn vm_dying(&self, _jni: &Jni) {}
    /// The mode's call trees so far, for a writer that reads them as they
    /// grow (the `otlp` push): every thread's, without what a snapshot adds
    /// (a GC, a monitor dump); `None` for a mode that is not a call tree.
    fn call_trees(
        &self,
        _threads: &[std::sync::Arc<ThreadRecord>],
    ) -> Option<crate::model::CallTrees> {
        None
    }
    /// What the mode was asked to do, for `start`'s reply and `status`.
    fn describe(&self) -> Option<String> {
        None
    }
    /// What the mode did and cost, for `status` and the exit log.
    fn summary(&self) -> Option<String> {
        None
    }
}

/// A mode's part of one snapshot, as taken.
pub trait Capture {
    /// The sections, given the thread records (indexed by ThreadId) and the
    /// session's window (start, end) in ns.
    fn sections(
        self: Box<Self>,
        threads: &[std::sync::Arc<ThreadRecord>],
        window: (u64, u64),
    ) -> Vec<Section>;
}

/// A capture with nothing to write (a mode whose output is its own file).
pub struct Nothing;

impl Capture for Nothing {
    fn sections(
        self: Box<Self>,
        _: &[std::sync::Arc<ThreadRecord>],
        _: (u64, u64),
    ) -> Vec<Section> {
        Vec::new()
    }
}

/// One mode as the agent knows it before any session.
pub struct Registration {
    /// The mode's name: its option, which asks for it.
    pub name: &'static str,
    /// Its options: its name's first, then its settings (in `help`'s order).
    pub options: ModeOptions,
    /// Opens it for a session (once; `start` then runs on every resume).
    pub open: fn(&Cx) -> Result<Box<dyn Mode>, AgentError>,
    /// The probe class's natives its probes call. The probe class is
    /// defined once per JVM, so every mode's natives are bound then.
    pub natives: fn() -> Vec<Native>,
    /// JVMTI capabilities it needs (added when its session starts, or at
    /// start-up, where some can only be had); `Err` names one the JVM lacks.
    pub capabilities: fn(&mut Capabilities) -> Result<(), AgentError>,
    /// The probes the rewriter puts in for it, given the options (none for
    /// a mode that rewrites nothing).
    pub probes: fn(&Options) -> Probes,
}

impl Registration {
    /// A registration's defaults for what a mode without probes needs.
    pub const fn no_probes(_: &Options) -> Probes {
        Probes::NONE
    }
}
