//! Writing a command's result to a file or to standard output. A file is
//! written through a temporary file renamed into place, never through a link
//! and never into a FIFO or device (`safe_fs`). A closed pipe
//! (`profrj report … | head`) is not an error. [`stream`] writes the result
//! as it is produced, so a converter never holds its whole output.

use crate::error::CliError;
use crate::safe_fs;
use std::io::{self, BufWriter, ErrorKind, Write};
use std::path::Path;

pub fn write(path: Option<&Path>, bytes: &[u8]) -> Result<(), CliError> {
    stream(path, |w| w.write_all(bytes))
}

/// What `body` writes, to `path` (atomically) or to standard output, through
/// a 64 KiB buffer.
pub fn stream(
    path: Option<&Path>,
    body: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> Result<(), CliError> {
    match path {
        Some(p) => safe_fs::write_atomically_with(p, body),
        None => {
            let mut out = BufWriter::with_capacity(1 << 16, io::stdout().lock());
            match body(&mut out).and_then(|()| out.flush()) {
                Err(e) if e.kind() != ErrorKind::BrokenPipe => {
                    Err(CliError::Output(format!("standard output: {e}")))
                }
                _ => Ok(()),
            }
        }
    }
}
