//! `profrj`: the command-line side of the profiler.
#![deny(missing_docs)]
#![warn(
    unsafe_op_in_unsafe_fn,
    clippy::undocumented_unsafe_blocks,
    clippy::missing_safety_doc
)]

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod attach;
mod convert;
mod diff;
mod error;
mod flame;
mod heap;
mod heapread;
mod hprof_text;
mod instrument;
mod live;
mod merge;
mod output;
mod printable;
mod report;
mod safe_fs;
mod scratch;
mod selection;
mod snapshot;
mod sort;
#[cfg(test)]
mod test_dump;

#[derive(Parser)]
#[command(
    name = "profrj",
    version,
    about = "profrj: a JVMTI profiler for Java, written in Rust"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Rewrite the classes of a jar (or a directory of classes) offline, as the agent would.
    Instrument(instrument::Args),
    /// Start profiling in a running JVM (loads the agent through the attach API).
    Attach(live::AttachArgs),
    /// Write a snapshot now; profiling goes on.
    Dump(live::DumpArgs),
    /// Write a heap dump now (HPROF binary): objects the memory mode followed name their allocation site and thread.
    Heapdump(live::HeapDumpArgs),
    /// Stop profiling and write a snapshot (resume continues it).
    Stop(live::PidArgs),
    /// Continue a stopped profile.
    Resume(live::PidArgs),
    /// Show what the agent in a JVM is doing.
    Status(live::PidArgs),
    /// Print a snapshot's top methods (HPROF CPU SAMPLES style), live objects or coverage; or a heap dump's classes, retainers and allocation sites.
    Report(report::Args),
    /// Write a snapshot as one self-contained HTML page: flame graph, tables, coverage.
    Flame(flame::Args),
    /// Write a snapshot for other tools: collapsed stacks, pprof, LCOV, Cobertura, HPROF text.
    Convert(convert::Args),
    /// Compare two snapshots (which methods got hotter or colder) or two heap dumps (what grew, by class, site and retaining path).
    Diff(diff::Args),
    /// Sum the snapshots of several JVMs (coverage, call trees) into one: `merge A.xml B.xml -o ALL.xml`.
    Merge(merge::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Instrument(args) => instrument::run(args),
        Command::Attach(a) => live::send(&a.target, &a.options),
        Command::Dump(a) => match &a.file {
            Some(f) => live::send(&a.target, &format!("dump,file={f}")),
            None => live::send(&a.target, "dump"),
        },
        Command::Heapdump(a) => a
            .command()
            .and_then(|(target, options)| live::send(&target, &options)),
        Command::Stop(a) => live::send(&a, "stop"),
        Command::Resume(a) => live::send(&a, "resume"),
        Command::Status(a) => live::send(&a, "status"),
        Command::Report(a) => report::run(a),
        Command::Flame(a) => flame::run(a),
        Command::Convert(a) => convert::run(a),
        Command::Diff(a) => diff::run(a),
        Command::Merge(a) => merge::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("profrj: {msg}");
            ExitCode::FAILURE
        }
    }
}
