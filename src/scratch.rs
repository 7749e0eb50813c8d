//! Where a reader keeps what it does not hold in memory: a private directory
//! (mode 0700, created exclusively under the temporary directory, removed
//! when the reading ends) holding one unnamed file each (gone with the
//! process, however it ends). A heap's graph lives there as memory-mapped
//! arrays of fixed-size numbers, which the kernel pages in and out as the
//! algorithms touch them, so the process's own memory stays bounded by the
//! dump's classes and symbols, not its objects (a heap larger than memory
//! is read as MAT reads it, through index files); a snapshot's call trees
//! and the sorted runs of the stack readers are plain files written and
//! read in order (`snapshot/spill.rs`, `sort.rs`).

use crate::error::CliError;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::marker::PhantomData;
use std::os::fd::AsRawFd;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The private directory; removed with everything in it when dropped.
pub struct Scratch {
    dir: PathBuf,
    files: u32,
}

impl Scratch {
    /// `.profrj-scratch-<16 hex>.d` under `$TMPDIR` (or /tmp), mode 0700,
    /// created exclusively: an existing path of that name (a link an
    /// attacker put there) fails the creation rather than being used.
    pub fn new() -> Result<Scratch, CliError> {
        let base = std::env::temp_dir();
        let dir = base.join(format!(
            ".profrj-scratch-{:016x}.d",
            crate::safe_fs::random_u64()
        ));
        std::fs::DirBuilder::new()
            .mode(0o700)
            .create(&dir)
            .map_err(|e| CliError::Output(format!("{}: {e}", dir.display())))?;
        Ok(Scratch { dir, files: 0 })
    }

    /// The directory.
    #[cfg(test)]
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// A new file of the directory, mode 0600, readable and writable (a
    /// shared writable map needs both). It has no name (O_TMPFILE), so a
    /// reading killed by a signal, which runs no drop, leaves at most the
    /// empty directory; where the file system has no unnamed files, it is
    /// created exclusively, never through a link, and its name removed at
    /// once.
    fn file(&mut self, what: &str) -> Result<(PathBuf, File), CliError> {
        self.files += 1;
        let path = self.dir.join(format!("{}-{what}", self.files));
        let fail = |e: std::io::Error| CliError::Output(format!("{}: {e}", path.display()));
        let unnamed = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_TMPFILE | libc::O_CLOEXEC)
            .open(&self.dir);
        if let Ok(f) = unnamed {
            return Ok((path, f));
        }
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&path)
            .map_err(fail)?;
        std::fs::remove_file(&path).map_err(fail)?;
        Ok((path, f))
    }

    /// An array of `len` zeros.
    pub fn array<T: Plain>(&mut self, what: &str, len: usize) -> Result<Mapped<T>, CliError> {
        let (path, f) = self.file(what)?;
        Mapped::new(f, &path, len)
    }

    /// A file written in order, then mapped ([`Spool::finish`]).
    pub fn spool<T: Plain>(&mut self, what: &str) -> Result<Spool<T>, CliError> {
        let (path, f) = self.file(what)?;
        Ok(Spool {
            out: BufWriter::with_capacity(1 << 20, f),
            path,
            len: 0,
            _t: PhantomData,
        })
    }

    /// A file to write whole (a gzipped dump's plain bytes).
    pub fn raw(&mut self, what: &str) -> Result<(PathBuf, File), CliError> {
        self.file(what)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Numbers that any bytes are a valid value of (so a mapped file of zeros
/// or of what we wrote is one).
pub trait Plain: Copy + Default + 'static {}
impl Plain for u8 {}
impl Plain for u32 {}
impl Plain for u64 {}

/// A file mapped as `[T]`, shared and writable.
pub struct Mapped<T: Plain> {
    ptr: *mut T,
    len: usize,
    _file: File,
}

impl<T: Plain> Mapped<T> {
    fn new(f: File, path: &Path, len: usize) -> Result<Mapped<T>, CliError> {
        let fail = |e: std::io::Error| CliError::Output(format!("{}: {e}", path.display()));
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| CliError::Input(format!("an array of {len} entries is too large")))?;
        f.set_len(bytes as u64).map_err(fail)?;
        if bytes == 0 {
            return Ok(Mapped {
                ptr: std::ptr::NonNull::dangling().as_ptr(),
                len: 0,
                _file: f,
            });
        }
        // SAFETY: a fresh mapping of a file we own, of its whole length;
        // nothing else maps it, and it is unmapped only in drop.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                bytes,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(fail(std::io::Error::last_os_error()));
        }
        Ok(Mapped {
            ptr: p.cast(),
            len,
            _file: f,
        })
    }
}

impl<T: Plain> Mapped<T> {
    /// Takes the array's pages out of the process's memory until it is
    /// touched again: between the phases that use it (the file keeps
    /// every value; the page cache keeps what memory allows).
    pub fn release(&self) {
        let bytes = self.len * std::mem::size_of::<T>();
        if bytes > 0 {
            // SAFETY: the whole of this shared file mapping: MADV_DONTNEED
            // drops the frames, and the kernel refills them from the file
            // (which holds every write) on the next touch.
            unsafe { libc::madvise(self.ptr.cast(), bytes, libc::MADV_DONTNEED) };
        }
    }
}

impl<T: Plain> std::ops::Deref for Mapped<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` maps `len` T's (page-aligned, so aligned for T),
        // alive as long as self; any bytes are a valid T (Plain).
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: Plain> std::ops::DerefMut for Mapped<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as in deref; &mut self makes the borrow unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: Plain> Drop for Mapped<T> {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: the mapping made in `new`, of this length.
            unsafe { libc::munmap(self.ptr.cast(), self.len * std::mem::size_of::<T>()) };
        }
    }
}

/// A file of `T`s written one after the other, then mapped whole.
pub struct Spool<T: Plain> {
    out: BufWriter<File>,
    path: PathBuf,
    len: usize,
    _t: PhantomData<T>,
}

impl<T: Plain> Spool<T> {
    pub fn push(&mut self, v: T) -> Result<(), CliError> {
        // SAFETY: T is a plain number: its bytes are its value.
        let bytes = unsafe {
            std::slice::from_raw_parts((&v as *const T).cast::<u8>(), std::mem::size_of::<T>())
        };
        self.len += 1;
        self.out
            .write_all(bytes)
            .map_err(|e| CliError::Output(format!("{}: {e}", self.path.display())))
    }

    /// The values written, mapped.
    pub fn finish(self) -> Result<Mapped<T>, CliError> {
        let fail = |e: std::io::Error| CliError::Output(format!("{}: {e}", self.path.display()));
        let f = self.out.into_inner().map_err(|e| fail(e.into_error()))?;
        Mapped::new(f, &self.path, self.len)
    }
}

/// A file mapped read-only (the dump).
pub struct ReadMap {
    ptr: *const u8,
    len: usize,
    _file: Option<File>,
}

impl ReadMap {
    /// A map of nothing (a placeholder).
    pub fn empty() -> ReadMap {
        ReadMap {
            ptr: std::ptr::NonNull::dangling().as_ptr(),
            len: 0,
            _file: None,
        }
    }

    pub fn open(f: File, path: &Path) -> Result<ReadMap, CliError> {
        let fail = |e: std::io::Error| CliError::Input(format!("{}: {e}", path.display()));
        let len = f.metadata().map_err(fail)?.len();
        let len = usize::try_from(len).map_err(|_| fail(std::io::Error::other("too large")))?;
        if len == 0 {
            return Ok(ReadMap {
                ptr: std::ptr::NonNull::dangling().as_ptr(),
                len: 0,
                _file: Some(f),
            });
        }
        // SAFETY: a private read-only mapping of the whole file. A file
        // changed under us by another process gives wrong bytes, which the
        // scanner checks as it checks any input; it cannot make a slice
        // longer than the mapping.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_PRIVATE,
                f.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(fail(std::io::Error::last_os_error()));
        }
        // SAFETY: advice only.
        unsafe { libc::madvise(p, len, libc::MADV_SEQUENTIAL) };
        Ok(ReadMap {
            ptr: p.cast(),
            len,
            _file: Some(f),
        })
    }

    pub fn bytes(&self) -> &[u8] {
        // SAFETY: the mapping of `len` bytes, alive as long as self.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl Drop for ReadMap {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: the mapping made in `open`, of this length.
            unsafe { libc::munmap(self.ptr.cast_mut().cast(), self.len) };
        }
    }
}

/// Gives back the pages of `map[from..to]` (whole pages inside it): a
/// read-only private map of a file reads them again if they are touched.
pub fn release(map: &[u8], from: usize, to: usize) {
    const PAGE: usize = 4096;
    let start = from.div_ceil(PAGE) * PAGE;
    let end = to.min(map.len()) / PAGE * PAGE;
    if end > start {
        // SAFETY: a range of whole pages inside `map`, a private read-only
        // file mapping (ReadMap) starting at a page: MADV_DONTNEED only
        // drops their frames; no reference into them is invalidated, as
        // the kernel refills them from the file on the next touch.
        unsafe {
            libc::madvise(
                map.as_ptr().add(start).cast_mut().cast(),
                end - start,
                libc::MADV_DONTNEED,
            )
        };
    }
}
