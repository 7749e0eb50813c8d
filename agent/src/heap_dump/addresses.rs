//! Where the objects followed by weak reference are when HotSpot writes
//! them. HotSpot's dump names an object by its address, and a GC may move
//! it; the addresses must be those of the moment the heap is written.
//!
//! They are noted just before the call, and again at the end of every GC
//! (`memory`'s GarbageCollectionFinish listener, in the pause) while the
//! dump's file is still empty; a live dump that saw no GC's end drops
//! them (stale, they could name the wrong objects). HotSpot creates the file, then in one VM
//! operation runs its full GC (a live dump) and writes the heap: no GC can
//! come between that GC's end and the writing, and any GC after it finds
//! the file written and notes nothing. So the last addresses noted are
//! those the file holds, whichever GCs the program runs meanwhile (its own
//! before the dump, the one an OutOfMemoryError's allocation started).

use super::{Addresses, Origins};
use crate::error::AgentError;
use crate::vm::JavaException;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Runs `dump` (HotSpot's dumper, writing `file`; its argument: with its
/// own full GC, only the live objects) and answers the addresses of the
/// weakly followed objects in it, sorted, and the seconds it took. A live
/// dump on a collector whose dump GC posts no event (Serial, Parallel) is
/// made as a full GC the agent asks for (`force_gc`: it posts them) and a
/// dump of every object right after it: garbage made between the two, a
/// few milliseconds, is in the file.
pub fn around_dump(
    origins: &dyn Origins,
    file: &Path,
    live: bool,
    force_gc: impl FnOnce() -> Result<(), AgentError>,
    dump: impl FnOnce(bool) -> Result<(), JavaException>,
) -> Result<(Addresses, f64), AgentError> {
    let c = std::ffi::CString::new(file.as_os_str().as_bytes())
        .map_err(|_| JavaException("a heap dump path with a NUL byte".into()))?;
    let dump_live = live && origins.dump_gc_is_seen();
    origins.arm_addresses(c);
    let start = std::time::Instant::now();
    let result = match (live, dump_live) {
        (true, false) => force_gc().and_then(|()| dump(false).map_err(AgentError::from)),
        _ => dump(dump_live).map_err(AgentError::from),
    };
    let seconds = start.elapsed().as_secs_f64();
    let (mut addresses, renoted) = origins.take_addresses();
    if live && renoted == 0 {
        // The GC that moved the objects was not seen: what was noted
        // before it is stale, and must name nothing.
        crate::log::warn("heap dump: no GC event came with the dump's GC; arrays and the JDK's objects keep the empty trace");
        addresses = Addresses::default();
    }
    if addresses.is_lost() {
        // An address beyond 16 TB of the others: not a heap HotSpot makes.
        crate::log::warn("heap dump: the weakly followed objects' addresses do not fit; they keep the empty trace");
        addresses = Addresses::default();
    }
    result.map(|()| (addresses, seconds))
}
