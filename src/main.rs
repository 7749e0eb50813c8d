//! `profrj`: the command-line side of the profiler.

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod instrument;

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
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Instrument(args) => instrument::run(args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("profrj: {msg}");
            ExitCode::FAILURE
        }
    }
}
