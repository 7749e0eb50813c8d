//! `profrj flame SNAPSHOT -o out.html`: one self-contained page (no network:
//! the script, styles and data are inlined) with an interactive flame graph,
//! a thread selector, the top-methods table (class frames, such as an
//! allocation's, in their own colour), and the memory and coverage
//! tables when the snapshot has them. The page keeps its state in the URL
//! fragment: `#thread=NAME&search=TEXT&zoom=FRAME;FRAME;…`.

use crate::error::CliError;
mod data;
mod heap;
mod merge;

use crate::selection::Selection;
use crate::snapshot::{read_file_with_lines, CallKind, Metric};
use data::{write_page_json, PageInput};
use std::io::{self, Write};
use std::path::PathBuf;

/// The page: HTML, CSS and JS, with `/*PROFRJ_DATA*/` where the data goes.
const TEMPLATE: &str = include_str!("page.html");

#[derive(clap::Args)]
pub struct Args {
    /// Snapshot (XML) written by the agent, or a JFR recording (profrj's, the JDK's, async-profiler's).
    snapshot: PathBuf,
    /// Output file [default: the snapshot's name with .html].
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// The call section drawn, its threads and the frames' width.
    #[command(flatten)]
    select: Selection<CallKind>,
    /// Page title [default: the snapshot's file name].
    #[arg(long)]
    title: Option<String>,
    /// A JFR recording: keep each frame's source line (one method on two
    /// lines is two frames, `method():LINE`), as async-profiler's converter's
    /// `--lines`. A snapshot has lines when the agent ran with `lines`.
    #[arg(long)]
    lines: bool,
    /// A heap dump (HPROF binary, gzipped or not): retained bytes along the
    /// dominator tree's type paths, or the live objects' shallow bytes by
    /// allocating thread and site [default: dominator].
    #[arg(long, value_enum)]
    by: Option<crate::heapread::type_paths::By>,
}

pub fn run(args: Args) -> Result<(), CliError> {
    let title = args.title.clone().unwrap_or_else(|| {
        args.snapshot
            .file_name()
            .map_or("snapshot".into(), |f| f.to_string_lossy().into_owned())
    });
    let out = args
        .output
        .clone()
        .unwrap_or_else(|| args.snapshot.with_extension("html"));
    if let Some(gzip) = crate::heap::sniff(&args.snapshot) {
        let chosen = args.select.section.is_some() || args.select.metric.is_some();
        if chosen || args.select.thread().is_some() || args.lines {
            return Err(CliError::Usage(
                "a heap dump's flame graph takes --by, -o and --title, not a section, metric, thread or --lines".into(),
            ));
        }
        let by = args
            .by
            .unwrap_or(crate::heapread::type_paths::By::Dominator);
        heap::write(&args.snapshot, gzip, by, &title, &out)?;
        eprintln!("profrj: wrote {}", out.display());
        return Ok(());
    }
    if args.by.is_some() {
        return Err(CliError::Usage(
            "--by is for a heap dump (HPROF binary), not a snapshot".into(),
        ));
    }
    let snap = read_file_with_lines(&args.snapshot, args.lines)?;
    // `--thread`: the section with that thread's name only.
    let kept;
    let calls = if snap.call_sections.is_empty() {
        None
    } else {
        let mut sec = snap.call_section(args.select.section)?;
        if let Some(name) = args.select.thread() {
            sec.select(Some(name))?;
            let mut only = sec.clone();
            only.threads.retain(|t| t.name == name);
            kept = only;
            sec = &kept;
        }
        Some((sec, Metric::of(sec.kind, args.select.metric)?))
    };
    let input = PageInput {
        title: &title,
        names: &snap.names,
        calls,
        memory: snap.memory.as_ref(),
        coverage: snap.coverage.as_ref().map(|c| c.classes.as_slice()),
    };
    crate::output::stream(Some(&out), |w| {
        render(w, &title, |w| write_page_json(w, &input))
    })?;
    eprintln!("profrj: wrote {}", out.display());
    Ok(())
}

/// Writes the page with its title and data (`data` writes the JSON) in
/// place: the template's parts around them, then each, as they come; no
/// copy of the page or of its data is made.
pub fn render(
    out: &mut dyn Write,
    title: &str,
    data: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut escaped = String::new();
    for c in title.chars() {
        match c {
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '&' => escaped.push_str("&amp;"),
            '"' => escaped.push_str("&quot;"),
            c => escaped.push(c),
        }
    }
    let (before_title, rest) = TEMPLATE
        .split_once("<!--PROFRJ_TITLE-->")
        .expect("the template has a title");
    let (before_data, after) = rest
        .split_once("/*PROFRJ_DATA*/")
        .expect("the template has a data slot");
    out.write_all(before_title.as_bytes())?;
    out.write_all(escaped.as_bytes())?;
    out.write_all(before_data.as_bytes())?;
    data(out)?;
    out.write_all(after.as_bytes())
}
