//! `profrj merge A.xml B.xml … -o ALL.xml`: the snapshots of several JVMs
//! (a build's forked test JVMs) summed into one, exactly:
//!
//! - `<coverage>` (`coverage.rs`): per class, per method, the calls and
//!   each footprint cell summed; `<branches>` outcome by outcome;
//!   `<instructions>` where the union of what ran is known. Classes are
//!   told apart by `id` (JaCoCo's class id): two different classes of one
//!   name are refused.
//! - The call-tree sections (`calls.rs`): `<sampler>`, `<profile>`,
//!   `<alloc>`, `<lock>`: the threads of one name merged into one thread,
//!   node figures summed path by path.
//! - What cannot be summed is left out, each with a warning: `<memory>`
//!   and `<sites>` (a peak, `max`, of separate JVMs is no peak of theirs
//!   together), `<lock>`'s `<monitorDump>` (one JVM's state at one moment).
//!
//! Bounded memory: one input is read at a time (its call trees spilled to
//! a scratch file as any reader's), its figures go into external sorters
//! (`crate::sort`) and come out summed, in key order, straight into the
//! output. What is held across inputs: the distinct frames and thread
//! names (interned), as every reader holds a snapshot's names.

mod calls;
mod coverage;

use crate::error::CliError;
use crate::output::stream;
use crate::snapshot::read_file;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct Args {
    /// Snapshots (XML) to sum, two or more (one is copied through the same
    /// rules).
    #[arg(required = true, num_args = 1..)]
    snapshots: Vec<PathBuf>,
    /// The merged snapshot, written through a new file renamed into place.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
}

/// What was left out or could not be checked, said once each at the end.
#[derive(Default)]
pub struct Warnings {
    /// Sections left out: tag → the inputs that had it.
    pub dropped: std::collections::BTreeMap<&'static str, usize>,
    /// Classes merged by name only: some input had no `id` for them.
    pub classes_without_id: u64,
    /// Methods whose `<branches>` or `<instructions>` some inputs lacked or
    /// could not be summed exactly: left out (unknown).
    pub branches_unknown: u64,
    pub instructions_unknown: u64,
    /// Call sections whose attributes differ between inputs (left out).
    pub section_attributes: Vec<String>,
}

impl Warnings {
    fn print(&self) {
        for (tag, n) in &self.dropped {
            eprintln!(
                "profrj: warning: <{tag}> left out ({n} input(s) had it): it cannot be summed over JVMs"
            );
        }
        if self.classes_without_id > 0 {
            eprintln!(
                "profrj: warning: {} class(es) merged by name only: an input has no class id for them (a snapshot of an older profrj)",
                self.classes_without_id
            );
        }
        if self.branches_unknown > 0 {
            eprintln!(
                "profrj: warning: {} method(s) without <branches>: not every input had them",
                self.branches_unknown
            );
        }
        if self.instructions_unknown > 0 {
            eprintln!(
                "profrj: warning: {} method(s) without <instructions>: not every input had them, or the instructions run in two JVMs cannot be told apart",
                self.instructions_unknown
            );
        }
        for s in &self.section_attributes {
            eprintln!("profrj: warning: {s}");
        }
    }
}

pub fn run(args: Args) -> Result<(), CliError> {
    let mut cov = coverage::CoverageMerge::new()?;
    let mut calls = calls::CallsMerge::new()?;
    let mut warnings = Warnings::default();
    for (file, path) in args.snapshots.iter().enumerate() {
        let snap = read_file(path)?;
        if snap.memory.is_some() {
            *warnings
                .dropped
                .entry(profrj_format::memory::SECTION)
                .or_default() += 1;
        }
        if snap.monitor_dump.is_some() {
            *warnings
                .dropped
                .entry(profrj_format::lock::dump::DUMP)
                .or_default() += 1;
        }
        let io = |e: std::io::Error| CliError::Output(format!("merge's scratch file: {e}"));
        if let Some(c) = &snap.coverage {
            cov.add(file, c).map_err(io)?;
        }
        calls.add(&snap, &mut warnings).map_err(io)?;
    }
    let names: Vec<String> = args
        .snapshots
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let mut cov = cov.finish(&names)?;
    let mut calls = calls.finish(&mut warnings)?;
    let result = stream(Some(&args.output), |w| {
        writeln!(w, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
        writeln!(w, "<{}>", profrj_format::DOC)?;
        calls.write(w)?;
        cov.write(w, &mut warnings)?;
        writeln!(w, "</{}>", profrj_format::DOC)
    });
    // A refusal found while writing (the classes come out in name order)
    // is the error, not the output's.
    if let Some(refusal) = cov.refusal() {
        return Err(refusal);
    }
    result?;
    warnings.print();
    Ok(())
}

/// An attribute value: `s` escaped as the snapshot escapes names (it is
/// already, in the sorters' keys) then as XML wants.
fn attr(s: &str) -> std::borrow::Cow<'_, str> {
    quick_xml::escape::escape(s)
}
