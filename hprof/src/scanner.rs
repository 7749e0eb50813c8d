//! The scanner: where the parser stands in the file (the next item's
//! offset, inside a heap-dump segment or not and how many of its bytes are
//! left) and the top-level records. A step takes the bytes the caller has
//! at the scanner's offset and returns one item, or how many bytes it needs
//! to make one, or the end; `heap.rs` reads the sub-records of a segment.
//!
//! Every length is checked before it is used: a record against the file's
//! length (when the caller gave it), a sub-record against its segment, a
//! count against its record. Items never need more of the buffer than
//! their fixed fields (a CLASS_DUMP excepted, up to [`MAX_CLASS_DUMP`]):
//! the variable part of a record is its body, which the caller reads or
//! skips, so no input makes the parser hold more than that.

use crate::error::Error;
use crate::items::{Frame, Item, LoadClass, StartThread, Trace};
use crate::values::IdSize;

/// The largest CLASS_DUMP read (it must be in the buffer whole). Its three
/// lists have at most 65535 entries each, so a real one is under 3 MiB.
pub const MAX_CLASS_DUMP: usize = 16 << 20;

/// Top-level record tags.
pub mod tag {
    /// A symbol's text.
    pub const UTF8: u8 = 0x01;
    /// A class's serial, id and name.
    pub const LOAD_CLASS: u8 = 0x02;
    /// A class unloaded.
    pub const UNLOAD_CLASS: u8 = 0x03;
    /// A stack frame.
    pub const FRAME: u8 = 0x04;
    /// A stack trace.
    pub const TRACE: u8 = 0x05;
    /// A thread started.
    pub const START_THREAD: u8 = 0x0A;
    /// A thread ended.
    pub const END_THREAD: u8 = 0x0B;
    /// A heap dump in one record.
    pub const HEAP_DUMP: u8 = 0x0C;
    /// A segment of a heap dump.
    pub const HEAP_DUMP_SEGMENT: u8 = 0x1C;
    /// The end of a segmented heap dump.
    pub const HEAP_DUMP_END: u8 = 0x2C;
}

/// A record's header: tag, `u4` time offset, `u4` body length.
const RECORD_HEADER: usize = 9;

/// What one step gives.
#[derive(Debug, Clone)]
pub enum Step<'a> {
    /// An item, made from the first `len` bytes of the buffer; `body`
    /// more bytes of the file belong to it (a UTF8's text, a trace's frame
    /// ids, an instance's data, an array's elements, an unknown record)
    /// and were not read: the next step's buffer starts after them, at
    /// `base + len + body`.
    Item {
        /// The item.
        item: Item<'a>,
        /// The bytes of the buffer it was made from.
        len: usize,
        /// The bytes after those that are its body.
        body: u64,
    },
    /// The buffer must hold at least `at_least` bytes from the scanner's
    /// offset to make the next item (call again with more; if the input has
    /// no more, [`Scanner::finish`] says what was cut).
    NeedMore {
        /// Bytes needed from `base`.
        at_least: usize,
    },
    /// The end of the file (only known when [`Scanner::set_file_len`] was
    /// given it): every record read, no segment open.
    End,
}

/// Why a step stopped short: more bytes wanted, or an error.
pub(crate) enum Stop {
    More(usize),
    Fail(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Stop {
        Stop::Fail(e)
    }
}

/// An item made: the item, the buffer bytes it took, its body.
pub(crate) type Made<'a> = (Item<'a>, usize, u64);

/// A parser's place in an HPROF file.
#[derive(Debug, Clone)]
pub struct Scanner {
    pub(crate) id: IdSize,
    /// The absolute offset of the next item.
    pub(crate) at: u64,
    /// Bytes of the open heap-dump segment not yet read (0: outside one).
    pub(crate) segment_left: u64,
    /// The file's length, when the caller knows it.
    pub(crate) file_len: Option<u64>,
}

impl Scanner {
    /// A scanner of a file whose ids are `id` bytes, standing at `start`
    /// (the header's length, from [`crate::Header::parse`]).
    pub fn new(id: IdSize, start: u64) -> Scanner {
        Scanner {
            id,
            at: start,
            segment_left: 0,
            file_len: None,
        }
    }

    /// Tells the scanner the file's length: a record or segment longer than
    /// what is left of the file is then an error at its header, and the
    /// end of the file is [`Step::End`].
    pub fn set_file_len(&mut self, len: u64) {
        self.file_len = Some(len);
    }

    /// The absolute offset of the next item (the `base` the next step wants).
    pub fn position(&self) -> u64 {
        self.at
    }

    /// The id size.
    pub fn id_size(&self) -> IdSize {
        self.id
    }

    /// Inside a heap-dump segment (its sub-records are the next items)?
    pub fn in_segment(&self) -> bool {
        self.segment_left > 0
    }

    /// Bytes of the open segment not read yet (0 outside one).
    pub fn segment_left(&self) -> u64 {
        self.segment_left
    }

    /// Passes over the rest of the open segment: returns how many bytes
    /// the caller must skip; the next step's base is after them.
    pub fn skip_segment(&mut self) -> u64 {
        let n = self.segment_left;
        self.at += n;
        self.segment_left = 0;
        n
    }

    /// The next item from `buf`, the file's bytes from absolute offset
    /// `base` (which must be [`Scanner::position`]).
    pub fn next<'b>(&mut self, buf: &'b [u8], base: u64) -> Result<Step<'b>, Error> {
        if base != self.at {
            return Err(Error::Position {
                offset: base,
                expected: self.at,
            });
        }
        let buf = match self.file_len {
            Some(len) if self.segment_left == 0 && len <= self.at => return Ok(Step::End),
            Some(len) => {
                let left = usize::try_from(len - self.at).unwrap_or(usize::MAX);
                &buf[..buf.len().min(left)]
            }
            None => buf,
        };
        let made = if self.segment_left > 0 {
            self.sub_record(buf)
        } else {
            self.record(buf)
        };
        match made {
            Ok((item, len, body)) => {
                let took = len as u64 + body;
                self.at += took;
                if let Item::HeapDump { length, .. } = item {
                    self.segment_left = u64::from(length);
                } else {
                    self.segment_left = self.segment_left.saturating_sub(took);
                }
                Ok(Step::Item { item, len, body })
            }
            Err(Stop::More(at_least)) => Ok(Step::NeedMore { at_least }),
            Err(Stop::Fail(e)) => Err(e),
        }
    }

    /// The input ended with `available` bytes unread at the scanner's
    /// offset (after a [`Step::NeedMore`], or to close a file read without
    /// its length): fine at a record's boundary outside a segment, else the
    /// error naming what was cut.
    pub fn finish(&self, available: usize) -> Result<(), Error> {
        if self.segment_left > 0 {
            return Err(Error::truncated(
                self.at + available as u64,
                format!(
                    "the file ends inside a heap-dump segment, {} bytes before its end",
                    self.segment_left - (available as u64).min(self.segment_left)
                ),
            ));
        }
        if available > 0 {
            return Err(Error::truncated(
                self.at,
                format!("the file ends inside a record ({available} bytes of it are there)"),
            ));
        }
        Ok(())
    }

    /// Asks for `n` bytes at the scanner's offset for `what`, an item that
    /// may span at most `limit` bytes (its segment's rest): more from the
    /// caller, or an error if the segment or the file ends before.
    pub(crate) fn need(&self, buf: &[u8], n: usize, limit: u64, what: &str) -> Result<(), Stop> {
        if n as u64 > limit {
            return Err(Stop::Fail(Error::malformed(
                self.at,
                format!("{what} of at least {n} bytes runs past the end of its heap-dump segment ({limit} bytes left)"),
            )));
        }
        if let Some(len) = self.file_len {
            if self.at + n as u64 > len {
                return Err(Stop::Fail(Error::truncated(
                    self.at,
                    format!(
                        "{what}: the file ends {} bytes into it (it needs {n})",
                        len - self.at.min(len)
                    ),
                )));
            }
        }
        if n > buf.len() {
            return Err(Stop::More(n));
        }
        Ok(())
    }

    /// A top-level record.
    fn record<'b>(&mut self, buf: &'b [u8]) -> Result<Made<'b>, Stop> {
        let at = self.at;
        self.need(buf, RECORD_HEADER, u64::MAX, "a record header")?;
        let mut c = Fields::new(&buf[..RECORD_HEADER], self.id);
        let tag = c.u1();
        c.u4(); // microseconds since the header's time: not used
        let length = c.u4();
        if let Some(len) = self.file_len {
            let end = at + (RECORD_HEADER as u64) + u64::from(length);
            if end > len {
                return Err(Stop::Fail(Error::truncated(
                    at,
                    format!(
                        "a record (tag 0x{tag:02x}) of {length} bytes: the file ends {} bytes into its body",
                        len - at - RECORD_HEADER as u64
                    ),
                )));
            }
        }
        let id = self.id.bytes();
        let (fixed, name) = match tag {
            tag::UTF8 => (id, "UTF8"),
            tag::LOAD_CLASS => (8 + 2 * id, "LOAD_CLASS"),
            tag::UNLOAD_CLASS => (4, "UNLOAD_CLASS"),
            tag::FRAME => (8 + 4 * id, "FRAME"),
            tag::TRACE => (12, "TRACE"),
            tag::START_THREAD => (8 + 4 * id, "START_THREAD"),
            tag::END_THREAD => (4, "END_THREAD"),
            _ => (0, "record"),
        };
        if (length as usize) < fixed {
            return Err(Stop::Fail(Error::malformed(
                at,
                format!("a {name} record of {length} bytes: its fields take {fixed}"),
            )));
        }
        let len = RECORD_HEADER + fixed;
        self.need(buf, len, u64::MAX, name)?;
        let mut c = Fields::new(&buf[RECORD_HEADER..len], self.id);
        let body = u64::from(length) - fixed as u64;
        let item = match tag {
            tag::UTF8 => Item::Utf8 {
                id: c.id(),
                text_offset: at + len as u64,
                text_len: length - id as u32,
            },
            tag::LOAD_CLASS => Item::LoadClass(LoadClass {
                serial: c.u4(),
                class_id: c.id(),
                trace: c.u4(),
                name_id: c.id(),
            }),
            tag::UNLOAD_CLASS => Item::UnloadClass { serial: c.u4() },
            tag::FRAME => Item::Frame(Frame {
                id: c.id(),
                method_name: c.id(),
                signature: c.id(),
                source: c.id(),
                class_serial: c.u4(),
                line: c.u4() as i32,
            }),
            tag::TRACE => {
                let (serial, thread_serial, count) = (c.u4(), c.u4(), c.u4());
                if u64::from(count) * id as u64 > body {
                    return Err(Stop::Fail(Error::malformed(
                        at,
                        format!(
                            "a TRACE of {count} frames in a record of {length} bytes (it needs {})",
                            12 + u64::from(count) * id as u64
                        ),
                    )));
                }
                Item::Trace(Trace {
                    serial,
                    thread_serial,
                    frames_offset: at + len as u64,
                    count,
                })
            }
            tag::START_THREAD => Item::StartThread(StartThread {
                serial: c.u4(),
                object: c.id(),
                trace: c.u4(),
                name: c.id(),
                group: c.id(),
                parent_group: c.id(),
            }),
            tag::END_THREAD => Item::EndThread { serial: c.u4() },
            tag::HEAP_DUMP | tag::HEAP_DUMP_SEGMENT => {
                // Its sub-records are the next items, not a body.
                return Ok((
                    Item::HeapDump {
                        offset: at,
                        length,
                        segment: tag == tag::HEAP_DUMP_SEGMENT,
                    },
                    len,
                    0,
                ));
            }
            tag::HEAP_DUMP_END => Item::HeapDumpEnd { offset: at },
            _ => Item::Record {
                tag,
                offset: at,
                length,
            },
        };
        Ok((item, len, body))
    }
}

/// Big-endian fields read from bytes already checked to hold them (a
/// short read gives 0 rather than a panic, and cannot happen).
pub(crate) struct Fields<'a> {
    b: &'a [u8],
    pos: usize,
    id: IdSize,
}

impl<'a> Fields<'a> {
    pub(crate) fn new(b: &'a [u8], id: IdSize) -> Fields<'a> {
        Fields { b, pos: 0, id }
    }

    fn take<const N: usize>(&mut self) -> [u8; N] {
        let v = self
            .b
            .get(self.pos..self.pos + N)
            .and_then(|s| s.try_into().ok())
            .unwrap_or([0; N]);
        self.pos += N;
        v
    }

    pub(crate) fn u1(&mut self) -> u8 {
        self.take::<1>()[0]
    }

    pub(crate) fn u2(&mut self) -> u16 {
        u16::from_be_bytes(self.take())
    }

    pub(crate) fn u4(&mut self) -> u32 {
        u32::from_be_bytes(self.take())
    }

    pub(crate) fn id(&mut self) -> u64 {
        let v = self
            .id
            .read(self.b.get(self.pos..).unwrap_or(&[]))
            .unwrap_or(0);
        self.pos += self.id.bytes();
        v
    }
}
