//! The trace's writer thread: drains every thread's ring about every
//! millisecond (sooner when one is half full), merges the events in time
//! order, and writes them as TPTP elements, each id defined in the document
//! before its first use. A document is written to a temporary file and
//! renamed to its name once complete (`traceEnd`, `</TRACE>`), so a file
//! under the trace's name is always a whole XML document.
//!
//! Time order across threads: an event is written once it is older than
//! [`MARGIN_NS`], so events another thread published a little late (it was
//! preempted between its clock read and its publish) still go in their
//! place. Each OS thread's events are always in order in its ring; a
//! virtual thread's are in the rings of the carriers it ran on, so the
//! margin counts from the moment the writer began to drain the rings (not
//! from the end: the writer itself may be preempted between two rings, and
//! a virtual thread's later events in the second must not overtake its
//! earlier ones in the first).

use super::event::{Event, Kind};
use super::tptp::{self, Doc, Envelope};
use super::{Lifetime, ThreadRing};
use crate::error::AgentError;
use crate::instrument::registry::Registry;
use crate::threads::{ThreadId, Threads};
use crate::tsc;
use crate::writer_stats::{Handle, Stats};
use std::collections::HashMap;
use std::io;
use std::path::PathBuf;
use std::sync::atomic::Ordering::*;
use std::sync::Arc;
use std::time::Duration;

/// How old an event must be before it is written (see the module's comment).
const MARGIN_NS: u64 = 20_000_000;

/// What a dump or the VM's end asks of the writer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Request {
    #[default]
    None,
    /// End the current file; the next events start the next one.
    Rotate,
    /// End the current file and stop.
    Close,
}

/// Where the writer finds names: threads, methods, exception classes.
#[derive(Clone, Copy)]
pub struct Sources {
    pub threads: &'static Threads,
    pub registry: &'static Registry,
    /// Types and allocation sites (objects' and exceptions' types).
    pub sites: &'static crate::sites::Sites,
}

/// File `number` (from 1) of a trace named by `template`: the snapshot's
/// placeholders (`%p`, `%t`, `%n`); without `%n`, files after the first
/// get `.N` appended.
pub fn file_path(template: &str, number: u32) -> PathBuf {
    let pid = std::process::id();
    let path = crate::snapshot::expand_path(template, pid, crate::snapshot::unix_now(), number);
    if number > 1 && !template.contains("%n") {
        let mut p = path.into_os_string();
        p.push(format!(".{number}"));
        return p.into();
    }
    path
}

pub fn spawn(
    life: &'static Lifetime,
    sources: Sources,
    template: &str,
    agent_args: &str,
) -> Result<Handle, AgentError> {
    if let Some(why) = crate::snapshot::check_writable(&file_path(template, 1)) {
        return Err(AgentError::Refused(format!(
            "trace: cannot write the trace file: {why}"
        )));
    }
    let stats = Arc::new(Stats::default());
    let unix_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let w = Writer {
        life,
        sources,
        agent_args: agent_args.to_owned(),
        stats: stats.clone(),
        envelope: Envelope {
            node: tptp::uuid(),
            process: tptp::uuid(),
            agent: tptp::uuid(),
            trace: String::new(),
        },
        base: (tsc::ticks(), unix_ns),
        margin_ticks: tsc::ns_to_ticks(MARGIN_NS),
        number: 0,
        file: None,
        rings: Vec::new(),
        threads: HashMap::new(),
        staging: Vec::new(),
        next_id: 1,
        methods: Vec::new(),
        classes: HashMap::new(),
        counts: Vec::new(),
        sites: HashMap::new(),
        live: HashMap::new(),
        monitors: HashMap::new(),
    };
    let thread = std::thread::Builder::new()
        .name("profrj trace writer".into())
        .spawn(move || {
            // A panic here (a bug) must not leave threads waiting for a
            // writer that is gone: the trace stops, the program goes on.
            let life = w.life;
            if !crate::vm::guard("trace writer", false, move || {
                w.run();
                true
            }) {
                crate::log::error_once(
                    "trace writer stopped",
                    "trace: tracing stops, the program continues",
                );
                life.failed.store(true, Release);
                life.active.store(false, Release);
                *life.request.lock() = Request::None;
                life.answered.notify_all();
            }
        })
        .map_err(|e| crate::error::io("trace: cannot start the writer thread", e))?;
    Ok(Handle {
        thread: thread.thread().clone(),
        stats,
    })
}

/// An allocation site: its type, its method (registry id) and line.
pub(super) struct Site {
    pub(super) ty: String,
    pub(super) method: Option<u32>,
    pub(super) line: Option<u16>,
}

/// A ring the writer drains, and whose events it holds now (the key of
/// the Java thread of its last [`Kind::Switch`]).
struct RingSource {
    ring: Arc<ThreadRing>,
    key: u64,
}

/// A Java thread whose events the writer met, and its id in the trace.
pub(super) struct Source {
    pub(super) thread: Option<ThreadId>,
    /// A virtual thread's name (a platform thread's is the registry's).
    pub(super) name: Option<String>,
    pub(super) id: u32,
    /// The document (its number) that defined the thread; 0: none yet.
    pub(super) defined_in: u32,
    /// The exception object last thrown on the thread, and the document
    /// that defined it.
    pub(super) exception: (u32, u32),
    /// The thread's open calls as written: (registry method id, ticket).
    pub(super) stack: Vec<(u32, u64)>,
}

/// An event waiting for its turn, with the key of its source ([`VM`]: the
/// VM's own events).
pub(super) struct Staged {
    pub(super) e: Event,
    pub(super) source: u64,
}

/// The source of events of no Java thread (garbage collections, frees).
pub(super) const VM: u64 = u64::MAX;

/// The open document: its file under its temporary name, and the name it
/// gets when complete.
struct Open {
    doc: Doc,
    tmp: Temporary,
    path: PathBuf,
}

/// A document's temporary file, removed when dropped unless renamed into
/// place: whatever ends a document early (a write error, a panic in the
/// writer) leaves no temporary file behind.
struct Temporary(Option<PathBuf>);

impl Temporary {
    /// Renames the file to `path`; from then on it is not the writer's to remove.
    fn rename_to(&mut self, path: &std::path::Path) -> io::Result<()> {
        if let Some(tmp) = &self.0 {
            std::fs::rename(tmp, path)?;
        }
        self.0 = None;
        Ok(())
    }
}

impl Drop for Temporary {
    fn drop(&mut self) {
        if let Some(tmp) = self.0.take() {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

pub(super) struct Writer {
    pub(super) life: &'static Lifetime,
    pub(super) sources: Sources,
    agent_args: String,
    stats: Arc<Stats>,
    envelope: Envelope,
    /// Ticks and Unix ns at one instant.
    base: (u64, u64),
    margin_ticks: u64,
    /// The current document's number (from 1): what the `defined_in`
    /// stamps below compare with, so an id is defined again in each
    /// document and no per-id table grows with the objects.
    pub(super) number: u32,
    file: Option<Open>,
    rings: Vec<RingSource>,
    /// The Java threads met, by key, until their end is written.
    pub(super) threads: HashMap<u64, Source>,
    pub(super) staging: Vec<Staged>,
    /// The next trace id (one sequence for every kind of id).
    pub(super) next_id: u32,
    /// Per registry method id: its trace id and its class's (0: none yet).
    /// Per registry method id: its trace id, its class's, and the document
    /// that defined it (0: none yet).
    pub(super) methods: Vec<(u32, u32, u32)>,
    /// Per class name: its trace id and the document that defined it.
    pub(super) classes: HashMap<String, (u32, u32)>,
    /// methodEntry per registry method id, since the trace began.
    pub(super) counts: Vec<u64>,
    /// Allocation sites as `objAlloc` needs them.
    pub(super) sites: HashMap<u32, Site>,
    /// Objects alive by their weak reference: their ids and documents.
    pub(super) live: HashMap<u64, (u32, u32)>,
    /// Monitor objects by identity hash: their ids.
    pub(super) monitors: HashMap<u32, (u32, u32)>,
}

impl Writer {
    fn run(mut self) {
        loop {
            let request = *self.life.request.lock();
            let flush_all = request != Request::None;
            let drained_from = tsc::ticks();
            self.collect();
            if flush_all {
                // Everything goes out now: a virtual thread's events pushed
                // to a ring already drained while this round drained later
                // ones come in before the rest is written.
                self.collect();
            }
            if let Err(e) = self
                .emit(flush_all, drained_from)
                .and_then(|()| match request {
                    Request::None => Ok(()),
                    _ => self.finish(),
                })
            {
                self.fail(e);
            }
            if request != Request::None {
                let mut r = self.life.request.lock();
                *r = Request::None;
                self.life.answered.notify_all();
                if request == Request::Close {
                    // Nobody may wait for a writer that is gone.
                    self.life.failed.store(true, Release);
                    return;
                }
            }
            if self.staging.len() < 4096 {
                std::thread::park_timeout(Duration::from_millis(1));
            }
        }
    }

    pub(super) fn ticks_to_unix(&self, t: u64) -> u64 {
        self.base.1 + tsc::ticks_to_ns(t.saturating_sub(self.base.0))
    }

    /// Takes the new rings, and every ring's and the VM's events.
    fn collect(&mut self) {
        let new = std::mem::take(&mut *self.life.rings.lock());
        self.rings
            .extend(new.into_iter().map(|ring| RingSource { ring, key: 0 }));
        let (staging, threads, life) = (&mut self.staging, &mut self.threads, self.life);
        self.rings.retain_mut(|r| {
            // Read before draining: a ring closed then has nothing more to come.
            let closed = r.ring.ring.is_closed();
            let key = &mut r.key;
            r.ring.ring.drain(|e| {
                if e.kind != Kind::Switch {
                    staging.push(Staged {
                        e: *e,
                        source: *key,
                    });
                    return;
                }
                *key = e.b;
                threads.entry(e.b).or_insert_with(|| {
                    let named = life.callers.lock().remove(&e.b);
                    Source {
                        thread: named.as_ref().and_then(|n| n.thread),
                        name: named.and_then(|n| n.name),
                        id: 0,
                        defined_in: 0,
                        exception: (0, 0),
                        stack: Vec::new(),
                    }
                });
            });
            !(closed && r.ring.ring.pending() == 0)
        });
        let vm = std::mem::take(&mut *self.life.vm_events.lock());
        staging.extend(vm.into_iter().map(|e| Staged { e, source: VM }));
    }

    /// Writes the staged events old enough (all with `all`), in time order:
    /// older than the margin before `drained_from`, when `collect` began.
    fn emit(&mut self, all: bool, drained_from: u64) -> io::Result<()> {
        if self.life.failed.load(Acquire) {
            // Writing failed once: the trace has stopped for good.
            self.staging.clear();
            return Ok(());
        }
        if self.staging.is_empty() {
            return Ok(());
        }
        // Stable: a thread's events with equal times keep their order.
        self.staging.sort_by_key(|s| s.e.time);
        let cutoff = match all {
            true => u64::MAX,
            false => drained_from.saturating_sub(self.margin_ticks),
        };
        let n = self.staging.partition_point(|s| s.e.time <= cutoff);
        if n == 0 {
            return Ok(());
        }
        if self.file.is_none() {
            // The document starts with its first event.
            let first = self.staging[0].e.time;
            self.open(first)?;
        }
        // Taken out and put back: no allocation per round.
        let mut staged = std::mem::take(&mut self.staging);
        let result = staged[..n].iter().try_for_each(|s| self.element(s));
        staged.drain(..n);
        self.staging = staged;
        self.stats.events.fetch_add(n as u64, Relaxed);
        result
    }

    pub(super) fn doc(&mut self) -> &mut Doc {
        &mut self.file.as_mut().expect("a document is open").doc
    }

    /// Starts the next document (its header written), at `first` (ticks).
    fn open(&mut self, first: u64) -> io::Result<()> {
        self.number += 1;
        let template = self.life.template.lock().clone();
        let path = file_path(&template, self.number);
        let (tmp, file) = crate::snapshot::create_temporary(&path, 0o600)?;
        let tmp = Temporary(Some(tmp));
        self.envelope.trace = tptp::uuid();
        // Kept before the header is written: a failure removes the file.
        let doc = Doc::new(file);
        self.file = Some(Open { doc, tmp, path });
        let start = self.ticks_to_unix(first.min(tsc::ticks()));
        let (envelope, args) = (&self.envelope, &self.agent_args);
        let doc = &mut self.file.as_mut().expect("just set").doc;
        doc.header(envelope, args, start)
    }

    /// Ends the open document, if any: a `methodCount` for every method in
    /// scope (calls since the trace began), `traceEnd`, `agentDestroy`; then
    /// renames it into place.
    fn finish(&mut self) -> io::Result<()> {
        if self.file.is_none() {
            return Ok(());
        }
        let now = self.ticks_to_unix(tsc::ticks());
        for m in 0..self.sources.registry.len() as u32 {
            let (id, _) = self.method(m, now)?;
            let count = self.counts.get(m as usize).copied().unwrap_or(0);
            self.doc().method_count(id, count)?;
        }
        let Some(Open { doc, mut tmp, path }) = self.file.take() else {
            return Ok(());
        };
        let (bytes, elements) = (doc.bytes, doc.elements);
        // On an error `tmp`, dropped, removes the file.
        doc.trailer(&self.envelope, now)?;
        tmp.rename_to(&path)?;
        self.stats.files.fetch_add(1, Relaxed);
        self.stats.bytes.fetch_add(bytes, Relaxed);
        crate::log::info(&format!(
            "trace written to {}: {elements} elements, {} MB",
            path.display(),
            bytes / 1_000_000
        ));
        Ok(())
    }

    /// Writing failed: said once; the trace stops (threads drop their
    /// events from now on) and the partial file is removed.
    fn fail(&mut self, e: io::Error) {
        crate::log::error_once(
            "trace write",
            &format!(
                "trace: cannot write the trace file: {e}; tracing stops, the program continues"
            ),
        );
        self.life.failed.store(true, Release);
        self.life.active.store(false, Release);
        self.staging.clear();
        // Dropped: its temporary file goes.
        self.file = None;
    }
}
