//! The serials the pass rewrites, written back a stretch of the file at a
//! time: the bytes from a stretch's first patch to its last (at most
//! [`STRETCH`]), copied from the file, patched and written with one
//! `pwrite`, on a thread of its own while the pass reads on (the pass and
//! the writing each take about half of the time, so on two cores the two
//! overlap). Writing through a shared writable map instead costs a page
//! fault and a file-system dirtying per page: measured 2x slower.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};

/// The most bytes one write covers.
const STRETCH: usize = 1 << 20;
/// Stretches handed over and not yet written: the writer's lag (within the
/// map's window of pages kept behind the reader).
const QUEUED: usize = 4;

/// One stretch's patches: (offset, serial), ascending, within `STRETCH`.
type Batch = Vec<(usize, u32)>;

/// Where the pass hands its patches.
pub struct Writes {
    patches: Batch,
    to_writer: SyncSender<Batch>,
    spares: Receiver<Batch>,
}

impl Writes {
    /// One serial to write at `offset` (after every earlier one).
    pub fn add(&mut self, offset: usize, serial: u32) {
        if let Some(&(first, _)) = self.patches.first() {
            if offset + 4 - first > STRETCH {
                self.hand_over();
            }
        }
        self.patches.push((offset, serial));
    }

    fn hand_over(&mut self) {
        let next = self.spares.try_recv().unwrap_or_default();
        let full = std::mem::replace(&mut self.patches, next);
        // The writer ends only when this side is dropped, or after an
        // error it reports at the end: then the batch has nowhere to go.
        let _ = self.to_writer.send(full);
    }
}

/// Runs `body` with a [`Writes`] whose stretches a thread writes to `file`
/// (whose bytes, as they are, `data` maps); every write done (or the first
/// error) when it returns.
pub fn with_writer<R>(
    file: &File,
    data: &[u8],
    body: impl FnOnce(&mut Writes) -> R,
) -> io::Result<R> {
    let (to_writer, batches) = sync_channel::<Batch>(QUEUED);
    let (give_back, spares) = sync_channel::<Batch>(QUEUED + 1);
    std::thread::scope(|s| {
        let writer = s.spawn(move || write_all(file, data, batches, give_back));
        let mut writes = Writes {
            patches: Vec::new(),
            to_writer,
            spares,
        };
        let r = body(&mut writes);
        writes.hand_over();
        drop(writes);
        let written = writer
            .join()
            .unwrap_or_else(|_| Err(io::Error::other("the heap dump's writer panicked")));
        written.map(|()| r)
    })
}

/// The writer: each batch's stretch copied, patched, written.
fn write_all(
    file: &File,
    data: &[u8],
    batches: Receiver<Batch>,
    give_back: SyncSender<Batch>,
) -> io::Result<()> {
    let mut buf = Vec::with_capacity(STRETCH);
    for mut batch in batches {
        let (Some(&(first, _)), Some(&(last, _))) = (batch.first(), batch.last()) else {
            continue;
        };
        let stretch = data
            .get(first..last + 4)
            .ok_or_else(|| io::Error::other("a patch past the dump's end"))?;
        buf.clear();
        buf.extend_from_slice(stretch);
        for &(at, serial) in &batch {
            buf[at - first..at - first + 4].copy_from_slice(&serial.to_be_bytes());
        }
        file.write_all_at(&buf, first as u64)?;
        batch.clear();
        let _ = give_back.try_send(batch);
    }
    Ok(())
}
