//! libprofrj.so, the profrj JVMTI agent.
//!
//! Layout (docs/ARCHITECTURE.md): `entry` holds every function the VM
//! calls (thin, each behind the panic guard); `agent` the lifecycle;
//! `session` the commands; `registry` the list of modes; one folder per
//! mode (`sampler`, `profile`, `memory`, `coverage`, `alloc`, `lock`,
//! `trace`), each importing only the core: `mode` (what a mode is), `host`
//! (what it sees of the agent), `events`, `per_thread`, `states`, `model`
//! (a snapshot in no format, which `xml` writes), `instrument` (the class
//! rewriter), `vm` (every raw JVMTI/JNI call) and the rest.
//!
//! Unsafe code: every `unsafe` block says why it holds (`// SAFETY:`), and
//! every `unsafe fn` what its caller must uphold (`# Safety`, private ones
//! too: `clippy.toml`). The lints below make CI (clippy `-D warnings`)
//! enforce both; `vm` says where the unsafety lives.
#![deny(missing_docs)]
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
mod code_map;
mod control;
mod coverage;
mod entry;
mod error;
mod escape;
mod events;
mod fold_ended;
mod heap_dump;
mod host;
mod instrument;
mod jfr;
mod lock;
mod log;
mod memory;
mod methods;
mod mode;
mod model;
mod native;
mod options;
mod otlp;
mod per_thread;
mod profile;
mod published;
mod registry;
mod sampler;
mod session;
mod sites;
mod snapshot;
mod stack;
mod states;
mod threads;
#[cfg(test)]
mod toy_mode;
mod trace;
mod tsc;
mod vm;
mod vthreads;
mod writer_stats;
mod xml;
