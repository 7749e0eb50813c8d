//! File creation that cannot be turned against profrj, shared by the agent
//! (snapshots, trace files, reply files) and the CLI (converted outputs,
//! its private directories): a file is created exclusively and never
//! through a link (`O_CREAT|O_EXCL|O_NOFOLLOW`), an output is written to an
//! unpredictably named temporary file beside it and renamed into place, and
//! an existing path that is a FIFO, device, socket or directory is refused.
#![deny(missing_docs)]
#![warn(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// Creates `path` exclusively with `mode`: fails if anything (a file, a
/// link, a FIFO) is there already, and never follows a link.
pub fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
}

/// Why `path` cannot take an output file, if it cannot: it exists and is a
/// FIFO (writing would block), a device (it would be written to), a socket
/// or a directory (it would be replaced).
pub fn unfit_output(path: &Path) -> Option<String> {
    let t = std::fs::symlink_metadata(path).ok()?.file_type();
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

/// The temporary file an output for `path` is written to before it is
/// renamed into place: `.profrj-<16 hex>.tmp` in `path`'s directory (a
/// short name, so it fits whatever the output's own name's length),
/// created exclusively, never through a link, with `mode`. Refused when
/// `path` is unfit ([`unfit_output`]).
pub fn create_temporary(path: &Path, mode: u32) -> io::Result<(PathBuf, File)> {
    if let Some(why) = unfit_output(path) {
        return Err(io::Error::other(why));
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let tmp = dir.join(format!(".profrj-{:016x}.tmp", random_u64()));
    let file = create_new(&tmp, mode)?;
    Ok((tmp, file))
}

/// Writes `path` through a temporary file ([`create_temporary`]) that
/// `body` fills and this function syncs and renames into place (a link at
/// `path` is replaced, not followed; a reader never sees half a file). On
/// any failure the temporary file is removed and `path` left as it was.
pub fn write_through_temporary(
    path: &Path,
    mode: u32,
    body: impl FnOnce(File) -> io::Result<File>,
) -> io::Result<()> {
    let (tmp, file) = create_temporary(path, mode)?;
    let result = body(file)
        .and_then(|f| f.sync_all())
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// 64 unpredictable bits (the kernel's random source).
pub fn random_u64() -> u64 {
    let mut buf = [0u8; 8];
    // SAFETY: getrandom writes at most `buf.len()` bytes into `buf`.
    let n = unsafe { libc::getrandom(buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n != buf.len() as isize {
        // Not seen on Linux 3.17+; a clock-based value still avoids collisions.
        return std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
            ^ ((std::process::id() as u64) << 32);
    }
    u64::from_ne_bytes(buf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("profrj-safe-fs-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn never_through_a_link_nor_into_a_fifo_and_long_names_fit() {
        let d = dir("links");
        let victim = d.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        let link = d.join("link");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        assert!(create_new(&link, 0o600).is_err(), "never through a link");
        let out = d.join("out");
        write_through_temporary(&out, 0o600, |mut f| f.write_all(b"new").map(|()| f)).unwrap();
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        use std::os::unix::fs::MetadataExt;
        assert_eq!(std::fs::metadata(&out).unwrap().mode() & 0o777, 0o600);
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path, alive for the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = write_through_temporary(&fifo, 0o600, Ok).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        // A name of 250 bytes: its temporary still fits NAME_MAX (255).
        let long = d.join(format!("{}.xml", "n".repeat(246)));
        write_through_temporary(&long, 0o600, Ok).unwrap();
        assert!(long.exists());
        // A failing body leaves the old file and no temporary.
        let e = write_through_temporary(&out, 0o600, |_| Err(io::Error::other("boom")));
        assert!(e.is_err());
        assert_eq!(std::fs::read(&out).unwrap(), b"new");
        let left: Vec<_> = std::fs::read_dir(&d)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "temporary files left: {left:?}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
