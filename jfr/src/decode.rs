//! Reading JFR's values from bytes in memory (an event, the metadata, a
//! checkpoint), trusting nothing: every length is checked against the bytes
//! left before anything is allocated for it, so a hostile count costs an
//! error, not memory.

use crate::encode::string;
use std::fmt;

/// Why a recording was refused, and where: every kind carries the byte
/// offset in the file (when the cursor knows its base) and the message the
/// CLI prints after it, `byte OFFSET: MESSAGE`.
#[derive(Debug)]
pub enum Error {
    /// The bytes end before what they announce: a value, an event, a chunk
    /// header or a chunk claims more bytes than are there.
    Truncated {
        /// Where the cut was noticed.
        offset: u64,
        /// What was cut.
        message: String,
    },
    /// Bytes that are not JFR as the format defines it: a bad magic, an
    /// undeclared type, an offset outside its chunk, a chain that loops.
    Malformed {
        /// Where the bad bytes are.
        offset: u64,
        /// What is wrong with them.
        message: String,
    },
    /// A JFR file profrj does not read: another format version, or a
    /// chunk still being written.
    Unsupported {
        /// Where the header says so.
        offset: u64,
        /// What is not supported.
        message: String,
    },
    /// A size or a nesting over the reader's bounds (which keep its memory
    /// and stack bounded on any input).
    OverLimit {
        /// Where the oversized value starts.
        offset: u64,
        /// What went over, and by how much.
        message: String,
    },
    /// Reading the file failed.
    Io {
        /// Where the read started.
        offset: u64,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The caller's sink refused an event (its own bound, say).
    Refused {
        /// Where the event starts.
        offset: u64,
        /// The sink's reason.
        message: String,
    },
}

impl Error {
    /// The byte offset in the file where reading stopped.
    pub fn offset(&self) -> u64 {
        match self {
            Error::Truncated { offset, .. }
            | Error::Malformed { offset, .. }
            | Error::Unsupported { offset, .. }
            | Error::OverLimit { offset, .. }
            | Error::Io { offset, .. }
            | Error::Refused { offset, .. } => *offset,
        }
    }

    /// [`Error::Truncated`] as an [`ErrorKind`].
    pub(crate) fn truncated(offset: u64, message: String) -> Error {
        Error::Truncated { offset, message }
    }
    /// [`Error::Malformed`] as an [`ErrorKind`].
    pub(crate) fn malformed(offset: u64, message: String) -> Error {
        Error::Malformed { offset, message }
    }
    /// [`Error::Unsupported`] as an [`ErrorKind`].
    pub(crate) fn unsupported(offset: u64, message: String) -> Error {
        Error::Unsupported { offset, message }
    }
    /// [`Error::OverLimit`] as an [`ErrorKind`].
    pub(crate) fn over_limit(offset: u64, message: String) -> Error {
        Error::OverLimit { offset, message }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}: ", self.offset())?;
        match self {
            Error::Truncated { message, .. }
            | Error::Malformed { message, .. }
            | Error::Unsupported { message, .. }
            | Error::OverLimit { message, .. }
            | Error::Refused { message, .. } => f.write_str(message),
            Error::Io { source, .. } => write!(f, "{source}"),
        }
    }
}

// No `source()`: the message already ends with the I/O error's text (what
// the CLI has always printed), and a chain would print it twice.
impl std::error::Error for Error {}

/// How an [`Error`] is made from an offset and a message, so a reader
/// names the kind where it finds the fault.
pub(crate) type ErrorKind = fn(u64, String) -> Error;

/// A reading step's result.
pub type Result<T> = std::result::Result<T, Error>;

/// A string value: written out, null, or a key into the string pool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JString {
    /// Java's `null`.
    Null,
    /// The string itself (UTF-8, Latin-1 and UTF-16 all decoded to this).
    Text(String),
    /// A key into the chunk's `java.lang.String` pool.
    Pool(u64),
}

/// Bytes being read, with the file offset of their first byte.
pub struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    base: u64,
}

impl<'a> Cursor<'a> {
    /// `bytes` at file offset 0.
    #[cfg(test)]
    pub fn new(bytes: &'a [u8]) -> Self {
        Self::at(bytes, 0)
    }

    /// `bytes` that start at file offset `base` (for error messages).
    pub fn at(bytes: &'a [u8], base: u64) -> Self {
        Cursor {
            bytes,
            pos: 0,
            base,
        }
    }

    /// An error of `kind` at the cursor's file offset.
    pub fn error(&self, kind: ErrorKind, message: impl Into<String>) -> Error {
        kind(self.base + self.pos as u64, message.into())
    }

    /// How far into its bytes the cursor is.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes not yet read: the most any count read next may claim.
    pub fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    /// Every byte read.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// One byte (`boolean`, `byte`, a string's encoding).
    pub fn u8(&mut self) -> Result<u8> {
        let b = *self
            .bytes
            .get(self.pos)
            .ok_or_else(|| self.error(Error::truncated, "value runs past the end of its event"))?;
        self.pos += 1;
        Ok(b)
    }

    /// The next `n` bytes, borrowed, if there are that many.
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.error(
                Error::truncated,
                format!(
                    "a length of {n} bytes runs past the end of its event ({} left)",
                    self.remaining()
                ),
            ));
        }
        let s = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    /// A JFR varint (see `encode`).
    pub fn varint(&mut self) -> Result<u64> {
        let mut v = 0u64;
        for i in 0..8 {
            let b = self.u8()?;
            v |= ((b & 0x7f) as u64) << (7 * i);
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Ok(v | (self.u8()? as u64) << 56)
    }

    /// A varint that counts things each at least one byte long: never
    /// more than the bytes left (so nothing is sized from a hostile count).
    pub fn count(&mut self) -> Result<usize> {
        let n = self.varint()?;
        if n > self.remaining() as u64 {
            return Err(self.error(
                Error::truncated,
                format!("a count of {n} with only {} bytes left", self.remaining()),
            ));
        }
        Ok(n as usize)
    }

    /// A big-endian `float`.
    pub fn f32(&mut self) -> Result<f32> {
        let b = self.take(4)?;
        Ok(f32::from_be_bytes(b.try_into().expect("4 bytes")))
    }

    /// A big-endian `double`.
    pub fn f64(&mut self) -> Result<f64> {
        let b = self.take(8)?;
        Ok(f64::from_be_bytes(b.try_into().expect("8 bytes")))
    }

    /// A string in any of JFR's encodings.
    pub fn jstring(&mut self) -> Result<JString> {
        let encoding = self.u8()?;
        Ok(match encoding {
            string::NULL => JString::Null,
            string::EMPTY => JString::Text(String::new()),
            string::POOL => JString::Pool(self.varint()?),
            string::UTF8 => {
                let n = self.count()?;
                JString::Text(String::from_utf8_lossy(self.take(n)?).into_owned())
            }
            string::LATIN1 => {
                let n = self.count()?;
                JString::Text(self.take(n)?.iter().map(|&b| b as char).collect())
            }
            string::CHARS => {
                let n = self.count()?;
                let mut units = Vec::with_capacity(n);
                for _ in 0..n {
                    units.push(self.varint()? as u16);
                }
                JString::Text(String::from_utf16_lossy(&units))
            }
            e => return Err(self.error(Error::malformed, format!("unknown string encoding {e}"))),
        })
    }

    /// A string that may not refer to a pool (the metadata's).
    pub fn string(&mut self) -> Result<Option<String>> {
        match self.jstring()? {
            JString::Null => Ok(None),
            JString::Text(s) => Ok(Some(s)),
            JString::Pool(_) => Err(self.error(
                Error::malformed,
                "a string pool reference where none may be",
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_counts_fail_before_allocating() {
        // A UTF-8 string claiming 2^62 bytes.
        let mut b = vec![string::UTF8];
        crate::encode::put_varint(&mut b, 1 << 62);
        let e = Cursor::new(&b).jstring().unwrap_err();
        assert!(matches!(e, Error::Truncated { .. }), "{e}");
        // A char array claiming more units than bytes.
        let b = [string::CHARS, 100, 65];
        assert!(Cursor::new(&b).jstring().is_err());
    }

    #[test]
    fn other_encodings() {
        let b = [
            string::LATIN1,
            2,
            0xe9,
            b'a',
            string::CHARS,
            2,
            0x68,
            0xe9,
            0x01,
        ];
        let mut c = Cursor::new(&b);
        assert_eq!(c.jstring().unwrap(), JString::Text("éa".into()));
        assert_eq!(c.jstring().unwrap(), JString::Text("hé".into()));
        assert!(c.is_empty());
        let b = [string::POOL, 7];
        assert_eq!(Cursor::new(&b).jstring().unwrap(), JString::Pool(7));
        assert!(Cursor::new(&b).string().is_err());
    }

    #[test]
    fn errors_carry_the_file_offset() {
        let b = [0x80u8, 0x80];
        let e = Cursor::at(&b, 1000).varint().unwrap_err();
        assert_eq!(e.offset(), 1002);
        assert_eq!(
            e.to_string(),
            "byte 1002: value runs past the end of its event"
        );
    }
}
