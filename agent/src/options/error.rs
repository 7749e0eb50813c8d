//! An option's error and the messages the modes' checks share. Apart so
//! that the wording every bad option gets (it names the option and its valid
//! values) is found in one place.

use super::Options;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OptionError(pub String);

impl fmt::Display for OptionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for OptionError {}

pub(super) fn bad(msg: String) -> OptionError {
    OptionError(msg)
}

/// "bad value for KEY: 'V' (WHY)".
pub fn bad_value(key: &str, v: &str, why: &str) -> OptionError {
    bad(format!("bad value for {key}: '{v}' ({why})"))
}

/// A mode's setting given without its mode: `option` belongs to `mode`,
/// and `example` shows both.
pub fn belongs_to(o: &Options, option: &str, mode: &str, example: &str) -> Result<(), OptionError> {
    if o.given(option) && !o.given(mode) {
        return Err(bad(format!(
            "option '{option}' belongs to {mode}: give {example}"
        )));
    }
    Ok(())
}
