//! Paths inside a JVM's root, resolved as the JVM resolves them.
//!
//! A JVM in a container is reached through `/proc/<pid>/root`, but a path
//! below it is resolved by the host's kernel for us: an absolute link inside
//! the container (its `/tmp` → `/etc`) would be followed against the
//! host's root, and a root `profrj` would make its files in a host directory
//! the container chose. So every path here is resolved inside that root, as
//! if chrooted there: with `openat2(RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS)`
//! (Linux 5.6+), or, where the kernel lacks it (or a seccomp filter hides
//! it), by a walk of our own that opens one component at a time without
//! following anything, restarts an absolute link's target at the JVM's root
//! and never lets `..` climb above it. Then every file is made, read or
//! removed relative to the directory found (`*at` calls, `O_NOFOLLOW`).

use crate::error::CliError;
use std::ffi::CString;
use std::fs::{File, Metadata};
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// The most links one path may go through (the kernel's own limit).
const MAX_LINKS: usize = 40;

/// A JVM's root directory, open.
pub struct JvmRoot {
    fd: OwnedFd,
    /// `/proc/<pid>/root`, for messages.
    shown: String,
}

/// A directory inside a JVM's root, open.
pub struct Dir {
    fd: OwnedFd,
    /// The directory as the JVM names it (`/tmp`).
    jvm_path: String,
}

/// `struct open_how` of `linux/openat2.h` (libc's is non-exhaustive).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

impl JvmRoot {
    pub fn open(pid: i32) -> Result<Self, CliError> {
        // The magic link is followed here, once, on purpose: it is the JVM's root.
        Self::at(&format!("/proc/{pid}/root"))
    }

    fn at(path: &str) -> Result<Self, CliError> {
        let fd = open_at(None, path, libc::O_PATH | libc::O_DIRECTORY)
            .map_err(|e| CliError::Attach(format!("cannot open the JVM's root {path}: {e}")))?;
        Ok(Self {
            fd,
            shown: path.to_owned(),
        })
    }

    /// The root's device and inode (to tell whether it is ours).
    pub fn metadata(&self) -> io::Result<Metadata> {
        metadata_of(&self.fd)
    }

    /// The directory `jvm_path` (absolute, as the JVM names it), resolved
    /// inside the JVM's root. The error says which component failed and
    /// through which links.
    pub fn dir(&self, jvm_path: &str) -> Result<Dir, CliError> {
        let resolved = match open_in_root(self.fd.as_fd(), jvm_path) {
            Err(e) if kernel_lacks_openat2(&e) => walk(self.fd.as_fd(), jvm_path),
            Err(e) => Err(walk(self.fd.as_fd(), jvm_path).err().unwrap_or(Failure {
                error: e,
                at: jvm_path.to_owned(),
                links: Vec::new(),
            })),
            Ok(fd) => Ok(fd),
        };
        resolved
            .map(|fd| Dir {
                fd,
                jvm_path: jvm_path.to_owned(),
            })
            .map_err(|f| CliError::Attach(f.describe(jvm_path, &self.shown)))
    }
}

impl Dir {
    /// A directory reached through a path of our own (the JVM's working
    /// directory, `/proc/<pid>/cwd`, a magic link to the directory itself).
    pub fn open_host(path: &Path, jvm_path: &str) -> io::Result<Self> {
        let path = path
            .to_str()
            .ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput))?;
        Ok(Self {
            fd: open_at(None, path, libc::O_PATH | libc::O_DIRECTORY)?,
            jvm_path: jvm_path.to_owned(),
        })
    }

    /// `name` in this directory as the JVM names it.
    pub fn jvm_path(&self, name: &str) -> String {
        format!("{}/{name}", self.jvm_path.trim_end_matches('/'))
    }

    /// The directory's own type, owner and mode.
    pub fn metadata(&self) -> io::Result<Metadata> {
        metadata_of(&self.fd)
    }

    /// What `name` is (a link is described, not followed).
    pub fn entry(&self, name: &str) -> io::Result<Metadata> {
        metadata_of(&self.entry_fd(name)?)
    }

    /// `name` opened without following it, for a later `/proc/self/fd/N`
    /// (a socket's path for connect(), which would follow a link).
    pub fn entry_fd(&self, name: &str) -> io::Result<OwnedFd> {
        open_at(Some(self.fd.as_fd()), name, libc::O_PATH | libc::O_NOFOLLOW)
    }

    /// Creates the file `name` exclusively (never through a link).
    pub fn create_new(&self, name: &str, mode: u32) -> io::Result<File> {
        let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW;
        open_at_mode(Some(self.fd.as_fd()), name, flags, mode).map(File::from)
    }

    /// Makes the directory `name` (fails if anything is there).
    pub fn make_dir(&self, name: &str, mode: u32) -> io::Result<()> {
        let c = c_name(name)?;
        // SAFETY: an open directory descriptor and a NUL-terminated name.
        let rc = unsafe { libc::mkdirat(self.fd.as_raw_fd(), c.as_ptr(), mode) };
        cvt(rc).map(drop)
    }

    /// The directory `name`, only if it is a directory (not a link to one).
    pub fn sub_dir(&self, name: &str) -> io::Result<Dir> {
        let flags = libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW;
        Ok(Dir {
            fd: open_at(Some(self.fd.as_fd()), name, flags)?,
            jvm_path: self.jvm_path(name),
        })
    }

    /// At most `limit` bytes of `name`, only if it is a regular file of
    /// `owner` (opened without following a link, and without blocking on a
    /// FIFO).
    pub fn read_owned(&self, name: &str, owner: u32, limit: u64) -> Result<Vec<u8>, CliError> {
        let shown = self.jvm_path(name);
        let flags = libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK;
        let file = open_at(Some(self.fd.as_fd()), name, flags)
            .map(File::from)
            .map_err(|e| CliError::Attach(format!("{shown}: {e}")))?;
        crate::safe_fs::read_checked(file, Path::new(&shown), owner, limit)
    }

    /// Writes `bytes` to `name` through a fresh, exclusively created file
    /// renamed into place (a link at `name` is replaced, not followed).
    pub fn write_atomically(&self, name: &str, bytes: &[u8]) -> Result<(), CliError> {
        let tmp = format!(".profrj-{:016x}.tmp", crate::safe_fs::random_u64());
        let result = (|| {
            let mut f = self.create_new(&tmp, 0o644)?;
            f.write_all(bytes)?;
            f.sync_all()?;
            let (from, to) = (c_name(&tmp)?, c_name(name)?);
            let fd = self.fd.as_raw_fd();
            // SAFETY: one open directory and two NUL-terminated names.
            cvt(unsafe { libc::renameat(fd, from.as_ptr(), fd, to.as_ptr()) }).map(drop)
        })();
        if result.is_err() {
            let _ = self.remove(&tmp);
        }
        result.map_err(|e| CliError::Attach(format!("{}: {e}", self.jvm_path(name))))
    }

    /// Removes the file (or link) `name`.
    pub fn remove(&self, name: &str) -> io::Result<()> {
        self.unlink(name, 0)
    }

    fn unlink(&self, name: &str, flags: libc::c_int) -> io::Result<()> {
        let c = c_name(name)?;
        // SAFETY: an open directory descriptor and a NUL-terminated name.
        cvt(unsafe { libc::unlinkat(self.fd.as_raw_fd(), c.as_ptr(), flags) }).map(drop)
    }

    /// A fresh directory `.profrj-<random>` of mode 0700 in this one,
    /// removed with what is in it when dropped.
    pub fn private_dir(&self) -> io::Result<PrivateDir> {
        let name = format!(".profrj-{:016x}", crate::safe_fs::random_u64());
        self.make_dir(&name, 0o700)?;
        let dir = self.sub_dir(&name)?;
        Ok(PrivateDir {
            parent: self.try_clone()?,
            name,
            dir,
        })
    }

    fn try_clone(&self) -> io::Result<Dir> {
        Ok(Dir {
            fd: self.fd.try_clone()?,
            jvm_path: self.jvm_path.clone(),
        })
    }

    /// `/proc/self/fd/N`: a path that reaches this very directory.
    fn fd_path(&self) -> PathBuf {
        fd_path(&self.fd)
    }
}

/// A path that reaches what `fd` is open on, whatever its name.
pub fn fd_path(fd: &OwnedFd) -> PathBuf {
    PathBuf::from(format!("/proc/self/fd/{}", fd.as_raw_fd()))
}

/// A directory only we made, removed (with its files) when dropped.
pub struct PrivateDir {
    parent: Dir,
    name: String,
    pub dir: Dir,
}

impl Drop for PrivateDir {
    fn drop(&mut self) {
        if let Ok(entries) = std::fs::read_dir(self.dir.fd_path()) {
            for entry in entries.flatten() {
                if let Some(name) = entry.file_name().to_str() {
                    let _ = self.dir.remove(name);
                }
            }
        }
        let _ = self.parent.unlink(&self.name, libc::AT_REMOVEDIR);
    }
}

/// Why a path could not be resolved: the component that failed and the
/// links followed on the way.
struct Failure {
    error: io::Error,
    at: String,
    links: Vec<String>,
}

impl Failure {
    fn describe(&self, jvm_path: &str, root: &str) -> String {
        let mut text = if self.at == jvm_path {
            format!("the JVM's {jvm_path}: {}", self.error)
        } else {
            format!("the JVM's {jvm_path}: {}: {}", self.at, self.error)
        };
        if !self.links.is_empty() {
            text.push_str(&format!(
                " (through {}; links resolve inside the JVM's root {root}, never on this host)",
                self.links.join(", ")
            ));
        }
        text
    }
}

/// ENOSYS: a kernel before 5.6; EPERM: a seccomp filter (some container
/// runtimes') that refuses system calls it does not know.
fn kernel_lacks_openat2(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM))
}

fn open_in_root(root: BorrowedFd, path: &str) -> io::Result<OwnedFd> {
    let c = c_name(path)?;
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_MAGICLINKS,
    };
    // EAGAIN: a rename raced the resolution of a `..`; the kernel asks to retry.
    let mut tries = 0;
    loop {
        // SAFETY: an open directory, a NUL-terminated path and an open_how of the size given.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                root.as_raw_fd(),
                c.as_ptr(),
                &how as *const OpenHow,
                std::mem::size_of::<OpenHow>(),
            )
        };
        if fd >= 0 {
            // SAFETY: a descriptor the kernel just gave us, owned by nothing else.
            return Ok(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) });
        }
        let e = io::Error::last_os_error();
        tries += 1;
        if e.raw_os_error() != Some(libc::EAGAIN) || tries == 3 {
            return Err(e);
        }
    }
}

/// Resolves the directory `path` inside `root` one component at a time,
/// following nothing: a link's target is read and walked in its place (an
/// absolute one from `root`), and `..` goes back up the directories walked,
/// never above `root`.
fn walk(root: BorrowedFd, path: &str) -> Result<OwnedFd, Failure> {
    let mut dirs: Vec<(OwnedFd, String)> = Vec::new();
    let mut todo: Vec<String> = components(path);
    let mut links = Vec::new();
    while let Some(name) = todo.pop() {
        if name == ".." {
            dirs.pop();
            continue;
        }
        let here = |dirs: &[(OwnedFd, String)]| -> String {
            let mut p: String = dirs.iter().map(|(_, n)| format!("/{n}")).collect();
            p.push('/');
            p.push_str(&name);
            p
        };
        let fail = |error, dirs: &[(OwnedFd, String)], links: &Vec<String>| Failure {
            error,
            at: here(dirs),
            links: links.clone(),
        };
        let at = dirs.last().map_or(root, |(fd, _)| fd.as_fd());
        let fd = match open_at(Some(at), &name, libc::O_PATH | libc::O_NOFOLLOW) {
            Ok(fd) => fd,
            Err(e) => return Err(fail(e, &dirs, &links)),
        };
        let kind = match metadata_of(&fd) {
            Ok(m) => m.file_type(),
            Err(e) => return Err(fail(e, &dirs, &links)),
        };
        if kind.is_symlink() {
            let target = match read_link(&fd) {
                Ok(t) => t,
                Err(e) => return Err(fail(e, &dirs, &links)),
            };
            links.push(format!("{} -> {target}", here(&dirs)));
            if links.len() > MAX_LINKS {
                return Err(fail(
                    io::Error::from_raw_os_error(libc::ELOOP),
                    &dirs,
                    &links,
                ));
            }
            if target.starts_with('/') {
                dirs.clear();
            }
            todo.extend(components(&target));
        } else if kind.is_dir() {
            dirs.push((fd, name));
        } else {
            return Err(fail(
                io::Error::from_raw_os_error(libc::ENOTDIR),
                &dirs,
                &links,
            ));
        }
    }
    match dirs.pop() {
        Some((fd, _)) => Ok(fd),
        None => root.try_clone_to_owned().map_err(|error| Failure {
            error,
            at: "/".into(),
            links,
        }),
    }
}

/// A path's components, last first (a stack to pop), without `.` or empties.
fn components(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|c| !c.is_empty() && *c != ".")
        .rev()
        .map(str::to_owned)
        .collect()
}

/// The target of the link `fd` (opened with `O_PATH | O_NOFOLLOW`).
fn read_link(fd: &OwnedFd) -> io::Result<String> {
    let mut buf = vec![0u8; libc::PATH_MAX as usize];
    // SAFETY: an open descriptor, an empty NUL-terminated path (the link
    // itself) and a buffer of the length given.
    let n = unsafe {
        libc::readlinkat(
            fd.as_raw_fd(),
            c"".as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    buf.truncate(n as usize);
    String::from_utf8(buf).map_err(|_| io::Error::from(io::ErrorKind::InvalidData))
}

fn metadata_of(fd: &OwnedFd) -> io::Result<Metadata> {
    // fstat works on O_PATH descriptors (Linux 3.6+).
    File::from(fd.try_clone()?).metadata()
}

fn open_at(dir: Option<BorrowedFd>, name: &str, flags: libc::c_int) -> io::Result<OwnedFd> {
    open_at_mode(dir, name, flags, 0)
}

fn open_at_mode(
    dir: Option<BorrowedFd>,
    name: &str,
    flags: libc::c_int,
    mode: u32,
) -> io::Result<OwnedFd> {
    let c = c_name(name)?;
    let dirfd = dir.map_or(libc::AT_FDCWD, |d| d.as_raw_fd());
    // SAFETY: an open directory (or AT_FDCWD) and a NUL-terminated name; the
    // mode is read only with O_CREAT.
    let fd = unsafe { libc::openat(dirfd, c.as_ptr(), flags | libc::O_CLOEXEC, mode) };
    // SAFETY: a descriptor the kernel just gave us, owned by nothing else.
    cvt(fd).map(|fd| unsafe { OwnedFd::from_raw_fd(fd) })
}

fn c_name(name: &str) -> io::Result<CString> {
    CString::new(name).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
}

fn cvt(rc: libc::c_int) -> io::Result<libc::c_int> {
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(rc)
    }
}

#[cfg(test)]
#[path = "jvm_root_tests.rs"]
mod tests;
