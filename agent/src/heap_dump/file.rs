//! Where a heap dump is made before it is whole: a directory of its own
//! beside the destination (`.profrj-<16 hex>.d`, mode 0700, created
//! exclusively), so HotSpot's dumper, the pass that adds the traces and
//! gzip work on files nobody else can reach, and a dump cut short (disk
//! full, the JVM killed) leaves no file that passes for a whole one at the
//! destination. The finished file is renamed into place (a link there is
//! replaced, never followed) and the directory removed.

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
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

/// Compresses `raw` into `raw`.gz beside it (created exclusively), streaming
/// (the dump is never held in memory), and removes `raw`.
pub fn gzip(raw: &Path) -> io::Result<PathBuf> {
    let out_path = raw.with_extension("hprof.gz");
    let out = profrj_safe_fs::create_new(&out_path, 0o600)?;
    let mut input = BufReader::with_capacity(1 << 20, File::open(raw)?);
    // Level 1: HotSpot's -gz=1, the level its documentation suggests.
    let mut gz = flate2::write::GzEncoder::new(
        BufWriter::with_capacity(1 << 20, out),
        flate2::Compression::new(1),
    );
    io::copy(&mut input, &mut gz)?;
    gz.finish()?.flush()?;
    std::fs::remove_file(raw)?;
    Ok(out_path)
}
