//! The records appended after HotSpot's HEAP_DUMP_END: for each allocation
//! counter that an object in the file points to, a TRACE (serial
//! [`TRACE_BASE`] + the counter's index) of one FRAME, its site's method,
//! source file and line, with the allocating thread's serial: the dump's
//! own for a thread still alive (its thread root names it), else
//! [`THREAD_BASE`] + the agent's thread id with a START_THREAD naming it;
//! and the UTF8 records of every name they use.
//!
//! Ids and serials are chosen so they can never be HotSpot's: HotSpot's
//! string ids are addresses of its symbols (below 2^47 on x86-64 and
//! AArch64), its frame ids and trace and thread serials count from 1 per
//! thread; profrj's ids have the top bit set, its serials start at 2^30.
//! HPROF lets records come in any order; the readers index them by id.

use super::Known;
use crate::sites::AllocPlace;
use std::collections::HashMap;
use std::io::{self, Write};

/// The first allocation trace's serial: counter `i`'s trace is this + `i`.
pub const TRACE_BASE: u32 = 1 << 30;
/// The first allocating thread's serial: agent thread `t`'s is this + `t`.
pub const THREAD_BASE: u32 = 1 << 30;
/// profrj's string ids, then its frame ids, above every address.
const STRING_BASE: u64 = 0x8000_0000_0000_0000;
const FRAME_BASE: u64 = 0xC000_0000_0000_0000;

const UTF8: u8 = 0x01;
const FRAME: u8 = 0x04;
const TRACE: u8 = 0x05;
const START_THREAD: u8 = 0x0A;

/// What the pass learnt of the dump.
pub struct DumpFacts<'a> {
    /// The LOAD_CLASS serial of each class name (internal form) the sites
    /// name, where the dump has one.
    pub class_serial: &'a HashMap<String, u32>,
    /// The thread serial of each live thread, by its Java thread id.
    pub thread_serial: &'a HashMap<i64, u32>,
    /// The identifier size (4 or 8).
    pub id_size: u32,
}

/// Writes the records of `used` counters (by index) to `out`.
pub fn append(
    out: &mut impl Write,
    known: &Known,
    used: &[usize],
    dump: &DumpFacts,
) -> io::Result<()> {
    let mut w = Records {
        out,
        id_size: dump.id_size,
        strings: HashMap::new(),
    };
    let class_serial = dump.class_serial;
    // The dump's serial of an agent thread alive at the dump, else profrj's.
    let serial = |t: i64| -> (u32, bool) {
        let live = (usize::try_from(t).ok())
            .and_then(|t| known.threads.get(t)?.java_id)
            .and_then(|j| dump.thread_serial.get(&j).copied());
        match live {
            Some(s) => (s, true),
            None => (thread_serial(t), false),
        }
    };
    // Frames: one per place the used counters' sites name.
    let mut frames: HashMap<u32, u64> = HashMap::new();
    let mut threads: Vec<i64> = Vec::new();
    for &i in used {
        let Some(Some((thread, site))) = known.origins.get(i) else {
            continue;
        };
        if !threads.contains(thread) && *thread >= 0 {
            threads.push(*thread);
        }
        let Some(&(place, _)) = known.sites.sites.get(*site as usize) else {
            continue;
        };
        if frames.contains_key(&place) {
            continue;
        }
        let Some(Some(p)) = known.sites.places.get(place as usize) else {
            continue;
        };
        let id = FRAME_BASE + place as u64;
        w.frame(id, p, class_serial.get(&p.class).copied().unwrap_or(0))?;
        frames.insert(place, id);
    }
    for &t in &threads {
        let (s, live) = serial(t);
        if live {
            continue;
        }
        let name = known
            .threads
            .get(t as usize)
            .map_or("(unknown)", |r| r.name.as_str());
        w.start_thread(s, name)?;
    }
    for &i in used {
        let Some(Some((thread, site))) = known.origins.get(i) else {
            continue;
        };
        let frame = known
            .sites
            .sites
            .get(*site as usize)
            .and_then(|(place, _)| frames.get(place).copied());
        w.trace(TRACE_BASE + i as u32, serial(*thread).0, frame)?;
    }
    Ok(())
}

/// The HPROF thread serial of agent thread `t` (0: no thread).
fn thread_serial(t: i64) -> u32 {
    if t < 0 {
        0
    } else {
        THREAD_BASE.saturating_add(t as u32)
    }
}

/// The source file a class's code most likely came from when the class
/// file did not say (no SourceFile attribute reached the agent): the outer
/// class's simple name, `.java`.
pub fn source_of(p: &AllocPlace) -> String {
    if let Some(s) = &p.source {
        return s.clone();
    }
    let simple = p.class.rsplit('/').next().unwrap_or(&p.class);
    format!("{}.java", simple.split('$').next().unwrap_or(simple))
}

struct Records<'a, W: Write> {
    out: &'a mut W,
    id_size: u32,
    strings: HashMap<String, u64>,
}

impl<W: Write> Records<'_, W> {
    fn header(&mut self, tag: u8, len: usize) -> io::Result<()> {
        let len = u32::try_from(len).map_err(|_| io::Error::other("record too long"))?;
        self.out.write_all(&[tag])?;
        self.out.write_all(&0u32.to_be_bytes())?;
        self.out.write_all(&len.to_be_bytes())
    }

    fn id(&mut self, id: u64) -> io::Result<()> {
        if self.id_size == 4 {
            // A 4-byte dump (a 32-bit JVM): profrj's ids keep their top bit.
            self.out
                .write_all(&((id >> 32) as u32 | id as u32).to_be_bytes())
        } else {
            self.out.write_all(&id.to_be_bytes())
        }
    }

    /// The id of `text`, its UTF8 record written the first time.
    fn string(&mut self, text: &str) -> io::Result<u64> {
        if let Some(&id) = self.strings.get(text) {
            return Ok(id);
        }
        let id = STRING_BASE + self.strings.len() as u64 + 1;
        self.header(UTF8, self.id_size as usize + text.len())?;
        self.id(id)?;
        self.out.write_all(text.as_bytes())?;
        self.strings.insert(text.to_owned(), id);
        Ok(id)
    }

    fn frame(&mut self, id: u64, p: &AllocPlace, class_serial: u32) -> io::Result<()> {
        let method = self.string(&p.method)?;
        let descriptor = self.string(&p.descriptor)?;
        let source = self.string(&source_of(p))?;
        self.header(FRAME, 4 * self.id_size as usize + 8)?;
        for i in [id, method, descriptor, source] {
            self.id(i)?;
        }
        self.out.write_all(&class_serial.to_be_bytes())?;
        // HPROF's line: > 0 a line, 0 none known.
        let line = p.line.map_or(0i32, i32::from);
        self.out.write_all(&line.to_be_bytes())
    }

    fn start_thread(&mut self, serial: u32, name: &str) -> io::Result<()> {
        let name = self.string(name)?;
        self.header(START_THREAD, 4 * self.id_size as usize + 8)?;
        self.out.write_all(&serial.to_be_bytes())?;
        self.id(0)?; // the Thread object: may be gone, not looked for
        self.out.write_all(&0u32.to_be_bytes())?;
        self.id(name)?;
        self.id(0)?;
        self.id(0)
    }

    fn trace(&mut self, serial: u32, thread: u32, frame: Option<u64>) -> io::Result<()> {
        let frames = frame.iter().count();
        self.header(TRACE, 12 + frames * self.id_size as usize)?;
        self.out.write_all(&serial.to_be_bytes())?;
        self.out.write_all(&thread.to_be_bytes())?;
        self.out.write_all(&(frames as u32).to_be_bytes())?;
        if let Some(f) = frame {
            self.id(f)?;
        }
        Ok(())
    }
}
