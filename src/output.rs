//! Writing a command's result to a file or to standard output. A file is
//! written through a temporary file renamed into place, never through a link
//! and never into a FIFO or device (`safe_fs`). A closed pipe
//! (`profrj report … | head`) is not an error.

use crate::safe_fs;
use std::io::{ErrorKind, Write};
use std::path::Path;

pub fn write(path: Option<&Path>, bytes: &[u8]) -> Result<(), String> {
    match path {
        Some(p) => safe_fs::write_atomically(p, bytes),
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(bytes).and_then(|()| out.flush()) {
                Err(e) if e.kind() != ErrorKind::BrokenPipe => Err(format!("standard output: {e}")),
                _ => Ok(()),
            }
        }
    }
}
