//! Source files: found on the `--sources` path by the relative path javac
//! lays them out at (`p/q/A.java`), read one at a time, streaming, line by
//! line, each line bounded.
//!
//! - A relative path is taken apart into components; one that is empty,
//!   `.` or `..` (a hostile class or source name) makes the file "not
//!   found": nothing outside the `--sources` directories is ever opened.
//!   Links inside them are followed (they are the user's tree); only a
//!   regular file is read (a FIFO is never waited on: opened non-blocking).
//! - A line longer than [`MAX_LINE`] bytes is cut there, and says so; the
//!   rest of it is skipped unread into memory. Bytes that are not UTF-8
//!   show as U+FFFD; control characters (but the tab) as their visible
//!   symbol (U+2400…), since HTML may not hold them raw.
//! - A file whose first block holds a NUL byte is binary: not shown.

use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The longest line shown, in bytes; longer ones are cut.
pub const MAX_LINE: usize = 4096;

/// `rel` taken apart, or `None` if a component could leave the directory.
fn components(rel: &str) -> Option<Vec<&str>> {
    let parts: Vec<&str> = rel.split('/').collect();
    let plain = parts
        .iter()
        .all(|p| !p.is_empty() && *p != "." && *p != ".." && !p.contains('\0'));
    plain.then_some(parts)
}

/// The first regular file at `rel` under one of `roots`.
pub fn find(roots: &[PathBuf], rel: &str) -> Option<(PathBuf, File)> {
    let parts = components(rel)?;
    for root in roots {
        let mut path = root.clone();
        path.extend(&parts);
        if let Ok(file) = open_regular(&path) {
            return Some((path, file));
        }
    }
    None
}

/// `path` opened for reading, if it is a regular file (never waiting on a FIFO).
pub fn open_regular(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)?;
    if !file.metadata()?.file_type().is_file() {
        return Err(io::Error::other("not a regular file"));
    }
    Ok(file)
}

/// One line as shown: its text, and whether it was cut.
pub struct Line {
    pub text: String,
    pub cut: bool,
}

/// A source's lines, one at a time, from a 64 KiB buffer.
pub struct Lines {
    input: BufReader<File>,
    bytes: Vec<u8>,
}

impl Lines {
    /// `None` when the file is binary (a NUL in its first block).
    pub fn new(file: File) -> io::Result<Option<Lines>> {
        let mut input = BufReader::with_capacity(1 << 16, file);
        if input.fill_buf()?.contains(&0) {
            return Ok(None);
        }
        Ok(Some(Lines {
            input,
            bytes: Vec::with_capacity(256),
        }))
    }

    /// The next line (without its end of line), `None` at the end.
    pub fn next_line(&mut self) -> io::Result<Option<Line>> {
        self.bytes.clear();
        let mut cut = false;
        let mut any = false;
        loop {
            let buf = self.input.fill_buf()?;
            if buf.is_empty() {
                break;
            }
            any = true;
            let (chunk, ends) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            let room = MAX_LINE - self.bytes.len();
            if chunk.len() > room {
                cut = true;
            }
            self.bytes
                .extend_from_slice(&chunk[..chunk.len().min(room)]);
            let used = ends.unwrap_or(buf.len());
            self.input.consume(used);
            if ends.is_some() {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        if self.bytes.last() == Some(&b'\r') {
            self.bytes.pop();
        }
        Ok(Some(Line {
            text: shown(&self.bytes, cut),
            cut,
        }))
    }
}

/// Bytes as text for a page: invalid UTF-8 as U+FFFD (an incomplete
/// character where a line was cut is dropped), control characters as their
/// visible symbols.
fn shown(bytes: &[u8], cut: bool) -> String {
    let mut bytes = bytes;
    if cut {
        if let Err(e) = std::str::from_utf8(bytes) {
            if e.error_len().is_none() {
                bytes = &bytes[..e.valid_up_to()];
            }
        }
    }
    String::from_utf8_lossy(bytes)
        .chars()
        .map(|c| match c {
            '\t' => '\t',
            '\0'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
            '\u{7f}' => '\u{2421}',
            '\u{80}'..='\u{9f}' => '\u{fffd}',
            c => c,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn hostile_paths_are_not_found() {
        for bad in [
            "../x.java",
            "p/../../x.java",
            "/etc/passwd",
            "p//A.java",
            "./A.java",
            "",
        ] {
            assert!(components(bad).is_none(), "{bad}");
        }
        assert_eq!(components("p/q/A.java").unwrap(), ["p", "q", "A.java"]);
    }

    #[test]
    fn lines_are_cut_and_cleaned() {
        let d = std::env::temp_dir().join(format!("profrj-src-{}", std::process::id()));
        std::fs::create_dir_all(d.join("p")).unwrap();
        let mut f = File::create(d.join("p/A.java")).unwrap();
        let long = "é".repeat(MAX_LINE); // 2 bytes each: cut mid-way
        write!(f, "a\tb\x1b[0m\r\n{long}\nlast\u{85}").unwrap();
        drop(f);
        let (path, file) = find(&[d.join("none"), d.clone()], "p/A.java").unwrap();
        assert_eq!(path, d.join("p/A.java"));
        let mut lines = Lines::new(file).unwrap().unwrap();
        let l = lines.next_line().unwrap().unwrap();
        assert_eq!((l.text.as_str(), l.cut), ("a\tb\u{241b}[0m", false));
        let l = lines.next_line().unwrap().unwrap();
        assert!(l.cut);
        assert_eq!(l.text, "é".repeat(MAX_LINE / 2));
        let l = lines.next_line().unwrap().unwrap();
        assert_eq!((l.text.as_str(), l.cut), ("last\u{fffd}", false));
        assert!(lines.next_line().unwrap().is_none());
        std::fs::write(d.join("p/B.java"), b"\x7fELF\0\0").unwrap();
        let (_, file) = find(std::slice::from_ref(&d), "p/B.java").unwrap();
        assert!(Lines::new(file).unwrap().is_none(), "binary");
        assert!(
            find(std::slice::from_ref(&d), "p").is_none(),
            "a directory is not a source"
        );
        std::fs::remove_dir_all(&d).unwrap();
    }
}
