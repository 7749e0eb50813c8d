//! The heap dump's options: when one is written unasked (`heapdumps=`),
//! where (`heapfile=`), which objects (`heapkind=`) and whether gzipped
//! (`heapgz=`). The `heapdump` command takes the last three for a one-off
//! dump; a started session keeps them for its own dumps.

use super::error::bad;
use super::values::{parse_file, parse_on_off, required};
use super::OptionError;

/// The heap dump's path template when `heapfile=` is not given.
pub const DEFAULT_HEAP_FILE: &str = "profrj-%p-%n.hprof";

/// What a heap dump is written with, and when one is written unasked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeapDumps {
    /// At the JVM's exit.
    pub at_exit: bool,
    /// With each snapshot.
    pub with_snapshot: bool,
    /// At the first OutOfMemoryError (JVMTI ResourceExhausted).
    pub on_oom: bool,
    /// Path template (%p %t %n %%); `.gz` is added when gzipped and missing.
    pub file: String,
    /// Every object, not only those alive after a full GC.
    pub all: bool,
    pub gz: bool,
}

impl Default for HeapDumps {
    fn default() -> Self {
        Self {
            at_exit: false,
            with_snapshot: false,
            on_oom: false,
            file: DEFAULT_HEAP_FILE.to_owned(),
            all: false,
            gz: false,
        }
    }
}

impl HeapDumps {
    /// Reads one of the heap options (`key` is one of them), if it is.
    /// `Ok(false)`: not a heap option.
    pub(super) fn read(&mut self, key: &str, value: Option<&str>) -> Result<bool, OptionError> {
        match key {
            "heapdumps" => self.read_when(required(key, value)?)?,
            "heapfile" => self.file = parse_file(key, required(key, value)?)?,
            "heapkind" => {
                self.all = match required(key, value)? {
                    "live" => false,
                    "all" => true,
                    v => return Err(bad(format!("bad value for {key}: '{v}' (live or all)"))),
                }
            }
            "heapgz" => self.gz = parse_on_off(key, required(key, value)?)?,
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// `exit`, `snapshot`, `oom`, joined by `+`.
    fn read_when(&mut self, v: &str) -> Result<(), OptionError> {
        for word in v.split('+') {
            match word.trim() {
                "exit" => self.at_exit = true,
                "snapshot" => self.with_snapshot = true,
                "oom" => self.on_oom = true,
                w => {
                    return Err(bad(format!(
                        "bad value for heapdumps: '{w}' (exit, snapshot or oom, several joined by +: heapdumps=oom+exit)"
                    )))
                }
            }
        }
        Ok(())
    }

    /// The template with `.gz` added when gzipped and it lacks one.
    pub fn template(&self) -> String {
        if self.gz && !self.file.ends_with(".gz") {
            format!("{}.gz", self.file)
        } else {
            self.file.clone()
        }
    }
}
