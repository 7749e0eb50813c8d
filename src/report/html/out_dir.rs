//! The pages' directory: created if missing, opened once (never through a
//! link: `O_NOFOLLOW` on its last component), and every page created in it
//! through that descriptor (`openat`), so nothing swapped in on the way
//! (a link at DIR, or at a page's name) can send a page elsewhere.
//!
//! - Without `--replace`, a page is created exclusively
//!   (`O_CREAT|O_EXCL|O_NOFOLLOW`), and every page's name is checked free
//!   before the first is written: an earlier report in DIR is refused whole,
//!   not half replaced.
//! - With `--replace`, a page is written to an unpredictably named
//!   temporary file and renamed over the old one (a link there is replaced,
//!   never followed; a directory or anything not a regular file is refused).
//! - Page names are made here from hostile names (a class's, a package's,
//!   a source path's): see [`PageNames`].

use crate::error::CliError;
use std::collections::HashSet;
use std::ffi::CString;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

pub struct OutDir {
    dir: File,
    path: PathBuf,
    replace: bool,
}

fn c_name(name: &str) -> io::Result<CString> {
    CString::new(name).map_err(|_| io::Error::other("a NUL in a page name"))
}

impl OutDir {
    /// Creates `path` (and its parents) if missing, and opens it.
    pub fn open(path: &Path, replace: bool) -> Result<OutDir, CliError> {
        let err = |e: io::Error| CliError::Output(format!("{}: {e}", path.display()));
        if std::fs::symlink_metadata(path).is_err() {
            std::fs::create_dir_all(path).map_err(err)?;
        }
        let dir = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(path)
            .map_err(|e| match e.raw_os_error() {
                // With O_DIRECTORY, Linux answers ENOTDIR for a link too.
                Some(libc::ELOOP | libc::ENOTDIR) => {
                    let link = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink());
                    let what = if link {
                        "is a link: name the directory itself"
                    } else {
                        "is not a directory"
                    };
                    CliError::Output(format!("{} {what}", path.display()))
                }
                _ => err(e),
            })?;
        Ok(OutDir {
            dir,
            path: path.to_owned(),
            replace,
        })
    }

    /// What is at `name` in the directory, without following a link:
    /// `None` when nothing, else its `st_mode` file type.
    fn kind(&self, name: &str) -> io::Result<Option<libc::mode_t>> {
        let c = c_name(name)?;
        // SAFETY: an all-zero stat is a valid out-parameter.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: a valid directory descriptor, a NUL-terminated name, a stat to fill.
        let rc = unsafe {
            libc::fstatat(
                self.dir.as_raw_fd(),
                c.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if rc == 0 {
            return Ok(Some(st.st_mode & libc::S_IFMT));
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::ENOENT) => Ok(None),
            _ => Err(e),
        }
    }

    /// Refuses before anything is written: without `--replace`, any page
    /// name already taken; with it, a name taken by something not a file
    /// or link (a directory, a FIFO).
    pub fn check_free<'a>(&self, names: impl IntoIterator<Item = &'a str>) -> Result<(), CliError> {
        for name in names {
            let kind = self.kind(name).map_err(|e| self.error(name, e))?;
            match kind {
                None => {}
                Some(k) if self.replace && (k == libc::S_IFREG || k == libc::S_IFLNK) => {}
                Some(_) if self.replace => {
                    return Err(CliError::Output(format!(
                        "{} is not a regular file: not replaced",
                        self.path.join(name).display()
                    )))
                }
                Some(_) => {
                    return Err(CliError::Output(format!(
                        "{} exists (an earlier report?): pass --replace to replace the pages, or name another directory",
                        self.path.join(name).display()
                    )))
                }
            }
        }
        Ok(())
    }

    fn error(&self, name: &str, e: io::Error) -> CliError {
        CliError::Output(format!("{}: {e}", self.path.join(name).display()))
    }

    /// Creates `name` exclusively, never through a link.
    fn create(&self, name: &str) -> io::Result<File> {
        let c = c_name(name)?;
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: a valid directory descriptor and a NUL-terminated name.
        let fd = unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                c.as_ptr(),
                flags,
                0o644 as libc::c_uint,
            )
        };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor just opened, owned by nothing else.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    fn unlink(&self, name: &str) {
        if let Ok(c) = c_name(name) {
            // SAFETY: a valid directory descriptor and a NUL-terminated name.
            unsafe { libc::unlinkat(self.dir.as_raw_fd(), c.as_ptr(), 0) };
        }
    }

    /// Writes the page `name` with what `body` writes (through a 64 KiB
    /// buffer). On an error nothing is left at `name` that was not there.
    pub fn write(
        &self,
        name: &str,
        body: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), CliError> {
        let target = if self.replace {
            format!(".profrj-{:016x}.tmp", crate::safe_fs::random_u64())
        } else {
            name.to_owned()
        };
        let file = self.create(&target).map_err(|e| self.error(&target, e))?;
        let mut w = BufWriter::with_capacity(1 << 16, file);
        let result = body(&mut w)
            .and_then(|()| w.flush())
            .and_then(|()| self.rename_into_place(&target, name));
        result.map_err(|e| {
            self.unlink(&target);
            self.error(name, e)
        })
    }

    fn rename_into_place(&self, tmp: &str, name: &str) -> io::Result<()> {
        if tmp == name {
            return Ok(());
        }
        let (from, to) = (c_name(tmp)?, c_name(name)?);
        let fd = self.dir.as_raw_fd();
        // SAFETY: a valid directory descriptor and NUL-terminated names.
        if unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

/// File names for pages, made from hostile names: `PREFIX-NAME.html`, the
/// name's characters other than ASCII letters, digits, `.`, `_`, `$` and
/// `-` replaced by `_` (a `/` by `.`: `p/q/A.java` → `s-p.q.A.java.html`),
/// cut to 120 characters; a name changed on the way, or taken already,
/// gets `~` and a hash of the original. So a name is one path component
/// that never starts with a dot, is safe in a URL as it is, and no two
/// pages share one.
#[derive(Default)]
pub struct PageNames {
    used: HashSet<String>,
}

impl PageNames {
    pub fn name(&mut self, prefix: &str, original: &str) -> String {
        let mut clean: String = original
            .chars()
            .map(|c| match c {
                'a'..='z' | 'A'..='Z' | '0'..='9' | '.' | '_' | '$' | '-' => c,
                '/' => '.',
                _ => '_',
            })
            .take(120)
            .collect();
        let plain = clean.replace('.', "/") == original.replace('.', "/") && !clean.contains("..");
        let mut name = format!("{prefix}-{clean}.html");
        if !plain || self.used.contains(&name) {
            clean = clean.replace("..", "._");
            let mut salt = 0u64;
            loop {
                name = format!("{prefix}-{clean}~{:016x}.html", fnv1a(original, salt));
                if !self.used.contains(&name) {
                    break;
                }
                salt += 1;
            }
        }
        self.used.insert(name.clone());
        name
    }
}

/// FNV-1a, 64 bits, of `s` and a salt: a short stable tag for a name.
fn fnv1a(s: &str, salt: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes().chain(salt.to_le_bytes()) {
        h ^= b as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_names_are_one_safe_component_each() {
        let mut n = PageNames::default();
        assert_eq!(n.name("s", "p/q/A.java"), "s-p.q.A.java.html");
        assert_eq!(n.name("c", "p.q.A$Inner"), "c-p.q.A$Inner.html");
        let evil = n.name("c", "../../etc/passwd");
        assert!(evil.starts_with("c-._._._etc.passwd~"), "{evil}");
        let odd = n.name("c", "a\u{1}b<script>");
        assert!(odd.starts_with("c-a_b_script_~"), "{odd}");
        // Taken already: `p/q/A.java` and `p.q.A.java` are one clean name.
        let again = n.name("s", "p.q.A.java");
        assert!(again.starts_with("s-p.q.A.java~"), "{again}");
        let long = n.name("c", &"x".repeat(400));
        assert!(long.len() < 160, "{long}");
        for name in [evil, odd, again, long] {
            assert!(!name.contains('/') && !name.starts_with('.'));
        }
    }

    #[test]
    fn exclusive_unless_replacing_and_never_through_a_link() {
        let d = std::env::temp_dir().join(format!("profrj-outdir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let out = OutDir::open(&d.join("pages"), false).unwrap();
        out.write("a.html", |w| w.write_all(b"one")).unwrap();
        assert!(out
            .check_free(["a.html"])
            .unwrap_err()
            .to_string()
            .contains("--replace"));
        assert!(out.write("a.html", |w| w.write_all(b"two")).is_err());
        let victim = d.join("victim");
        std::fs::write(&victim, b"keep").unwrap();
        std::os::unix::fs::symlink(&victim, d.join("pages/b.html")).unwrap();
        assert!(out.write("b.html", |w| w.write_all(b"x")).is_err());
        let again = OutDir::open(&d.join("pages"), true).unwrap();
        again.check_free(["a.html", "b.html"]).unwrap();
        again.write("b.html", |w| w.write_all(b"new")).unwrap();
        assert_eq!(std::fs::read(&victim).unwrap(), b"keep");
        assert_eq!(std::fs::read(d.join("pages/b.html")).unwrap(), b"new");
        // A failing page leaves nothing behind.
        let e = again.write("c.html", |_| Err(io::Error::other("boom")));
        assert!(e.is_err());
        let left: Vec<_> = std::fs::read_dir(d.join("pages"))
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert_eq!(left.len(), 2, "{left:?}");
        std::fs::create_dir(d.join("pages/d.html")).unwrap();
        assert!(again.check_free(["d.html"]).is_err());
        std::os::unix::fs::symlink(d.join("pages"), d.join("link")).unwrap();
        let e = OutDir::open(&d.join("link"), false)
            .err()
            .unwrap()
            .to_string();
        assert!(e.contains("is a link"), "{e}");
        std::fs::remove_dir_all(&d).unwrap();
    }
}
