//! `profrj convert SNAPSHOT --to collapsed|pprof`: a call section in the
//! formats other tools read. `collapsed.rs`: one line per stack
//! (flamegraph.pl, inferno, speedscope); `pprof.rs`: pprof's gzipped
//! protobuf, encoded by `proto.rs`.

mod collapsed;
mod pprof;
mod proto;

pub use collapsed::collapsed;
pub use pprof::pprof;

use crate::snapshot::{read_file, CallKind, Metric};
use std::path::PathBuf;

#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Format {
    /// `frame;frame;frame count` per line, root first.
    Collapsed,
    /// pprof's profile.proto, gzipped.
    Pprof,
}

#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum CallSectionArg {
    Sampler,
    Profile,
}

impl CallSectionArg {
    pub fn kind(self) -> CallKind {
        match self {
            CallSectionArg::Sampler => CallKind::Sampler,
            CallSectionArg::Profile => CallKind::Profile,
        }
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// Snapshot (XML) written by the agent.
    snapshot: PathBuf,
    /// Output format.
    #[arg(long, value_enum)]
    to: Format,
    /// Output file (default: standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Call section [default: sampler if present, else profile].
    #[arg(long, value_enum)]
    section: Option<CallSectionArg>,
    /// Only this thread (every thread of that name); default: all threads.
    #[arg(long)]
    thread: Option<String>,
    /// Collapsed: the count of a stack. cpu = sampler RUNNABLE samples (hits) /
    /// profile CPU µs (method); wall = sampler all samples (elapsed) / profile
    /// wall µs (methodElapsed); calls = profile calls (count). pprof carries
    /// every value; this picks its default sample type.
    #[arg(long, value_enum, default_value_t)]
    metric: Metric,
    /// Collapsed: start each stack with a `[thread name]` frame (else threads are merged).
    #[arg(long)]
    thread_frames: bool,
}

pub fn run(args: Args) -> Result<(), String> {
    let snap = read_file(&args.snapshot)?;
    let sec = snap.call_section(args.section.map(CallSectionArg::kind))?;
    args.metric.check(sec.kind)?;
    let threads = sec.select(args.thread.as_deref())?;
    let bytes = match args.to {
        Format::Collapsed => collapsed(
            &snap.names,
            sec.kind,
            &threads,
            args.metric,
            args.thread_frames,
        )
        .into_bytes(),
        Format::Pprof => pprof(&snap.names, sec.kind, &threads, args.metric, &args.snapshot)?,
    };
    crate::output::write(args.output.as_deref(), &bytes)
}
