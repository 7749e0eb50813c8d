//! The serials the pass rewrites, written back a stretch of the file at a
//! time: the bytes from a stretch's first patch to its last (at most
//! [`STRETCH`]), copied from the file, patched and written with one
//! `pwrite`. Each worker of the pass writes its own (positional writes of
//! disjoint stretches). Writing through a shared writable map instead costs
//! a page fault and a file-system dirtying per page: measured 2x slower.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;

/// The most bytes one write covers.
const STRETCH: usize = 1 << 20;

pub struct Writes<'f> {
    file: &'f File,
    /// (offset, serial), ascending, all within `STRETCH` of the first.
    patches: Vec<(usize, u32)>,
    buf: Vec<u8>,
}

impl<'f> Writes<'f> {
    pub fn new(file: &'f File) -> Self {
        Writes {
            file,
            patches: Vec::new(),
            buf: Vec::new(),
        }
    }

    /// One serial to write at `offset`; `data` is the file as it is.
    pub fn add(&mut self, offset: usize, serial: u32, data: &[u8]) -> io::Result<()> {
        if let (Some(&(first, _)), Some(&(last, _))) = (self.patches.first(), self.patches.last()) {
            if offset < last || offset + 4 - first > STRETCH {
                self.flush(data)?;
            }
        }
        self.patches.push((offset, serial));
        Ok(())
    }

    /// Writes the stretch from the first patch to the last, patched.
    pub fn flush(&mut self, data: &[u8]) -> io::Result<()> {
        let (Some(&(first, _)), Some(&(last, _))) = (self.patches.first(), self.patches.last())
        else {
            return Ok(());
        };
        let stretch = data
            .get(first..last + 4)
            .ok_or_else(|| io::Error::other("a patch past the dump's end"))?;
        self.buf.clear();
        self.buf.extend_from_slice(stretch);
        for &(at, serial) in &self.patches {
            self.buf[at - first..at - first + 4].copy_from_slice(&serial.to_be_bytes());
        }
        self.patches.clear();
        self.file.write_all_at(&self.buf, first as u64)
    }
}
