//! Just enough protocol-buffers encoding: varints, fixed64, tags, nested
//! messages and packed repeated integers (proto3's wire format). A small
//! message is written into its own buffer ([`Msg`]) and copied into its
//! parent with its length; a big one is streamed by `nested`, which
//! writes its body twice, first to a `Counter` for its length.

use std::io::{self, Write};

/// A message being written.
#[derive(Default, Clone)]
pub struct Msg {
    /// Its fields, encoded; a parent copies them with [`Msg::msg`].
    pub buf: Vec<u8>,
}

const VARINT: u64 = 0;
const FIXED64: u64 = 1;
const LEN: u64 = 2;

/// Appends `v` as a base-128 varint, low group first.
pub fn varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
}

/// A length-delimited field's tag and length, to go before its `len` bytes.
pub(crate) fn len_prefix(buf: &mut Vec<u8>, field: u64, len: u64) {
    varint(buf, field << 3 | LEN);
    varint(buf, len);
}

/// [`len_prefix`] written out.
pub(crate) fn len_header(out: &mut dyn Write, field: u64, len: u64) -> io::Result<()> {
    let mut b = Vec::with_capacity(20);
    len_prefix(&mut b, field, len);
    out.write_all(&b)
}

/// A length-delimited field (bytes, a string, a message's bytes) written out.
pub(crate) fn put_bytes(out: &mut dyn Write, field: u64, b: &[u8]) -> io::Result<()> {
    len_header(out, field, b.len() as u64)?;
    out.write_all(b)
}

/// An embedded message that is not held: `body` writes it, once to count its
/// bytes, then after its tag and length to `out`. What it holds is `body`'s
/// (a nested call inside `body` runs twice per run of `body`: keep those small).
pub(crate) fn nested(
    out: &mut dyn Write,
    field: u64,
    body: impl Fn(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut counter = Counter::default();
    body(&mut counter)?;
    len_header(out, field, counter.bytes)?;
    body(out)
}

/// A writer that only counts what it is given.
#[derive(Default)]
pub(crate) struct Counter {
    /// Bytes written so far.
    pub(crate) bytes: u64,
}

impl Write for Counter {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.bytes += b.len() as u64;
        Ok(b.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Msg {
    fn tag(&mut self, field: u64, wire: u64) {
        varint(&mut self.buf, field << 3 | wire);
    }

    /// An integer field (int32, int64, uint64; negative values as their
    /// two's complement, as protobuf writes int64). Zero is proto3's
    /// default and is not written.
    pub fn int(&mut self, field: u64, v: u64) {
        if v != 0 {
            self.tag(field, VARINT);
            varint(&mut self.buf, v);
        }
    }

    /// A fixed64 field (zero not written).
    pub fn fixed64(&mut self, field: u64, v: u64) {
        if v != 0 {
            self.tag(field, FIXED64);
            self.buf.extend_from_slice(&v.to_le_bytes());
        }
    }

    /// A bytes or string field, or an embedded message's bytes; written
    /// even when empty (a repeated message's zero value must be there).
    pub fn bytes(&mut self, field: u64, b: &[u8]) {
        len_prefix(&mut self.buf, field, b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    /// An embedded message's field: `m`'s bytes with their length.
    pub fn msg(&mut self, field: u64, m: &Msg) {
        self.bytes(field, &m.buf);
    }

    /// A packed repeated integer field (nothing when empty).
    pub fn packed(&mut self, field: u64, vs: &[u64]) {
        if vs.is_empty() {
            return;
        }
        let mut body = Vec::with_capacity(vs.len() * 2);
        for &v in vs {
            varint(&mut body, v);
        }
        self.bytes(field, &body);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_bytes() {
        let mut v = Vec::new();
        varint(&mut v, 300);
        assert_eq!(v, [0xac, 0x02]);
        let mut m = Msg::default();
        m.int(1, 150);
        m.int(2, 0);
        m.bytes(2, b"testing");
        m.packed(4, &[3, 270, 86942]);
        m.fixed64(3, 1);
        assert_eq!(
            m.buf,
            [
                0x08, 0x96, 0x01, 0x12, 0x07, b't', b'e', b's', b't', b'i', b'n', b'g', 0x22, 0x06,
                0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05, 0x19, 1, 0, 0, 0, 0, 0, 0, 0
            ]
        );
    }

    /// A streamed message is the bytes of the same message held.
    #[test]
    fn nested_equals_held() {
        let mut inner = Msg::default();
        inner.bytes(1, &[7; 200]);
        inner.int(2, 5);
        let mut held = Msg::default();
        held.msg(3, &inner);
        let mut streamed = Vec::new();
        nested(&mut streamed, 3, |w| {
            put_bytes(w, 1, &[7; 200])?;
            w.write_all(&[0x10, 5])
        })
        .unwrap();
        assert_eq!(streamed, held.buf);
    }
}
