//! libprofrj.so, the profrj JVMTI agent.
//!
//! Layout: `entry` holds every function the VM calls (thin, each behind the
//! panic guard); `agent` the lifecycle; `vm` every raw JVMTI/JNI call; one
//! module per profiling mode (`sampler`, `profile`, `coverage`, `memory`), `instrument` rewrites classes for
//! the instrumenting modes; `snapshot` writes the XML.

mod agent;
mod alloc;
mod calltree;
mod clock;
mod control;
mod coverage;
mod entry;
mod instrument;
mod log;
mod memory;
mod methods;
mod modes;
mod options;
mod profile;
mod sampler;
mod session;
mod snapshot;
mod threads;
mod vm;
mod xml;
