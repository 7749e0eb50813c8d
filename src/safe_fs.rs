//! File operations that cannot be turned against us: files are created
//! exclusively and never through a link (`O_CREAT|O_EXCL|O_NOFOLLOW`), read
//! only if they are regular files of an expected owner, and outputs are
//! written to a temporary file renamed into place.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Creates `path` exclusively with `mode`: fails if anything (a file, a
/// link, a FIFO) is already there, and never follows a link.
pub fn create_new(path: &Path, mode: u32) -> std::io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Reads at most `limit` bytes of `file` (opened as `path`), only if it is a
/// regular file owned by `owner`.
pub fn read_checked(file: File, path: &Path, owner: u32, limit: u64) -> Result<Vec<u8>, String> {
    let meta = file
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?;
    if !meta.file_type().is_file() {
        return Err(format!("{} is not a regular file", path.display()));
    }
    if meta.uid() != owner {
        return Err(format!(
            "{} is owned by uid {}, not {owner}",
            path.display(),
            meta.uid()
        ));
    }
    let mut bytes = Vec::new();
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(bytes)
}

/// Why `path` cannot take an output file, if it cannot: it exists and is not
/// a regular file or a link (a FIFO would block the writer, a device would be
/// written to, a directory replaced).
pub fn unfit_output(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    let t = meta.file_type();
    let what = if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_socket() {
        "a socket"
    } else {
        return None;
    };
    Some(format!("{} is {what}, not a file", path.display()))
}

/// Writes what `body` produces to `path` through an exclusively created
/// temporary file in the same directory, renamed into place (a link at
/// `path` is replaced, not followed; a reader never sees half a file). The
/// output goes through a buffer as it is produced: a converter's output is
/// never held whole in memory. On an error the temporary file is removed and
/// `path` left as it was.
pub fn write_atomically_with(
    path: &Path,
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), String> {
    write_file_atomically(path, |f| {
        let mut w = std::io::BufWriter::with_capacity(1 << 16, f);
        body(&mut w)?;
        w.flush()
    })
}

/// [`write_atomically_with`] for a writer that needs the file itself: it may
/// seek in it (a JFR chunk's header is written last).
pub fn write_file_atomically(
    path: &Path,
    fill: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> Result<(), String> {
    if let Some(why) = unfit_output(path) {
        return Err(format!("refusing to write: {why}"));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let tmp = dir.join(format!(".profrj-{:016x}.tmp", random_u64()));
    let result = (|| {
        let mut f = create_new(&tmp, 0o644)?;
        fill(&mut f)?;
        f.sync_all()?;
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(|e| format!("{}: {e}", path.display()))
}

/// 64 unpredictable bits (the kernel's random source).
pub fn random_u64() -> u64 {
    let mut buf = [0u8; 8];
    // SAFETY: getrandom writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n != buf.len() as isize {
        // Never seen on Linux 3.17+; a clock-based value still avoids collisions.
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0);
        return t ^ ((std::process::id() as u64) << 32);
    }
    u64::from_ne_bytes(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    /// Reads at most `limit` bytes of `path`, only if it is a regular file (not a
    /// link, FIFO or device) owned by `owner`.
    fn read_owned(path: &Path, owner: u32, limit: u64) -> Result<Vec<u8>, String> {
        // O_NONBLOCK: a FIFO planted here must not block us before the check.
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        read_checked(file, path, owner, limit)
    }

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("profrj-safefs-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn never_through_a_link_nor_into_a_fifo() {
        let d = dir("links");
        let victim = d.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = d.join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(create_new(&link, 0o600).is_err());
        let me = std::fs::metadata(&victim).unwrap().uid();
        assert!(read_owned(&link, me, 10).is_err(), "links are not read");
        write_atomically_with(&link, |f| f.write_all(b"new")).unwrap();
        assert_eq!(
            std::fs::read(&victim).unwrap(),
            b"keep",
            "the link's target is untouched"
        );
        assert_eq!(
            std::fs::read(&link).unwrap(),
            b"new",
            "the link was replaced"
        );
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a valid path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(write_atomically_with(&fifo, |f| f.write_all(b"x"))
            .unwrap_err()
            .contains("FIFO"));
        assert!(read_owned(&fifo, 0, 10)
            .unwrap_err()
            .contains("not a regular file"));
        assert_eq!(read_owned(&victim, me, 2).unwrap(), b"ke");
        assert!(read_owned(&victim, me + 1, 10)
            .unwrap_err()
            .contains("owned by"));
        let leftovers: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
