use super::constant_pool::read_constant_pool;
use super::Cursor;
use crate::{Attribute, ClassFile, Member, ReadError};
use std::borrow::Cow;

/// Parses a class file. The model borrows `data`.
pub fn parse_class(data: &[u8]) -> Result<ClassFile<'_>, ReadError> {
    let mut c = Cursor::new(data);
    let magic = c.u32("magic")?;
    if magic != 0xCAFE_BABE {
        return Err(ReadError::new(
            0,
            format!("bad magic {magic:#010x}, not a class file"),
        ));
    }
    let minor_version = c.u16("minor_version")?;
    let major_version = c.u16("major_version")?;
    if !(45..=69).contains(&major_version) {
        return Err(ReadError::new(
            6,
            format!("unsupported class file version {major_version}"),
        ));
    }
    let constant_pool = read_constant_pool(&mut c, data)?;
    let access_flags = c.u16("access_flags")?;
    let this_class = c.u16("this_class")?;
    let super_class = c.u16("super_class")?;
    let n = c.u16("interfaces_count")?;
    let mut interfaces = Vec::with_capacity((n as usize).min(c.remaining() / 2));
    for _ in 0..n {
        interfaces.push(c.u16("interface")?);
    }
    let fields = read_members(&mut c, "field")?;
    let methods = read_members(&mut c, "method")?;
    let attributes = read_attributes(&mut c)?;
    if c.remaining() != 0 {
        return Err(ReadError::new(
            c.pos(),
            format!("{} bytes after the end of the class", c.remaining()),
        ));
    }
    Ok(ClassFile {
        minor_version,
        major_version,
        constant_pool,
        access_flags,
        this_class,
        super_class,
        interfaces,
        fields,
        methods,
        attributes,
    })
}

fn read_members<'a>(c: &mut Cursor<'a>, what: &str) -> Result<Vec<Member<'a>>, ReadError> {
    let n = c.u16(what)?;
    // Each member takes at least 8 bytes: never reserve more than the input can hold.
    let mut out = Vec::with_capacity((n as usize).min(c.remaining() / 8));
    for _ in 0..n {
        out.push(Member {
            access_flags: c.u16("access_flags")?,
            name_index: c.u16("name_index")?,
            descriptor_index: c.u16("descriptor_index")?,
            attributes: read_attributes(c)?,
        });
    }
    Ok(out)
}

pub(crate) fn read_attributes<'a>(c: &mut Cursor<'a>) -> Result<Vec<Attribute<'a>>, ReadError> {
    let n = c.u16("attributes_count")?;
    let mut out = Vec::with_capacity((n as usize).min(c.remaining() / 6));
    for _ in 0..n {
        let name_index = c.u16("attribute_name_index")?;
        let len = c.u32("attribute_length")? as usize;
        out.push(Attribute {
            name_index,
            data: Cow::Borrowed(c.bytes(len, "attribute body")?),
        });
    }
    Ok(out)
}
