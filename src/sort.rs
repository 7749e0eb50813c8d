//! A small external sorter for the readers that must merge or order what
//! they cannot hold (the flame page's threads of one name, HPROF's traces
//! ranked): records of a byte key and a few numbers go into a buffer of a
//! fixed size; a full buffer is sorted, records of one key summed, and
//! written to a run (an unnamed scratch file, `scratch.rs`); the runs are
//! then merged k ways, at most [`FAN_IN`] at once, records of one key
//! summed again. Memory: the buffer and a read buffer per run merged,
//! whatever the number of records.

use crate::error::CliError;
use crate::scratch::Scratch;
use profrj_otlp::wire::varint;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::FileExt;

/// Bytes a reader's sorter holds unless `PROFRJ_SORT_MEMORY` (bytes, at
/// least 64 KiB) says otherwise: the tests make it small, so that a reader
/// whose memory grows with its input shows on a small one.
pub fn budget(default: usize) -> usize {
    std::env::var("PROFRJ_SORT_MEMORY")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .map_or(default, |b| b.max(1 << 16))
}

/// The most runs merged at once (more are merged in passes).
pub const FAN_IN: usize = 64;

/// Bytes a run is read in.
const READ: usize = 1 << 16;

pub struct Sorter {
    /// Numbers per record.
    width: usize,
    /// The last `tail` numbers are not summed: the smallest tail (in
    /// lexicographic order) of a key's records is kept, as a whole (a
    /// representative and what goes with it).
    tail: usize,
    /// Bytes of records the buffer holds before it is sorted out.
    budget: usize,
    /// Records: the key's bytes, then `width` numbers (native endian).
    data: Vec<u8>,
    /// Each record's offset in `data` and key length.
    recs: Vec<(usize, u32)>,
    runs: Vec<File>,
    scratch: Scratch,
}

impl Sorter {
    /// A sorter of records of `width` numbers, holding about `budget` bytes.
    pub fn new(width: usize, budget: usize) -> Result<Sorter, CliError> {
        Ok(Sorter {
            width,
            tail: 0,
            budget,
            data: Vec::new(),
            recs: Vec::new(),
            runs: Vec::new(),
            scratch: Scratch::new()?,
        })
    }

    /// Keeps the smallest of the last `tail` numbers of a key's records
    /// instead of summing them.
    pub fn min_tail(mut self, tail: usize) -> Sorter {
        assert!(tail <= self.width);
        self.tail = tail;
        self
    }

    pub fn push(&mut self, key: &[u8], values: &[u64]) -> io::Result<()> {
        debug_assert_eq!(values.len(), self.width);
        self.recs.push((self.data.len(), key.len() as u32));
        self.data.extend_from_slice(key);
        for v in values {
            self.data.extend_from_slice(&v.to_ne_bytes());
        }
        // Each record also costs its entry in `recs`.
        if self.data.len() + self.recs.len() * 16 >= self.budget {
            self.spill()?;
        }
        Ok(())
    }

    /// Sorts the buffer into a run.
    fn spill(&mut self) -> io::Result<()> {
        if self.recs.is_empty() {
            return Ok(());
        }
        let data = &self.data;
        let key = |&(o, l): &(usize, u32)| &data[o..o + l as usize];
        self.recs.sort_unstable_by(|a, b| key(a).cmp(key(b)));
        let (_, f) = self.scratch.raw("run").map_err(io::Error::from)?;
        let mut out = RunWriter::new(f, self.width);
        let w = self.width;
        let values = |&(o, l): &(usize, u32)| {
            let at = o + l as usize;
            (0..w).map(move |i| {
                let b = &data[at + i * 8..at + i * 8 + 8];
                u64::from_ne_bytes(b.try_into().expect("8 bytes"))
            })
        };
        let mut sum = vec![0u64; w];
        let mut next = vec![0u64; w];
        let mut i = 0;
        while i < self.recs.len() {
            let k = key(&self.recs[i]);
            sum.iter_mut()
                .zip(values(&self.recs[i]))
                .for_each(|(s, v)| *s = v);
            i += 1;
            while i < self.recs.len() && key(&self.recs[i]) == k {
                next.iter_mut()
                    .zip(values(&self.recs[i]))
                    .for_each(|(s, v)| *s = v);
                combine(&mut sum, &next, self.tail);
                i += 1;
            }
            out.write(k, &sum)?;
        }
        self.runs.push(out.finish()?);
        self.data.clear();
        self.recs.clear();
        // What a large buffer grew to is given back between runs.
        self.data.shrink_to(self.budget);
        Ok(())
    }

    /// Every key once, in order, with its numbers summed.
    pub fn finish(mut self) -> io::Result<Merged> {
        self.spill()?;
        while self.runs.len() > FAN_IN {
            let rest = self.runs.split_off(FAN_IN);
            let first = std::mem::replace(&mut self.runs, rest);
            let mut m = Merged::new(first, self.width, self.tail)?;
            let (_, f) = self.scratch.raw("run").map_err(io::Error::from)?;
            let mut out = RunWriter::new(f, self.width);
            while let Some((k, v)) = m.next_record()? {
                out.write(k, v)?;
            }
            self.runs.push(out.finish()?);
        }
        Merged::new(self.runs, self.width, self.tail)
    }
}

/// Adds `b` into `a`: sums, and the smaller tail of the two.
fn combine(a: &mut [u64], b: &[u64], tail: usize) {
    let cut = a.len() - tail;
    for (s, v) in a[..cut].iter_mut().zip(&b[..cut]) {
        *s = s.saturating_add(*v);
    }
    if b[cut..] < a[cut..] {
        a[cut..].copy_from_slice(&b[cut..]);
    }
}

struct RunWriter {
    out: BufWriter<File>,
    rec: Vec<u8>,
}

impl RunWriter {
    fn new(f: File, _width: usize) -> RunWriter {
        RunWriter {
            out: BufWriter::with_capacity(1 << 16, f),
            rec: Vec::new(),
        }
    }

    /// A record: the key's length and bytes, then the numbers, as varints.
    fn write(&mut self, key: &[u8], values: &[u64]) -> io::Result<()> {
        self.rec.clear();
        varint(&mut self.rec, key.len() as u64);
        self.rec.extend_from_slice(key);
        for &v in values {
            varint(&mut self.rec, v);
        }
        self.out.write_all(&self.rec)
    }

    fn finish(self) -> io::Result<File> {
        self.out.into_inner().map_err(|e| e.into_error())
    }
}

/// A run read back in order.
struct Run {
    file: File,
    pos: u64,
    buf: Vec<u8>,
    at: usize,
    len: usize,
    key: Vec<u8>,
    values: Vec<u64>,
}

impl Run {
    fn new(file: File, width: usize) -> Run {
        Run {
            file,
            pos: 0,
            buf: vec![0; READ],
            at: 0,
            len: 0,
            key: Vec::new(),
            values: vec![0; width],
        }
    }

    /// The next byte, `None` at the end of the run.
    fn byte(&mut self) -> io::Result<Option<u8>> {
        if self.at == self.len {
            let n = self.file.read_at(&mut self.buf, self.pos)?;
            if n == 0 {
                return Ok(None);
            }
            self.pos += n as u64;
            self.at = 0;
            self.len = n;
        }
        self.at += 1;
        Ok(Some(self.buf[self.at - 1]))
    }

    fn varint(&mut self) -> io::Result<Option<u64>> {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let Some(b) = self.byte()? else {
                return Ok(None);
            };
            if shift < 64 {
                v |= u64::from(b & 0x7f) << shift;
            }
            shift += 7;
            if b & 0x80 == 0 {
                return Ok(Some(v));
            }
        }
    }

    /// Reads the next record into `key` and `values`; false at the end.
    fn advance(&mut self) -> io::Result<bool> {
        let Some(len) = self.varint()? else {
            return Ok(false);
        };
        self.key.clear();
        for _ in 0..len {
            let b = self.byte()?.ok_or_else(truncated)?;
            self.key.push(b);
        }
        for i in 0..self.values.len() {
            self.values[i] = self.varint()?.ok_or_else(truncated)?;
        }
        Ok(true)
    }
}

fn truncated() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "a sorted run ended early")
}

/// The runs merged: each key once, in order ([`Merged::next_record`]).
pub struct Merged {
    runs: Vec<Run>,
    tail: usize,
    heap: BinaryHeap<Reverse<(Vec<u8>, usize)>>,
    key: Vec<u8>,
    values: Vec<u64>,
}

impl Merged {
    fn new(files: Vec<File>, width: usize, tail: usize) -> io::Result<Merged> {
        let mut runs: Vec<Run> = files.into_iter().map(|f| Run::new(f, width)).collect();
        let mut heap = BinaryHeap::new();
        for (i, r) in runs.iter_mut().enumerate() {
            if r.advance()? {
                heap.push(Reverse((std::mem::take(&mut r.key), i)));
            }
        }
        Ok(Merged {
            runs,
            tail,
            heap,
            key: Vec::new(),
            values: vec![0; width],
        })
    }

    /// The next key and its numbers summed over the runs.
    pub fn next_record(&mut self) -> io::Result<Option<(&[u8], &[u64])>> {
        let Some(Reverse((key, i))) = self.heap.pop() else {
            return Ok(None);
        };
        self.key = key;
        self.values.copy_from_slice(&self.runs[i].values);
        self.refill(i)?;
        while self
            .heap
            .peek()
            .is_some_and(|Reverse((k, _))| *k == self.key)
        {
            let Reverse((k, j)) = self.heap.pop().expect("peeked");
            combine(&mut self.values, &self.runs[j].values, self.tail);
            self.runs[j].key = k;
            self.refill(j)?;
        }
        Ok(Some((&self.key, &self.values)))
    }

    fn refill(&mut self, i: usize) -> io::Result<()> {
        let r = &mut self.runs[i];
        if r.advance()? {
            self.heap.push(Reverse((std::mem::take(&mut r.key), i)));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Many small runs (more than FAN_IN, so merged in passes) give every
    /// key once, in order, its numbers summed.
    #[test]
    fn runs_merge_in_order_and_sum() {
        let mut s = Sorter::new(2, 256).unwrap();
        let mut want = std::collections::BTreeMap::new();
        for i in 0..20_000u64 {
            let k = (i * 7919 % 1000).to_be_bytes();
            s.push(&k, &[1, i]).unwrap();
            let e: &mut (u64, u64) = want.entry(k.to_vec()).or_default();
            e.0 += 1;
            e.1 += i;
        }
        assert!(s.runs.len() > FAN_IN);
        let mut m = s.finish().unwrap();
        let mut got = Vec::new();
        while let Some((k, v)) = m.next_record().unwrap() {
            got.push((k.to_vec(), (v[0], v[1])));
        }
        assert_eq!(got, want.into_iter().collect::<Vec<_>>());
    }

    /// A tail keeps the smallest record's numbers, whole.
    #[test]
    fn tails_keep_the_smallest() {
        let mut s = Sorter::new(3, 64).unwrap().min_tail(2);
        for (rep, name) in [(9, 1), (3, 7), (5, 0), (3, 8)] {
            s.push(b"k", &[1, rep, name]).unwrap();
        }
        let mut m = s.finish().unwrap();
        let (k, v) = m.next_record().unwrap().unwrap();
        assert_eq!((k, v), (&b"k"[..], &[4, 3, 7][..]));
        assert!(m.next_record().unwrap().is_none());
    }
}
