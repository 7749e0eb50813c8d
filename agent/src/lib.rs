//! libprofrj.so, the profrj JVMTI agent.
//!
//! Layout: `entry` holds every function the VM calls (thin, each behind the
//! panic guard); `agent` the lifecycle; `vm` every raw JVMTI/JNI call; one
//! module per profiling mode (`sampler`, `profile`, `coverage`, `memory`), `instrument` rewrites classes for
//! the instrumenting modes; `snapshot` writes the XML.
//!
//! Unsafe code: every `unsafe` block says why it holds (`// SAFETY:`), and
//! every `unsafe fn` what its caller must uphold (`# Safety`, private ones
//! too: `clippy.toml`). The lints below make CI (clippy `-D warnings`)
//! enforce both; `vm` says where the unsafety lives.
#![warn(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc,
    clippy::unnecessary_safety_comment,
    clippy::unnecessary_safety_doc
)]

mod agent;
mod alloc;
mod calltree;
mod clock;
mod control;
mod coverage;
mod entry;
mod indent;
mod instrument;
mod jfr;
mod lock;
mod log;
mod memory;
mod methods;
mod modes;
mod options;
mod otlp;
mod profile;
mod sampler;
mod session;
mod snapshot;
mod threads;
mod trace;
mod tsc;
mod vm;
mod writer_stats;
mod xml;
