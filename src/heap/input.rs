//! A heap dump's bytes: the file opened (gzipped or not, told by its
//! magic) and walked with `profrj_hprof`'s scanner through a buffer that is
//! refilled from the start of the next item. A visitor sees each item with
//! its body, which it may read (`Body::take`, never more than it asks for
//! at once) or leave; what it leaves is skipped. The buffer holds at most
//! one item's fixed fields (a CLASS_DUMP whole) and 64 KiB more, whatever
//! the file holds.

use crate::error::CliError;
use flate2::read::MultiGzDecoder;
use profrj_hprof::{Header, Item, Scanner, Step};
use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::Path;

/// How much is read at a time, and kept ahead of the scanner.
const CHUNK: usize = 1 << 16;
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Is `path` a binary HPROF file, plain or gzipped? (`None`: neither, or
/// unreadable, or not a regular file: the snapshot reader then says why. A
/// pipe is never looked into, since what is read from it would be lost to
/// the snapshot reader; a dump is read twice, so it must be a file.)
pub fn sniff(path: &Path) -> Option<bool> {
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut head = [0u8; 32];
    let n = read_up_to(&mut File::open(path).ok()?, &mut head).ok()?;
    if profrj_hprof::is_hprof(&head[..n]) {
        return Some(false);
    }
    if head[..n].starts_with(&GZIP_MAGIC) {
        let mut gz = MultiGzDecoder::new(File::open(path).ok()?);
        let n = read_up_to(&mut gz, &mut head).ok()?;
        if profrj_hprof::is_hprof(&head[..n]) {
            return Some(true);
        }
    }
    None
}

/// Reads until `buf` is full or the input ends; returns the bytes read.
fn read_up_to(input: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match input.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// One walk over a dump's records.
pub struct Walk<'p> {
    path: &'p Path,
    input: Box<dyn Read>,
    buf: Vec<u8>,
    /// Where the scanner's next item starts in `buf`.
    pos: usize,
    eof: bool,
    scratch: Vec<u8>,
    scanner: Scanner,
    pub header: Header,
}

impl<'p> Walk<'p> {
    /// Opens the dump and reads its header; `gzip` as [`sniff`] said.
    pub fn open(path: &'p Path, gzip: bool) -> Result<Walk<'p>, CliError> {
        let fail = |e: io::Error| CliError::Input(format!("{}: {e}", path.display()));
        let file = File::open(path).map_err(fail)?;
        let len = file.metadata().map_err(fail)?.len();
        let input: Box<dyn Read> = if gzip {
            Box::new(MultiGzDecoder::new(BufReader::new(file)))
        } else {
            Box::new(file)
        };
        let mut head = [0u8; 64];
        let mut input = input;
        let n = read_up_to(&mut input, &mut head).map_err(fail)?;
        let (header, start) = Header::parse(&head[..n])
            .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?
            .ok_or_else(|| {
                CliError::Input(format!(
                    "{}: byte 0: the file ends inside the HPROF header",
                    path.display()
                ))
            })?;
        let mut scanner = Scanner::new(header.id_size, start as u64);
        if !gzip {
            // A regular file's length bounds every record at its header.
            scanner.set_file_len(len);
        }
        Ok(Walk {
            path,
            input,
            buf: head[start..n].to_vec(),
            pos: 0,
            eof: n < head.len(),
            scratch: Vec::new(),
            scanner,
            header,
        })
    }

    /// The crate's error, naming the file.
    fn error(&self, e: profrj_hprof::Error) -> CliError {
        CliError::Input(format!("{}: {e}", self.path.display()))
    }

    /// Keeps at least `want` bytes buffered from `pos`, unless the input ends.
    fn fill(&mut self, want: usize) -> Result<(), CliError> {
        if self.buf.len() - self.pos >= want || self.eof {
            return Ok(());
        }
        self.buf.drain(..self.pos);
        self.pos = 0;
        while self.buf.len() < want && !self.eof {
            let old = self.buf.len();
            self.buf.resize(old + CHUNK, 0);
            let got = loop {
                match self.input.read(&mut self.buf[old..]) {
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    r => break r,
                }
            };
            let got = got.map_err(|e| CliError::Input(format!("{}: {e}", self.path.display())))?;
            self.buf.truncate(old + got);
            self.eof = got == 0;
        }
        Ok(())
    }

    /// Every item to its end, each handed to `visit` with its body.
    pub fn run<E: From<CliError>>(
        &mut self,
        mut visit: impl FnMut(&Item, &mut Body) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut want = CHUNK;
        loop {
            self.fill(want)?;
            let at = self.scanner.position();
            let step = self.scanner.next(&self.buf[self.pos..], at);
            let step = step.map_err(|e| self.error(e))?;
            match step {
                Step::End => return Ok(()),
                Step::NeedMore { at_least } => {
                    let have = self.buf.len() - self.pos;
                    if self.eof && have < at_least {
                        let r = self.scanner.finish(have);
                        return r.map_err(|e| self.error(e).into());
                    }
                    want = at_least;
                }
                Step::Item { item, len, body } => {
                    let avail = &self.buf[self.pos + len..];
                    let in_buf = avail.len().min(usize::try_from(body).unwrap_or(usize::MAX));
                    let mut b = Body {
                        buffered: &avail[..in_buf],
                        used: 0,
                        from_input: 0,
                        len: body,
                        offset: at + len as u64,
                        input: &mut self.input,
                        scratch: &mut self.scratch,
                        path: self.path,
                    };
                    visit(&item, &mut b)?;
                    let skip = body - in_buf as u64 - b.from_input;
                    let skipped_at = b.offset + in_buf as u64 + b.from_input;
                    self.pos += len + in_buf;
                    if skip > 0 {
                        let got = io::copy(&mut (&mut self.input).take(skip), &mut io::sink());
                        let got = got.map_err(|e| {
                            CliError::Input(format!("{}: {e}", self.path.display()))
                        })?;
                        if got < skip {
                            return Err(cut(self.path, skipped_at + got, body).into());
                        }
                    }
                    want = CHUNK;
                }
            }
        }
    }
}

/// The file ended inside a body of `len` bytes (a gzipped dump, whose
/// length is not known before).
fn cut(path: &Path, at: u64, len: u64) -> CliError {
    let e = profrj_hprof::Error::Truncated {
        offset: at,
        message: format!("the file ends inside a record's body of {len} bytes"),
    };
    CliError::Input(format!("{}: {e}", path.display()))
}

/// An item's body: the part already buffered, then the input.
pub struct Body<'a> {
    buffered: &'a [u8],
    used: usize,
    from_input: u64,
    len: u64,
    /// Where the body starts in the file.
    offset: u64,
    input: &'a mut Box<dyn Read>,
    scratch: &'a mut Vec<u8>,
    path: &'a Path,
}

impl Body<'_> {
    /// Bytes of the body not read yet.
    pub fn left(&self) -> u64 {
        self.len - self.used as u64 - self.from_input
    }

    /// The next `n` bytes of the body (fewer if it has fewer left), in one
    /// slice.
    pub fn take(&mut self, n: usize) -> Result<&[u8], CliError> {
        let n = n.min(usize::try_from(self.left()).unwrap_or(usize::MAX));
        let in_buf = self.buffered.len() - self.used;
        if n <= in_buf {
            let s = &self.buffered[self.used..self.used + n];
            self.used += n;
            return Ok(s);
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(&self.buffered[self.used..]);
        self.used = self.buffered.len();
        // Read as it comes, not allocated ahead: a gzipped dump's lengths
        // are not checked against the file's, so a claim costs nothing
        // until its bytes are there.
        let want = (n - in_buf) as u64;
        let got = (&mut *self.input)
            .take(want)
            .read_to_end(self.scratch)
            .map_err(|e| CliError::Input(format!("{}: {e}", self.path.display())))?;
        self.from_input += got as u64;
        if (got as u64) < want {
            let at = self.offset + self.used as u64 + self.from_input;
            return Err(cut(self.path, at, self.len));
        }
        Ok(&self.scratch[..n])
    }
}
