//! Writing: model → bytes, mirroring `read`.

use crate::{Attribute, ClassFile, Member};

/// Encodes a class file.
pub fn write_class(class: &ClassFile<'_>) -> Vec<u8> {
    let cp = &class.constant_pool;
    let mut out = Vec::with_capacity(cp.raw.len() + cp.appended.len() + 4096);
    out.extend_from_slice(&0xCAFE_BABEu32.to_be_bytes());
    put16(&mut out, class.minor_version);
    put16(&mut out, class.major_version);
    put16(&mut out, cp.count());
    out.extend_from_slice(cp.raw);
    out.extend_from_slice(&cp.appended);
    put16(&mut out, class.access_flags);
    put16(&mut out, class.this_class);
    put16(&mut out, class.super_class);
    put16(&mut out, class.interfaces.len() as u16);
    for &i in &class.interfaces {
        put16(&mut out, i);
    }
    write_members(&mut out, &class.fields);
    write_members(&mut out, &class.methods);
    write_attributes(&mut out, &class.attributes);
    out
}

fn write_members(out: &mut Vec<u8>, members: &[Member<'_>]) {
    put16(out, members.len() as u16);
    for m in members {
        put16(out, m.access_flags);
        put16(out, m.name_index);
        put16(out, m.descriptor_index);
        write_attributes(out, &m.attributes);
    }
}

fn write_attributes(out: &mut Vec<u8>, attributes: &[Attribute<'_>]) {
    put16(out, attributes.len() as u16);
    for a in attributes {
        put16(out, a.name_index);
        out.extend_from_slice(&(a.data.len() as u32).to_be_bytes());
        out.extend_from_slice(&a.data);
    }
}

fn put16(out: &mut Vec<u8>, v: u16) {
    out.extend_from_slice(&v.to_be_bytes());
}
