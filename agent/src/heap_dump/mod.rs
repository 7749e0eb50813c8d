//! Heap dumps that say who allocated each object (`heapdump` command,
//! `heapdumps=`). HotSpot's own dumper writes the HPROF file (the VM
//! operation, its pause and every record are HotSpot's, so every reader that
//! opens HotSpot's dumps opens these); then, with the application running
//! again, one pass over the file gives each object that `memory` followed
//! its allocation trace: the object's stack-trace serial, which HotSpot
//! sets to its one empty trace for every object, is rewritten in place to a
//! TRACE of the object's allocation site (one FRAME: method, source file,
//! line) and allocating thread, and those TRACE, FRAME, UTF8 and
//! START_THREAD records are appended after HEAP_DUMP_END.
//!
//! Which objects are known: those carrying `memory`'s stamp (the field
//! `$profrj$stamp` holds their counter's index + 1, so the file itself says
//! whose they are). Why this design and not a JVMTI heap walk of the agent's
//! own: docs/HEAPDUMP.md and docs/BENCHMARKS.md ("Heap dumps").
//!
//! Objects followed by weak reference (arrays, the JDK's objects) carry no
//! stamp; HotSpot names every object by its address, so the addresses of
//! those objects are noted at the end of the dump's own GC, in its pause,
//! when they no longer move (`addresses.rs`, kept packed in `noted.rs`).
//!
//! Files: `file.rs` the private directory, the rename into place and gzip;
//! `addresses.rs` the weakly followed objects' addresses around the dump,
//! `noted.rs` how they are kept, sorted and found; `patch.rs` the pass over
//! the dump (its phases and threads), `objects.rs` what it does with each
//! object, `layout.rs` where the stamp and a thread's id lie in an instance,
//! `map.rs` the file mapped read-only, `writes.rs` the serials written back;
//! `traces.rs` the records appended.

mod addresses;
mod file;
mod layout;
mod map;
mod noted;
mod objects;
mod patch;
mod traces;
mod writes;

pub use noted::Addresses;

use crate::error::AgentError;
use crate::sites::Tables;
use crate::threads::ThreadRecord;
use crate::vm::{HeapDumper, HeapReserve, Jni};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// One heap dump asked for.
#[derive(Debug, Clone)]
pub struct Request {
    /// Where it goes (expanded, as the JVM sees it).
    pub path: PathBuf,
    /// Every object (`heapkind=all`), not only those alive after a full GC.
    pub all: bool,
    pub gz: bool,
}

/// Who allocated the objects the agent followed: `memory`'s counters, by
/// index (an object's stamp is its counter's index + 1), and where the
/// objects without a stamp (arrays, the JDK's objects, followed by weak
/// references) are when the dump is written.
pub trait Origins {
    /// Each counter's allocating thread (the agent's thread id, -1 unknown)
    /// and allocation site (a `Sites` id); `None` for counters that are not
    /// a site's (a type's group).
    fn counters(&self) -> Vec<Option<(i64, u32)>>;
    /// Follows objects by weak reference (their addresses can be read)?
    fn has_addresses(&self) -> bool;
    /// Notes where each such object is now, and again at the end of each
    /// GC while `file` (the dump HotSpot is asked to write) is still empty.
    fn arm_addresses(&self, file: std::ffi::CString);
    /// Stops that; the last addresses noted, sorted, and how many GCs'
    /// ends noted them since the arming.
    fn take_addresses(&self) -> (Addresses, u64);
    /// Does the full GC of a live heap dump post the GC events (G1's does;
    /// Serial's and Parallel's, run by the dump's own VM operation, post
    /// none, so the objects' addresses after it cannot be known)?
    fn dump_gc_is_seen(&self) -> bool;
    /// Holds the mode's own heap walks after GCs (the stamps' census) while
    /// a dump is made, or lets them go: the dump's GC would start one, all
    /// threads stopped again, while the pass runs.
    fn hold_heap_walks(&self, on: bool);
}

/// Where a dump's allocation origins come from: the memory mode's state and
/// the host's tables of sites and threads.
#[derive(Clone, Copy)]
pub struct Sources<'a> {
    pub origins: &'a dyn Origins,
    pub host: &'a crate::host::Host,
}

/// What is known of the allocations when a dump is written.
pub struct Known {
    pub origins: Vec<Option<(i64, u32)>>,
    pub sites: Tables,
    pub threads: Vec<std::sync::Arc<ThreadRecord>>,
    /// Objects followed without a stamp: their address (their HPROF id)
    /// and counter; empty when their addresses at the dump are not known.
    pub addresses: Addresses,
}

/// What a dump did, for the command's answer and the log.
#[derive(Debug, Default)]
pub struct Written {
    pub path: PathBuf,
    /// Instances and arrays in the file.
    pub objects: u64,
    /// Of those, the ones given their allocation trace.
    pub traced: u64,
    /// Seconds in HotSpot's dumper (its pause is inside), and after it,
    /// the application running: all of it (`traces_s`), of which sorting
    /// the noted addresses and the pass over the file.
    pub hotspot_s: f64,
    pub traces_s: f64,
    pub addresses_s: f64,
    pub pass_s: f64,
}

impl std::fmt::Display for Written {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "heap dump written: {} ({} objects, {} with their allocation site; HotSpot's dump {:.2} s, traces {:.2} s: addresses sorted {:.2} s, pass {:.2} s)",
            self.path.display(),
            self.objects,
            self.traced,
            self.hotspot_s,
            self.traces_s,
            self.addresses_s,
            self.pass_s
        )
    }
}

/// Writes one heap dump: HotSpot's dumper into a private directory beside
/// `request.path`, the traces added, gzipped if asked, renamed into place.
/// `sources`: the allocations `memory` followed (`None`: every object keeps
/// HotSpot's empty trace).
pub fn write(
    jni: &Jni,
    request: &Request,
    sources: Option<Sources>,
) -> Result<Written, AgentError> {
    let io = |what: &str, e: std::io::Error| AgentError::Io {
        what: format!("heap dump {what} ({})", request.path.display()),
        source: std::sync::Arc::new(e),
    };
    let dir = file::PrivateDir::beside(&request.path).map_err(|e| io("directory", e))?;
    let raw = dir.path().join("heap.hprof");
    let dumper = prepare(jni)?;
    let _held = sources.map(|s| HeldWalks::new(s.origins));
    let start = Instant::now();
    let dump = |live: bool| jni.hotspot_dump_heap(dumper, &raw.to_string_lossy(), live);
    let (addresses, hotspot_s) = match sources {
        Some(s) if s.origins.has_addresses() => {
            let jvmti = s.host.jvmti;
            let force_gc = || {
                (jvmti.force_garbage_collection())
                    .map_err(|e| AgentError::jvmti(jvmti, "ForceGarbageCollection", e))
            };
            addresses::around_dump(s.origins, &raw, !request.all, force_gc, dump)?
        }
        _ => {
            dump(!request.all)?;
            (Addresses::default(), start.elapsed().as_secs_f64())
        }
    };
    let addresses_s = start.elapsed().as_secs_f64() - hotspot_s;
    let known = sources.map(|s| {
        // The live threads' Java ids, which name their thread roots.
        let host = s.host;
        let refs = host.threads.count() as i32 * 3 + 64;
        jni.with_local_frame(refs, || host.threads.refresh_live(host.jvmti, jni));
        Known {
            origins: s.origins.counters(),
            sites: host.sites.tables(),
            threads: host.threads.records(),
            addresses,
        }
    });
    let pass_start = Instant::now();
    let counts = patch::add_traces(&raw, known.as_ref()).map_err(|e| match e {
        patch::PatchError::Io(e) => io("traces", e),
        other => AgentError::Internal(format!("heap dump traces: {other}")),
    })?;
    let pass_s = pass_start.elapsed().as_secs_f64();
    let finished = if request.gz {
        file::gzip(&raw).map_err(|e| io("gzip", e))?
    } else {
        raw
    };
    dir.publish(&finished, &request.path)
        .map_err(|e| io("rename", e))?;
    Ok(Written {
        path: request.path.clone(),
        objects: counts.objects,
        traced: counts.traced,
        hotspot_s,
        addresses_s,
        pass_s,
        traces_s: start.elapsed().as_secs_f64() - hotspot_s,
    })
}

/// The origins' heap walks held while it lives.
struct HeldWalks<'a>(&'a dyn Origins);

impl<'a> HeldWalks<'a> {
    fn new(origins: &'a dyn Origins) -> Self {
        origins.hold_heap_walks(true);
        HeldWalks(origins)
    }
}

impl Drop for HeldWalks<'_> {
    fn drop(&mut self) {
        self.0.hold_heap_walks(false);
    }
}

/// HotSpot's dumper, found once (before an OutOfMemoryError needs it).
static DUMPER: std::sync::OnceLock<HeapDumper> = std::sync::OnceLock::new();

/// Finds HotSpot's dumper now, if not yet: `heapdumps=oom` asks at the
/// session's start, when classes can still be loaded.
pub fn prepare(jni: &Jni) -> Result<HeapDumper, AgentError> {
    if let Some(d) = DUMPER.get() {
        return Ok(*d);
    }
    let d = jni.heap_dumper()?;
    Ok(*DUMPER.get_or_init(|| d))
}

/// Java heap held back for the dump at an OutOfMemoryError.
static RESERVE: parking_lot::Mutex<Option<HeapReserve>> = parking_lot::Mutex::new(None);

/// How much: room for the few objects `dumpHeap`'s Java side makes.
const RESERVE_BYTES: usize = 1 << 20;

/// Holds heap back for the dump at the first OutOfMemoryError (once).
pub fn reserve_for_oom(jni: &Jni) {
    let mut r = RESERVE.lock();
    if r.is_none() && !OOM_DUMPED.load(Ordering::Acquire) {
        *r = jni.heap_reserve(RESERVE_BYTES);
    }
}

/// Lets the reserve go, just before the dump at an OutOfMemoryError.
pub fn release_reserve(jni: &Jni) {
    if let Some(r) = RESERVE.lock().take() {
        r.release(jni);
    }
}

/// Heap dumps written in this JVM (`%n` of the next one's path).
static NUMBER: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// The number of the next heap dump, from 1.
pub fn next_number() -> u32 {
    NUMBER.fetch_add(1, Ordering::AcqRel) + 1
}

/// The first OutOfMemoryError's dump is taken; later ones are not (as
/// HotSpot's -XX:+HeapDumpOnOutOfMemoryError).
static OOM_DUMPED: AtomicBool = AtomicBool::new(false);

/// Claims the one dump at an OutOfMemoryError: true the first time only.
pub fn claim_oom_dump() -> bool {
    !OOM_DUMPED.swap(true, Ordering::AcqRel)
}
