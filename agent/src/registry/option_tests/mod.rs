//! The option string, parsed against the agent's options and every
//! registered mode's (the parser's one table): here, since only the
//! registry knows every mode's options. `agent_options.rs` holds the
//! agent's own options, the commands and the table itself;
//! `mode_options.rs` each mode's.

use crate::options::{OptionError, Options};
use std::time::Duration;

mod agent_options;
mod mode_options;

fn parse(s: &str) -> Result<Options, OptionError> {
    super::parse_options(Some(s))
}

/// Every option, the agent's and the modes'.
fn all() -> Vec<&'static crate::options::Opt> {
    crate::options::all_options(&super::mode_options())
}

fn interval(o: &Options) -> Duration {
    crate::sampler::mode::interval(o)
}
