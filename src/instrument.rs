//! `profrj instrument`: runs the bytecode rewriter over a jar without a JVM.

#[derive(clap::Args)]
pub struct Args {
    /// Input jar or class file.
    input: std::path::PathBuf,
}

pub fn run(args: Args) -> Result<(), String> {
    Err(format!(
        "instrument: not implemented yet (input {})",
        args.input.display()
    ))
}
