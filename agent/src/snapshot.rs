//! Where a snapshot goes: the path template, the checks made before, and
//! the temporary-file-then-rename dance so a reader never sees half a file
//! (what goes into it is the writer's, `crate::xml`).
//!
//! The temporary is created exclusively and never through a link
//! (`O_CREAT|O_EXCL|O_NOFOLLOW`), mode 0600, with an unpredictable short
//! name (`.profrj-<16 hex>.tmp` in the snapshot's directory, so it fits
//! whatever the snapshot's own name's length); a final path that is a FIFO,
//! device, socket or directory is refused. The renamed snapshot keeps mode
//! 0600: it may name the application's classes, so only its user reads it.

pub use profrj_safe_fs::{create_new, create_temporary, random_u64, unfit_output};
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};

/// Expands `%p` (pid), `%t` (local time, yyyy_MM_dd_HH_mm_ss), `%n` (the
/// snapshot's number, from 1) and `%%`.
pub fn expand_path(template: &str, pid: u32, unix_secs: i64, number: u32) -> PathBuf {
    let mut out = String::new();
    let mut chars = template.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('p') => out.push_str(&pid.to_string()),
            Some('t') => out.push_str(&local_timestamp(unix_secs)),
            Some('n') => out.push_str(&number.to_string()),
            Some(other) => out.push(other),
            None => out.push('%'),
        }
    }
    PathBuf::from(out)
}

fn local_timestamp(unix_secs: i64) -> String {
    // SAFETY: all-zero is a valid `tm`; localtime_r only writes into it.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let t: libc::time_t = unix_secs as libc::time_t;
    // SAFETY: both pointers are to live locals; localtime_r is thread-safe.
    if unsafe { libc::localtime_r(&t, &mut tm) }.is_null() {
        return unix_secs.to_string();
    }
    format!(
        "{:04}_{:02}_{:02}_{:02}_{:02}_{:02}",
        tm.tm_year + 1900,
        tm.tm_mon + 1,
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}

pub fn unix_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// Why a snapshot at `path` would fail to be written, if it can be told in advance.
pub fn check_writable(path: &Path) -> Option<String> {
    if let Some(why) = unfit_output(path) {
        return Some(why);
    }
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_encoded_bytes()) else {
        return Some(format!("{} is not a valid path", dir.display()));
    };
    // SAFETY: `c` is a NUL-terminated path string.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) } != 0 {
        return Some(format!(
            "directory {} is not writable: {}",
            dir.display(),
            io::Error::last_os_error()
        ));
    }
    None
}

/// Writes `path` through a temporary file in the same directory
/// (`profrj_safe_fs::write_through_temporary`: created exclusively, never
/// through a link, mode 0600), renamed into place only once `body` has
/// written it whole; an existing FIFO, device, socket or directory is
/// refused.
pub fn write_document(
    path: &Path,
    body: impl FnOnce(&mut BufWriter<File>) -> io::Result<()>,
) -> io::Result<()> {
    if let Some(why) = unfit_output(path) {
        return Err(io::Error::other(format!(
            "refusing to write the snapshot: {why}"
        )));
    }
    profrj_safe_fs::write_through_temporary(path, 0o600, |file| {
        let mut out = BufWriter::with_capacity(1 << 16, file);
        body(&mut out)?;
        out.into_inner().map_err(|e| e.into_error())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_through_a_link_nor_into_a_fifo_and_long_names_fit() {
        let dir = std::env::temp_dir().join(format!("profrj-snap-links-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let victim = dir.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        // The old temporary's name was predictable: PATH.<pid>.tmp.
        let out = dir.join("out.xml");
        let old_tmp = dir.join(format!("out.xml.{}.tmp", std::process::id()));
        std::os::unix::fs::symlink(&victim, &old_tmp).unwrap();
        write_document(&out, |_| Ok(())).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        use std::os::unix::fs::MetadataExt;
        assert_eq!(std::fs::metadata(&out).unwrap().mode() & 0o777, 0o600);
        let fifo = dir.join("fifo.xml");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a NUL-terminated path, alive for the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = write_document(&fifo, |_| Ok(())).unwrap_err();
        assert!(e.to_string().contains("FIFO"), "{e}");
        assert!(check_writable(&fifo).unwrap().contains("FIFO"));
        // A name of 250 bytes: its temporary still fits NAME_MAX (255).
        let long = dir.join(format!("{}.xml", "n".repeat(246)));
        write_document(&long, |_| Ok(())).unwrap();
        assert!(long.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn placeholders() {
        assert_eq!(
            expand_path("out-%p-%n.xml", 42, 0, 3),
            PathBuf::from("out-42-3.xml")
        );
        assert_eq!(expand_path("100%%-%p", 7, 0, 1), PathBuf::from("100%-7"));
        let t = expand_path("%t", 1, 1_700_000_000, 1)
            .into_os_string()
            .into_string()
            .unwrap();
        assert_eq!(t.len(), "2023_11_14_22_13_20".len(), "{t}");
        assert!(t.starts_with("2023_11_1"), "{t}");
    }

    #[test]
    fn atomic_write_and_failure_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("profrj-snap-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.xml");
        write_document(&p, |w| std::io::Write::write_all(w, b"<doc/>\n")).unwrap();
        let text = std::fs::read_to_string(&p).unwrap();
        assert_eq!(text, "<doc/>\n");
        let err = write_document(&p, |_| Err(io::Error::other("boom")));
        assert!(err.is_err());
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            text,
            "old snapshot must survive a failed write"
        );
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            1,
            "temporary file must be removed"
        );
        assert!(check_writable(&dir.join("missing/x.xml")).is_some());
        assert!(check_writable(&p).is_none());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
