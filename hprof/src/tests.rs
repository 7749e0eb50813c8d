//! Unit tests on hand-built files: every record and sub-record read back,
//! the same items from a whole buffer and from one refilled a few bytes at
//! a time, every lying length and cut refused with its offset, and random
//! and mutated bytes that never make the parser panic.

use crate::*;

/// An HPROF file being built.
struct File {
    id: IdSize,
    bytes: Vec<u8>,
}

impl File {
    fn new(id: u32) -> File {
        let mut bytes = b"JAVA PROFILE 1.0.2\0".to_vec();
        bytes.extend(id.to_be_bytes());
        bytes.extend(1_700_000_000_000u64.to_be_bytes());
        File {
            id: IdSize::new(id).unwrap(),
            bytes,
        }
    }

    fn record(&mut self, tag: u8, body: &[u8]) -> &mut File {
        self.bytes.push(tag);
        self.bytes.extend(0u32.to_be_bytes());
        self.bytes.extend((body.len() as u32).to_be_bytes());
        self.bytes.extend(body);
        self
    }
}

/// Bytes of a record's or sub-record's body.
#[derive(Default)]
struct Body(Vec<u8>, usize);

impl Body {
    fn of(id: IdSize) -> Body {
        Body(Vec::new(), id.bytes())
    }
    fn u1(mut self, v: u8) -> Body {
        self.0.push(v);
        self
    }
    fn u2(mut self, v: u16) -> Body {
        self.0.extend(v.to_be_bytes());
        self
    }
    fn u4(mut self, v: u32) -> Body {
        self.0.extend(v.to_be_bytes());
        self
    }
    fn id(mut self, v: u64) -> Body {
        let b = v.to_be_bytes();
        self.0.extend(&b[8 - self.1..]);
        self
    }
    fn raw(mut self, b: &[u8]) -> Body {
        self.0.extend(b);
        self
    }
}

/// A file with one of everything the parser knows.
fn sample(id: u32) -> Vec<u8> {
    let mut f = File::new(id);
    let i = f.id;
    let b = || Body::of(i);
    f.record(tag::UTF8, &b().id(100).raw(b"p/Node").0);
    f.record(tag::UTF8, &b().id(101).raw(b"next").0);
    f.record(tag::LOAD_CLASS, &b().u4(7).id(0x500).u4(1).id(100).0);
    f.record(
        tag::FRAME,
        &b().id(0x900).id(101).id(101).id(0).u4(7).u4(-2i32 as u32).0,
    );
    f.record(tag::TRACE, &b().u4(1).u4(0).u4(0).0);
    f.record(tag::TRACE, &b().u4(2).u4(3).u4(1).id(0x900).0);
    f.record(
        tag::START_THREAD,
        &b().u4(3).id(0x77).u4(2).id(101).id(0).id(0).0,
    );
    let mut seg = b()
        .u1(sub::ROOT_UNKNOWN)
        .id(1)
        .u1(sub::ROOT_JNI_GLOBAL)
        .id(2)
        .id(3)
        .u1(sub::ROOT_JNI_LOCAL)
        .id(4)
        .u4(3)
        .u4(0)
        .u1(sub::ROOT_JAVA_FRAME)
        .id(5)
        .u4(3)
        .u4(1)
        .u1(sub::ROOT_NATIVE_STACK)
        .id(6)
        .u4(3)
        .u1(sub::ROOT_STICKY_CLASS)
        .id(0x500)
        .u1(sub::ROOT_THREAD_BLOCK)
        .id(8)
        .u4(3)
        .u1(sub::ROOT_MONITOR_USED)
        .id(9)
        .u1(sub::ROOT_THREAD_OBJECT)
        .id(0x77)
        .u4(3)
        .u4(2);
    // CLASS_DUMP: 2 constants, 1 static, 2 fields.
    seg = seg
        .u1(sub::CLASS_DUMP)
        .id(0x500)
        .u4(1)
        .id(0x400)
        .id(0)
        .id(0)
        .id(0)
        .id(0)
        .id(0)
        .u4(4 + i.bytes() as u32)
        .u2(2)
        .u2(3)
        .u1(10)
        .u4(42)
        .u2(9)
        .u1(2)
        .id(0x600)
        .u2(1)
        .id(101)
        .u1(2)
        .id(0x601)
        .u2(2)
        .id(101)
        .u1(2)
        .id(100)
        .u1(10);
    seg = seg
        .u1(sub::INSTANCE_DUMP)
        .id(0x600)
        .u4(1)
        .id(0x500)
        .u4(4 + i.bytes() as u32)
        .id(0x601)
        .u4(5);
    seg = seg
        .u1(sub::OBJ_ARRAY_DUMP)
        .id(0x700)
        .u4(1)
        .u4(3)
        .id(0x501)
        .id(0x600)
        .id(0)
        .id(0x601);
    seg = seg
        .u1(sub::PRIM_ARRAY_DUMP)
        .id(0x800)
        .u4(1)
        .u4(2)
        .u1(10)
        .u4(1)
        .u4(2);
    f.record(tag::HEAP_DUMP_SEGMENT, &seg.0);
    f.record(tag::HEAP_DUMP_END, &[]);
    f.record(0x42, b"later");
    f.bytes
}

/// One line per item (its fields and body), the way the walk saw it.
fn describe(item: &Item, body: u64, file: &[u8], id: IdSize) -> String {
    match item {
        Item::Utf8 {
            id,
            text_offset,
            text_len,
        } => {
            let t = &file[*text_offset as usize..][..*text_len as usize];
            format!("utf8 {id:x} {} {body}", String::from_utf8_lossy(t))
        }
        Item::Trace(t) => {
            let f = &file[t.frames_offset as usize..][..body as usize];
            format!("{t:?} {:?}", ids(f, id).collect::<Vec<_>>())
        }
        Item::Class(c) => format!(
            "class {:x} super {:x} size {} {:?} {:?} {:?}",
            c.id,
            c.super_id,
            c.instance_size,
            c.constants().collect::<Vec<_>>(),
            c.statics().collect::<Vec<_>>(),
            c.fields().collect::<Vec<_>>()
        ),
        other => format!("{other:?} {body}"),
    }
}

/// Walks `file` as a caller refilling a buffer would, `chunk` bytes more
/// each time it is asked (`None`: the whole file at once, its length
/// known); bodies skipped.
fn walk(file: &[u8], chunk: Option<usize>) -> Result<Vec<String>, Error> {
    let mut have = chunk.unwrap_or(file.len()).min(file.len());
    let (header, start) = loop {
        match Header::parse(&file[..have])? {
            Some(h) => break h,
            None if have == file.len() => {
                return Err(Error::Truncated {
                    offset: 0,
                    message: "header".into(),
                })
            }
            None => have = (have + chunk.unwrap_or(1)).min(file.len()),
        }
    };
    let mut s = Scanner::new(header.id_size, start as u64);
    if chunk.is_none() {
        s.set_file_len(file.len() as u64);
    }
    let mut out = Vec::new();
    let mut window = chunk.unwrap_or(file.len());
    loop {
        let at = s.position() as usize;
        if at > file.len() {
            // A body skipped past the end: what a caller's read would say.
            return Err(Error::Truncated {
                offset: file.len() as u64,
                message: "body".into(),
            });
        }
        let buf = &file[at..(at + window).min(file.len())];
        match s.next(buf, at as u64)? {
            Step::Item { item, len, body } => {
                assert!(len <= buf.len());
                if at as u64 + len as u64 + body <= file.len() as u64 {
                    out.push(describe(&item, body, file, header.id_size));
                }
                window = chunk.unwrap_or(file.len());
            }
            Step::NeedMore { at_least } => {
                assert!(at_least > buf.len(), "asks for more than it has");
                if at + buf.len() >= file.len() {
                    s.finish(buf.len())?;
                    return Ok(out);
                }
                window = at_least.max(window + chunk.unwrap_or(1));
            }
            Step::End => return Ok(out),
        }
        assert!(out.len() < 10_000, "no progress");
    }
}

#[test]
fn every_record_and_sub_record_reads_back() {
    for id in [4, 8] {
        let file = sample(id);
        let items = walk(&file, None).unwrap();
        let text = items.join("\n");
        assert!(text.contains("utf8 64 p/Node 6"), "{text}");
        assert!(text.contains(
            "LoadClass(LoadClass { serial: 7, class_id: 1280, trace: 1, name_id: 100 }) 0"
        ));
        assert!(text.contains("line: -2"));
        assert!(text.contains("serial: 2, thread_serial: 3,"), "{text}");
        assert!(text.contains("count: 1 } [2304]"), "{text}");
        assert!(text.contains("JniGlobal { ref_id: 3 }"));
        assert!(text.contains("ThreadObject { thread: 3, trace: 2 }"));
        assert!(
            text.contains(
                "class 500 super 400 size 4294967295"
                    .replace("4294967295", &(4 + id).to_string())
                    .as_str()
            ),
            "{text}"
        );
        assert!(text.contains(
            "Constant { index: 3, value: Int(42) }, Constant { index: 9, value: Object(1536) }"
        ));
        assert!(text.contains("Static { name: 101, value: Object(1537)"));
        assert!(
            text.contains("FieldDesc { name: 101, ty: Object }, FieldDesc { name: 100, ty: Int }")
        );
        assert!(text.contains("class_id: 1280, data_offset: "), "{text}");
        assert!(text.contains("length: 3, class_id: 1281"), "{text}");
        assert!(text.contains("length: 2, elem: Int"), "{text}");
        assert!(text.contains("HeapDumpEnd"));
        assert!(text.contains("Record { tag: 66,"));
        assert_eq!(items.len(), 23, "{text}");
    }
}

#[test]
fn a_refilled_buffer_gives_the_same_items() {
    for id in [4, 8] {
        let file = sample(id);
        let whole = walk(&file, None).unwrap();
        for chunk in [1, 2, 3, 7, 16, 100] {
            assert_eq!(walk(&file, Some(chunk)).unwrap(), whole, "chunk {chunk}");
        }
    }
}

#[test]
fn instance_fields_read_with_the_class_list() {
    let file = sample(8);
    let (h, start) = Header::parse(&file).unwrap().unwrap();
    let mut s = Scanner::new(h.id_size, start as u64);
    s.set_file_len(file.len() as u64);
    let mut fields = Vec::new();
    let mut seen = None;
    while let Step::Item { item, body, .. } = s
        .next(&file[s.position() as usize..], s.position())
        .unwrap()
    {
        match item {
            Item::Class(c) => fields = c.fields().map(|f| f.ty).collect(),
            Item::Instance(i) => {
                let data = &file[i.data_offset as usize..][..body as usize];
                let mut v = Values::new(data, h.id_size);
                let got: Vec<_> = fields.iter().map(|&t| v.next_value(t)).collect();
                assert_eq!(got, [Some(Value::Object(0x601)), Some(Value::Int(5))]);
                assert_eq!(v.remaining(), 0);
                assert_eq!(&file[i.trace_offset as usize..][..4], &1u32.to_be_bytes());
                seen = Some(i.id);
            }
            _ => {}
        }
    }
    assert_eq!(seen, Some(0x600));
}

#[test]
fn a_body_not_skipped_is_a_position_error() {
    let file = sample(4);
    let (h, start) = Header::parse(&file).unwrap().unwrap();
    let mut s = Scanner::new(h.id_size, start as u64);
    let Step::Item { len, body, .. } = s.next(&file[start..], start as u64).unwrap() else {
        panic!()
    };
    assert!(body > 0);
    let at = start + len;
    let e = s.next(&file[at..], at as u64).unwrap_err();
    assert!(matches!(e, Error::Position { .. }), "{e}");
}

/// Offsets of the sample's parts, found by walking it.
fn offsets_of(file: &[u8], want: fn(&Item) -> bool) -> u64 {
    let (h, start) = Header::parse(file).unwrap().unwrap();
    let mut s = Scanner::new(h.id_size, start as u64);
    loop {
        let at = s.position();
        match s.next(&file[at as usize..], at).unwrap() {
            Step::Item { item, .. } if want(&item) => return at,
            Step::Item { .. } => {}
            _ => panic!("not found"),
        }
    }
}

#[test]
fn lying_lengths_and_cuts_are_errors_naming_the_offset() {
    let file = sample(8);
    let seg = offsets_of(&file, |i| matches!(i, Item::HeapDump { .. }));
    let inst = offsets_of(&file, |i| matches!(i, Item::Instance(_)));
    let class = offsets_of(&file, |i| matches!(i, Item::Class(_)));
    let trace2 = offsets_of(&file, |i| matches!(i, Item::Trace(t) if t.serial == 2));

    // A segment longer than the file.
    let mut f = file.clone();
    f[seg as usize + 5..][..4].copy_from_slice(&u32::MAX.to_be_bytes());
    let e = walk(&f, None).unwrap_err();
    assert!(
        matches!(e, Error::Truncated { offset, .. } if offset == seg),
        "{e}"
    );
    // Without the file's length: found at the end, inside the segment.
    // Without the file's length: found where the next record's tag is
    // read as a sub-record (HEAP_DUMP_END's 0x2c).
    let end = offsets_of(&file, |i| matches!(i, Item::HeapDumpEnd { .. }));
    let e = walk(&f, Some(64)).unwrap_err();
    assert!(
        matches!(e, Error::Malformed { offset, .. } if offset == end),
        "{e}"
    );
    assert!(e.to_string().contains("0x2c"), "{e}");

    // An instance whose data runs past its segment.
    let mut f = file.clone();
    let n = inst as usize + 1 + 8 + 4 + 8;
    f[n..n + 4].copy_from_slice(&1_000_000u32.to_be_bytes());
    let e = walk(&f, None).unwrap_err();
    assert!(
        matches!(e, Error::Malformed { offset, .. } if offset == inst),
        "{e}"
    );
    assert!(e.to_string().contains("INSTANCE_DUMP"), "{e}");

    // A TRACE with more frames than its record.
    let mut f = file.clone();
    let n = trace2 as usize + 9 + 8;
    f[n..n + 4].copy_from_slice(&0x4000_0000u32.to_be_bytes());
    let e = walk(&f, None).unwrap_err();
    assert!(
        matches!(e, Error::Malformed { offset, .. } if offset == trace2),
        "{e}"
    );

    // An unknown sub-record tag.
    let mut f = file.clone();
    f[inst as usize] = 0x99;
    let e = walk(&f, None).unwrap_err();
    assert!(
        matches!(e, Error::Malformed { offset, .. } if offset == inst),
        "{e}"
    );
    assert!(e.to_string().contains("0x99"), "{e}");

    // A basic type that does not exist in a CLASS_DUMP's first constant.
    let mut f = file.clone();
    let n = class as usize + 1 + 7 * 8 + 10 + 2;
    assert_eq!(f[n], 10);
    f[n] = 3;
    let e = walk(&f, None).unwrap_err();
    assert!(
        matches!(e, Error::Malformed { offset, .. } if offset == n as u64),
        "{e}"
    );

    // Every cut: an error or a shorter walk, never a panic; a cut inside
    // the segment is always an error.
    for cut in 0..file.len() {
        for chunk in [None, Some(5)] {
            let r = walk(&file[..cut], chunk);
            if (cut as u64) > seg && (cut as u64) < seg + 9 + 10 {
                assert!(r.is_err(), "cut at {cut}");
            }
            if let Err(e) = r {
                assert!(e.offset() <= cut as u64 + 9, "{e} for a cut at {cut}");
            }
        }
    }
}

#[test]
fn headers_refused() {
    assert!(Header::parse(b"JAVA PRO").unwrap().is_none());
    assert!(Header::parse(b"JAVA PROFILE 1.0.2\0\0\0")
        .unwrap()
        .is_none());
    let e = Header::parse(b"GIF89a").unwrap_err();
    assert!(matches!(e, Error::Malformed { offset: 0, .. }));
    let mut h = b"JAVA PROFILE 1.0.2\0".to_vec();
    h.extend(5u32.to_be_bytes());
    h.extend([0; 8]);
    let e = Header::parse(&h).unwrap_err();
    assert!(matches!(e, Error::Unsupported { offset: 19, .. }), "{e}");
    assert!(e.to_string().contains("id size of 5"), "{e}");
    let e = Header::parse(b"JAVA PROFILE 1.0.3\0\0\0\0\x08").unwrap_err();
    assert!(matches!(e, Error::Unsupported { .. }), "{e}");
    assert!(Header::parse(&[b'J'; 40]).is_err());
    assert!(is_hprof(b"JAVA PROFILE 1.0.2\0"));
    assert!(!is_hprof(
        b"JAVA PROFILE 1.0.1, created Sun Dec 06 04:51:46 2026\n"
    ));
    assert!(!is_hprof(b"JAVA PROFILE 1.0."));
}

/// A small xorshift: the fuzz below is the same on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_and_mutated_bytes_never_panic() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for id in [4, 8] {
        let good = sample(id);
        let start = Header::parse(&good).unwrap().unwrap().1;
        for round in 0..3000 {
            let mut f = good.clone();
            match round % 3 {
                // A few bytes changed anywhere after the header.
                0 => {
                    for _ in 0..1 + rng.next() % 4 {
                        let at = start + (rng.next() as usize) % (f.len() - start);
                        f[at] = rng.next() as u8;
                    }
                }
                // Random bytes after the header, some tags made likely.
                1 => {
                    f.truncate(start);
                    for _ in 0..rng.next() % 300 {
                        let r = rng.next();
                        f.push(match r % 5 {
                            0 => [0x1c, 0x20, 0x21, 0x22, 0x23, 0x05, 0x0c][(r >> 8) as usize % 7],
                            1 => 0,
                            _ => (r >> 16) as u8,
                        });
                    }
                }
                // A random cut, then random bytes.
                _ => {
                    f.truncate(start + (rng.next() as usize) % (f.len() - start));
                    f.extend((0..rng.next() % 40).map(|_| rng.next() as u8));
                }
            }
            for chunk in [None, Some(1 + (rng.next() % 9) as usize)] {
                let _ = walk(&f, chunk);
            }
        }
    }
}
