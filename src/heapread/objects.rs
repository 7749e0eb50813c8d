//! Reading one object again, by the offset the graph kept: a field's
//! value, which field or element of an object refers to another (a path's
//! step), a `java.lang.String`'s text (a thread's name).

use super::graph::{Graph, CLASS_OBJECT, ROOT_TYPE};
use super::load::Dump;
use profrj_hprof::{ids, RootKind, Value, Values};

/// The field data of instance `v` (its class's field bytes, at most).
fn instance_data<'m>(d: &'m Dump, g: &Graph, v: u32) -> Option<(u32, &'m [u8])> {
    let t = g.ty[v as usize];
    if t >= g.classes || d.is_array_class(t) {
        return None;
    }
    let len: usize = d.instance_fields(t).map(|(_, ty)| ty.size(d.id)).sum();
    let at = g.offset[v as usize] as usize;
    Some((t, d.map.bytes().get(at..at.checked_add(len)?)?))
}

/// The value of instance `v`'s field `name` (the first of that name, the
/// class's own before its superclasses').
pub fn field(d: &Dump, g: &Graph, v: u32, name: &str) -> Option<Value> {
    let (t, data) = instance_data(d, g, v)?;
    let mut values = Values::new(data, d.id);
    for (n, ty) in d.instance_fields(t) {
        let value = values.next_value(ty)?;
        if d.symbol(n) == name.as_bytes() {
            return Some(value);
        }
    }
    None
}

/// A `java.lang.String`'s text: its `value` (JDK 9+: a byte[] in Latin-1
/// or UTF-16 as `coder` says; JDK 8: a char[]).
pub fn string(d: &Dump, g: &Graph, v: u32) -> Option<String> {
    let value = g.node(field(d, g, v, "value")?.object()?)?;
    let coder = match field(d, g, v, "coder") {
        Some(Value::Byte(c)) => c,
        _ => -1,
    };
    let len = g.shallow[value as usize].checked_sub(2 * d.id.bytes() as u64 + 8)? as usize;
    let at = g.offset[value as usize] as usize;
    let bytes = d.map.bytes().get(at..at + len.min(4096))?;
    let t = g.ty[value as usize];
    let char_array = t == g.classes + 1;
    Some(if coder == 0 && !char_array {
        bytes.iter().map(|&b| b as char).collect()
    } else {
        let units: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|c| {
                if coder == 1 && !char_array {
                    // HotSpot's UTF-16 strings are in the VM's byte order.
                    u16::from_le_bytes([c[0], c[1]])
                } else {
                    u16::from_be_bytes([c[0], c[1]])
                }
            })
            .collect();
        String::from_utf16_lossy(&units)
    })
}

/// How `from` refers to `to`, as a path step says it: `.field`,
/// `[index]`, `static field`, `<class>`, or the root's kind.
pub fn step(d: &Dump, g: &Graph, from: u32, to: u32) -> String {
    let target = g.ids[to as usize];
    let t = g.ty[from as usize];
    if t == ROOT_TYPE {
        return match g.root_kind.get(&to) {
            Some(k) => root_kind(k).into(),
            None => "root".into(),
        };
    }
    if t & CLASS_OBJECT != 0 {
        let c = &d.classes[(t & !CLASS_OBJECT) as usize];
        if let Some((name, _)) = c.statics.iter().find(|s| s.1 == target) {
            return format!("static {}", d.text(*name));
        }
        let what = ["super", "loader", "signers", "protection domain"];
        let at = c.refs.iter().position(|&r| r == target);
        return format!("<{}>", at.map_or("?", |i| what[i]));
    }
    if t < g.classes && d.is_array_class(t) {
        let len = g.shallow[from as usize].saturating_sub(2 * d.id.bytes() as u64 + 8)
            / d.id.bytes() as u64;
        let at = g.offset[from as usize] as usize;
        let bytes = d.map.bytes().get(at..at + len as usize * d.id.bytes());
        if let Some(i) = bytes.and_then(|b| ids(b, d.id).position(|e| e == target)) {
            return format!("[{i}]");
        }
        return "<class>".into();
    }
    if let Some((c, data)) = instance_data(d, g, from) {
        let mut values = Values::new(data, d.id);
        for (n, ty) in d.instance_fields(c) {
            match values.next_value(ty) {
                Some(Value::Object(id)) if id == target => return format!(".{}", d.text(n)),
                Some(_) => {}
                None => break,
            }
        }
        if d.classes.get(c as usize).is_some_and(|k| k.id == target) {
            return "<class>".into();
        }
    }
    "?".into()
}

pub fn root_kind(k: &RootKind) -> &'static str {
    match k {
        RootKind::Unknown => "unknown root",
        RootKind::JniGlobal { .. } => "JNI global",
        RootKind::JniLocal { .. } => "JNI local",
        RootKind::JavaFrame { .. } => "Java frame",
        RootKind::NativeStack { .. } => "native stack",
        RootKind::StickyClass => "sticky class",
        RootKind::ThreadBlock { .. } => "thread block",
        RootKind::MonitorUsed => "monitor used",
        RootKind::ThreadObject { .. } => "thread object",
    }
}
