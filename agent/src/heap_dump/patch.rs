//! The pass over HotSpot's finished dump that names who allocated each
//! object: for every instance whose class has `memory`'s stamp field, the
//! stamp (its counter's index + 1) in the instance's own field data says
//! which allocation counter, so which thread and site, made it; objects
//! followed by weak reference (arrays, the JDK's objects) are found by their
//! address, noted at the dump's own GC (`addresses.rs`). The object's
//! 4-byte stack-trace serial is rewritten in place to that counter's trace
//! (`traces::TRACE_BASE` + index), and the counters met are given their
//! TRACE, FRAME (and where needed START_THREAD) records after
//! HEAP_DUMP_END. A trace's thread is the dump's own serial of that thread
//! when it is alive (its thread root, found by its `tid`), so readers name
//! it as they name HotSpot's threads.
//!
//! In place: the file is read through a read-only memory map (the pages
//! behind the cursor are dropped from it as it goes) and the serials are
//! written back a stretch at a time (`writes.rs`). No copy of the dump is
//! made, and the agent's memory stays bounded by the classes, threads and
//! counters (and the weakly followed objects' addresses), not the heap.

use super::layout::{Layouts, Words};
use super::traces::{self, TRACE_BASE};
use super::writes::{self, Writes};
use super::Known;
use profrj_hprof::{Header, Item, RootKind, Scanner, Step};
use std::collections::{HashMap, HashSet};
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
    let map = map::Shared::new(&file, len)?;
    let mut pass = Pass::new(known);
    let id_size = writes::with_writer(&file, map.bytes(), |w| pass.run(&map, w))??;
    drop(map);
    let used: Vec<usize> = (pass.used.iter().enumerate())
        .filter_map(|(i, &u)| u.then_some(i))
        .collect();
    let (Some(known), false) = (known, used.is_empty()) else {
        return Ok(pass.counts);
    };
    let dump = traces::DumpFacts {
        class_serial: &pass.class_serial,
        thread_serial: &pass.thread_serials(),
        id_size,
    };
    // The records go after HEAP_DUMP_END, the file's last record.
    let mut out = BufWriter::with_capacity(1 << 20, OpenOptions::new().append(true).open(path)?);
    traces::append(&mut out, known, &used, &dump)?;
    out.flush()?;
    Ok(pass.counts)
}

struct Pass<'k> {
    known: Option<&'k Known>,
    counts: Counts,
    layouts: Layouts,
    /// Class names (internal form) the sites name, and their UTF8 ids met.
    wanted: HashSet<&'k str>,
    name_ids: HashMap<u64, String>,
    /// The dump's LOAD_CLASS serial of each wanted class name.
    class_serial: HashMap<String, u32>,
    /// Thread objects: their `tid`, and the serial of their thread root.
    tids: Words<i64>,
    roots: Words<u32>,
    /// Counters an object in the file points to, by index.
    used: Vec<bool>,
    /// Where the last address looked up was found in `known.addresses`.
    cursor: usize,
}

impl<'k> Pass<'k> {
    fn new(known: Option<&'k Known>) -> Self {
        let wanted = known
            .map(|k| {
                k.sites
                    .places
                    .iter()
                    .flatten()
                    .map(|p| p.class.as_str())
                    .collect()
            })
            .unwrap_or_default();
        Pass {
            known,
            counts: Counts::default(),
            layouts: Layouts::default(),
            wanted,
            name_ids: HashMap::new(),
            class_serial: HashMap::new(),
            tids: Words::default(),
            roots: Words::default(),
            used: vec![false; known.map_or(0, |k| k.origins.len())],
            cursor: 0,
        }
    }

    /// Walks the whole file; returns its id size.
    fn run(&mut self, map: &map::Shared, writes: &mut Writes) -> Result<u32, PatchError> {
        let Some((header, start)) = Header::parse(map.bytes())? else {
            return Err(io::Error::other("the dump ends inside its header").into());
        };
        let mut scanner = Scanner::new(header.id_size, start as u64);
        scanner.set_file_len(map.bytes().len() as u64);
        let mut at = start;
        loop {
            map.release_before(at);
            let (item, used) = match scanner.next(&map.bytes()[at..], at as u64)? {
                Step::Item { item, len, body } => (item, len + body as usize),
                Step::End => break,
                Step::NeedMore { .. } => {
                    return Err(io::Error::other("the dump ends inside a record").into())
                }
            };
            let patch = self.item(&item, map.bytes(), header.id_size);
            at += used;
            if let Some((offset, serial)) = patch {
                writes.add(offset, serial);
            }
        }
        Ok(header.id_size.bytes() as u32)
    }

    /// Takes in one item; returns a serial to write and where, if any.
    fn item(
        &mut self,
        item: &Item,
        file: &[u8],
        id_size: profrj_hprof::IdSize,
    ) -> Option<(usize, u32)> {
        match item {
            Item::Utf8 {
                id,
                text_offset,
                text_len,
            } => {
                let text = file
                    .get(*text_offset as usize..)?
                    .get(..*text_len as usize)?;
                self.layouts.utf8(*id, text);
                if let Ok(name) = std::str::from_utf8(text) {
                    if self.wanted.contains(name) {
                        self.name_ids.insert(*id, name.to_owned());
                    }
                }
                None
            }
            Item::LoadClass(c) => {
                self.layouts.load_class(c.class_id, c.name_id);
                if let Some(name) = self.name_ids.get(&c.name_id) {
                    self.class_serial.insert(name.clone(), c.serial);
                }
                None
            }
            Item::Class(c) => {
                self.layouts.class(c, id_size);
                None
            }
            Item::Root(r) => {
                if let RootKind::ThreadObject { thread, .. } = r.kind {
                    self.roots.insert(r.id, thread);
                }
                None
            }
            Item::Instance(i) => {
                self.counts.objects += 1;
                let at = self.layouts.offsets(i.class_id);
                let field = |off: u32, n: usize| -> Option<&[u8]> {
                    if off as usize + n > i.data_len as usize {
                        return None;
                    }
                    let p = (i.data_offset + off as u64) as usize;
                    file.get(p..p + n)
                };
                if let Some(t) = at.tid.and_then(|o| field(o, 8)) {
                    self.tids
                        .insert(i.id, i64::from_be_bytes(t.try_into().ok()?));
                }
                let index = match at.stamp.and_then(|o| field(o, 4)) {
                    Some(s) => {
                        let stamp = i32::from_be_bytes(s.try_into().ok()?);
                        usize::try_from(stamp).ok()?.checked_sub(1)?
                    }
                    None => self.by_address(i.id)?,
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

    /// The dump's thread serial of each live thread, by Java thread id.
    fn thread_serials(&self) -> HashMap<i64, u32> {
        (self.roots.iter())
            .filter_map(|(object, &serial)| Some((*self.tids.get(object)?, serial)))
            .collect()
    }

    /// The counter of the object at `address` among those followed by
    /// weak reference, if it is one.
    fn by_address(&mut self, address: u64) -> Option<usize> {
        let (found, cursor) = self.known?.addresses.find(self.cursor, address);
        self.cursor = cursor;
        found.map(|c| c as usize)
    }

    /// The serial to write at `trace_offset` for an object of counter
    /// `index`, if that counter is a site's.
    fn traced(&mut self, index: usize, trace_offset: u64) -> Option<(usize, u32)> {
        self.known?.origins.get(index)?.as_ref()?;
        *self.used.get_mut(index)? = true;
        self.counts.traced += 1;
        Some((trace_offset as usize, TRACE_BASE + index as u32))
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
        released: std::cell::Cell<usize>,
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
                released: std::cell::Cell::new(0),
            })
        }

        pub fn bytes(&self) -> &[u8] {
            // SAFETY: `len` bytes mapped at `ptr` while `self` lives; pages
            // dropped by `release_before` read back from the file (the
            // writer thread may read a stretch just behind the window: it
            // faults back in). The writer's pwrite changes only 4-byte
            // serials of items the pass has read, each stretch once, and it
            // copies a stretch before writing it back, so no byte anyone
            // still reads changes under it.
            unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
        }

        /// Drops the pages well behind `at` from the map (they stay in
        /// the file and the page cache, changes included), so the pass's
        /// resident memory does not grow with the dump.
        pub fn release_before(&self, at: usize) {
            let page = 4096;
            let upto = at.saturating_sub(KEEP) / page * page;
            let released = self.released.get();
            if upto >= released + KEEP {
                // SAFETY: a page-aligned range inside the map; for a shared
                // file map MADV_DONTNEED keeps the data (it is the file's).
                unsafe {
                    libc::madvise(
                        self.ptr.add(released).cast(),
                        upto - released,
                        libc::MADV_DONTNEED,
                    )
                };
                self.released.set(upto);
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
