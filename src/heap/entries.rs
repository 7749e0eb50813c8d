//! The `HEAP DUMP` block's entries, one per sub-record as the second pass
//! meets it, in the shape of HPROF's java.hprof.txt (ids in hex, a field
//! name of more than 7 characters followed by one tab, a shorter one by
//! two, as HPROF lined them up):
//! - `ROOT id (kind=<...>, ...)` per GC root, in HPROF's words;
//! - `CLS id (name=NAME, trace=N)`, then its `super`, `loader`, `signers`,
//!   `domain`, each static reference field (`static NAME`) and each
//!   reference in its constant pool (`constant[i]`) that is not null;
//! - `OBJ id (sz=N, trace=N, class=NAME@id)`, then each non-null reference
//!   field, its class's fields first, then its superclasses';
//! - `ARR id (sz=N, trace=N, nelems=N, elem type=NAME@id)` for an object
//!   array, then `[i]` per non-null element; `elem type=int` (no id) for a
//!   primitive one.
//!
//! Names are the dump's own (`java/lang/String`, as the spec's example).
//! `sz` is the bytes the dump holds for the object (its field data or its
//! elements, no object header: the binary dump has no object size).

use super::input::Body;
use super::tables::{element_name, Tables};
use super::Fail;
use profrj_format::names::escape;
use profrj_hprof::{ClassDump, Item, RootKind, Value};
use std::collections::HashMap;
use std::io::Write;

/// Element ids read from an object array at a time.
const ELEMENTS: usize = 8192;

/// What the entries look up besides the tables.
pub struct Entries<'t> {
    t: &'t Tables,
    /// Class name → its id when one class has that name (an object
    /// array's element class; else the array class's id is written).
    by_name: HashMap<&'t str, Option<u64>>,
}

impl<'t> Entries<'t> {
    pub fn new(t: &'t Tables) -> Entries<'t> {
        let mut by_name: HashMap<&str, Option<u64>> = HashMap::new();
        for (&id, c) in &t.classes {
            if c.name != 0 {
                by_name
                    .entry(t.symbol(c.name))
                    .and_modify(|e| *e = None)
                    .or_insert(Some(id));
            }
        }
        Entries { t, by_name }
    }

    /// The entry of one item (nothing for a top-level record).
    pub fn write(&self, item: &Item, body: &mut Body, out: &mut dyn Write) -> Result<(), Fail> {
        let t = self.t;
        match item {
            Item::Root(r) => root(t, r.id, r.kind, out)?,
            Item::Class(c) => self.class(c, out)?,
            Item::Instance(i) => {
                let name = escape(t.class_name(i.class_id));
                writeln!(
                    out,
                    "OBJ {:x} (sz={}, trace={}, class={name}@{:x})",
                    i.id, i.data_len, i.trace, i.class_id
                )?;
                // Field by field, so no instance's claim is read whole.
                for (name, ty) in t.instance_fields(i.class_id) {
                    let size = ty.size(t.id);
                    let bytes = body.take(size)?;
                    match Value::read(bytes, ty, t.id) {
                        Some(Value::Object(v)) if v != 0 => reference(out, "", t.symbol(name), v)?,
                        Some(_) => {}
                        None => break,
                    }
                }
            }
            Item::ObjArray(a) => {
                let elem = element_name(t.class_name(a.class_id));
                let elem_id = self.by_name.get(elem).copied().flatten();
                writeln!(
                    out,
                    "ARR {:x} (sz={}, trace={}, nelems={}, elem type={}@{:x})",
                    a.id,
                    u64::from(a.length) * t.id.bytes() as u64,
                    a.trace,
                    a.length,
                    escape(elem),
                    elem_id.unwrap_or(a.class_id)
                )?;
                let n = t.id.bytes();
                let mut i = 0u64;
                while body.left() > 0 {
                    let chunk = body.take(ELEMENTS * n)?;
                    for e in profrj_hprof::ids(chunk, t.id) {
                        if e != 0 {
                            writeln!(out, "\t[{i}]\t\t{e:x}")?;
                        }
                        i += 1;
                    }
                }
            }
            Item::PrimArray(a) => writeln!(
                out,
                "ARR {:x} (sz={}, trace={}, nelems={}, elem type={})",
                a.id,
                u64::from(a.length) * a.elem.size(t.id) as u64,
                a.trace,
                a.length,
                a.elem.java_name()
            )?,
            _ => {}
        }
        Ok(())
    }

    fn class(&self, c: &ClassDump, out: &mut dyn Write) -> Result<(), Fail> {
        let t = self.t;
        writeln!(
            out,
            "CLS {:x} (name={}, trace={})",
            c.id,
            escape(t.class_name(c.id)),
            c.trace
        )?;
        for (label, id) in [
            ("super", c.super_id),
            ("loader", c.loader),
            ("signers", c.signers),
            ("domain", c.protection_domain),
        ] {
            if id != 0 {
                writeln!(out, "\t{label}\t\t{id:x}")?;
            }
        }
        for s in c.statics() {
            if let Value::Object(v @ 1..) = s.value {
                reference(out, "static ", t.symbol(s.name), v)?;
            }
        }
        for k in c.constants() {
            if let Value::Object(v @ 1..) = k.value {
                writeln!(out, "\tconstant[{}]\t{v:x}", k.index)?;
            }
        }
        Ok(())
    }
}

/// `\tNAME\tID`, two tabs after a name of 7 characters or fewer.
fn reference(out: &mut dyn Write, prefix: &str, name: &str, id: u64) -> Result<(), Fail> {
    let name = escape(name);
    let tabs = if prefix.len() + name.chars().count() > 7 {
        "\t"
    } else {
        "\t\t"
    };
    writeln!(out, "\t{prefix}{name}{tabs}{id:x}")?;
    Ok(())
}

/// `ROOT id (kind=<...>, ...)` as HPROF wrote each kind; a JNI global's
/// `id` is the global reference (the binary dump has no serial or trace
/// for it), thread ids are the dump's thread serials.
fn root(t: &Tables, id: u64, kind: RootKind, out: &mut dyn Write) -> Result<(), Fail> {
    write!(out, "ROOT {id:x} (kind=")?;
    match kind {
        RootKind::Unknown => write!(out, "<unknown>")?,
        RootKind::JniGlobal { ref_id } => write!(out, "<JNI global ref>, id={ref_id:x}")?,
        RootKind::JniLocal { thread, frame } => write!(
            out,
            "<JNI local ref>, thread={thread}, frame={}",
            frame as i32
        )?,
        RootKind::JavaFrame { thread, frame } => {
            write!(out, "<Java stack>, thread={thread}, frame={}", frame as i32)?
        }
        RootKind::NativeStack { thread } => write!(out, "<native stack>, thread={thread}")?,
        RootKind::StickyClass => write!(out, "<system class>, name={}", escape(t.class_name(id)))?,
        RootKind::ThreadBlock { thread } => write!(out, "<thread block>, thread={thread}")?,
        RootKind::MonitorUsed => write!(out, "<busy monitor>")?,
        RootKind::ThreadObject { thread, trace } => {
            write!(out, "<thread>, id={thread}, trace={trace}")?
        }
    }
    writeln!(out, ")")?;
    Ok(())
}
