//! Where the objects followed by weak reference are when HotSpot writes
//! them. HotSpot's dump names an object by its address, and a GC may move
//! it; the addresses must be those of the moment the heap is written.
//!
//! They are noted just before the call, and again at the end of every GC
//! (`memory`'s GarbageCollectionFinish listener, in the pause) while the
//! dump's file is still empty. HotSpot creates the file, then in one VM
//! operation runs its full GC (a live dump) and writes the heap: no GC can
//! come between that GC's end and the writing, and any GC after it finds
//! the file written and notes nothing. So the last addresses noted are
//! those the file holds, whichever GCs the program runs meanwhile (its own
//! before the dump, the one an OutOfMemoryError's allocation started).

use super::Origins;
use crate::vm::JavaException;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Runs `dump` (HotSpot's dumper, writing `file`) and answers the
/// addresses of the weakly followed objects in it, sorted, and the seconds
/// the dump took.
pub fn around_dump(
    origins: &dyn Origins,
    file: &Path,
    dump: impl FnOnce() -> Result<(), JavaException>,
) -> Result<(Vec<(u64, u32)>, f64), JavaException> {
    let c = std::ffi::CString::new(file.as_os_str().as_bytes())
        .map_err(|_| JavaException("a heap dump path with a NUL byte".into()))?;
    origins.arm_addresses(c);
    let start = std::time::Instant::now();
    let result = dump();
    let seconds = start.elapsed().as_secs_f64();
    let addresses = origins.take_addresses();
    result.map(|()| (addresses, seconds))
}
