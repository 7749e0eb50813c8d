//! The pass over HotSpot's finished dump that names who allocated each
//! object (`objects.rs` says how each object's counter is found and what
//! serial it gets), in place: the file is read through a read-only memory
//! map and the serials are written back a stretch at a time (`writes.rs`).
//! No copy of the dump is made, and the agent's memory stays bounded by the
//! classes, threads and counters (and the weakly followed objects' noted
//! addresses), not the heap: each range read is dropped from the map.
//!
//! Two phases. First, on the calling thread, the records in order: the
//! names (UTF8, LOAD_CLASS) and the heap-dump segments up to the first one
//! without a CLASS_DUMP (HotSpot writes every class before any object:
//! `hprof/src/lib.rs`), so every class's field layout is known; the later
//! segments only noted where they start. Then those segments on a few
//! threads at once (HotSpot writes segments of about 1 MB), each worker
//! taking the next one, reading it and writing its serials; their findings
//! merged. Last, the TRACE, FRAME (and where needed START_THREAD) records
//! appended after HEAP_DUMP_END (`traces.rs`).

use super::layout::{Layouts, Offsets, Words};
use super::map::Shared;
use super::objects::{Counts, Objects};
use super::traces;
use super::writes::Writes;
use super::Known;
use profrj_hprof::{Header, IdSize, Item, Scanner, Step};
use std::collections::{HashMap, HashSet};
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Why the pass failed.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    #[error("{0}")]
    Io(#[from] io::Error),
    #[error("HotSpot's dump does not read as HPROF: {0}")]
    Format(#[from] profrj_hprof::Error),
}

/// The most threads that read segments at once.
const WORKERS: usize = 4;

/// Adds the traces to the dump at `path`; `known` `None`: only counts.
pub fn add_traces(path: &Path, known: Option<&Known>) -> Result<Counts, PatchError> {
    let file = OpenOptions::new().read(true).write(true).open(path)?;
    let len = file.metadata()?.len() as usize;
    let map = Shared::new(&file, len)?;
    let data = map.bytes();
    let Some((header, start)) = Header::parse(data)? else {
        return Err(io::Error::other("the dump ends inside its header").into());
    };
    let id = header.id_size;
    let mut names = Names::new(known);
    let mut objects = Objects::new(known);
    let later = names.first_phase(&map, &file, &mut objects, (id, start))?;
    let offsets = names.layouts.freeze();
    for found in segments_at_once(&map, &file, known, (id, &offsets), &later)? {
        objects.merge(found);
    }
    drop(map);
    let used = objects.used();
    let (Some(known), false) = (known, used.is_empty()) else {
        return Ok(objects.counts);
    };
    let dump = traces::DumpFacts {
        class_serial: &names.class_serial,
        thread_serial: &objects.thread_serials(),
        id_size: id.bytes() as u32,
    };
    // The records go after HEAP_DUMP_END, the file's last record.
    let mut out = BufWriter::with_capacity(1 << 20, OpenOptions::new().append(true).open(path)?);
    traces::append(&mut out, known, &used, &dump)?;
    out.flush()?;
    Ok(objects.counts)
}

/// What the first phase learns of names and classes.
struct Names<'k> {
    layouts: Layouts,
    /// Class names (internal form) the sites name, and their UTF8 ids met.
    wanted: HashSet<&'k str>,
    name_ids: HashMap<u64, String>,
    /// The dump's LOAD_CLASS serial of each wanted class name.
    class_serial: HashMap<String, u32>,
}

impl<'k> Names<'k> {
    fn new(known: Option<&'k Known>) -> Self {
        let wanted = known
            .map(|k| {
                (k.sites.places.iter().flatten())
                    .map(|p| p.class.as_str())
                    .collect()
            })
            .unwrap_or_default();
        Names {
            layouts: Layouts::default(),
            wanted,
            name_ids: HashMap::new(),
            class_serial: HashMap::new(),
        }
    }

    /// The records in order, up to the first heap-dump segment without a
    /// CLASS_DUMP (that one included); the later segments are only noted
    /// (where each record starts) and passed over. Returns them.
    fn first_phase(
        &mut self,
        map: &Shared,
        file: &File,
        objects: &mut Objects,
        (id, start): (IdSize, usize),
    ) -> Result<Vec<usize>, PatchError> {
        let data = map.bytes();
        let mut scanner = Scanner::new(id, start as u64);
        scanner.set_file_len(data.len() as u64);
        let mut writes = Writes::new(file);
        let mut later = Vec::new();
        let mut classes_done = false;
        // In a segment: did it hold a CLASS_DUMP?
        let mut segment_classes: Option<bool> = None;
        let mut at = start;
        loop {
            map.release_before(at);
            let Some((item, used)) = step(&mut scanner, data, at)? else {
                break;
            };
            let record = at;
            at += used;
            match &item {
                Item::HeapDump { .. } if classes_done => {
                    later.push(record);
                    at += scanner.skip_segment() as usize;
                    continue;
                }
                Item::HeapDump { .. } => segment_classes = Some(false),
                Item::Class(c) => {
                    self.layouts.class(c, id);
                    segment_classes = Some(true);
                }
                _ => {
                    self.top_level(&item, data);
                    let layouts = &mut self.layouts;
                    if let Some((offset, serial)) =
                        objects.item(&item, data, |c| layouts.offsets(c))
                    {
                        writes.add(offset, serial, data)?;
                    }
                }
            }
            if !scanner.in_segment() {
                if segment_classes == Some(false) {
                    classes_done = true;
                }
                segment_classes = None;
            }
        }
        writes.flush(data)?;
        Ok(later)
    }

    /// A top-level record: the names the traces need.
    fn top_level(&mut self, item: &Item, file: &[u8]) {
        match item {
            Item::Utf8 {
                id,
                text_offset,
                text_len,
            } => {
                let Some(text) =
                    (file.get(*text_offset as usize..)).and_then(|t| t.get(..*text_len as usize))
                else {
                    return;
                };
                self.layouts.utf8(*id, text);
                if let Ok(name) = std::str::from_utf8(text) {
                    if self.wanted.contains(name) {
                        self.name_ids.insert(*id, name.to_owned());
                    }
                }
            }
            Item::LoadClass(c) => {
                self.layouts.load_class(c.class_id, c.name_id);
                if let Some(name) = self.name_ids.get(&c.name_id) {
                    self.class_serial.insert(name.clone(), c.serial);
                }
            }
            _ => {}
        }
    }
}

/// The second phase: the `later` segments (where each record starts) read
/// by a few threads at once, each taking the next; their findings.
fn segments_at_once<'k>(
    map: &Shared,
    file: &File,
    known: Option<&'k Known>,
    (id, offsets): (IdSize, &Words<Offsets>),
    later: &[usize],
) -> Result<Vec<Objects<'k>>, PatchError> {
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, WORKERS)
        .min(later.len().max(1));
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..workers)
            .map(|_| {
                s.spawn(|| {
                    let mut objects = Objects::new(known);
                    let mut writes = Writes::new(file);
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&at) = later.get(i) else { break };
                        one_segment(map, &mut writes, &mut objects, (id, offsets), at)?;
                    }
                    writes.flush(map.bytes())?;
                    Ok::<_, PatchError>(objects)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(io::Error::other("a heap dump worker panicked").into()))
            })
            .collect()
    })
}

/// One segment (its record at `start`), read and its serials written.
fn one_segment(
    map: &Shared,
    writes: &mut Writes,
    objects: &mut Objects,
    (id, offsets): (IdSize, &Words<Offsets>),
    start: usize,
) -> Result<(), PatchError> {
    let data = map.bytes();
    let mut scanner = Scanner::new(id, start as u64);
    scanner.set_file_len(data.len() as u64);
    let mut at = start;
    while let Some((item, used)) = step(&mut scanner, data, at)? {
        at += used;
        let of = |c: u64| offsets.get(&c).copied().unwrap_or_default();
        if let Some((offset, serial)) = objects.item(&item, data, of) {
            writes.add(offset, serial, data)?;
        }
        if !scanner.in_segment() {
            break;
        }
    }
    writes.flush(data)?;
    map.release_range(start, at);
    Ok(())
}

/// The next item at `at` of the whole file `data`, and the bytes it spans
/// (its body included); `None` at the file's end.
fn step<'d>(
    scanner: &mut Scanner,
    data: &'d [u8],
    at: usize,
) -> Result<Option<(Item<'d>, usize)>, PatchError> {
    match scanner.next(&data[at..], at as u64)? {
        Step::Item { item, len, body } => Ok(Some((item, len + body as usize))),
        Step::End => Ok(None),
        Step::NeedMore { .. } => Err(io::Error::other("the dump ends inside a record").into()),
    }
}
