//! Just enough protocol-buffers encoding: varints, fixed64, tags, nested
//! messages and packed repeated integers (proto3's wire format). Each
//! message is written into its own buffer and copied into its parent with
//! its length: the messages here are small, or written once.

/// A message being written.
#[derive(Default, Clone)]
pub struct Msg {
    pub buf: Vec<u8>,
}

const VARINT: u64 = 0;
const FIXED64: u64 = 1;
const LEN: u64 = 2;

pub fn varint(buf: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        buf.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    buf.push(v as u8);
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
        self.tag(field, LEN);
        varint(&mut self.buf, b.len() as u64);
        self.buf.extend_from_slice(b);
    }

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
}
