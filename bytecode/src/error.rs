use std::fmt;

/// Malformed input: where (byte offset in the class file) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    pub offset: usize,
    pub reason: String,
}

impl ReadError {
    pub fn new(offset: usize, reason: impl Into<String>) -> Self {
        Self {
            offset,
            reason: reason.into(),
        }
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "malformed class file at byte {}: {}",
            self.offset, self.reason
        )
    }
}

impl std::error::Error for ReadError {}
