//! `profrj convert SNAPSHOT --to collapsed|pprof`: a call-tree section in the
//! formats other tools read. `collapsed.rs`: one line per stack
//! (flamegraph.pl, inferno, speedscope); `pprof.rs`: pprof's gzipped
//! protobuf, encoded by `proto.rs`.

mod collapsed;
mod pprof;
mod proto;

pub use collapsed::collapsed;
pub use pprof::pprof;

use crate::selection::Selection;
use crate::snapshot::{read_file, CallKind, Metric};
use std::path::PathBuf;

#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Format {
    /// `frame;frame;frame count` per line, root first.
    Collapsed,
    /// pprof's profile.proto, gzipped.
    Pprof,
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
    /// The call section, its threads, and the weight (collapsed: a stack's
    /// count; pprof carries every value and `--metric` picks its default
    /// sample type).
    #[command(flatten)]
    select: Selection<CallKind>,
    /// Collapsed: start each stack with a `[thread name]` frame (else threads are merged).
    #[arg(long)]
    thread_frames: bool,
}

pub fn run(args: Args) -> Result<(), String> {
    let snap = read_file(&args.snapshot)?;
    let sec = snap.call_section(args.select.section)?;
    let metric = Metric::of(sec.kind, args.select.metric)?;
    let threads = sec.select(args.select.thread())?;
    let bytes = match args.to {
        Format::Collapsed => {
            collapsed(&snap.names, &threads, metric, args.thread_frames).into_bytes()
        }
        Format::Pprof => pprof(&snap.names, sec, &threads, metric, &args.snapshot)?,
    };
    crate::output::write(args.output.as_deref(), &bytes)
}
