//! todo
#[derive(clap::Args)]
pub struct Args {}
pub fn run(_a: Args) -> Result<(), String> { Err("todo".into()) }
