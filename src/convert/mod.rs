//! `profrj convert SNAPSHOT --to FORMAT`: a snapshot in the formats other
//! tools read. From a call-tree section: `collapsed.rs`, one line per stack
//! (flamegraph.pl, inferno, speedscope); `pprof.rs`, pprof's gzipped
//! protobuf, encoded with `profrj_otlp::wire` (as `otlp.rs`, OTLP profiles). From `<coverage>`: `lcov.rs` and
//! `cobertura.rs`, sharing `coverage.rs`. From every section: `hprof.rs`,
//! HPROF's java.hprof.txt. `stacks.rs`: what the stack formats share. A
//! binary HPROF heap dump goes to `crate::heap` (only `--to hprof`).
//!
//! Every converter writes its output as it produces it (`output::stream`)
//! in a fixed memory budget: the call trees are walked back from the
//! scratch file the snapshot's reader put them in, and what must be merged
//! or ranked goes through `crate::sort` (docs/READING.md says what each
//! holds); every name is escaped as the snapshot escapes it
//! (`profrj_format::escape`).

use crate::error::CliError;
mod cobertura;
mod collapsed;
pub(crate) mod coverage;
mod hprof;
mod jacoco;
mod jfr;
mod lcov;
mod otlp;
mod pprof;
mod prof;
mod stacks;

pub use cobertura::cobertura;
pub use collapsed::collapsed;
pub use lcov::lcov;
pub use pprof::Pprof;

use crate::output::stream;
use crate::selection::Selection;
use crate::snapshot::{read_file_with_lines, CallKind, Metric, Snapshot};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Format {
    /// `frame;frame;frame count` per line, root first (a call section).
    Collapsed,
    /// pprof's profile.proto, gzipped (a call section).
    Pprof,
    /// LCOV tracefile, one record per source file (<coverage>).
    Lcov,
    /// Cobertura XML, coverage-04.dtd (<coverage>).
    Cobertura,
    /// JaCoCo's XML report, report.dtd (<coverage>): SonarQube, Codecov,
    /// GitLab, diff-cover.
    Jacoco,
    /// HPROF's java.hprof.txt: TRACEs, SITES (<memory>, <alloc>), CPU
    /// SAMPLES (<sampler>), CPU TIME (<profile>).
    Hprof,
    /// OpenTelemetry profiles: one ExportProfilesServiceRequest (protobuf)
    /// with every call section (docs/OTLP.md).
    Otlp,
    /// A JFR recording (JDK Mission Control, IntelliJ): the <sampler>,
    /// <alloc> and <lock> trees as events; needs `-o FILE`.
    Jfr,
    /// The JDK 1.1 `-prof` file (hprof's `cpu=old`): calls per callee and
    /// caller (<profile>), the high-water line (<memory>), and with
    /// `--dump HEAP` the primitive arrays and the per-class memory dump.
    Prof,
}

#[derive(clap::Args)]
pub struct Args {
    /// Snapshot (XML) written by the agent, a JFR recording (profrj's, the
    /// JDK's, async-profiler's), or a binary HPROF heap dump, gzipped or not
    /// (`jcmd PID GC.heap_dump`; only `--to hprof`).
    snapshot: PathBuf,
    /// Output format.
    #[arg(long, value_enum)]
    to: Format,
    /// Output file (default: standard output).
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// The call section, its threads, and the weight (collapsed: a stack's
    /// count; pprof carries every value and `--metric` picks its default
    /// sample type). Not for lcov, cobertura and jacoco.
    #[command(flatten)]
    select: Selection<CallKind>,
    /// Collapsed: start each stack with a `[thread name]` frame (else threads are merged).
    #[arg(long)]
    thread_frames: bool,
    /// Collapsed: end each frame in async-profiler's suffix for how it ran
    /// (`_[j]` JIT-compiled, `_[i]` inlined, `_[0]` interpreted, `_[1]` C1;
    /// its node's dominant type), as async-profiler's `ann` option.
    #[arg(long)]
    frame_types: bool,
    /// lcov, cobertura: the directory the source paths (package directories
    /// and source file) are under: lcov's `SF:` starts with it, cobertura's
    /// `<source>` is it [default: none, paths relative].
    #[arg(long, value_name = "DIR")]
    source_root: Option<String>,
    /// hprof: frames per TRACE (HPROF's `depth`; at most 2048) [default: 4; a
    /// heap dump: all its TRACEs have, up to 2048].
    #[arg(long, value_name = "N")]
    depth: Option<usize>,
    /// A JFR recording: keep each frame's source line (one method on two
    /// lines is two frames, `method():LINE`), as async-profiler's converter's
    /// `--lines`. A snapshot has lines when the agent ran with `lines`.
    #[arg(long)]
    lines: bool,
    /// hprof from a binary heap dump: the HEAP DUMP block (`dump`), the
    /// SITES table (`sites`), or both (`all`) [default: dump].
    #[arg(long, value_enum, value_name = "BLOCKS")]
    heap: Option<crate::heap::Heap>,
    /// prof: the heap dump (binary HPROF, profrj's or HotSpot's, taken at
    /// the end) its arrays and per-class memory dump come from.
    #[arg(long, value_name = "HEAP")]
    dump: Option<PathBuf>,
}

pub fn run(args: Args) -> Result<(), CliError> {
    if args.frame_types && args.to != Format::Collapsed {
        // pprof and JFR carry the types whenever the snapshot has them.
        return Err(CliError::Usage(
            "--frame-types is for --to collapsed (pprof's frame_type label and JFR's \
             frame types are written whenever the snapshot has types)"
                .into(),
        ));
    }
    if let Some(gzip) = crate::heap::sniff(&args.snapshot) {
        return heap_dump(&args, gzip);
    }
    if args.heap.is_some() {
        return Err(CliError::Usage(
            "--heap is for a binary HPROF heap dump, not a snapshot".into(),
        ));
    }
    if args.dump.is_some() && args.to != Format::Prof {
        return Err(CliError::Usage("--dump is for --to prof".into()));
    }
    let snap = read_file_with_lines(&args.snapshot, args.lines)?;
    let out = args.output.as_deref();
    match args.to {
        Format::Collapsed | Format::Pprof => calls(&snap, &args, out),
        Format::Lcov | Format::Cobertura | Format::Jacoco => coverage(&snap, &args, out),
        Format::Hprof => to_hprof(&snap, &args, out),
        Format::Otlp => to_otlp(&snap, &args, out),
        Format::Jfr => to_jfr(&snap, &args),
        Format::Prof => to_prof(&snap, &args, out),
    }
}

/// A binary heap dump: `--to hprof` (the HEAP DUMP text: `--heap`,
/// `--depth`) or `--to pprof` (a heap profile), and `-o`.
fn heap_dump(args: &Args, gzip: bool) -> Result<(), CliError> {
    if !matches!(args.to, Format::Hprof | Format::Pprof) {
        return Err(CliError::Usage(format!(
            "{} is a binary HPROF heap dump: it converts only --to hprof or --to pprof",
            args.snapshot.display()
        )));
    }
    let s = &args.select;
    if args.dump.is_some() {
        return Err(CliError::Usage(
            "--dump is for --to prof, from a snapshot (the heap dump is its argument)".into(),
        ));
    }
    if s.section.is_some()
        || s.thread.is_some()
        || s.metric.is_some()
        || args.thread_frames
        || args.source_root.is_some()
        || args.lines
    {
        return Err(CliError::Usage(
            "a heap dump has no sections, threads or metrics: only --heap, --depth and -o apply"
                .into(),
        ));
    }
    if args.to == Format::Pprof {
        if args.heap.is_some() || args.depth.is_some() {
            return Err(CliError::Usage(
                "--heap and --depth are for --to hprof; a heap profile has every object".into(),
            ));
        }
        return crate::heapread::pprof::convert(&args.snapshot, gzip, args.output.as_deref());
    }
    let heap = args.heap.unwrap_or_default();
    crate::heap::convert(
        &args.snapshot,
        gzip,
        heap,
        args.depth,
        args.output.as_deref(),
    )
}

fn calls(snap: &Snapshot, args: &Args, out: Option<&Path>) -> Result<(), CliError> {
    if args.source_root.is_some() {
        return Err(CliError::Usage(
            "--source-root is for --to lcov and cobertura".into(),
        ));
    }
    if args.depth.is_some() {
        return Err(CliError::Usage("--depth is for --to hprof".into()));
    }
    let sec = snap.call_section(args.select.section)?;
    let metric = Metric::of(sec.kind, args.select.metric)?;
    let threads = sec.select(args.select.thread())?;
    if args.frame_types && !sec.typed {
        eprintln!(
            "profrj: <{}> has no frame types (the agent's sampler writes them): no suffixes",
            sec.kind.tag()
        );
    }
    if args.to == Format::Pprof {
        let p = Pprof::new(&snap.names, sec, &threads, metric, &args.snapshot)?;
        return stream(out, |w| p.write(w));
    }
    stream(out, |w| {
        collapsed(
            w,
            &snap.names,
            &threads,
            metric,
            args.thread_frames,
            args.frame_types,
        )
    })
}

fn coverage(snap: &Snapshot, args: &Args, out: Option<&Path>) -> Result<(), CliError> {
    let s = &args.select;
    if args.depth.is_some() {
        return Err(CliError::Usage("--depth is for --to hprof".into()));
    }
    if s.section.is_some() || s.thread.is_some() || s.metric.is_some() || args.thread_frames {
        return Err(CliError::Usage(
            "--section, --thread, --metric and --thread-frames are for call sections, \
             not --to lcov, cobertura or jacoco (<coverage> has no threads)"
                .into(),
        ));
    }
    let cov = snap.coverage.as_ref().ok_or_else(|| {
        CliError::Usage(format!(
            "the snapshot has no <{}> section (run the agent with `coverage`)",
            profrj_format::coverage::SECTION
        ))
    })?;
    let root = args.source_root.as_deref();
    match args.to {
        Format::Lcov => stream(out, |w| lcov(w, cov, root)),
        Format::Jacoco => {
            if root.is_some() {
                return Err(CliError::Usage(
                    "--source-root is for lcov and cobertura: JaCoCo's report names \
                     packages and source files, and its readers take the source roots"
                        .into(),
                ));
            }
            let modified = modified_ms(&args.snapshot);
            let file = args
                .snapshot
                .file_name()
                .map_or_else(String::new, |f| f.to_string_lossy().into_owned());
            let name = file.strip_suffix(".xml").unwrap_or(&file).to_owned();
            stream(out, |w| jacoco::jacoco(w, cov, &name, &file, modified))
        }
        _ => {
            let modified = modified_ms(&args.snapshot);
            stream(out, |w| cobertura(w, cov, root, modified))
        }
    }
}

fn to_hprof(snap: &Snapshot, args: &Args, out: Option<&Path>) -> Result<(), CliError> {
    let s = &args.select;
    if s.section.is_some() || s.metric.is_some() || args.thread_frames {
        return Err(CliError::Usage(
            "--to hprof writes a block per section the snapshot has, each with \
                    HPROF's own figures: --section, --metric and --thread-frames do not apply"
                .into(),
        ));
    }
    if args.source_root.is_some() {
        return Err(CliError::Usage(
            "--source-root is for --to lcov and cobertura".into(),
        ));
    }
    let opts = hprof::Options {
        depth: args.depth.unwrap_or(hprof::DEFAULT_DEPTH),
        thread: s.thread(),
        created: modified_ms(&args.snapshot) / 1000,
    };
    let report = hprof::Hprof::new(snap, &opts)?;
    stream(out, |w| report.write(w))
}

fn to_otlp(snap: &Snapshot, args: &Args, out: Option<&Path>) -> Result<(), CliError> {
    let s = &args.select;
    if s.section.is_some() || s.thread.is_some() || s.metric.is_some() || args.thread_frames {
        return Err(CliError::Usage(
            "--to otlp carries every call section, thread and weight: \
                    --section, --thread, --metric and --thread-frames do not apply"
                .into(),
        ));
    }
    if args.source_root.is_some() || args.depth.is_some() {
        return Err(CliError::Usage(
            "--source-root and --depth are not for --to otlp".into(),
        ));
    }
    let service = std::env::var("OTEL_SERVICE_NAME")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown_service:java".to_owned());
    let request = otlp::Otlp::new(snap, &args.snapshot, &service)?;
    stream(out, |w| request.write(w))
}

fn to_jfr(snap: &Snapshot, args: &Args) -> Result<(), CliError> {
    let s = &args.select;
    if s.section.is_some() || s.metric.is_some() || s.thread.is_some() || args.thread_frames {
        return Err(CliError::Usage(
            "--to jfr writes every thread of <sampler>, <alloc> and <lock> with all \
                    their figures: --section, --thread, --metric and --thread-frames do not apply"
                .into(),
        ));
    }
    if args.source_root.is_some() || args.depth.is_some() {
        return Err(CliError::Usage(
            "--source-root and --depth do not apply to --to jfr".into(),
        ));
    }
    let Some(out) = args.output.as_deref() else {
        return Err(CliError::Usage(
            "--to jfr needs -o FILE (a JFR chunk's header is written last, \
                    so it cannot go to a pipe)"
                .into(),
        ));
    };
    jfr::jfr(
        snap,
        out,
        modified_ms(&args.snapshot).saturating_mul(1_000_000),
    )
}

/// A file's modification time in ms since the epoch (0 if unknown: a pipe).
/// The `-prof` file: `<profile>`, `<memory>` and `--dump`'s heap.
fn to_prof(snap: &Snapshot, args: &Args, out: Option<&Path>) -> Result<(), CliError> {
    if args.select.section.is_some()
        || args.select.thread.is_some()
        || args.select.metric.is_some()
        || args.thread_frames
        || args.source_root.is_some()
        || args.depth.is_some()
        || args.heap.is_some()
    {
        return Err(CliError::Usage(
            "--to prof takes only --dump and -o (the file has every thread's calls)".into(),
        ));
    }
    let dump = args.dump.as_deref().map(prof::dump_figures).transpose()?;
    let prof = prof::Prof::new(snap, dump.as_ref())?;
    stream(out, |w| prof.write(w))
}

fn modified_ms(path: &Path) -> u64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as u64)
}
