//! What the scanner hands out: one item per top-level record and per
//! heap-dump sub-record, made of the fixed fields the record starts with.
//! Variable parts (a UTF8's text, a trace's frame ids, an instance's field
//! data, an array's elements) are given as absolute file offsets and
//! lengths, for the caller to read or skip; a CLASS_DUMP, read whole, is
//! walked in place by iterators over the caller's buffer.

use crate::values::{BasicType, IdSize, Value};

/// One record or sub-record.
#[derive(Debug, Clone)]
pub enum Item<'a> {
    /// `UTF8` (0x01): a symbol's text (modified UTF-8, not NUL-ended) is the
    /// item's body.
    Utf8 {
        /// The symbol's id (what LOAD_CLASS, FRAME, CLASS_DUMP name).
        id: u64,
        /// Where the text starts in the file.
        text_offset: u64,
        /// Its length in bytes.
        text_len: u32,
    },
    /// `LOAD_CLASS` (0x02).
    LoadClass(LoadClass),
    /// `UNLOAD_CLASS` (0x03).
    UnloadClass {
        /// The class's serial number.
        serial: u32,
    },
    /// `FRAME` (0x04).
    Frame(Frame),
    /// `TRACE` (0x05): its frame ids are the item's body.
    Trace(Trace),
    /// `START_THREAD` (0x0A).
    StartThread(StartThread),
    /// `END_THREAD` (0x0B).
    EndThread {
        /// The thread's serial number.
        serial: u32,
    },
    /// The start of `HEAP_DUMP` (0x0C) or `HEAP_DUMP_SEGMENT` (0x1C): its
    /// sub-records follow, each an item; [`crate::Scanner::skip_segment`]
    /// passes over what is left of them.
    HeapDump {
        /// Where the record (its tag) starts.
        offset: u64,
        /// Bytes of sub-records in it.
        length: u32,
        /// A `HEAP_DUMP_SEGMENT` (else a one-piece `HEAP_DUMP`).
        segment: bool,
    },
    /// `HEAP_DUMP_END` (0x2C).
    HeapDumpEnd {
        /// Where the record starts.
        offset: u64,
    },
    /// Any other top-level record (its body is the item's, skipped).
    Record {
        /// Its tag.
        tag: u8,
        /// Where the record starts.
        offset: u64,
        /// Its body's length.
        length: u32,
    },
    /// A `ROOT_*` sub-record.
    Root(Root),
    /// `CLASS_DUMP` (0x20), read whole.
    Class(ClassDump<'a>),
    /// `INSTANCE_DUMP` (0x21): its field data is the item's body.
    Instance(Instance),
    /// `OBJ_ARRAY_DUMP` (0x22): its element ids are the item's body.
    ObjArray(ObjArray),
    /// `PRIM_ARRAY_DUMP` (0x23): its elements are the item's body.
    PrimArray(PrimArray),
}

/// `LOAD_CLASS`: a class's serial number, object id and name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LoadClass {
    /// The class's serial number (what FRAME names).
    pub serial: u32,
    /// The class object's id (what CLASS_DUMP and instances name).
    pub class_id: u64,
    /// The trace serial of where it was loaded.
    pub trace: u32,
    /// The UTF8 id of its name (HotSpot: `java/lang/String`, `[I`).
    pub name_id: u64,
}

/// `FRAME`: one stack frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    /// The frame's id (what TRACE lists).
    pub id: u64,
    /// UTF8 id of the method's name.
    pub method_name: u64,
    /// UTF8 id of the method's signature.
    pub signature: u64,
    /// UTF8 id of the source file's name (0: none).
    pub source: u64,
    /// The class's serial number (LOAD_CLASS).
    pub class_serial: u32,
    /// The line: > 0 a line, 0 no line information, -1 unknown, -2 a
    /// compiled method, -3 a native method.
    pub line: i32,
}

/// `TRACE`: a stack of frames. The frame ids are the item's body, so a
/// huge count is never read into memory: `frames_offset` and `count`
/// locate them (read them with [`crate::ids`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trace {
    /// The trace's serial number (what instances, roots and LOAD_CLASS name).
    pub serial: u32,
    /// The thread's serial number.
    pub thread_serial: u32,
    /// Where the frame ids start in the file.
    pub frames_offset: u64,
    /// How many frame ids (innermost first).
    pub count: u32,
}

/// `START_THREAD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StartThread {
    /// The thread's serial number.
    pub serial: u32,
    /// The `Thread` object's id.
    pub object: u64,
    /// Its trace serial.
    pub trace: u32,
    /// UTF8 ids of its name, its group's name and its parent group's name.
    pub name: u64,
    /// See `name`.
    pub group: u64,
    /// See `name`.
    pub parent_group: u64,
}

/// A GC root and what kind it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Root {
    /// The object it holds.
    pub id: u64,
    /// Its kind and the kind's fields.
    pub kind: RootKind,
}

/// The `ROOT_*` sub-records (HotSpot's heapDumper writes all but
/// `Unknown` and `NativeStack`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootKind {
    /// `ROOT_UNKNOWN` (0xFF).
    Unknown,
    /// `ROOT_JNI_GLOBAL` (0x01), with the global reference's own id.
    JniGlobal {
        /// The JNI global reference.
        ref_id: u64,
    },
    /// `ROOT_JNI_LOCAL` (0x02).
    JniLocal {
        /// The thread's serial number.
        thread: u32,
        /// The frame's depth (-1: none).
        frame: u32,
    },
    /// `ROOT_JAVA_FRAME` (0x03).
    JavaFrame {
        /// The thread's serial number.
        thread: u32,
        /// The frame's depth (-1: none).
        frame: u32,
    },
    /// `ROOT_NATIVE_STACK` (0x04).
    NativeStack {
        /// The thread's serial number.
        thread: u32,
    },
    /// `ROOT_STICKY_CLASS` (0x05): a system class.
    StickyClass,
    /// `ROOT_THREAD_BLOCK` (0x06).
    ThreadBlock {
        /// The thread's serial number.
        thread: u32,
    },
    /// `ROOT_MONITOR_USED` (0x07).
    MonitorUsed,
    /// `ROOT_THREAD_OBJECT` (0x08).
    ThreadObject {
        /// The thread's serial number.
        thread: u32,
        /// The trace serial of its stack.
        trace: u32,
    },
}

/// `INSTANCE_DUMP`: an object's fixed fields; its field data (the body)
/// is `data_len` bytes at `data_offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Instance {
    /// The object's id.
    pub id: u64,
    /// The trace serial of its allocation (HotSpot: 1, the empty trace).
    pub trace: u32,
    /// Where the 4-byte trace serial is in the file (to patch it).
    pub trace_offset: u64,
    /// Its class object's id.
    pub class_id: u64,
    /// Where its field data starts.
    pub data_offset: u64,
    /// Its field data's length.
    pub data_len: u32,
}

/// `OBJ_ARRAY_DUMP`: its element ids (the body) follow at `elements_offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjArray {
    /// The array's id.
    pub id: u64,
    /// The trace serial of its allocation.
    pub trace: u32,
    /// Where the trace serial is in the file.
    pub trace_offset: u64,
    /// Its number of elements.
    pub length: u32,
    /// The array class's id (HotSpot: the class of `[Ljava/lang/String;`).
    pub class_id: u64,
    /// Where the element ids start.
    pub elements_offset: u64,
}

/// `PRIM_ARRAY_DUMP`: its elements (the body) follow at `data_offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrimArray {
    /// The array's id.
    pub id: u64,
    /// The trace serial of its allocation.
    pub trace: u32,
    /// Where the trace serial is in the file.
    pub trace_offset: u64,
    /// Its number of elements.
    pub length: u32,
    /// Their type (never `Object`).
    pub elem: BasicType,
    /// Where the elements start.
    pub data_offset: u64,
}

/// `CLASS_DUMP`: a class's fixed fields, and its constant pool entries,
/// static fields and instance field descriptors read in place from the
/// caller's buffer (checked when the item was made).
#[derive(Debug, Clone)]
pub struct ClassDump<'a> {
    /// Where the sub-record starts.
    pub offset: u64,
    /// The class object's id.
    pub id: u64,
    /// The trace serial of its loading.
    pub trace: u32,
    /// The superclass's id (0 for `java.lang.Object`, interfaces, arrays'
    /// `Object`).
    pub super_id: u64,
    /// Its class loader's id (0: the boot loader).
    pub loader: u64,
    /// Its signers' id.
    pub signers: u64,
    /// Its protection domain's id.
    pub protection_domain: u64,
    /// HotSpot: the bytes of an instance's field data (its own fields and
    /// its superclasses'), not the object's size in memory.
    pub instance_size: u32,
    pub(crate) id_size: IdSize,
    pub(crate) constants: Region<'a>,
    pub(crate) statics: Region<'a>,
    pub(crate) fields: Region<'a>,
}

/// A list's bytes, its count and where its bytes start in the file.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Region<'a> {
    pub bytes: &'a [u8],
    pub count: u16,
    pub offset: u64,
}

/// A constant pool entry of a CLASS_DUMP.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Constant {
    /// Its index in the class's constant pool.
    pub index: u16,
    /// Its value.
    pub value: Value,
}

/// A static field of a CLASS_DUMP with its value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Static {
    /// UTF8 id of its name.
    pub name: u64,
    /// Its value.
    pub value: Value,
    /// Where the value is in the file.
    pub offset: u64,
}

/// An instance field's descriptor in a CLASS_DUMP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FieldDesc {
    /// UTF8 id of its name.
    pub name: u64,
    /// Its type.
    pub ty: BasicType,
}

impl<'a> ClassDump<'a> {
    /// Number of constant pool entries.
    pub fn constant_count(&self) -> u16 {
        self.constants.count
    }
    /// Number of static fields.
    pub fn static_count(&self) -> u16 {
        self.statics.count
    }
    /// Number of instance fields (its own, not its superclasses').
    pub fn field_count(&self) -> u16 {
        self.fields.count
    }

    /// The constant pool entries, in the dump's order.
    pub fn constants(&self) -> impl Iterator<Item = Constant> + 'a {
        let id = self.id_size;
        entries(self.constants, move |b, _| {
            let index = u16::from_be_bytes(b.get(..2)?.try_into().ok()?);
            let ty = BasicType::from_tag(*b.get(2)?)?;
            let value = Value::read(b.get(3..)?, ty, id)?;
            Some((Constant { index, value }, 3 + ty.size(id)))
        })
    }

    /// The static fields with their values, in the dump's order.
    pub fn statics(&self) -> impl Iterator<Item = Static> + 'a {
        let id = self.id_size;
        let n = id.bytes();
        entries(self.statics, move |b, at| {
            let name = id.read(b)?;
            let ty = BasicType::from_tag(*b.get(n)?)?;
            let value = Value::read(b.get(n + 1..)?, ty, id)?;
            let offset = at + n as u64 + 1;
            Some((
                Static {
                    name,
                    value,
                    offset,
                },
                n + 1 + ty.size(id),
            ))
        })
    }

    /// The instance fields' descriptors, in the order their values lie in
    /// an instance's data (before the superclass's).
    pub fn fields(&self) -> impl Iterator<Item = FieldDesc> + 'a {
        let id = self.id_size;
        entries(self.fields, move |b, _| {
            let name = id.read(b)?;
            let ty = BasicType::from_tag(*b.get(id.bytes())?)?;
            Some((FieldDesc { name, ty }, id.bytes() + 1))
        })
    }
}

/// Walks `count` entries of a region, each read by `one` from its bytes
/// and file offset, which says how many bytes it took; stops early (never
/// panics) where an entry does not read.
fn entries<'a, T>(
    region: Region<'a>,
    one: impl Fn(&'a [u8], u64) -> Option<(T, usize)> + 'a,
) -> impl Iterator<Item = T> + 'a {
    let mut pos = 0usize;
    let mut left = region.count;
    std::iter::from_fn(move || {
        if left == 0 {
            return None;
        }
        let (item, took) = one(region.bytes.get(pos..)?, region.offset + pos as u64)?;
        pos += took;
        left -= 1;
        Some(item)
    })
}
