//! The agent's errors, by kind. Every fallible function of the agent, from
//! the [`crate::mode::Mode`] trait down, returns one; its text is what the
//! user reads (stderr, a command's reply file), so each variant's message
//! names what failed and, where there is one, what to do instead.

use crate::options::OptionError;
use crate::vm::sys::JvmtiError;
use crate::vm::{JavaException, Jvmti, VmError};
use std::sync::Arc;

/// What went wrong in the agent.
#[derive(Debug, Clone, thiserror::Error)]
pub enum AgentError {
    /// The options are not valid (the message names the option and the
    /// valid values).
    #[error("{0}")]
    Options(#[from] OptionError),
    /// A JVMTI function failed.
    #[error("{call}: {error}")]
    Jvmti {
        /// The function, or what the agent used it for.
        call: String,
        /// The JVMTI error's name.
        error: String,
    },
    /// A JNI call threw or failed.
    #[error("{0}")]
    Java(#[from] JavaException),
    /// The VM refused or lacks something.
    #[error(transparent)]
    Vm(#[from] VmError),
    /// This JVM lacks what is asked (a capability, an extension, room for
    /// a thread or a reference).
    #[error("{0}")]
    Unsupported(String),
    /// A file could not be written.
    #[error("{what}: {source}")]
    Io {
        /// What was being written, and where.
        what: String,
        /// Why it failed.
        #[source]
        source: Arc<std::io::Error>,
    },
    /// A command that does not fit the agent's state (already profiling,
    /// nothing to stop, a setting fixed earlier).
    #[error("{0}")]
    Refused(String),
    /// A mode's error, said with the mode's name.
    #[error("{}", named(.mode, .source))]
    Mode {
        /// The mode's name.
        mode: &'static str,
        /// What went wrong in it.
        source: Box<AgentError>,
    },
    /// The OTLP push's settings (its endpoint, headers, resource
    /// attributes, CA file) or its threads: the push is not started.
    #[error("{0}")]
    Push(String),
    /// A class the rewriter cannot rewrite, and why.
    #[error("{0}")]
    Class(String),
    /// A bug: a state the agent's own code should never reach.
    #[error("internal error: {0}")]
    Internal(String),
}

impl AgentError {
    /// A JVMTI function's failure, with its error's name.
    pub fn jvmti(jvmti: Jvmti, call: impl Into<String>, e: JvmtiError) -> Self {
        AgentError::Jvmti {
            call: call.into(),
            error: jvmti.error_name(e),
        }
    }

    /// This error as one of mode `mode`.
    pub fn in_mode(self, mode: &'static str) -> Self {
        match self {
            AgentError::Mode { .. } => self,
            e => AgentError::Mode {
                mode,
                source: Box::new(e),
            },
        }
    }
}

/// `e` prefixed with the mode's name, unless it names the mode already.
fn named(mode: &str, e: &AgentError) -> String {
    let text = e.to_string();
    if text.starts_with(mode) {
        text
    } else {
        format!("{mode}: {text}")
    }
}

/// A file that could not be written: what, and why.
pub fn io(what: impl Into<String>, source: std::io::Error) -> AgentError {
    AgentError::Io {
        what: what.into(),
        source: Arc::new(source),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_modes_error_names_the_mode_once() {
        let e = AgentError::Unsupported("no JVMTI environment".into()).in_mode("memory");
        assert_eq!(e.to_string(), "memory: no JVMTI environment");
        let e =
            AgentError::Unsupported("memory: tracker=weak cannot be used".into()).in_mode("memory");
        assert_eq!(e.to_string(), "memory: tracker=weak cannot be used");
    }
}
