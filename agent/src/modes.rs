//! The profiling modes behind one interface. A session opens the modes its
//! options name (the registry below) and from then on talks to them only
//! through [`Mode`]: start or resume, stop, a snapshot's section, a status
//! line. Adding a mode means: its folder with a `Mode` implementation, one
//! line in [`REGISTRY`], and the CLI's readers for its section.

use crate::agent::Agent;
use crate::options::Options;
use crate::snapshot::XmlWriter;
use crate::threads::ThreadRecord;
use crate::vm::Jni;
use crate::{coverage, memory, profile, sampler};
use std::io;

/// What a mode works with: the agent (JVMTI, threads, the instrumenter), the
/// calling thread's JNI, and the session's options.
pub struct Cx<'a> {
    pub agent: &'a Agent,
    pub jni: &'a Jni,
    pub options: &'a Options,
}

/// One profiling mode of a session.
pub trait Mode: Send + Sync {
    /// Its option and section name (`sampling`, `profile`, …).
    fn name(&self) -> &'static str;
    /// Starts collecting, or resumes after [`Mode::stop`] with the data kept.
    fn start(&self, cx: &Cx) -> Result<(), String>;
    /// Stops collecting; the data stays for a snapshot and a resume.
    fn stop(&self);
    /// What a snapshot needs from this mode, taken before the thread records
    /// are read (a forced GC, counts read through JNI); the returned section
    /// writes it.
    fn snapshot(&self, cx: &Cx) -> Result<Box<dyn Section + '_>, String>;
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
}

/// Opens a mode for a session (once; `start` then runs on every resume).
type Open = fn(&Cx) -> Result<Box<dyn Mode>, String>;

/// Whether a session's options ask for a mode.
type Wanted = fn(&Options) -> bool;

/// Every mode: whether the options ask for it, and how to open it. Sections
/// appear in a snapshot in this order.
const REGISTRY: &[(Wanted, Open)] = &[
    (|o| o.sampling, sampler::mode::open),
    (|o| o.profile, profile::mode::open),
    (|o| o.memory, memory::mode::open),
    (|o| o.coverage, coverage::mode::open),
];

/// The modes `cx.options` asks for, opened.
pub fn open(cx: &Cx) -> Result<Vec<Box<dyn Mode>>, String> {
    REGISTRY
        .iter()
        .filter(|(wanted, _)| wanted(cx.options))
        .map(|(_, open)| open(cx))
        .collect()
}
