//! The pass over HotSpot's finished dump that names who allocated each
//! object: for every instance whose class has `memory`'s stamp field, the
//! stamp (its counter's index + 1) in the instance's own field data says
//! which allocation counter, so which thread and site, made it; the
//! instance's 4-byte stack-trace serial is rewritten in place to that
//! counter's trace (`traces::TRACE_BASE` + index), and the counters met are
//! given their TRACE, FRAME and START_THREAD records after HEAP_DUMP_END.
//!
//! In place: the file is read through a read-only memory map (the pages
//! behind the cursor are dropped from it as it goes) and the serials are
//! written back a stretch at a time (`Writes`: the bytes from a stretch's
//! first patch to its last, at most 1 MiB, copied, patched and written
//! with one `pwrite`). No copy of the dump is made, and the agent's memory
//! stays bounded by the classes and counters, not the heap. (Writing
//! through a shared writable map instead costs a page fault and a
//! file-system dirtying per page: measured 2x slower.)
//! A stamp's offset in an instance comes from the CLASS_DUMPs (HotSpot
//! writes every class before any instance): the instance's field data is
//! its class's own fields, then its superclass's, and so on up.

use super::traces::{self, TRACE_BASE};
use super::Known;
use crate::instrument::stamp;
use profrj_hprof::{BasicType, Header, IdSize, Item, Scanner, Step};
use crate::stack::WordHasher;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasherDefault;
use std::fs::OpenOptions;
use std::io::{self, BufWriter, Write};
use std::path::Path;

/// Why the pass failed.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("HotSpot's dump does not read as HPROF: {0}")]
    Format(#[from] profrj_hprof::Error),
}

/// What the pass found.
#[derive(Debug, Default)]
pub struct Counts {
    /// Instances and arrays.
    pub objects: u64,
    /// Of those, the ones given their allocation trace.
    pub traced: u64,
}

/// Adds the traces to the dump at `path`; `known` `None`: only counts.
pub fn add_traces(path: &Path, known: Option<&Known>) -> Result<Counts, PatchError> {
    let file = OpenOptions::new().read(true).write(true).open(path)?;
    let len = file.metadata()?.len() as usize;
    let mut map = map::Shared::new(&file, len)?;
    let mut pass = Pass::new(known);
    let mut writes = Writes::new(&file);
    let (id_size, end) = pass.run(&mut map, &mut writes)?;
    writes.flush(map.bytes())?;
    drop(map);
    let used: Vec<usize> = (pass.used.iter().enumerate())
        .filter_map(|(i, &u)| u.then_some(i))
        .collect();
    let (Some(known), false) = (known, used.is_empty()) else {
        return Ok(pass.counts);
    };
    // The records go after HEAP_DUMP_END; whatever followed it stays after.
    let mut out = BufWriter::with_capacity(1 << 20, OpenOptions::new().append(true).open(path)?);
    debug_assert!(end <= len as u64);
    traces::append(&mut out, known, &used, &pass.class_serial, id_size)?;
    out.flush()?;
    Ok(pass.counts)
}

/// A class as far as the stamp's offset needs it.
struct ClassInfo {
    super_id: u64,
    /// Bytes of its own instance fields.
    own_size: u32,
    /// Where the stamp is among them, if it is one of them.
    stamp_at: Option<u32>,
}

struct Pass<'k> {
    known: Option<&'k Known>,
    counts: Counts,
    /// The UTF8 id of the stamp field's name, once met.
    stamp_name: Option<u64>,
    /// Class names (internal form) the sites name, and their UTF8 ids met.
    wanted: HashSet<&'k str>,
    name_ids: HashMap<u64, String>,
    /// The dump's LOAD_CLASS serial of each wanted class name.
    class_serial: HashMap<String, u32>,
    classes: Words<ClassInfo>,
    /// The stamp's offset in an instance of each class (looked up once),
    /// and the last class asked about (instances of a class come in runs).
    stamp_offsets: Words<Option<u32>>,
    last: Option<(u64, Option<u32>)>,
    /// Counters an object in the file points to, by index.
    used: Vec<bool>,
    /// Where the last address looked up was found in `known.addresses`.
    cursor: usize,
}

/// A map keyed by ids (addresses): a cheap hash, no defence against chosen
/// keys needed.
type Words<V> = HashMap<u64, V, BuildHasherDefault<WordHasher>>;

impl<'k> Pass<'k> {
    fn new(known: Option<&'k Known>) -> Self {
        let wanted = known
            .map(|k| k.sites.places.iter().flatten().map(|p| p.class.as_str()).collect())
            .unwrap_or_default();
        Pass {
            known,
            counts: Counts::default(),
            stamp_name: None,
            wanted,
            name_ids: HashMap::new(),
            class_serial: HashMap::new(),
            classes: Words::default(),
            stamp_offsets: Words::default(),
            last: None,
            cursor: 0,
            used: vec![false; known.map_or(0, |k| k.origins.len())],
        }
    }

    /// Walks the whole file; returns the id size and where it ended.
    fn run(&mut self, map: &mut map::Shared, writes: &mut Writes) -> Result<(u32, u64), PatchError> {
        let Some((header, start)) = Header::parse(map.bytes())? else {
            return Err(io::Error::other("the dump ends inside its header").into());
        };
        let id = header.id_size;
        let mut scanner = Scanner::new(id, start as u64);
        scanner.set_file_len(map.bytes().len() as u64);
        let mut at = start;
        loop {
            map.release_before(at);
            let step = scanner.next(&map.bytes()[at..], at as u64)?;
            let (item, used) = match step {
                Step::Item { item, len, body } => (item, len + body as usize),
                Step::End => break,
                Step::NeedMore { .. } => {
                    return Err(io::Error::other("the dump ends inside a record").into())
                }
            };
            let patch = self.item(&item, map.bytes(), id);
            at += used;
            if let Some((offset, serial)) = patch {
                writes.add(offset, serial, map.bytes())?;
            }
        }
        Ok((id.bytes() as u32, at as u64))
    }

    /// Takes in one item; returns a serial to write and where, if any.
    fn item(&mut self, item: &Item, file: &[u8], id: IdSize) -> Option<(usize, u32)> {
        match item {
            Item::Utf8 {
                id,
                text_offset,
                text_len,
            } => {
                let text = file.get(*text_offset as usize..)?.get(..*text_len as usize)?;
                if text == stamp::FIELD.as_bytes() {
                    self.stamp_name = Some(*id);
                } else if let Ok(name) = std::str::from_utf8(text) {
                    if self.wanted.contains(name) {
                        self.name_ids.insert(*id, name.to_owned());
                    }
                }
                None
            }
            Item::LoadClass(c) => {
                if let Some(name) = self.name_ids.get(&c.name_id) {
                    self.class_serial.insert(name.clone(), c.serial);
                }
                None
            }
            Item::Class(c) => {
                let mut own_size = 0u32;
                let mut stamp_at = None;
                for f in c.fields() {
                    if Some(f.name) == self.stamp_name && f.ty == BasicType::Int {
                        stamp_at = Some(own_size);
                    }
                    own_size += f.ty.size(id) as u32;
                }
                self.classes.insert(
                    c.id,
                    ClassInfo {
                        super_id: c.super_id,
                        own_size,
                        stamp_at,
                    },
                );
                None
            }
            Item::Instance(i) => {
                self.counts.objects += 1;
                let index = match self.stamp_offset(i.class_id) {
                    Some(at) if at + 4 <= i.data_len => {
                        let p = (i.data_offset + at as u64) as usize;
                        let stamp = i32::from_be_bytes(file.get(p..p + 4)?.try_into().ok()?);
                        usize::try_from(stamp).ok()?.checked_sub(1)?
                    }
                    _ => self.by_address(i.id)?,
                };
                self.traced(index, i.trace_offset)
            }
            Item::ObjArray(a) => {
                self.counts.objects += 1;
                let index = self.by_address(a.id)?;
                self.traced(index, a.trace_offset)
            }
            Item::PrimArray(a) => {
                self.counts.objects += 1;
                let index = self.by_address(a.id)?;
                self.traced(index, a.trace_offset)
            }
            _ => None,
        }
    }

    /// The counter of the object at `address` among those followed by
    /// weak reference, if it is one.
    fn by_address(&mut self, address: u64) -> Option<usize> {
        let all = &self.known?.addresses;
        let (found, cursor) = find(all, self.cursor, address);
        self.cursor = cursor;
        found.map(|c| c as usize)
    }

    /// The serial to write at `trace_offset` for an object of counter
    /// `index`, if that counter is a site's.
    fn traced(&mut self, index: usize, trace_offset: u64) -> Option<(usize, u32)> {
        self.known?.origins.get(index)?.as_ref()?;
        self.used[index] = true;
        self.counts.traced += 1;
        Some((trace_offset as usize, TRACE_BASE + index as u32))
    }

    /// Where the stamp is in an instance of `class`'s field data, if its
    /// class or a superclass has it (found once per class).
    fn stamp_offset(&mut self, class: u64) -> Option<u32> {
        if let Some((c, at)) = self.last {
            if c == class {
                return at;
            }
        }
        let at = self.stamp_offset_of(class);
        self.last = Some((class, at));
        at
    }

    fn stamp_offset_of(&mut self, class: u64) -> Option<u32> {
        if let Some(&known) = self.stamp_offsets.get(&class) {
            return known;
        }
        let mut offset = 0u32;
        let mut at = class;
        let mut found = None;
        // A chain longer than the classes is a cycle: stop.
        for _ in 0..=self.classes.len() {
            let Some(c) = self.classes.get(&at) else {
                break;
            };
            if let Some(s) = c.stamp_at {
                found = Some(offset + s);
                break;
            }
            offset += c.own_size;
            if c.super_id == 0 {
                break;
            }
            at = c.super_id;
        }
        self.stamp_offsets.insert(class, found);
        found
    }
}

/// The serials to write, a stretch of the file at a time.
struct Writes<'f> {
    file: &'f std::fs::File,
    /// (offset, serial), ascending, all within `STRETCH` of the first.
    patches: Vec<(usize, u32)>,
    buf: Vec<u8>,
}

/// The most bytes one write covers.
const STRETCH: usize = 1 << 20;

impl<'f> Writes<'f> {
    fn new(file: &'f std::fs::File) -> Self {
        Writes {
            file,
            patches: Vec::new(),
            buf: Vec::with_capacity(STRETCH),
        }
    }

    /// One serial to write at `offset`; `data` is the file as it is.
    fn add(&mut self, offset: usize, serial: u32, data: &[u8]) -> io::Result<()> {
        if let Some(&(first, _)) = self.patches.first() {
            if offset + 4 - first > STRETCH {
                self.flush(data)?;
            }
        }
        self.patches.push((offset, serial));
        Ok(())
    }

    /// Writes the stretch from the first patch to the last, patched.
    fn flush(&mut self, data: &[u8]) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        let (Some(&(first, _)), Some(&(last, _))) = (self.patches.first(), self.patches.last())
        else {
            return Ok(());
        };
        let stretch = data
            .get(first..last + 4)
            .ok_or_else(|| io::Error::other("a patch past the dump's end"))?;
        self.buf.clear();
        self.buf.extend_from_slice(stretch);
        for &(at, serial) in &self.patches {
            self.buf[at - first..at - first + 4].copy_from_slice(&serial.to_be_bytes());
        }
        self.patches.clear();
        self.file.write_all_at(&self.buf, first as u64)
    }
}

/// `address`'s counter in `all` (sorted by address), searching from
/// `cursor` (the last match's place): HotSpot writes the heap mostly in
/// address order, so the search gallops forward from there, and a lower
/// address searches the part before it. Returns the new cursor too.
fn find(all: &[(u64, u32)], cursor: usize, address: u64) -> (Option<u32>, usize) {
    let from = cursor.min(all.len());
    let i = match all.get(from) {
        Some(&(a, _)) if a <= address => {
            let (mut lo, mut step) = (from, 1);
            let mut hi = from + 1;
            while hi < all.len() && all[hi].0 <= address {
                lo = hi;
                step *= 2;
                hi = from + step;
            }
            let hi = hi.min(all.len());
            lo + all[lo..hi].partition_point(|&(a, _)| a < address)
        }
        _ => all[..from].partition_point(|&(a, _)| a < address),
    };
    match all.get(i) {
        Some(&(a, counter)) if a == address => (Some(counter), i),
        _ => (None, i),
    }
}

#[cfg(test)]
mod tests {
    use super::find;

    #[test]
    fn addresses_are_found_in_any_order_from_any_cursor() {
        let all: Vec<(u64, u32)> = (0..1000u64).map(|i| (i * 16 + 8, i as u32)).collect();
        let mut cursor = 0;
        for i in (0..1000u64).chain((0..1000).rev()).chain([500, 3, 999, 0]) {
            let (found, c) = find(&all, cursor, i * 16 + 8);
            assert_eq!(found, Some(i as u32), "address of {i} from {cursor}");
            cursor = c;
            assert_eq!(find(&all, cursor, i * 16 + 9).0, None);
            assert_eq!(find(&all, cursor, i * 16).0, None);
        }
        assert_eq!(find(&all, 2000, 1 << 40), (None, 1000));
        assert_eq!(find(&[], 0, 8), (None, 0));
    }
}

mod map {
    //! The dump mapped shared and read-only: read in place, written with
    //! `pwrite` (which the map then shows).
    use std::fs::File;
    use std::io;
    use std::os::fd::AsRawFd;

    /// Bytes kept mapped behind the cursor before they are dropped.
    const KEEP: usize = 8 << 20;

    pub struct Shared {
        ptr: *mut u8,
        len: usize,
        /// Everything before this has been dropped from the map.
        released: usize,
    }

    impl Shared {
        pub fn new(file: &File, len: usize) -> io::Result<Self> {
            if len == 0 {
                return Err(io::Error::other("the dump is empty"));
            }
            // SAFETY: maps `len` bytes of an open file, shared, for reading;
            // the file is the dump in the agent's private directory, which
            // only this pass writes (through `pwrite`) while it is mapped.
            let ptr = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    len,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    file.as_raw_fd(),
                    0,
                )
            };
            if ptr == libc::MAP_FAILED {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: the range just mapped; advice only.
            unsafe { libc::madvise(ptr, len, libc::MADV_SEQUENTIAL) };
            Ok(Shared {
                ptr: ptr.cast(),
                len,
                released: 0,
            })
        }

        pub fn bytes(&self) -> &[u8] {
            // SAFETY: `len` bytes mapped at `ptr` while `self` lives; pages
            // dropped by `release_before` read back from the file. The pass
            // writes (pwrite) only 4-byte serials of items it has read, so
            // nothing it still reads changes under it.
            unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
        }

        /// Drops the pages well behind `at` from the map (they stay in
        /// the file and the page cache, changes included), so the pass's
        /// resident memory does not grow with the dump.
        pub fn release_before(&mut self, at: usize) {
            let page = 4096;
            let upto = at.saturating_sub(KEEP) / page * page;
            if upto >= self.released + KEEP {
                // SAFETY: a page-aligned range inside the map; for a shared
                // file map MADV_DONTNEED keeps the data (it is the file's).
                unsafe {
                    libc::madvise(
                        self.ptr.add(self.released).cast(),
                        upto - self.released,
                        libc::MADV_DONTNEED,
                    )
                };
                self.released = upto;
            }
        }
    }

    impl Drop for Shared {
        fn drop(&mut self) {
            // SAFETY: unmaps exactly what `new` mapped.
            unsafe { libc::munmap(self.ptr.cast(), self.len) };
        }
    }
}
