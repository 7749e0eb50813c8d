//! Why bytes were refused as HPROF, and where: every error names the
//! absolute file offset at which the parser stopped.

use std::fmt;

/// What went wrong, at which absolute byte offset of the file. The message
/// (`Display`) is `byte OFFSET: WHAT`, what the CLI prints.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// The input ends inside something that must be whole: the header, a
    /// record, a sub-record, a heap-dump segment.
    Truncated {
        /// Where the cut thing starts.
        offset: u64,
        /// What was cut.
        message: String,
    },
    /// Bytes that are not HPROF: a bad magic, an unknown sub-record tag, a
    /// length or count that runs past its record, segment or file, a basic
    /// type that does not exist.
    Malformed {
        /// Where the bad bytes are.
        offset: u64,
        /// What is wrong with them.
        message: String,
    },
    /// HPROF the parser does not read: another format version, an id size
    /// other than 4 or 8.
    Unsupported {
        /// Where the header says so.
        offset: u64,
        /// What is not supported.
        message: String,
    },
    /// A part that must be held whole (a CLASS_DUMP) is larger than the
    /// parser's bound.
    OverLimit {
        /// Where it starts.
        offset: u64,
        /// What went over.
        message: String,
    },
    /// The caller handed bytes at another offset than the one the scanner
    /// stands at (a body not skipped, a buffer refilled wrongly).
    Position {
        /// The offset the caller gave.
        offset: u64,
        /// The offset the scanner expected.
        expected: u64,
    },
}

impl Error {
    /// The absolute file offset where parsing stopped.
    pub fn offset(&self) -> u64 {
        match self {
            Error::Truncated { offset, .. }
            | Error::Malformed { offset, .. }
            | Error::Unsupported { offset, .. }
            | Error::OverLimit { offset, .. }
            | Error::Position { offset, .. } => *offset,
        }
    }

    pub(crate) fn truncated(offset: u64, message: impl Into<String>) -> Error {
        Error::Truncated {
            offset,
            message: message.into(),
        }
    }

    pub(crate) fn malformed(offset: u64, message: impl Into<String>) -> Error {
        Error::Malformed {
            offset,
            message: message.into(),
        }
    }

    pub(crate) fn unsupported(offset: u64, message: impl Into<String>) -> Error {
        Error::Unsupported {
            offset,
            message: message.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "byte {}: ", self.offset())?;
        match self {
            Error::Truncated { message, .. }
            | Error::Malformed { message, .. }
            | Error::Unsupported { message, .. }
            | Error::OverLimit { message, .. } => f.write_str(message),
            Error::Position { expected, .. } => write!(
                f,
                "bytes handed at this offset, but the scanner stands at byte {expected} \
                 (was the last item's body skipped?)"
            ),
        }
    }
}

impl std::error::Error for Error {}
