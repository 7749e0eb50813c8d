//! Where the JVM's generated code lies, for the signal handler and whoever
//! names a sampled frame (sampling's tree, the JFR recording): which stub,
//! compiled method or other piece of generated code holds an address. Built
//! from JVMTI's own reports (DynamicCodeGenerated for stubs, the interpreter
//! and adapters; CompiledMethodLoad/Unload for compiled methods; both replayed
//! with GenerateEvents when sampling is first set up), so the handler reads
//! no VM structure to name a stub.
//!
//! The events update a map under a lock; the sampler thread publishes a
//! sorted, flattened copy at each tick where something changed, and the
//! handler searches the published copy without a lock. A copy replaced while
//! handlers may still read it is freed only once no handler is inside
//! [`find`] (a count of readers, checked after the swap).

use crate::vm::nmethod::CompiledInfo;
use parking_lot::Mutex;
use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

/// What a piece of generated code is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    /// Code that is no Java method: a stub, the interpreter, an adapter. Its
    /// name's number ([`stub_name`]) and how its frame is laid out.
    Stub { name: u32, layout: StubLayout },
    /// A compiled Java method, its jmethodID as an address, and its frame
    /// size and tier where its nmethod was found (`vm::nmethod`).
    Compiled {
        method: usize,
        info: Option<CompiledInfo>,
    },
}

/// What the unwinder may assume of a stub's frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StubLayout {
    /// Never sets up a frame: the return address is on top of the stack
    /// (vtable and itable stubs, inline-cache stubs).
    Frameless,
    /// The template interpreter.
    Interpreter,
    /// The adapters between interpreted and compiled code.
    Adapter,
    /// The nmethod entry barrier's slow path (JDK 17 with ZGC, every GC
    /// from JDK 21): a frame-pointer frame with a word between the saved
    /// rbp and the return address.
    EntryBarrier,
    /// Anything else (most stubs set up a frame-pointer frame).
    Other,
}

/// One range of generated code, `start..end`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blob {
    pub start: usize,
    pub end: usize,
    pub code: Code,
}

#[derive(Default)]
struct Map {
    /// (start, end) -> what; nested ranges (a stub inside its buffer) coexist.
    ranges: BTreeMap<(usize, usize), Code>,
    names: Vec<Box<str>>,
    name_ids: HashMap<Box<str>, u32>,
    changed: bool,
}

static MAP: LazyLock<Mutex<Map>> = LazyLock::new(Default::default);

/// How far back [`Map::remove_overlapping`] looks for a range that began
/// before a new one and reaches into it.
const OVERLAP_LOOKBACK: usize = 64;

impl Map {
    fn name_id(&mut self, name: &str) -> u32 {
        if let Some(&id) = self.name_ids.get(name) {
            return id;
        }
        let id = self.names.len() as u32;
        self.names.push(name.into());
        self.name_ids.insert(name.into(), id);
        id
    }

    /// Removes the ranges overlapping `start..end` for which `stale` holds:
    /// code that was freed and whose memory now holds the new code.
    fn remove_overlapping(&mut self, start: usize, end: usize, stale: impl Fn(&Blob) -> bool) {
        let before = self.ranges.range(..(start, 0)).rev().take(OVERLAP_LOOKBACK);
        let inside = self.ranges.range((start, 0)..(end, 0));
        let doomed: Vec<(usize, usize)> = before
            .chain(inside)
            .map(|(&(s, e), &code)| Blob {
                start: s,
                end: e,
                code,
            })
            .filter(|b| b.end > start && b.start < end && stale(b))
            .map(|b| (b.start, b.end))
            .collect();
        for key in doomed {
            self.ranges.remove(&key);
        }
    }
}

/// A method was compiled to `start..start + len` (CompiledMethodLoad).
pub fn compiled(method: usize, start: usize, len: usize, info: Option<CompiledInfo>) {
    let Some(end) = start.checked_add(len).filter(|&e| e > start) else {
        return;
    };
    let mut map = MAP.lock();
    // A compiled method never shares memory with other live code.
    map.remove_overlapping(start, end, |_| true);
    map.ranges
        .insert((start, end), Code::Compiled { method, info });
    map.changed = true;
}

/// A compiled method's code at `start` was freed (CompiledMethodUnload).
pub fn unloaded(method: usize, start: usize) {
    let mut map = MAP.lock();
    let key = map
        .ranges
        .range((start, 0)..(start, usize::MAX))
        .find(|(_, &c)| matches!(c, Code::Compiled { method: m, .. } if m == method))
        .map(|(&k, _)| k);
    if let Some(key) = key {
        map.ranges.remove(&key);
        map.changed = true;
    }
}

/// The VM generated `name` at `start..start + len` (DynamicCodeGenerated).
pub fn generated(name: &str, start: usize, len: usize) {
    let Some(end) = start.checked_add(len).filter(|&e| e > start) else {
        return;
    };
    let mut map = MAP.lock();
    // Stale: compiled code there was freed; a stub that only partly overlaps
    // is gone too (nested ones, a stub in its buffer, stay).
    map.remove_overlapping(start, end, |b| {
        matches!(b.code, Code::Compiled { .. })
            || !(b.start <= start && end <= b.end || start <= b.start && b.end <= end)
    });
    let name_id = map.name_id(name);
    let code = Code::Stub {
        name: name_id,
        layout: layout_of(name),
    };
    map.ranges.insert((start, end), code);
    map.changed = true;
}

/// HotSpot's names for code that never sets up a frame of its own.
fn layout_of(name: &str) -> StubLayout {
    match name {
        "vtable stub" | "itable stub" | "InlineCacheBuffer" => StubLayout::Frameless,
        "Interpreter" => StubLayout::Interpreter,
        "I2C/C2I adapters" => StubLayout::Adapter,
        "nmethod_entry_barrier" | "method_entry_barrier" => StubLayout::EntryBarrier,
        _ => StubLayout::Other,
    }
}

/// The file name of the library whose code holds `pc` (`libjvm.so`), for a
/// frame in machine code outside the code cache. Not for the signal
/// handler (dladdr takes a lock).
pub fn library_name(pc: usize) -> Option<String> {
    // SAFETY: Dl_info is pointers and integers: all-zero is a valid value.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only looks the address up in the loaded objects' ranges
    // and fills `info`, a live local; any address is accepted.
    if unsafe { libc::dladdr(pc as *const std::ffi::c_void, &mut info) } == 0
        || info.dli_fname.is_null()
    {
        return None;
    }
    // SAFETY: a NUL-terminated path of a loaded object, alive while it is
    // loaded (copied out at once).
    let path = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) }.to_string_lossy();
    Some(path.rsplit('/').next().unwrap_or(&path).to_owned())
}

/// The name of stub number `id`.
pub fn stub_name(id: u32) -> Option<String> {
    MAP.lock().names.get(id as usize).map(|s| s.to_string())
}

/// The copy the handler searches: disjoint ranges sorted by start.
struct Published {
    blobs: Box<[Blob]>,
}

static PUBLISHED: crate::published::Published<Published> = crate::published::Published::new();

/// Publishes the map for the handler if it changed since the last call,
/// and frees replaced copies no handler can still be reading. Called by the
/// sampler thread at each tick.
pub fn publish() {
    let blobs = {
        let mut map = MAP.lock();
        if !map.changed {
            drop(map);
            PUBLISHED.reclaim();
            return;
        }
        map.changed = false;
        flatten(
            map.ranges
                .iter()
                .map(|(&(start, end), &code)| Blob { start, end, code }),
        )
    };
    PUBLISHED.publish(Published { blobs });
}

/// The code that holds `pc`, innermost first. Async-signal-safe: atomics,
/// a binary search, no lock, no allocation, no panic path.
pub fn find(pc: usize) -> Option<Blob> {
    PUBLISHED.reading(|copy| {
        let blobs = &copy?.blobs;
        let i = blobs.partition_point(|b| b.start <= pc);
        i.checked_sub(1)
            .and_then(|i| blobs.get(i))
            .filter(|b| pc < b.end)
            .copied()
    })
}

/// Turns possibly nested ranges (sorted by start) into disjoint ones, each
/// address going to the innermost range that holds it. Ranges that overlap
/// without nesting are cut where the later one begins.
fn flatten(ranges: impl Iterator<Item = Blob>) -> Box<[Blob]> {
    let mut sorted: Vec<Blob> = ranges.collect();
    // Outer before inner at the same start.
    sorted.sort_by_key(|b| (b.start, std::cmp::Reverse(b.end)));
    let mut out: Vec<Blob> = Vec::with_capacity(sorted.len());
    // Enclosing ranges still open, innermost last.
    let mut open: Vec<Blob> = Vec::new();
    // Everything below `cursor` is written out.
    let mut cursor = 0usize;
    let emit = |out: &mut Vec<Blob>, b: &Blob, from: usize, to: usize| {
        if from < to {
            out.push(Blob {
                start: from,
                end: to,
                code: b.code,
            });
        }
    };
    for b in sorted {
        // Close the ranges that end before `b` begins.
        while let Some(top) = open.last().copied() {
            if top.end > b.start {
                break;
            }
            emit(&mut out, &top, cursor.max(top.start), top.end);
            cursor = cursor.max(top.end);
            open.pop();
        }
        // The innermost open range holds everything up to `b`.
        if let Some(top) = open.last() {
            emit(&mut out, top, cursor.max(top.start), b.start);
        }
        cursor = cursor.max(b.start);
        // Open ranges that `b` reaches out of end where it begins.
        while open.last().is_some_and(|top| top.end < b.end) {
            open.pop();
        }
        open.push(b);
    }
    while let Some(top) = open.pop() {
        emit(&mut out, &top, cursor.max(top.start), top.end);
        cursor = cursor.max(top.end);
    }
    out.into_boxed_slice()
}

/// Name of a stub the code map has no name for (never expected).
const UNKNOWN_STUB: &str = "[unknown_stub]";

/// The name of a frame in machine code that is no Java method: a stub as
/// HotSpot names it, or `[library]` for code outside the code cache; None
/// for any other frame. Shared by sampling's tree and the JFR recorder.
pub fn machine_code_name<F: crate::stack::Frame>(f: &F) -> Option<String> {
    if let Some(pc) = f.native_code() {
        if let Some(name) = crate::native::frame_name(pc) {
            return Some(name);
        }
        let library = library_name(pc);
        return Some(format!("[{}]", library.as_deref().unwrap_or("native")));
    }
    let stub = f.stub()?;
    Some(stub_name(stub).unwrap_or_else(|| UNKNOWN_STUB.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stub(name: u32, start: usize, end: usize) -> Blob {
        Blob {
            start,
            end,
            code: Code::Stub {
                name,
                layout: StubLayout::Other,
            },
        }
    }

    fn spans(blobs: &[Blob]) -> Vec<(usize, usize, u32)> {
        blobs
            .iter()
            .map(|b| match b.code {
                Code::Stub { name, .. } => (b.start, b.end, name),
                Code::Compiled { method, .. } => (b.start, b.end, method as u32),
            })
            .collect()
    }

    #[test]
    fn nested_ranges_flatten_to_the_innermost() {
        // A buffer 0..100 holding stubs 10..20 and 30..40 (one nested deeper at 32..34),
        // then a range after it.
        let input = [
            stub(1, 0, 100),
            stub(2, 10, 20),
            stub(3, 30, 40),
            stub(4, 32, 34),
            stub(5, 200, 210),
        ];
        let flat = flatten(input.into_iter());
        assert_eq!(
            spans(&flat),
            vec![
                (0, 10, 1),
                (10, 20, 2),
                (20, 30, 1),
                (30, 32, 3),
                (32, 34, 4),
                (34, 40, 3),
                (40, 100, 1),
                (200, 210, 5)
            ]
        );
    }

    #[test]
    fn same_start_keeps_the_inner_range_and_overlaps_are_cut() {
        let flat = flatten([stub(1, 0, 50), stub(2, 0, 10), stub(3, 40, 60)].into_iter());
        assert_eq!(spans(&flat), vec![(0, 10, 2), (10, 40, 1), (40, 60, 3)]);
    }

    /// The process-wide map: one test uses it, at addresses no other code uses.
    #[test]
    fn events_update_what_the_handler_finds() {
        let base = 0x7000_0000_0000usize;
        generated("StubRoutines::a", base, 0x100);
        generated("vtable stub", base + 0x100, 0x20);
        compiled(0xabc, base + 0x1000, 0x400, None);
        publish();
        let name = |pc| match find(pc).map(|b| b.code) {
            Some(Code::Stub { name, layout }) => Some((stub_name(name).unwrap(), layout)),
            _ => None,
        };
        assert_eq!(
            name(base + 0x10),
            Some(("StubRoutines::a".into(), StubLayout::Other))
        );
        assert_eq!(
            name(base + 0x11f),
            Some(("vtable stub".into(), StubLayout::Frameless))
        );
        assert_eq!(find(base + 0x120), None);
        assert_eq!(
            find(base + 0x1200).map(|b| b.code),
            Some(Code::Compiled {
                method: 0xabc,
                info: None
            })
        );
        // The method is freed and a new one compiled into part of its memory.
        unloaded(0xabc, base + 0x1000);
        compiled(0xdef, base + 0x1100, 0x100, None);
        publish();
        assert_eq!(find(base + 0x1050), None);
        assert_eq!(
            find(base + 0x1150).map(|b| (b.start, b.code)),
            Some((
                base + 0x1100,
                Code::Compiled {
                    method: 0xdef,
                    info: None
                }
            ))
        );
        // A stale compiled range under new stub code goes.
        compiled(0x111, base + 0x2000, 0x100, None);
        generated("StubRoutines::b", base + 0x2000, 0x10);
        publish();
        assert_eq!(find(base + 0x2050), None);
        assert_eq!(PUBLISHED.retired(), 0, "no reader: old copies freed");
    }
}
