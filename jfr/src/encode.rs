//! How JFR writes values: integers (`short`, `int`, `long`, `char`) as
//! variable-length 7-bit groups, low group first, the high bit of each byte
//! saying another follows, and a ninth byte carrying the last 8 bits whole;
//! `boolean` and `byte` as one byte; `float` and `double` big-endian;
//! strings with an encoding byte first. Negative numbers are written as
//! their 64-bit two's complement (nine bytes).

/// String encodings (the byte before a string's bytes).
pub(crate) mod string {
    /// Java's `null`.
    pub const NULL: u8 = 0;
    /// `""`, with no length.
    pub const EMPTY: u8 = 1;
    /// A key into the `java.lang.String` constant pool.
    pub const POOL: u8 = 2;
    /// A length, then that many bytes of UTF-8.
    pub const UTF8: u8 = 3;
    /// UTF-16 code units, each as a varint.
    pub const CHARS: u8 = 4;
    /// A length, then that many bytes of ISO-8859-1.
    pub const LATIN1: u8 = 5;
}

/// Bytes of an event (or of a header) being built.
#[derive(Default, Debug, Clone)]
pub struct Buf {
    /// What has been written, ready for [`crate::ChunkWriter::raw`].
    pub bytes: Vec<u8>,
}

impl Buf {
    /// An empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Empties the buffer and keeps its capacity, for the next event.
    pub fn clear(&mut self) {
        self.bytes.clear();
    }

    /// Bytes written.
    pub fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Nothing written yet.
    pub fn is_empty(&self) -> bool {
        self.bytes.is_empty()
    }

    /// A varint (`int`, `long`, `short`, `char`, constant pool keys).
    pub fn varint(&mut self, v: u64) -> &mut Self {
        put_varint(&mut self.bytes, v);
        self
    }

    /// A signed `long` or `int` (negative: nine bytes).
    pub fn long(&mut self, v: i64) -> &mut Self {
        self.varint(v as u64)
    }

    /// A `boolean`: one byte, 0 or 1.
    pub(crate) fn boolean(&mut self, v: bool) -> &mut Self {
        self.bytes.push(v as u8);
        self
    }

    /// A `byte`, or an encoding byte.
    pub(crate) fn byte(&mut self, v: u8) -> &mut Self {
        self.bytes.push(v);
        self
    }

    /// A string written out (UTF-8; `""` as the empty encoding).
    pub fn string(&mut self, s: &str) -> &mut Self {
        if s.is_empty() {
            return self.byte(string::EMPTY);
        }
        self.byte(string::UTF8).varint(s.len() as u64);
        self.bytes.extend_from_slice(s.as_bytes());
        self
    }

    /// `None` as the null string.
    pub fn opt_string(&mut self, s: Option<&str>) -> &mut Self {
        match s {
            Some(s) => self.string(s),
            None => self.byte(string::NULL),
        }
    }

    /// Raw big-endian integers (the chunk header).
    pub(crate) fn raw_u64(&mut self, v: u64) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// Raw big-endian `u32` (the header's features).
    pub(crate) fn raw_u32(&mut self, v: u32) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// Raw big-endian `u16` (the header's version).
    pub(crate) fn raw_u16(&mut self, v: u16) -> &mut Self {
        self.bytes.extend_from_slice(&v.to_be_bytes());
        self
    }

    /// Bytes as they are (a padded varint, an encoded pool entry).
    pub(crate) fn raw(&mut self, b: &[u8]) -> &mut Self {
        self.bytes.extend_from_slice(b);
        self
    }
}

/// Appends `v` as a JFR varint (1 to 9 bytes).
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    for _ in 0..8 {
        if v < 0x80 {
            out.push(v as u8);
            return;
        }
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// `v` as a varint of exactly `width` bytes (continuation bits set on all
/// but the last), so a size can be written before it is known and patched:
/// readers take the redundant groups as zeros. `v` must fit in `7 * width`
/// bits.
pub(crate) fn padded_varint(v: u64, width: usize) -> Vec<u8> {
    debug_assert!((1..=8).contains(&width) && v < 1u64 << (7 * width));
    (0..width)
        .map(|i| {
            let group = (v >> (7 * i)) as u8 & 0x7f;
            if i + 1 < width {
                group | 0x80
            } else {
                group
            }
        })
        .collect()
}

/// `body` (an event's type id and fields) with its size in front: the
/// size counts itself.
pub(crate) fn sized(body: &[u8]) -> Vec<u8> {
    let mut total = body.len() + 1;
    loop {
        let mut probe = Vec::new();
        put_varint(&mut probe, total as u64);
        if probe.len() + body.len() == total {
            probe.extend_from_slice(body);
            return probe;
        }
        total = probe.len() + body.len();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Cursor;

    #[test]
    fn varints_round_trip_at_every_width() {
        let mut values = vec![0u64, 1, 127, 128, 16_383, 16_384, u32::MAX as u64, u64::MAX];
        values.extend((0..64).map(|b| 1u64 << b));
        values.extend((0..64).map(|b| (1u64 << b) - 1));
        values.push((-1i64) as u64);
        for v in values {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert!(out.len() <= 9, "{v}: {} bytes", out.len());
            let mut c = Cursor::new(&out);
            assert_eq!(c.varint().unwrap(), v);
            assert!(c.is_empty());
        }
        // Nine bytes only past 56 bits.
        let mut out = Vec::new();
        put_varint(&mut out, (1 << 56) - 1);
        assert_eq!(out.len(), 8);
    }

    #[test]
    fn padded_varints_read_as_their_value() {
        for v in [0u64, 5, 300, (1 << 35) - 1] {
            let b = padded_varint(v, 5);
            assert_eq!(b.len(), 5);
            assert_eq!(Cursor::new(&b).varint().unwrap(), v);
        }
    }

    #[test]
    fn strings_carry_their_encoding() {
        let mut b = Buf::new();
        b.string("").string("héllo").opt_string(None);
        let mut c = Cursor::new(&b.bytes);
        assert_eq!(c.string().unwrap().as_deref(), Some(""));
        assert_eq!(c.string().unwrap().as_deref(), Some("héllo"));
        assert_eq!(c.string().unwrap(), None);
    }
}
