//! The first pass over a heap dump: what the text needs before it can be
//! written, whatever order the records come in (profrj's agent appends its
//! allocation TRACEs and FRAMEs after HEAP_DUMP_END, and a class may be
//! dumped after its instances): the symbols, the classes (names, super
//! classes, instance fields), the frames, the traces, the threads, and the
//! objects' count and bytes for `HEAP DUMP BEGIN`. Memory is bounded by the
//! symbols, classes, frames and traces, never by the objects: an object is
//! counted and its body skipped.

use super::input::{Body, Walk};
use crate::error::CliError;
use profrj_format::names::decode_modified_utf8;
use profrj_hprof::{ids, BasicType, Frame, IdSize, Item, StartThread};
use std::collections::HashMap;

/// A class as the dump names and describes it.
#[derive(Default)]
pub struct Class {
    /// UTF8 id of its name (LOAD_CLASS; 0 when only dumped).
    pub name: u64,
    /// Its superclass's id (CLASS_DUMP; 0 for none).
    pub super_id: u64,
    /// Its own instance fields: name id and type, in data order.
    pub fields: Box<[(u64, BasicType)]>,
}

/// A TRACE: its serial, and its frame ids (at most `depth`, innermost first).
pub struct TraceInfo {
    pub serial: u32,
    pub frames: Vec<u64>,
}

/// Everything the first pass keeps.
pub struct Tables {
    pub id: IdSize,
    pub symbols: HashMap<u64, Box<str>>,
    pub classes: HashMap<u64, Class>,
    /// LOAD_CLASS serial → class id (FRAME names classes by serial).
    pub serials: HashMap<u32, u64>,
    pub frames: HashMap<u64, Frame>,
    /// In file order.
    pub traces: Vec<TraceInfo>,
    pub trace_index: HashMap<u32, usize>,
    pub threads: Vec<StartThread>,
    pub ended: Vec<u32>,
    /// INSTANCE, OBJ_ARRAY and PRIM_ARRAY dumps, and their bytes in the
    /// dump (field data, elements).
    pub objects: u64,
    pub bytes: u64,
}

impl Tables {
    /// The first pass, keeping at most `depth` frames per trace.
    pub fn read(walk: &mut Walk, depth: usize) -> Result<Tables, CliError> {
        let id = walk.header.id_size;
        let mut t = Tables {
            id,
            symbols: HashMap::new(),
            classes: HashMap::new(),
            serials: HashMap::new(),
            frames: HashMap::new(),
            traces: Vec::new(),
            trace_index: HashMap::new(),
            threads: Vec::new(),
            ended: Vec::new(),
            objects: 0,
            bytes: 0,
        };
        walk.run(|item, body| t.see(item, body, depth))?;
        Ok(t)
    }

    fn see(&mut self, item: &Item, body: &mut Body, depth: usize) -> Result<(), CliError> {
        match item {
            Item::Utf8 { id, text_len, .. } => {
                let text = body.take(*text_len as usize)?;
                self.symbols
                    .insert(*id, decode_modified_utf8(text).into_boxed_str());
            }
            Item::LoadClass(l) => {
                self.classes.entry(l.class_id).or_default().name = l.name_id;
                self.serials.insert(l.serial, l.class_id);
            }
            Item::Frame(f) => {
                self.frames.insert(f.id, *f);
            }
            Item::Trace(tr) => {
                let n = (tr.count as usize).min(depth);
                let bytes = body.take(n * self.id.bytes())?;
                let frames = ids(bytes, self.id).collect();
                self.trace_index.insert(tr.serial, self.traces.len());
                self.traces.push(TraceInfo {
                    serial: tr.serial,
                    frames,
                });
            }
            Item::StartThread(s) => self.threads.push(*s),
            Item::EndThread { serial } => self.ended.push(*serial),
            Item::Class(c) => {
                let class = self.classes.entry(c.id).or_default();
                class.super_id = c.super_id;
                class.fields = c.fields().map(|f| (f.name, f.ty)).collect();
            }
            Item::Instance(i) => self.count(u64::from(i.data_len)),
            Item::ObjArray(a) => self.count(u64::from(a.length) * self.id.bytes() as u64),
            Item::PrimArray(a) => self.count(u64::from(a.length) * a.elem.size(self.id) as u64),
            _ => {}
        }
        Ok(())
    }

    fn count(&mut self, bytes: u64) {
        self.objects += 1;
        self.bytes = self.bytes.saturating_add(bytes);
    }

    /// A symbol's text (`?` for an id no UTF8 record has).
    pub fn symbol(&self, id: u64) -> &str {
        self.symbols.get(&id).map_or("?", |s| s)
    }

    /// A class's name as the dump has it (`java/lang/String`, `[I`), or
    /// `<unknown>` for a class no LOAD_CLASS names.
    pub fn class_name(&self, id: u64) -> &str {
        match self.classes.get(&id) {
            Some(c) if c.name != 0 => self.symbol(c.name),
            _ => "<unknown>",
        }
    }

    /// The instance fields of `class` and its superclasses, in the order
    /// of an instance's data; at most as many classes as the dump has (a
    /// loop of superclasses ends there).
    pub fn instance_fields(&self, class: u64) -> impl Iterator<Item = (u64, BasicType)> + '_ {
        let mut next = Some(class).filter(|&c| c != 0);
        let mut steps = 0usize;
        std::iter::from_fn(move || {
            let c = self.classes.get(&next?)?;
            steps += 1;
            next = Some(c.super_id).filter(|&s| s != 0 && steps < self.classes.len());
            Some(c.fields.iter().copied())
        })
        .flatten()
    }
}

/// A class name in Java's form (`java.lang.String`, `int[]`,
/// `java.lang.Object[][]`) from the dump's (`java/lang/String`, `[I`,
/// `[[Ljava/lang/Object;`).
pub fn java_name(name: &str) -> String {
    let dims = name.bytes().take_while(|&b| b == b'[').count();
    if dims == 0 {
        return name.replace('/', ".");
    }
    let elem = &name[dims..];
    let base = match elem {
        "Z" => "boolean".to_owned(),
        "B" => "byte".to_owned(),
        "C" => "char".to_owned(),
        "S" => "short".to_owned(),
        "I" => "int".to_owned(),
        "J" => "long".to_owned(),
        "F" => "float".to_owned(),
        "D" => "double".to_owned(),
        e => e
            .strip_prefix('L')
            .and_then(|e| e.strip_suffix(';'))
            .unwrap_or(e)
            .replace('/', "."),
    };
    format!("{base}{}", "[]".repeat(dims))
}

/// The element type of an object array's class, in the dump's form
/// (`[Ljava/lang/String;` → `java/lang/String`, `[[I` → `[I`).
pub fn element_name(array: &str) -> &str {
    match array.strip_prefix('[') {
        Some(e) => e
            .strip_prefix('L')
            .and_then(|e| e.strip_suffix(';'))
            .unwrap_or(e),
        None => array,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_in_java_form() {
        assert_eq!(java_name("java/lang/String"), "java.lang.String");
        assert_eq!(java_name("[I"), "int[]");
        assert_eq!(java_name("[[Ljava/lang/Object;"), "java.lang.Object[][]");
        assert_eq!(java_name("p/A$B"), "p.A$B");
        assert_eq!(element_name("[Ljava/lang/String;"), "java/lang/String");
        assert_eq!(element_name("[[I"), "[I");
    }
}
