//! The command-line tool's errors, by kind. Their text is what `profrj`
//! prints after `profrj: `, so each says what failed and, where there is
//! one, what to do instead.

/// What went wrong in a `profrj` command.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Arguments that do not fit the input (a section, thread or metric the
    /// snapshot lacks, a bad value).
    #[error("{0}")]
    Usage(String),
    /// An input that cannot be read, or is not what it claims (a snapshot,
    /// a class file, a jar).
    #[error("{0}")]
    Input(String),
    /// An output that cannot be written.
    #[error("{0}")]
    Output(String),
    /// The target JVM or its attach listener: not found, not the user's,
    /// refusing, silent.
    #[error("{0}")]
    Attach(String),
    /// The agent answered the command with an error.
    #[error("{0}")]
    Agent(String),
}

impl From<CliError> for std::io::Error {
    /// For readers and writers behind `io::Write`/`io::Read` (the sorter,
    /// the scratch files) whose callers speak `io::Error`.
    fn from(e: CliError) -> std::io::Error {
        std::io::Error::other(e.to_string())
    }
}
