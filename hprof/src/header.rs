//! The file header: `JAVA PROFILE 1.0.2\0`, the id size (`u4`), and the
//! dump's time (`u8`, milliseconds since the epoch; HotSpot writes it as
//! two `u4`, high word first, which is the same bytes).

use crate::error::Error;
use crate::values::IdSize;

/// The versions read: 1.0.1 (the old hprof agent's) and 1.0.2 (HotSpot's,
/// with heap-dump segments). Android's 1.0.3 adds sub-records the parser
/// does not know, so it is refused here rather than in the middle.
const FORMATS: [&str; 2] = ["JAVA PROFILE 1.0.1", "JAVA PROFILE 1.0.2"];
const PREFIX: &[u8] = b"JAVA PROFILE ";
/// The longest format string looked at before its NUL.
const MAX_FORMAT: usize = 32;

/// What a file's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// The format string, without its NUL (`JAVA PROFILE 1.0.2`).
    pub format: &'static str,
    /// The size of object ids.
    pub id_size: IdSize,
    /// When the dump was made, milliseconds since the epoch.
    pub timestamp_ms: u64,
}

impl Header {
    /// The header at the start of `buf` and its length in bytes (the offset
    /// of the first record), or `None` while `buf` holds too little of it.
    pub fn parse(buf: &[u8]) -> Result<Option<(Header, usize)>, Error> {
        let head = &buf[..buf.len().min(PREFIX.len())];
        if !PREFIX.starts_with(head) {
            return Err(Error::malformed(
                0,
                "not an HPROF file: it does not start with \"JAVA PROFILE \"",
            ));
        }
        let Some(nul) = buf.iter().take(MAX_FORMAT).position(|&b| b == 0) else {
            if buf.len() >= MAX_FORMAT {
                return Err(Error::malformed(
                    0,
                    "an HPROF format string without its NUL in its first 32 bytes",
                ));
            }
            return Ok(None);
        };
        let Some(&format) = FORMATS.iter().find(|f| f.as_bytes() == &buf[..nul]) else {
            return Err(Error::unsupported(
                0,
                format!(
                    "HPROF format {:?}: only {} are read",
                    String::from_utf8_lossy(&buf[..nul]),
                    FORMATS.join(" and ")
                ),
            ));
        };
        let Some(rest) = buf.get(nul + 1..nul + 13) else {
            return Ok(None);
        };
        let size = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]);
        let Some(id_size) = IdSize::new(size) else {
            return Err(Error::unsupported(
                nul as u64 + 1,
                format!("an id size of {size} bytes: only 4 and 8 are read"),
            ));
        };
        let mut ts = [0u8; 8];
        ts.copy_from_slice(&rest[4..12]);
        let header = Header {
            format,
            id_size,
            timestamp_ms: u64::from_be_bytes(ts),
        };
        Ok(Some((header, nul + 13)))
    }
}

/// Does `head` (a file's first bytes, at least 19 of them) start a binary
/// HPROF file of a version this crate may read (`JAVA PROFILE 1.0.`, a
/// digit, a NUL)? The NUL tells it from HPROF's text form, whose first
/// line starts with the same words.
pub fn is_hprof(head: &[u8]) -> bool {
    head.starts_with(b"JAVA PROFILE 1.0.")
        && head.get(17).is_some_and(u8::is_ascii_digit)
        && head.get(18) == Some(&0)
}
