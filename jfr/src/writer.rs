//! A chunk written as it goes: the header first (sizes and offsets left
//! zero), events appended one by one, then the metadata event and one
//! checkpoint event holding the constant pools, and finally the header
//! rewritten with the chunk's size, both offsets and its duration. A reader
//! takes a chunk whose header was never rewritten (a crash) as unfinished.

use crate::encode::{padded_varint, sized, Buf};
use crate::metadata::CHECKPOINT_TYPE;
use std::io::{self, Seek, SeekFrom, Write};

/// The chunk header's size: magic, version, seven 64-bit fields and the
/// 32-bit features.
pub(crate) const HEADER_SIZE: u64 = 68;
/// The bytes every chunk starts with.
pub const MAGIC: &[u8; 4] = b"FLR\0";
/// The format version written: 2.0, as async-profiler writes it.
pub(crate) const VERSION: (u16, u16) = (2, 0);
/// The header's last four bytes: file state 0 (finished), and a flag byte
/// whose bit 0 says integers are compressed (what the JDK and
/// async-profiler write).
const FEATURES: u32 = 1;
/// Width of a patched size (a checkpoint's): up to 2^35 bytes.
const SIZE_WIDTH: usize = 5;

/// When the chunk starts, on both clocks.
#[derive(Clone, Copy, Debug)]
pub struct Start {
    /// Nanoseconds since the Unix epoch.
    pub nanos: u64,
    /// The events' clock.
    pub ticks: u64,
    /// The ticks' rate, which converts them to nanoseconds.
    pub ticks_per_second: u64,
}

/// One chunk being written to `out` (see the module's text for the order
/// of calls).
pub struct ChunkWriter<W: Write + Seek> {
    out: W,
    /// Offset of the chunk in `out`.
    base: u64,
    /// Bytes of the chunk written so far.
    len: u64,
    start: Start,
    metadata_at: u64,
    checkpoint_at: u64,
    buf: Buf,
}

impl<W: Write + Seek> ChunkWriter<W> {
    /// Starts a chunk at `out`'s current position.
    pub fn new(mut out: W, start: Start) -> io::Result<Self> {
        let base = out.stream_position()?;
        let mut w = ChunkWriter {
            out,
            base,
            len: 0,
            start,
            metadata_at: 0,
            checkpoint_at: 0,
            buf: Buf::new(),
        };
        let header = w.header(0, 0);
        w.write(&header)?;
        Ok(w)
    }

    fn header(&self, duration_nanos: u64, state: u32) -> Vec<u8> {
        let mut h = Buf::new();
        h.raw(MAGIC)
            .raw_u16(VERSION.0)
            .raw_u16(VERSION.1)
            .raw_u64(self.len.max(HEADER_SIZE))
            .raw_u64(self.checkpoint_at)
            .raw_u64(self.metadata_at)
            .raw_u64(self.start.nanos)
            .raw_u64(duration_nanos)
            .raw_u64(self.start.ticks)
            .raw_u64(self.start.ticks_per_second)
            .raw_u32(state);
        debug_assert_eq!(h.len() as u64, HEADER_SIZE);
        h.bytes
    }

    fn write(&mut self, b: &[u8]) -> io::Result<()> {
        self.out.write_all(b)?;
        self.len += b.len() as u64;
        Ok(())
    }

    /// Bytes of the chunk so far.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// No event written yet: only the header.
    pub fn is_empty(&self) -> bool {
        self.len <= HEADER_SIZE
    }

    /// Appends one event: `fill` writes its type id and fields into the
    /// buffer; the size goes in front.
    pub fn event(&mut self, fill: impl FnOnce(&mut Buf)) -> io::Result<()> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        fill(&mut buf);
        let e = sized(&buf.bytes);
        self.buf = buf;
        self.write(&e)
    }

    /// Appends the metadata event (as [`crate::schema::metadata_event`]
    /// makes it).
    pub fn metadata(&mut self, event: &[u8]) -> io::Result<()> {
        self.metadata_at = self.len;
        self.write(event)
    }

    /// Starts the chunk's checkpoint event, with `pools` constant pools
    /// to follow (each [`ChunkWriter::pool`], then its entries written
    /// with [`ChunkWriter::raw`]); [`ChunkWriter::end_checkpoint`] ends it.
    pub fn begin_checkpoint(&mut self, ticks: u64, pools: u64) -> io::Result<u64> {
        let at = self.len;
        self.checkpoint_at = at;
        let mut b = Buf::new();
        b.raw(&padded_varint(0, SIZE_WIDTH));
        b.varint(CHECKPOINT_TYPE).varint(ticks).varint(0);
        // Delta to the previous checkpoint: none. Then the type flags.
        b.varint(0).byte(0).varint(pools);
        self.write(&b.bytes)?;
        Ok(at)
    }

    /// A pool's header: its type and how many entries follow.
    pub fn pool(&mut self, ty: u64, count: u64) -> io::Result<()> {
        let mut b = Buf::new();
        b.varint(ty).varint(count);
        self.write(&b.bytes)
    }

    /// Appends bytes as they are: a pool's entries, or events the caller
    /// sized itself.
    pub fn raw(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.write(bytes)
    }

    /// Patches the checkpoint's size in.
    pub fn end_checkpoint(&mut self, at: u64) -> io::Result<()> {
        let size = self.len - at;
        if size >= 1 << (7 * SIZE_WIDTH) {
            return Err(io::Error::other("constant pools over 32 GiB"));
        }
        self.out.seek(SeekFrom::Start(self.base + at))?;
        self.out.write_all(&padded_varint(size, SIZE_WIDTH))?;
        self.out.seek(SeekFrom::Start(self.base + self.len))?;
        Ok(())
    }

    /// Rewrites the header (the chunk is complete) and gives `out` back,
    /// positioned after the chunk.
    pub fn finish(mut self, duration_nanos: u64) -> io::Result<W> {
        if self.metadata_at == 0 || self.checkpoint_at == 0 {
            return Err(io::Error::other(
                "a chunk needs its metadata and checkpoint events",
            ));
        }
        let header = self.header(duration_nanos, FEATURES);
        self.out.seek(SeekFrom::Start(self.base))?;
        self.out.write_all(&header)?;
        self.out.seek(SeekFrom::Start(self.base + self.len))?;
        self.out.flush()?;
        Ok(self.out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_count_themselves() {
        for n in [
            0usize, 1, 125, 126, 127, 128, 16_380, 16_381, 16_382, 16_383, 20_000,
        ] {
            let body = vec![7u8; n];
            let e = sized(&body);
            let mut c = crate::decode::Cursor::new(&e);
            assert_eq!(c.varint().unwrap() as usize, e.len(), "body {n}");
        }
    }
}
