//! Hand-built HPROF bytes for the heap readers' unit tests
//! (`heap/tests.rs`, `heapread/tests.rs`): big-endian fields, records
//! with their lengths.

/// Bytes of a dump with 4-byte ids.
#[derive(Default)]
pub struct B(pub Vec<u8>);

impl B {
    pub fn u1(mut self, v: u8) -> B {
        self.0.push(v);
        self
    }
    pub fn u2(mut self, v: u16) -> B {
        self.0.extend(v.to_be_bytes());
        self
    }
    pub fn u4(mut self, v: u32) -> B {
        self.0.extend(v.to_be_bytes());
        self
    }
    pub fn raw(mut self, b: &[u8]) -> B {
        self.0.extend(b);
        self
    }
    pub fn record(self, tag: u8, body: B) -> B {
        self.u1(tag).u4(0).u4(body.0.len() as u32).raw(&body.0)
    }

    /// A dump's start: the header (4-byte ids, time 0), a UTF8 record per
    /// `(id, text)` of `strings`, a LOAD CLASS record per `(serial, class
    /// id, name id)` of `classes`.
    pub fn start(strings: &[(u32, &str)], classes: &[(u32, u32, u32)]) -> B {
        let b = B::default;
        let mut f = b().raw(b"JAVA PROFILE 1.0.2\0").u4(4).u4(0).u4(0);
        for &(id, text) in strings {
            f = f.record(0x01, b().u4(id).raw(text.as_bytes()));
        }
        for &(serial, class, name) in classes {
            f = f.record(0x02, b().u4(serial).u4(class).u4(1).u4(name));
        }
        f
    }
}
