//! The dump mapped shared and read-only: read in place, written with
//! `pwrite` (which the map then shows), its pages dropped once read.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Bytes kept mapped behind the cursor before they are dropped.
const KEEP: usize = 8 << 20;

pub struct Shared {
    ptr: *mut u8,
    len: usize,
    /// Everything before this has been dropped from the map.
    released: std::cell::Cell<usize>,
}

impl Shared {
    pub fn new(file: &File, len: usize) -> io::Result<Self> {
        if len == 0 {
            return Err(io::Error::other("the dump is empty"));
        }
        // SAFETY: maps `len` bytes of an open file, shared, for reading;
        // the file is the dump in the agent's private directory, which
        // only this pass writes (through `pwrite`) while it is mapped.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: the range just mapped; advice only.
        unsafe { libc::madvise(ptr, len, libc::MADV_SEQUENTIAL) };
        Ok(Shared {
            ptr: ptr.cast(),
            len,
            released: std::cell::Cell::new(0),
        })
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: `len` bytes mapped at `ptr` while `self` lives; pages
        // dropped by `release_before` read back from the file (the
        // writer thread may read a stretch just behind the window: it
        // faults back in). The writer's pwrite changes only 4-byte
        // serials of items the pass has read, each stretch once, and it
        // copies a stretch before writing it back, so no byte anyone
        // still reads changes under it.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// Drops the pages well behind `at` from the map (they stay in
    /// the file and the page cache, changes included), so the pass's
    /// resident memory does not grow with the dump.
    pub fn release_before(&self, at: usize) {
        let page = 4096;
        let upto = at.saturating_sub(KEEP) / page * page;
        let released = self.released.get();
        if upto >= released + KEEP {
            // SAFETY: a page-aligned range inside the map; for a shared
            // file map MADV_DONTNEED keeps the data (it is the file's).
            unsafe {
                libc::madvise(
                    self.ptr.add(released).cast(),
                    upto - released,
                    libc::MADV_DONTNEED,
                )
            };
            self.released.set(upto);
        }
    }
}

/// The map's pages can be dropped from any thread (each drops the range
/// it has read); its bytes are only read.
// SAFETY: the pointer is to a read-only shared file map, alive while
// `Shared` is; `released` (a Cell) is used by `release_before` alone, which
// only the thread that made the map calls.
unsafe impl Sync for Shared {}

impl Shared {
    /// Drops the whole pages inside `from..to` (a range read and done with).
    pub fn release_range(&self, from: usize, to: usize) {
        let page = 4096;
        let start = from.div_ceil(page) * page;
        let end = (to.min(self.len) / page) * page;
        if end > start {
            // SAFETY: a page-aligned range inside the map; for a shared file
            // map MADV_DONTNEED keeps the data (it is the file's).
            unsafe { libc::madvise(self.ptr.add(start).cast(), end - start, libc::MADV_DONTNEED) };
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `new` mapped.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}
