//! File operations that cannot be turned against us: files are created
//! exclusively and never through a link (`O_CREAT|O_EXCL|O_NOFOLLOW`), read
//! only if they are regular files of an expected owner, and outputs are
//! written to a temporary file renamed into place. Creating files is
//! `profrj_safe_fs`'s, shared with the agent; files inside a container's
//! root are `attach::jvm_root`'s (through directory descriptors).

use crate::error::CliError;
pub use profrj_safe_fs::{random_u64, unfit_output};
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

/// Reads at most `limit` bytes of `file` (opened as `path`), only if it is a
/// regular file owned by `owner`.
pub fn read_checked(file: File, path: &Path, owner: u32, limit: u64) -> Result<Vec<u8>, CliError> {
    let meta = file
        .metadata()
        .map_err(|e| CliError::Output(format!("{}: {e}", path.display())))?;
    if !meta.file_type().is_file() {
        return Err(CliError::Output(format!(
            "{} is not a regular file",
            path.display()
        )));
    }
    if meta.uid() != owner {
        return Err(CliError::Output(format!(
            "{} is owned by uid {}, not {owner}",
            path.display(),
            meta.uid()
        )));
    }
    let mut bytes = Vec::new();
    file.take(limit)
        .read_to_end(&mut bytes)
        .map_err(|e| CliError::Output(format!("{}: {e}", path.display())))?;
    Ok(bytes)
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
) -> Result<(), CliError> {
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
) -> Result<(), CliError> {
    if let Some(why) = unfit_output(path) {
        return Err(CliError::Output(format!("refusing to write: {why}")));
    }
    profrj_safe_fs::write_through_temporary(path, 0o644, |mut file| {
        fill(&mut file)?;
        Ok(file)
    })
    .map_err(|e| CliError::Output(format!("{}: {e}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use profrj_safe_fs::create_new;
    use std::fs::OpenOptions;
    use std::os::unix::fs::OpenOptionsExt;
    use std::path::PathBuf;

    /// Reads at most `limit` bytes of `path`, only if it is a regular file (not a
    /// link, FIFO or device) owned by `owner`.
    fn read_owned(path: &Path, owner: u32, limit: u64) -> Result<Vec<u8>, CliError> {
        // O_NONBLOCK: a FIFO planted here must not block us before the check.
        let file = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
            .open(path)
            .map_err(|e| CliError::Output(format!("{}: {e}", path.display())))?;
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
            .to_string()
            .contains("FIFO"));
        assert!(read_owned(&fifo, 0, 10)
            .unwrap_err()
            .to_string()
            .contains("not a regular file"));
        assert_eq!(read_owned(&victim, me, 2).unwrap(), b"ke");
        assert!(read_owned(&victim, me + 1, 10)
            .unwrap_err()
            .to_string()
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
