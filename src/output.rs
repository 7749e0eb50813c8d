//! Writing a command's result to a file or to standard output. A closed pipe
//! (`profrj report … | head`) is not an error.

use std::io::{ErrorKind, Write};
use std::path::Path;

pub fn write(path: Option<&Path>, bytes: &[u8]) -> Result<(), String> {
    match path {
        Some(p) => std::fs::write(p, bytes).map_err(|e| format!("{}: {e}", p.display())),
        None => {
            let mut out = std::io::stdout().lock();
            match out.write_all(bytes).and_then(|()| out.flush()) {
                Err(e) if e.kind() != ErrorKind::BrokenPipe => Err(format!("standard output: {e}")),
                _ => Ok(()),
            }
        }
    }
}
