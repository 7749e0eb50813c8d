//! OpenTelemetry profiles for profrj, in three steps that both the agent's
//! push and the CLI's `convert --to otlp` take:
//!
//! 1. a mode (or a parsed snapshot) describes its data as [`CallTrees`]:
//!    per thread, a call tree whose nodes are frame names with named
//!    weights (format-neutral: nothing here knows JVMTI or XML);
//! 2. a [`Keeper`] turns cumulative trees into the samples added since its
//!    last call (the whole tree the first time), keyed by call path; the
//!    samples of calls not yet sent fold into one ([`Samples::fold`]);
//! 3. [`Request`] encodes the samples of one or more modes as one
//!    `ExportProfilesServiceRequest` of `opentelemetry.proto.profiles.v1development`
//!    (the dictionary layout the Collector v0.148+ accepts), ready to be
//!    gzipped and POSTed to `/v1development/profiles`.
//!
//! The protobuf is written by hand ([`wire`]): the messages are few, and the
//! agent stays free of code generation. Field numbers are the proto's
//! (opentelemetry-proto as compiled into the Collector's pdata v1.71.0);
//! `tests/otlp.rs` checks every field against the real Collector.
#![deny(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod delta;
mod encode;
mod fold;
mod model;
pub mod wire;

pub use delta::{Keeper, Sample, Samples, MAX_PATHS};
pub use encode::{field, Attribute, Request, Value};
pub use model::{
    types, CallTrees, Node, ThreadTree, ValueType, Weights, MAX_WEIGHTS, NO_JAVA_FRAME,
    NO_JAVA_FRAME_ID, NO_LINE, ROOT,
};
