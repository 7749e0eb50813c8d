//! The sub-records of a heap-dump segment: the GC roots (fixed sizes), the
//! CLASS_DUMP (read whole: its lists are walked here once to find its end
//! and check every type byte, then handed out as iterators over the
//! buffer), and the instance and array dumps, whose fixed fields make the
//! item while their data is its body, never needed in the buffer.

use crate::error::Error;
use crate::items::{ClassDump, Instance, Item, ObjArray, PrimArray, Region, Root, RootKind};
use crate::scanner::{Fields, Made, Scanner, Stop, MAX_CLASS_DUMP};
use crate::values::BasicType;

/// Sub-record tags.
pub mod sub {
    /// `ROOT_UNKNOWN`.
    pub const ROOT_UNKNOWN: u8 = 0xFF;
    /// `ROOT_JNI_GLOBAL`.
    pub const ROOT_JNI_GLOBAL: u8 = 0x01;
    /// `ROOT_JNI_LOCAL`.
    pub const ROOT_JNI_LOCAL: u8 = 0x02;
    /// `ROOT_JAVA_FRAME`.
    pub const ROOT_JAVA_FRAME: u8 = 0x03;
    /// `ROOT_NATIVE_STACK`.
    pub const ROOT_NATIVE_STACK: u8 = 0x04;
    /// `ROOT_STICKY_CLASS`.
    pub const ROOT_STICKY_CLASS: u8 = 0x05;
    /// `ROOT_THREAD_BLOCK`.
    pub const ROOT_THREAD_BLOCK: u8 = 0x06;
    /// `ROOT_MONITOR_USED`.
    pub const ROOT_MONITOR_USED: u8 = 0x07;
    /// `ROOT_THREAD_OBJECT`.
    pub const ROOT_THREAD_OBJECT: u8 = 0x08;
    /// `CLASS_DUMP`.
    pub const CLASS_DUMP: u8 = 0x20;
    /// `INSTANCE_DUMP`.
    pub const INSTANCE_DUMP: u8 = 0x21;
    /// `OBJ_ARRAY_DUMP`.
    pub const OBJ_ARRAY_DUMP: u8 = 0x22;
    /// `PRIM_ARRAY_DUMP`.
    pub const PRIM_ARRAY_DUMP: u8 = 0x23;
}

impl Scanner {
    /// The next sub-record of the open segment.
    pub(crate) fn sub_record<'b>(&mut self, buf: &'b [u8]) -> Result<Made<'b>, Stop> {
        let (at, left) = (self.at, self.segment_left);
        self.need(buf, 1, left, "a heap-dump sub-record")?;
        let id = self.id.bytes();
        let (fixed, name) = match buf[0] {
            sub::ROOT_UNKNOWN => (id, "ROOT_UNKNOWN"),
            sub::ROOT_JNI_GLOBAL => (2 * id, "ROOT_JNI_GLOBAL"),
            sub::ROOT_JNI_LOCAL => (id + 8, "ROOT_JNI_LOCAL"),
            sub::ROOT_JAVA_FRAME => (id + 8, "ROOT_JAVA_FRAME"),
            sub::ROOT_NATIVE_STACK => (id + 4, "ROOT_NATIVE_STACK"),
            sub::ROOT_STICKY_CLASS => (id, "ROOT_STICKY_CLASS"),
            sub::ROOT_THREAD_BLOCK => (id + 4, "ROOT_THREAD_BLOCK"),
            sub::ROOT_MONITOR_USED => (id, "ROOT_MONITOR_USED"),
            sub::ROOT_THREAD_OBJECT => (id + 8, "ROOT_THREAD_OBJECT"),
            sub::CLASS_DUMP => return self.class_dump(buf),
            sub::INSTANCE_DUMP => (2 * id + 8, "INSTANCE_DUMP"),
            sub::OBJ_ARRAY_DUMP => (2 * id + 8, "OBJ_ARRAY_DUMP"),
            sub::PRIM_ARRAY_DUMP => (id + 9, "PRIM_ARRAY_DUMP"),
            t => {
                return Err(Stop::Fail(Error::malformed(
                    at,
                    format!(
                        "an unknown heap-dump sub-record tag 0x{t:02x} ({left} bytes before its segment's end)"
                    ),
                )))
            }
        };
        let len = 1 + fixed;
        self.need(buf, len, left, name)?;
        let mut c = Fields::new(&buf[1..len], self.id);
        let (item, body) = match buf[0] {
            sub::INSTANCE_DUMP => {
                let (oid, trace, class_id, n) = (c.id(), c.u4(), c.id(), c.u4());
                let item = Item::Instance(Instance {
                    id: oid,
                    trace,
                    trace_offset: at + 1 + id as u64,
                    class_id,
                    data_offset: at + len as u64,
                    data_len: n,
                });
                (item, u64::from(n))
            }
            sub::OBJ_ARRAY_DUMP => {
                let (oid, trace, length, class_id) = (c.id(), c.u4(), c.u4(), c.id());
                let item = Item::ObjArray(ObjArray {
                    id: oid,
                    trace,
                    trace_offset: at + 1 + id as u64,
                    length,
                    class_id,
                    elements_offset: at + len as u64,
                });
                (item, u64::from(length) * id as u64)
            }
            sub::PRIM_ARRAY_DUMP => {
                let (oid, trace, length, t) = (c.id(), c.u4(), c.u4(), c.u1());
                let elem = BasicType::from_tag(t).filter(|&t| t != BasicType::Object);
                let Some(elem) = elem else {
                    return Err(Stop::Fail(Error::malformed(
                        at + len as u64 - 1,
                        format!("a PRIM_ARRAY_DUMP of element type {t}, no primitive type"),
                    )));
                };
                let item = Item::PrimArray(PrimArray {
                    id: oid,
                    trace,
                    trace_offset: at + 1 + id as u64,
                    length,
                    elem,
                    data_offset: at + len as u64,
                });
                (item, u64::from(length) * elem.size(self.id) as u64)
            }
            tag => {
                let oid = c.id();
                let kind = match tag {
                    sub::ROOT_JNI_GLOBAL => RootKind::JniGlobal { ref_id: c.id() },
                    sub::ROOT_JNI_LOCAL => RootKind::JniLocal {
                        thread: c.u4(),
                        frame: c.u4(),
                    },
                    sub::ROOT_JAVA_FRAME => RootKind::JavaFrame {
                        thread: c.u4(),
                        frame: c.u4(),
                    },
                    sub::ROOT_NATIVE_STACK => RootKind::NativeStack { thread: c.u4() },
                    sub::ROOT_STICKY_CLASS => RootKind::StickyClass,
                    sub::ROOT_THREAD_BLOCK => RootKind::ThreadBlock { thread: c.u4() },
                    sub::ROOT_MONITOR_USED => RootKind::MonitorUsed,
                    sub::ROOT_THREAD_OBJECT => RootKind::ThreadObject {
                        thread: c.u4(),
                        trace: c.u4(),
                    },
                    _ => RootKind::Unknown,
                };
                (Item::Root(Root { id: oid, kind }), 0)
            }
        };
        if len as u64 + body > left {
            return Err(Stop::Fail(Error::malformed(
                at,
                format!(
                    "a {name} of {} bytes runs past the end of its heap-dump segment ({left} bytes left)",
                    len as u64 + body
                ),
            )));
        }
        Ok((item, len, body))
    }

    /// A CLASS_DUMP, which must be in `buf` whole: walked once to find its
    /// end and check every type byte.
    fn class_dump<'b>(&mut self, buf: &'b [u8]) -> Result<Made<'b>, Stop> {
        let (at, left, id) = (self.at, self.segment_left, self.id);
        let n = id.bytes();
        // Grows `pos` by `k` bytes, asking for them first.
        let want = |pos: usize, k: usize| -> Result<usize, Stop> {
            let end = pos + k;
            if end > MAX_CLASS_DUMP {
                return Err(Stop::Fail(Error::OverLimit {
                    offset: at,
                    message: format!(
                        "a CLASS_DUMP of more than {MAX_CLASS_DUMP} bytes (the most read whole)"
                    ),
                }));
            }
            self.need(buf, end, left, "a CLASS_DUMP")?;
            Ok(end)
        };
        let ty_at = |pos: usize| -> Result<BasicType, Stop> {
            let t = buf[pos];
            BasicType::from_tag(t).ok_or_else(|| {
                Stop::Fail(Error::malformed(
                    at + pos as u64,
                    format!("a CLASS_DUMP entry of basic type {t}, which does not exist"),
                ))
            })
        };
        let head = 1 + 7 * n + 10;
        let mut pos = want(0, head)?;
        let mut c = Fields::new(&buf[1..head], id);
        let (cid, trace, super_id, loader, signers, pd) =
            (c.id(), c.u4(), c.id(), c.id(), c.id(), c.id());
        c.id(); // two reserved ids
        c.id();
        let instance_size = c.u4();
        let cp_count = c.u2();
        let cp_start = pos;
        for _ in 0..cp_count {
            let p = want(pos, 3)?;
            pos = want(p, ty_at(p - 1)?.size(id))?;
        }
        let constants = region(buf, at, cp_start, pos, cp_count);
        pos = want(pos, 2)?;
        let st_count = u16::from_be_bytes([buf[pos - 2], buf[pos - 1]]);
        let st_start = pos;
        for _ in 0..st_count {
            let p = want(pos, n + 1)?;
            pos = want(p, ty_at(p - 1)?.size(id))?;
        }
        let statics = region(buf, at, st_start, pos, st_count);
        pos = want(pos, 2)?;
        let f_count = u16::from_be_bytes([buf[pos - 2], buf[pos - 1]]);
        let f_start = pos;
        for _ in 0..f_count {
            pos = want(pos, n + 1)?;
            ty_at(pos - 1)?;
        }
        let fields = region(buf, at, f_start, pos, f_count);
        let item = Item::Class(ClassDump {
            offset: at,
            id: cid,
            trace,
            super_id,
            loader,
            signers,
            protection_domain: pd,
            instance_size,
            id_size: id,
            constants,
            statics,
            fields,
        });
        Ok((item, pos, 0))
    }
}

/// The bytes `from..to` of a CLASS_DUMP at `at` holding `count` entries.
fn region(buf: &[u8], at: u64, from: usize, to: usize, count: u16) -> Region<'_> {
    Region {
        bytes: buf.get(from..to).unwrap_or(&[]),
        count,
        offset: at + from as u64,
    }
}
