//! Just enough protocol-buffers encoding for pprof: varints, tags, nested
//! messages and packed repeated integers (proto3's wire format).

/// A message being written.
#[derive(Default)]
pub struct Msg {
    pub buf: Vec<u8>,
}

const VARINT: u64 = 0;
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

    /// An integer field (int64 or uint64; values here are never negative).
    /// Zero is proto3's default and is not written.
    pub fn int(&mut self, field: u64, v: u64) {
        if v != 0 {
            self.tag(field, VARINT);
            varint(&mut self.buf, v);
        }
    }

    pub fn bytes(&mut self, field: u64, b: &[u8]) {
        self.tag(field, LEN);
        varint(&mut self.buf, b.len() as u64);
        self.buf.extend_from_slice(b);
    }

    pub fn msg(&mut self, field: u64, m: &Msg) {
        self.bytes(field, &m.buf);
    }

    /// A packed repeated integer field.
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
        assert_eq!(
            m.buf,
            [
                0x08, 0x96, 0x01, 0x12, 0x07, b't', b'e', b's', b't', b'i', b'n', b'g', 0x22, 0x06,
                0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05
            ]
        );
    }
}
