//! Constant-pool tags (JVMS §4.4, table 4.4-B): `CONSTANT_Utf8` is
//! [`CONSTANT_UTF8`], upper case as Rust wants constants in patterns.

/// Modified UTF-8 text: names, descriptors, string contents.
pub const CONSTANT_UTF8: u8 = 1;
/// A 32-bit int.
pub const CONSTANT_INTEGER: u8 = 3;
/// A 32-bit float.
pub const CONSTANT_FLOAT: u8 = 4;
/// A 64-bit long; takes two pool slots.
pub const CONSTANT_LONG: u8 = 5;
/// A 64-bit double; takes two pool slots.
pub const CONSTANT_DOUBLE: u8 = 6;
/// A class or array type, by internal name.
pub const CONSTANT_CLASS: u8 = 7;
/// A `java.lang.String` literal.
pub const CONSTANT_STRING: u8 = 8;
/// A field: class and NameAndType.
pub const CONSTANT_FIELDREF: u8 = 9;
/// A class's method: class and NameAndType.
pub const CONSTANT_METHODREF: u8 = 10;
/// An interface's method: class and NameAndType.
pub const CONSTANT_INTERFACE_METHODREF: u8 = 11;
/// A member's name and descriptor.
pub const CONSTANT_NAME_AND_TYPE: u8 = 12;
/// A `java.lang.invoke.MethodHandle`: reference kind and member.
pub const CONSTANT_METHOD_HANDLE: u8 = 15;
/// A `java.lang.invoke.MethodType`, by descriptor.
pub const CONSTANT_METHOD_TYPE: u8 = 16;
/// A constant computed by a bootstrap method (class files 55+).
pub const CONSTANT_DYNAMIC: u8 = 17;
/// An `invokedynamic` call site: bootstrap method and NameAndType.
pub const CONSTANT_INVOKE_DYNAMIC: u8 = 18;
/// A module (module-info only).
pub const CONSTANT_MODULE: u8 = 19;
/// A package (module-info only).
pub const CONSTANT_PACKAGE: u8 = 20;

/// `reference_kind` of a CONSTANT_MethodHandle for a static method
/// (`REF_invokeStatic`, JVMS §5.4.3.5).
pub const REF_INVOKE_STATIC: u8 = 6;

/// Bytes after the tag of an entry with `tag`, for all but CONSTANT_Utf8
/// (whose length is in the entry); `None` for a tag the JVMS does not define.
pub fn body_len(tag: u8) -> Option<usize> {
    Some(match tag {
        CONSTANT_INTEGER | CONSTANT_FLOAT => 4,
        CONSTANT_LONG | CONSTANT_DOUBLE => 8,
        CONSTANT_CLASS | CONSTANT_STRING | CONSTANT_METHOD_TYPE => 2,
        CONSTANT_MODULE | CONSTANT_PACKAGE => 2,
        CONSTANT_FIELDREF..=CONSTANT_NAME_AND_TYPE => 4,
        CONSTANT_DYNAMIC | CONSTANT_INVOKE_DYNAMIC => 4,
        CONSTANT_METHOD_HANDLE => 3,
        _ => return None,
    })
}

/// Pool slots an entry with `tag` takes: longs and doubles take two.
pub fn slots(tag: u8) -> usize {
    if matches!(tag, CONSTANT_LONG | CONSTANT_DOUBLE) {
        2
    } else {
        1
    }
}
