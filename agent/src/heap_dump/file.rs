//! Where a heap dump is made before it is whole: a directory of its own
//! beside the destination (`.profrj-<16 hex>.d`, mode 0700, created
//! exclusively), so HotSpot's dumper, the pass that adds the traces and
//! gzip work on files nobody else can reach, and a dump cut short (disk
//! full, the JVM killed) leaves no file that passes for a whole one at the
//! destination. The finished file is renamed into place (a link there is
//! replaced, never followed) and the directory removed.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// A directory made for one dump; removed with whatever is left in it when
/// dropped.
pub struct PrivateDir(PathBuf);

impl PrivateDir {
    /// A new directory beside `dest`; refused when `dest` cannot take a file
    /// (a directory, a FIFO, a device).
    pub fn beside(dest: &Path) -> io::Result<Self> {
        if let Some(why) = profrj_safe_fs::unfit_output(dest) {
            return Err(io::Error::other(why));
        }
        let parent = match dest.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let dir = parent.join(format!(".profrj-{:016x}.d", profrj_safe_fs::random_u64()));
        std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
        Ok(PrivateDir(dir))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Moves `file` (inside this directory) to `dest`, readable by its owner
    /// alone (a heap holds whatever the program held: passwords, keys).
    pub fn publish(&self, file: &Path, dest: &Path) -> io::Result<()> {
        std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600))?;
        std::fs::rename(file, dest)
    }
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        if let Ok(entries) = std::fs::read_dir(&self.0) {
            for e in entries.flatten() {
                let _ = std::fs::remove_file(e.path());
            }
        }
        let _ = std::fs::remove_dir(&self.0);
    }
}

/// The piece of the dump each gzip member holds.
const PIECE: usize = 8 << 20;
/// The most threads that compress at once.
const COMPRESSORS: usize = 4;

/// Compresses `raw` into `raw`.gz beside it (created exclusively) and
/// removes `raw`: pieces of 8 MiB compressed on a few threads at once, each
/// a gzip member of its own, written in order (a file of several members
/// is one gzip file to every reader, as HotSpot's `-gz` dumps are). At most
/// two pieces a thread are held at a time: memory bounded, whatever the
/// dump's size.
pub fn gzip(raw: &Path) -> io::Result<PathBuf> {
    use std::os::unix::fs::FileExt;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let out_path = raw.with_extension("hprof.gz");
    let mut out = BufWriter::with_capacity(1 << 20, profrj_safe_fs::create_new(&out_path, 0o600)?);
    let input = File::open(raw)?;
    let len = input.metadata()?.len() as usize;
    let pieces = len.div_ceil(PIECE);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, COMPRESSORS);
    let next = AtomicUsize::new(0);
    let written = AtomicUsize::new(0);
    // Set when the writer gives up: the workers stop waiting for it.
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (done, results) = std::sync::mpsc::channel::<(usize, io::Result<Vec<u8>>)>();
    std::thread::scope(|s| -> io::Result<()> {
        for _ in 0..workers {
            let done = done.clone();
            let (input, next, written, stop) = (&input, &next, &written, &stop);
            s.spawn(move || {
                let mut buf = vec![0u8; PIECE];
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= pieces {
                        return;
                    }
                    // Bounded memory: wait while too far ahead of the writer.
                    while i >= written.load(Ordering::Acquire) + 2 * workers {
                        if stop.load(Ordering::Acquire) {
                            return;
                        }
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                    let n = PIECE.min(len - i * PIECE);
                    let member = input
                        .read_exact_at(&mut buf[..n], (i * PIECE) as u64)
                        .and_then(|()| {
                            // Level 1: HotSpot's -gz=1, the level its
                            // documentation suggests.
                            let mut gz = flate2::write::GzEncoder::new(
                                Vec::with_capacity(n / 4),
                                flate2::Compression::new(1),
                            );
                            gz.write_all(&buf[..n])?;
                            gz.finish()
                        });
                    let failed = member.is_err();
                    if done.send((i, member)).is_err() || failed {
                        return;
                    }
                }
            });
        }
        drop(done);
        let mut waiting = std::collections::BTreeMap::new();
        let mut at = 0;
        let result = (|| {
            for (i, member) in results.iter() {
                waiting.insert(i, member?);
                while let Some(m) = waiting.remove(&at) {
                    out.write_all(&m)?;
                    at += 1;
                    written.store(at, Ordering::Release);
                }
            }
            match at == pieces {
                true => Ok(()),
                false => Err(io::Error::other("a piece of the dump was not compressed")),
            }
        })();
        stop.store(true, Ordering::Release);
        result
    })?;
    out.flush()?;
    drop(out);
    std::fs::remove_file(raw)?;
    Ok(out_path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// More than two pieces, the last one short: the members, read as one
    /// gzip file, give back the bytes in order; the raw file is gone.
    #[test]
    fn gzip_members_read_back_as_the_dump() {
        let dir = std::env::temp_dir().join(format!("profrj-gzip-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let raw = dir.join("heap.hprof");
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let bytes: Vec<u8> = (0..(2 * PIECE + PIECE / 3))
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Half noise, half runs: something to compress.
                if i % 64 < 32 {
                    x as u8
                } else {
                    (i / 4096) as u8
                }
            })
            .collect();
        std::fs::write(&raw, &bytes).unwrap();
        let gz = gzip(&raw).unwrap();
        assert!(!raw.exists());
        let mut back = Vec::new();
        flate2::read::MultiGzDecoder::new(File::open(&gz).unwrap())
            .read_to_end(&mut back)
            .unwrap();
        assert!(
            back == bytes,
            "{} bytes back of {}",
            back.len(),
            bytes.len()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
