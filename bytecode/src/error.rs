use std::fmt;

/// Malformed input: where (byte offset in the class file) and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// Byte offset of the malformed item: in the class file, or in the
    /// attribute body being decoded (`decode_code`, `decode_frames`).
    pub offset: usize,
    /// What is wrong there, for a message.
    pub reason: String,
}

impl ReadError {
    /// An error at `offset`.
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
