//! Live control on running JVMs: attach with jcmd, jattach and `profrj`, dump
//! with `kill -3`, the dump signal and `profrj dump`, stop, resume, errors.
//! Set PROFRJ_TEST_JAVA to run them on another JDK (its jcmd is used too).
//!
//! One module per topic; `target.rs` holds what they share.

mod commands;
// tests/common/, shared with the other test binaries.
#[path = "../common/mod.rs"]
mod common;
mod modes;
mod namespaces;
mod refusals;
mod signals;
mod target;
