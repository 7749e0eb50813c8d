//! HPROF's values: object ids (4 or 8 bytes, as the header says), the
//! basic types of fields and array elements, and readers of values out of
//! bytes the caller holds (an instance's field data, a trace's frame ids,
//! an object array's elements). Every reader stops (`None`) where the
//! bytes end rather than panicking.

/// The size of an object id in this file: 4 or 8 bytes (the header's
/// `u4`; HotSpot writes 8 on 64-bit VMs, compressed oops or not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdSize(u8);

impl IdSize {
    /// 4-byte ids.
    pub const FOUR: IdSize = IdSize(4);
    /// 8-byte ids.
    pub const EIGHT: IdSize = IdSize(8);

    /// The id size a header names, if the parser reads it (4 or 8).
    pub fn new(size: u32) -> Option<IdSize> {
        match size {
            4 => Some(IdSize::FOUR),
            8 => Some(IdSize::EIGHT),
            _ => None,
        }
    }

    /// Bytes per id.
    pub fn bytes(self) -> usize {
        self.0 as usize
    }

    /// The id at the start of `bytes` (big-endian, zero-extended).
    pub fn read(self, bytes: &[u8]) -> Option<u64> {
        if self.0 == 4 {
            Some(u64::from(u32::from_be_bytes(
                bytes.get(..4)?.try_into().ok()?,
            )))
        } else {
            Some(u64::from_be_bytes(bytes.get(..8)?.try_into().ok()?))
        }
    }
}

/// The ids in `bytes`, in order (a TRACE's frames, an OBJ_ARRAY_DUMP's
/// elements); a partial id at the end is not read.
pub fn ids(bytes: &[u8], id: IdSize) -> impl Iterator<Item = u64> + '_ {
    bytes
        .chunks_exact(id.bytes())
        .filter_map(move |c| id.read(c))
}

/// The type of a field, a constant or an array's elements (HPROF's
/// `basic type` byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BasicType {
    /// A reference: an object id (tag 2).
    Object,
    /// `boolean` (4).
    Boolean,
    /// `char` (5).
    Char,
    /// `float` (6).
    Float,
    /// `double` (7).
    Double,
    /// `byte` (8).
    Byte,
    /// `short` (9).
    Short,
    /// `int` (10).
    Int,
    /// `long` (11).
    Long,
}

impl BasicType {
    /// The type a tag byte names.
    pub fn from_tag(tag: u8) -> Option<BasicType> {
        Some(match tag {
            2 => BasicType::Object,
            4 => BasicType::Boolean,
            5 => BasicType::Char,
            6 => BasicType::Float,
            7 => BasicType::Double,
            8 => BasicType::Byte,
            9 => BasicType::Short,
            10 => BasicType::Int,
            11 => BasicType::Long,
            _ => return None,
        })
    }

    /// Its tag byte.
    pub fn tag(self) -> u8 {
        match self {
            BasicType::Object => 2,
            BasicType::Boolean => 4,
            BasicType::Char => 5,
            BasicType::Float => 6,
            BasicType::Double => 7,
            BasicType::Byte => 8,
            BasicType::Short => 9,
            BasicType::Int => 10,
            BasicType::Long => 11,
        }
    }

    /// Bytes one value takes in the dump.
    pub fn size(self, id: IdSize) -> usize {
        match self {
            BasicType::Object => id.bytes(),
            BasicType::Boolean | BasicType::Byte => 1,
            BasicType::Char | BasicType::Short => 2,
            BasicType::Float | BasicType::Int => 4,
            BasicType::Double | BasicType::Long => 8,
        }
    }

    /// Its Java name (`int`; `Object` for a reference).
    pub fn java_name(self) -> &'static str {
        match self {
            BasicType::Object => "Object",
            BasicType::Boolean => "boolean",
            BasicType::Char => "char",
            BasicType::Float => "float",
            BasicType::Double => "double",
            BasicType::Byte => "byte",
            BasicType::Short => "short",
            BasicType::Int => "int",
            BasicType::Long => "long",
        }
    }
}

/// One value as the dump holds it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// An object id (0 is `null`).
    Object(u64),
    /// A `boolean` (any non-zero byte is true).
    Boolean(bool),
    /// A `char` (a UTF-16 unit).
    Char(u16),
    /// A `float`.
    Float(f32),
    /// A `double`.
    Double(f64),
    /// A `byte`.
    Byte(i8),
    /// A `short`.
    Short(i16),
    /// An `int`.
    Int(i32),
    /// A `long`.
    Long(i64),
}

impl Value {
    /// The value of type `ty` at the start of `bytes`.
    pub fn read(bytes: &[u8], ty: BasicType, id: IdSize) -> Option<Value> {
        fn be<const N: usize>(b: &[u8]) -> Option<[u8; N]> {
            b.get(..N)?.try_into().ok()
        }
        Some(match ty {
            BasicType::Object => Value::Object(id.read(bytes)?),
            BasicType::Boolean => Value::Boolean(*bytes.first()? != 0),
            BasicType::Byte => Value::Byte(i8::from_be_bytes(be(bytes)?)),
            BasicType::Char => Value::Char(u16::from_be_bytes(be(bytes)?)),
            BasicType::Short => Value::Short(i16::from_be_bytes(be(bytes)?)),
            BasicType::Float => Value::Float(f32::from_be_bytes(be(bytes)?)),
            BasicType::Int => Value::Int(i32::from_be_bytes(be(bytes)?)),
            BasicType::Double => Value::Double(f64::from_be_bytes(be(bytes)?)),
            BasicType::Long => Value::Long(i64::from_be_bytes(be(bytes)?)),
        })
    }

    /// The object id, for a reference.
    pub fn object(self) -> Option<u64> {
        match self {
            Value::Object(id) => Some(id),
            _ => None,
        }
    }
}

/// Reads an instance's field values in order: HotSpot writes an
/// INSTANCE_DUMP's data as the class's own instance fields (in its
/// CLASS_DUMP's order), then its superclass's, up to `java.lang.Object`.
/// The caller, who keeps the classes, hands the types in that order.
#[derive(Debug, Clone)]
pub struct Values<'a> {
    data: &'a [u8],
    pos: usize,
    id: IdSize,
}

impl<'a> Values<'a> {
    /// A reader of `data` (the instance's field bytes).
    pub fn new(data: &'a [u8], id: IdSize) -> Values<'a> {
        Values { data, pos: 0, id }
    }

    /// The next value, of type `ty`; `None` once the data is too short for
    /// it (a class list that does not fit the instance).
    pub fn next_value(&mut self, ty: BasicType) -> Option<Value> {
        let v = Value::read(self.data.get(self.pos..)?, ty, self.id)?;
        self.pos += ty.size(self.id);
        Some(v)
    }

    /// Bytes not read yet.
    pub fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.pos)
    }
}
