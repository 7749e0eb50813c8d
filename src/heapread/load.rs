//! The dump opened for random access, and its first pass. A plain dump is
//! mapped read-only as it is; a gzipped one is inflated first into the
//! private directory (a gzip stream cannot be read at an offset, and the
//! paths and thread names need to read objects again by offset). The
//! first pass keeps what is bounded by the dump's classes, symbols,
//! frames, traces and roots, and spools every object's id to a file.

use super::scratch::{Mapped, ReadMap, Scratch};
use crate::error::CliError;
use flate2::read::MultiGzDecoder;
use profrj_hprof::{
    BasicType, ClassDump, Header, IdSize, Instance, Item, ObjArray, PrimArray, RootKind, Scanner,
    Step,
};
use std::collections::HashMap;
use std::io::BufReader;
use std::path::Path;

/// A class as its CLASS_DUMP and LOAD_CLASS say.
pub struct Class {
    pub id: u64,
    /// UTF8 id of its name (0 when no LOAD_CLASS names it).
    pub name: u64,
    pub super_id: u64,
    /// The CLASS_DUMP's instance size: its instances' field bytes.
    pub instance_size: u32,
    /// Its own instance fields (name id, type), in data order.
    pub fields: Box<[(u64, BasicType)]>,
    /// Static fields holding a reference: (name id, object id).
    pub statics: Box<[(u64, u64)]>,
    /// Other references a class holds: super, loader, signers, domain.
    pub refs: [u64; 4],
}

/// A TRACE: its thread serial and its innermost frame (0: none).
#[derive(Clone, Copy)]
pub struct TraceInfo {
    pub thread: u32,
    pub frame: u64,
}

/// Everything the first pass keeps, and the mapped dump.
pub struct Dump {
    pub map: ReadMap,
    pub start: usize,
    pub header: Header,
    pub id: IdSize,
    /// UTF8 id → (offset, length) of its text in the map.
    pub symbols: HashMap<u64, (usize, usize)>,
    pub classes: Vec<Class>,
    pub class_index: HashMap<u64, u32>,
    /// LOAD_CLASS serial → class id.
    pub serials: HashMap<u32, u64>,
    pub frames: HashMap<u64, profrj_hprof::Frame>,
    pub traces: HashMap<u32, TraceInfo>,
    /// Thread serial → its Thread object (ROOT_THREAD_OBJECT, START_THREAD).
    pub thread_objects: HashMap<u32, u64>,
    /// Thread serial → UTF8 id of its name (START_THREAD).
    pub thread_names: HashMap<u32, u64>,
    pub roots: Vec<(u64, RootKind)>,
    /// The objects (instances, arrays) and class objects met.
    pub objects: u64,
    /// NetBeans' `newSize`: java.lang.Object's CLASS_DUMP states a size,
    /// so every instance size is the dump's own (else field bytes plus a
    /// header of two ids).
    pub sizes_whole: bool,
}

/// Opens `path` (gzipped or not, as `sniff` said), maps it, runs the
/// first pass; hands each object (instance, array, class dump) to
/// `object` as it is met.
pub fn open(
    path: &Path,
    gzip: bool,
    scratch: &mut Scratch,
    object: &mut dyn FnMut(&Item) -> Result<(), CliError>,
) -> Result<Dump, CliError> {
    let fail = |e: std::io::Error| CliError::Input(format!("{}: {e}", path.display()));
    let file = std::fs::File::open(path).map_err(fail)?;
    let map = if gzip {
        let (plain_path, mut plain) = scratch.raw("dump.hprof")?;
        let mut gz = MultiGzDecoder::new(BufReader::with_capacity(1 << 20, file));
        std::io::copy(&mut gz, &mut plain).map_err(fail)?;
        ReadMap::open(plain, &plain_path)?
    } else {
        ReadMap::open(file, path)?
    };
    let named = |e: profrj_hprof::Error| CliError::Input(format!("{}: {e}", path.display()));
    let (header, start) = Header::parse(map.bytes()).map_err(named)?.ok_or_else(|| {
        CliError::Input(format!(
            "{}: byte 0: the file ends inside the HPROF header",
            path.display()
        ))
    })?;
    let mut d = Dump {
        map: ReadMap::empty(),
        start,
        header,
        id: header.id_size,
        symbols: HashMap::new(),
        classes: Vec::new(),
        class_index: HashMap::new(),
        serials: HashMap::new(),
        frames: HashMap::new(),
        traces: HashMap::new(),
        thread_objects: HashMap::new(),
        thread_names: HashMap::new(),
        roots: Vec::new(),
        objects: 0,
        sizes_whole: false,
    };
    let mut names: HashMap<u64, u64> = HashMap::new();
    walk(map.bytes(), start, d.id, path, |item, body| {
        d.see(item, body, &mut names, path)?;
        object(item)
    })?;
    d.map = map;
    for c in &mut d.classes {
        c.name = names.get(&c.id).copied().unwrap_or(0);
    }
    let java_object = d
        .classes
        .iter()
        .find(|c| d.symbol(c.name) == b"java/lang/Object");
    d.sizes_whole = java_object.is_some_and(|c| c.instance_size > 0);
    Ok(d)
}

/// [`open`], spooling every object's id in file order.
pub fn open_with_ids(
    path: &Path,
    gzip: bool,
    scratch: &mut Scratch,
) -> Result<(Dump, Mapped<u64>), CliError> {
    let mut ids = scratch.spool::<u64>("ids")?;
    let d = open(path, gzip, scratch, &mut |item| match item {
        Item::Class(ClassDump { id, .. })
        | Item::Instance(Instance { id, .. })
        | Item::ObjArray(ObjArray { id, .. })
        | Item::PrimArray(PrimArray { id, .. }) => ids.push(*id),
        _ => Ok(()),
    })?;
    Ok((d, ids.finish()?))
}

impl Dump {
    /// One item of the first pass.
    fn see(
        &mut self,
        item: &Item,
        body: &[u8],
        names: &mut HashMap<u64, u64>,
        path: &Path,
    ) -> Result<(), CliError> {
        match item {
            Item::Utf8 {
                id, text_offset, ..
            } => {
                self.symbols
                    .insert(*id, (*text_offset as usize, body.len()));
            }
            Item::LoadClass(l) => {
                names.insert(l.class_id, l.name_id);
                self.serials.insert(l.serial, l.class_id);
            }
            Item::Frame(f) => {
                self.frames.insert(f.id, *f);
            }
            Item::Trace(t) => {
                let frame = profrj_hprof::ids(body, self.id).next().unwrap_or(0);
                let info = TraceInfo {
                    thread: t.thread_serial,
                    frame,
                };
                self.traces.insert(t.serial, info);
            }
            Item::StartThread(s) => {
                self.thread_objects.entry(s.serial).or_insert(s.object);
                self.thread_names.insert(s.serial, s.name);
            }
            Item::Root(r) => {
                if let RootKind::ThreadObject { thread, .. } = r.kind {
                    self.thread_objects.insert(thread, r.id);
                }
                self.roots.push((r.id, r.kind));
            }
            Item::Class(c) => {
                if self.class_index.contains_key(&c.id) {
                    return Err(CliError::Input(format!(
                        "{}: byte {}: a second CLASS_DUMP of class 0x{:x}",
                        path.display(),
                        c.offset,
                        c.id
                    )));
                }
                self.class_index.insert(c.id, self.classes.len() as u32);
                self.classes.push(Class {
                    id: c.id,
                    name: 0,
                    super_id: c.super_id,
                    instance_size: c.instance_size,
                    fields: c.fields().map(|f| (f.name, f.ty)).collect(),
                    statics: c
                        .statics()
                        .filter_map(|s| Some((s.name, s.value.object()?)))
                        .filter(|s| s.1 != 0)
                        .collect(),
                    refs: [c.super_id, c.loader, c.signers, c.protection_domain],
                });
                self.objects += 1;
            }
            Item::Instance(_) | Item::ObjArray(_) | Item::PrimArray(_) => self.objects += 1,
            _ => {}
        }
        Ok(())
    }
}

fn d_symbol<'m>(symbols: &HashMap<u64, (usize, usize)>, map: &'m [u8], id: u64) -> &'m [u8] {
    match symbols.get(&id) {
        Some(&(at, len)) => map.get(at..at + len).unwrap_or(b""),
        None => b"",
    }
}

/// How much of the dump is read before its pages are given back.
const RELEASE: usize = 64 << 20;

/// Every item of the mapped dump, in order, to `f` with its body (which
/// the scanner has checked lies inside the file); `f`'s error stops the
/// walk and is its error.
pub fn walk<'m>(
    map: &'m [u8],
    start: usize,
    id: IdSize,
    path: &Path,
    mut f: impl FnMut(&Item<'m>, &'m [u8]) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let named = |e: profrj_hprof::Error| CliError::Input(format!("{}: {e}", path.display()));
    let mut sc = Scanner::new(id, start as u64);
    sc.set_file_len(map.len() as u64);
    let mut released = 0usize;
    loop {
        let at = sc.position() as usize;
        if at - released >= RELEASE {
            // What is read is not read again in this pass: out of the
            // process's memory (the page cache keeps it for the next).
            super::scratch::release(map, released, at);
            released = at & !(RELEASE - 1);
        }
        let rest = map.get(at..).unwrap_or(&[]);
        match sc.next(rest, at as u64).map_err(named)? {
            Step::End => {
                super::scratch::release(map, released, map.len());
                return Ok(());
            }
            Step::NeedMore { .. } => return sc.finish(rest.len()).map_err(named),
            Step::Item { item, len, body } => {
                let from = at + len;
                let to = from.saturating_add(usize::try_from(body).unwrap_or(usize::MAX));
                let Some(body) = map.get(from..to) else {
                    return Err(CliError::Input(format!(
                        "{}: byte {from}: a body of {body} bytes runs past the file's end",
                        path.display()
                    )));
                };
                f(&item, body)?;
            }
        }
    }
}

impl Dump {
    pub fn symbol(&self, id: u64) -> &[u8] {
        d_symbol(&self.symbols, self.map.bytes(), id)
    }

    /// A symbol as text (`?` when no UTF8 record has it).
    pub fn text(&self, id: u64) -> String {
        if !self.symbols.contains_key(&id) {
            return "?".into();
        }
        profrj_format::names::decode_modified_utf8(self.symbol(id))
    }

    /// A class's name in Java's form (`java.util.HashMap`, `long[]`).
    /// A class's name as the dump has it (`java/lang/String`, `[I`,
    /// `[Ljava/lang/Object;`).
    pub fn raw_class_name(&self, class: u32) -> String {
        match self.classes.get(class as usize) {
            Some(c) if c.name != 0 => self.text(c.name),
            Some(c) => format!("<class 0x{:x}>", c.id),
            None => "<class>".into(),
        }
    }

    pub fn class_name(&self, class: u32) -> String {
        match self.classes.get(class as usize) {
            Some(c) if c.name != 0 => crate::heap::java_name(&self.text(c.name)),
            Some(c) => format!("<class 0x{:x}>", c.id),
            None => "<unknown>".into(),
        }
    }

    /// Whether class `class` is an array class (`[I`, `[Ljava/lang/Object;`).
    pub fn is_array_class(&self, class: u32) -> bool {
        let c = self.classes.get(class as usize);
        c.is_some_and(|c| self.symbol(c.name).starts_with(b"["))
    }

    /// The ids of class `class` and its superclasses (at most as many as
    /// the dump has classes).
    pub fn superclasses(&self, class: u32) -> impl Iterator<Item = u64> + '_ {
        let mut next = self.classes.get(class as usize).map(|c| c.id);
        let mut steps = 0usize;
        std::iter::from_fn(move || {
            let id = next.filter(|&i| i != 0 && steps <= self.classes.len())?;
            steps += 1;
            next = self
                .class_index
                .get(&id)
                .map(|&c| self.classes[c as usize].super_id);
            Some(id)
        })
    }

    /// The instance fields of class `class` then its superclasses', in an
    /// instance's data order; at most as many classes as the dump has (a
    /// loop of superclasses ends there).
    pub fn instance_fields(&self, class: u32) -> impl Iterator<Item = (u64, BasicType)> + '_ {
        let mut next = Some(class);
        let mut steps = 0usize;
        std::iter::from_fn(move || {
            let c = self.classes.get(next? as usize)?;
            steps += 1;
            next = self
                .class_index
                .get(&c.super_id)
                .copied()
                .filter(|_| steps < self.classes.len());
            Some(c.fields.iter().copied())
        })
        .flatten()
    }

    /// NetBeans' size of an instance of `class` (its `Instance.getSize`):
    /// the CLASS_DUMP's instance size plus two ids of header, or the size
    /// as stated when the dump states whole sizes ([`Dump::sizes_whole`]).
    pub fn instance_size(&self, class: u32) -> u64 {
        let raw = self
            .classes
            .get(class as usize)
            .map_or(0, |c| u64::from(c.instance_size));
        if self.sizes_whole {
            raw
        } else {
            raw + 2 * self.id.bytes() as u64
        }
    }

    /// NetBeans' size of an array of `len` elements of `elem` bytes: two
    /// ids of header, 8 bytes (its `HPROF_ARRAY_OVERHEAD`), the elements.
    pub fn array_size(&self, len: u32, elem: usize) -> u64 {
        2 * self.id.bytes() as u64 + 8 + u64::from(len) * elem as u64
    }
}
