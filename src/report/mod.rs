//! `profrj report SNAPSHOT`: the terminal view of a snapshot, one section at a
//! time. Call sections print HPROF's "CPU SAMPLES" table (rank, self, accum,
//! count, method) with the method's total (callees included) beside it, and
//! sections of class frames (alloc) its "SITES" table first (`calls.rs`);
//! memory prints live objects by class; coverage the least-covered classes.

use crate::error::CliError;
mod calls;
mod html;
mod monitors;
mod xprof;

pub use calls::{calls_report, sites_report};
pub use monitors::monitor_dump_report;

use crate::selection::{SectionChoice, Selection};
use crate::snapshot::{
    read_file, CallKind, CoverageClass, CoverageMethod, MemorySection, Metric, Snapshot,
};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::OnceLock;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Section {
    Calls(CallKind),
    Memory,
    Coverage,
}

impl Section {
    /// Every section, in the order `report` picks its default: the
    /// contract's call sections, memory, coverage, then profrj's own.
    pub fn all() -> &'static [Section] {
        static ALL: OnceLock<Vec<Section>> = OnceLock::new();
        ALL.get_or_init(|| {
            let calls = |own: bool| {
                CallKind::ALL
                    .into_iter()
                    .filter(move |k| k.desc().own == own)
                    .map(Section::Calls)
            };
            let mut all: Vec<Section> = calls(false).collect();
            all.extend([Section::Memory, Section::Coverage]);
            all.extend(calls(true));
            all
        })
    }
}

impl SectionChoice for Section {
    fn tags() -> Vec<&'static str> {
        Section::all().iter().map(|&s| section_tag(s)).collect()
    }
}

/// `--section`: every section by its tag.
impl clap::ValueEnum for Section {
    fn value_variants<'a>() -> &'a [Self] {
        Section::all()
    }
    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        Some(clap::builder::PossibleValue::new(section_tag(*self)))
    }
}

pub use crate::selection::SortBy;

/// `--style`: how a call section is laid out.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, clap::ValueEnum)]
pub enum Style {
    /// HPROF's CPU SAMPLES table (rank, self, accum, count, method).
    #[default]
    Hprof,
    /// HotSpot's -Xprof flat profile (a <sampler> section).
    Xprof,
}

#[derive(clap::Args)]
pub struct Args {
    /// Snapshot (XML) written by the agent, a JFR recording (profrj's, the JDK's, async-profiler's), or a binary HPROF heap dump (.gz too).
    snapshot: PathBuf,
    #[command(flatten)]
    select: Selection<Section>,
    /// Rows to show (0: all).
    #[arg(long, default_value_t = 30)]
    top: usize,
    /// The layout of a call section: hprof (HPROF's CPU SAMPLES table) or xprof (HotSpot -Xprof's flat profile per thread, by frame type, and a global summary; <sampler> only).
    #[arg(long, value_enum, default_value_t, conflicts_with = "html")]
    style: Style,
    /// Order of the method table (a heap dump's tables: self = shallow bytes, total = retained bytes).
    #[arg(long, value_enum, default_value_t)]
    sort: SortBy,
    /// A heap dump: only the class histogram (objects, shallow bytes), in one pass without the dominator tree.
    #[arg(long)]
    histogram: bool,
    /// Write the coverage section as HTML pages into DIR (created if missing): an index, a page per package, class and source file.
    #[arg(long, value_name = "DIR")]
    html: Option<PathBuf>,
    /// With --html: the directories the sources are under, as javac lays them out (p/q/A.java), separated by ':'.
    #[arg(
        long,
        value_name = "PATH[:PATH…]",
        requires = "html",
        value_delimiter = ':'
    )]
    sources: Vec<PathBuf>,
    /// With --html: replace the pages of an earlier report in DIR (without it, a page already there is refused).
    #[arg(long, requires = "html")]
    replace: bool,
}

pub fn run(args: Args) -> Result<(), CliError> {
    if let Some(gzip) = crate::heap::sniff(&args.snapshot) {
        heap_only(&args.select)?;
        if args.style == Style::Xprof {
            return Err(CliError::Usage(
                "--style xprof is for a snapshot's <sampler> section, not a binary HPROF heap dump"
                    .into(),
            ));
        }
        if args.html.is_some() {
            return Err(CliError::Usage(
                "--html is for a snapshot's coverage, not a binary HPROF heap dump".into(),
            ));
        }
        let opts = crate::heapread::text::Options {
            thread: args.select.thread(),
            top: if args.top == 0 { usize::MAX } else { args.top },
            sort: args.sort,
            histogram: args.histogram,
        };
        return crate::heapread::report(&args.snapshot, gzip, &opts);
    }
    if args.histogram {
        return Err(CliError::Usage(
            "--histogram is for a binary HPROF heap dump, not a snapshot".into(),
        ));
    }
    let snap = read_file(&args.snapshot)?;
    if args.style == Style::Xprof {
        return xprof_style(&args, &snap);
    }
    if let Some(dir) = &args.html {
        return html_pages(&args, &snap, dir);
    }
    let section = match args.select.section {
        Some(s) => s,
        None => default_section(&snap)?,
    };
    let top = if args.top == 0 { usize::MAX } else { args.top };
    let text = match section {
        Section::Calls(kind) => {
            let sec = snap.call_section(Some(kind))?;
            let metric = Metric::of(kind, args.select.metric)?;
            let thread = args.select.thread();
            let mut text = String::new();
            if kind.desc().class_marker.is_some() {
                text = sites_report(&snap, sec, thread, metric, top)?;
                text.push('\n');
            }
            text += &calls_report(&snap, sec, thread, metric, args.sort, top)?;
            if let (CallKind::Lock, Some(dump)) = (kind, &snap.monitor_dump) {
                text.push('\n');
                text += &monitor_dump_report(dump);
            }
            text
        }
        Section::Memory => {
            let mem = snap
                .memory
                .as_ref()
                .ok_or_else(|| no_section(Section::Memory))?;
            memory_report(mem, args.select.thread(), top)?
        }
        Section::Coverage => {
            let cov = snap
                .coverage
                .as_ref()
                .ok_or_else(|| no_section(Section::Coverage))?;
            coverage_report(&cov.classes, top)
        }
    };
    crate::output::write(None, text.as_bytes())
}

/// `--style xprof`: the `<sampler>` section as -Xprof's flat profile; a
/// choice that does not fit it is refused rather than ignored.
fn xprof_style(args: &Args, snap: &Snapshot) -> Result<(), CliError> {
    let s = &args.select;
    let sampler = Section::Calls(CallKind::Sampler);
    if s.section.is_some_and(|x| x != sampler) || s.metric.is_some() {
        return Err(CliError::Usage(format!(
            "--style xprof reads the <{}> section and counts every sample (elapsed): \
             --section and --metric are for the other styles",
            section_tag(sampler)
        )));
    }
    if snap.calls(CallKind::Sampler).is_none() {
        return Err(no_section(sampler));
    }
    let top = if args.top == 0 { usize::MAX } else { args.top };
    let text = xprof::xprof_report(snap, s.thread(), top)?;
    crate::output::write(None, text.as_bytes())
}

/// `--html DIR`: the coverage section as pages; the options of the
/// terminal tables (other sections, threads, metrics) are refused.
fn html_pages(args: &Args, snap: &Snapshot, dir: &std::path::Path) -> Result<(), CliError> {
    let s = &args.select;
    if s.section.is_some_and(|x| x != Section::Coverage)
        || s.metric.is_some()
        || s.thread().is_some()
    {
        return Err(CliError::Usage(format!(
            "--html writes the <{}> section: --section, --metric and --thread are for the terminal tables",
            section_tag(Section::Coverage)
        )));
    }
    let cov = snap
        .coverage
        .as_ref()
        .ok_or_else(|| no_section(Section::Coverage))?;
    let opts = html::Options {
        dir,
        sources: &args.sources,
        replace: args.replace,
    };
    let done = html::write_pages(cov, &opts)?;
    eprintln!(
        "profrj: wrote {} pages to {} (open index.html): {} source files shown, {} classes without their source",
        done.pages,
        dir.display(),
        done.sources,
        done.missing
    );
    Ok(())
}

/// A heap dump has no sections or metrics: `--section` and `--metric` are
/// refused rather than ignored.
pub fn heap_only<S: crate::selection::SectionChoice>(s: &Selection<S>) -> Result<(), CliError> {
    if s.section.is_some() || s.metric.is_some() {
        return Err(CliError::Usage(
            "--section and --metric are for snapshots, not a binary HPROF heap dump".into(),
        ));
    }
    Ok(())
}

/// The sections a snapshot holds, in the order `report` picks its default
/// ([`Section::all`]).
pub fn sections_present(snap: &Snapshot) -> Vec<Section> {
    Section::all()
        .iter()
        .copied()
        .filter(|&s| match s {
            Section::Calls(k) => snap.calls(k).is_some(),
            Section::Memory => snap.memory.is_some(),
            Section::Coverage => snap.coverage.is_some(),
        })
        .collect()
}

fn section_tag(s: Section) -> &'static str {
    match s {
        Section::Calls(k) => k.tag(),
        Section::Memory => profrj_format::memory::SECTION,
        Section::Coverage => profrj_format::coverage::SECTION,
    }
}

fn no_section(s: Section) -> CliError {
    CliError::Usage(format!("the snapshot has no <{}> section", section_tag(s)))
}

/// The first section present in the documented order; when there are
/// others, says so on stderr (stdout keeps the report alone).
fn default_section(snap: &Snapshot) -> Result<Section, CliError> {
    let present = sections_present(snap);
    let Some(&first) = present.first() else {
        let tags: Vec<String> = Section::all()
            .iter()
            .map(|&s| format!("<{}>", section_tag(s)))
            .collect();
        let (last, rest) = tags.split_last().expect("sections");
        return Err(CliError::Usage(format!(
            "the snapshot has no {} or {last} section to report",
            rest.join(", ")
        )));
    };
    if present.len() > 1 {
        let others: Vec<String> = present[1..]
            .iter()
            .map(|&s| format!("--section {}", section_tag(s)))
            .collect();
        eprintln!(
            "profrj: showing <{}>; the snapshot also has: {}",
            section_tag(first),
            others.join(", ")
        );
    }
    Ok(first)
}

pub(crate) fn pct(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// Live objects by class, merged over threads or for one thread.
pub fn memory_report(
    mem: &MemorySection,
    thread: Option<&str>,
    top: usize,
) -> Result<String, CliError> {
    let threads: Vec<_> = mem
        .threads
        .iter()
        .filter(|t| match thread {
            None => true,
            Some(n) => t.name == n,
        })
        .collect();
    if threads.is_empty() {
        if let Some(n) = thread {
            return Err(CliError::Usage(format!(
                "no thread named {n:?} in <{}>",
                section_tag(Section::Memory)
            )));
        }
    }
    let mut by_class: HashMap<&str, (u64, u64)> = HashMap::new();
    for t in &threads {
        for r in &t.rows {
            let e = by_class.entry(r.class.as_str()).or_default();
            e.0 = e.0.saturating_add(r.count);
            e.1 = e.1.saturating_add(r.max);
        }
    }
    let mut rows: Vec<_> = by_class.into_iter().collect();
    rows.sort_by(|a, b| {
        b.1 .0
            .cmp(&a.1 .0)
            .then(b.1 .1.cmp(&a.1 .1))
            .then(a.0.cmp(b.0))
    });
    let live: u64 = rows.iter().fold(0u64, |s, r| s.saturating_add(r.1 .0));
    let who = match thread {
        Some(n) => format!("thread {n:?}"),
        None => format!("all {} threads merged", threads.len()),
    };
    let mut out = String::new();
    let _ = writeln!(
        out,
        "LIVE OBJECTS <{}> {who}: {live} objects of {} classes",
        section_tag(Section::Memory),
        rows.len()
    );
    let _ = writeln!(
        out,
        "{:>4} {:>12} {:>7} {:>7} {:>12}  class",
        "rank", "live", "self", "accum", "max"
    );
    let mut accum = 0;
    for (i, (class, (count, max))) in rows.iter().take(top).enumerate() {
        accum = count.saturating_add(accum);
        let _ = writeln!(
            out,
            "{:>4} {:>12} {:>6.2}% {:>6.2}% {:>12}  {}",
            i + 1,
            count,
            pct(*count, live),
            pct(accum, live),
            max,
            shown(class)
        );
    }
    if thread.is_none() && threads.len() > 1 {
        let _ = writeln!(
            out,
            "(max: the sum of each thread's peak, an upper bound of the peak of the sum)"
        );
    }
    Ok(out)
}

/// Lines of a class: each source line with code, and whether it ran. Two
/// methods may share a line (a field initialiser in two constructors, a
/// lambda on its enclosing method's line): it counts once, and ran if either
/// ran it. Methods without line numbers add nothing.
pub fn class_lines<'a>(
    methods: impl IntoIterator<Item = &'a CoverageMethod>,
) -> BTreeMap<u64, bool> {
    let mut lines = BTreeMap::new();
    for m in methods {
        let Some(first) = m.first_line else { continue };
        for (i, &f) in m.footprints.iter().enumerate() {
            if f >= 0 {
                let covered = lines.entry(first as u64 + i as u64).or_insert(false);
                *covered |= f > 0;
            }
        }
    }
    lines
}

/// Per class: lines covered / lines with code, methods run.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassCoverage {
    pub name: String,
    pub source: Option<String>,
    /// Lines with code (0 for a class without line numbers).
    pub lines: u64,
    pub covered: u64,
    pub methods: u64,
    pub methods_run: u64,
    /// Branch outcomes (`<branches>`; 0 without them) and those taken.
    pub branches: u64,
    pub branches_covered: u64,
}

impl ClassCoverage {
    /// Share of its lines with code that ran; `None` without any (a class
    /// compiled without line numbers, or without methods).
    pub fn percent(&self) -> Option<f64> {
        (self.lines > 0).then(|| pct(self.covered, self.lines))
    }

    /// Ordering key of the classes without lines: share of methods run.
    fn methods_percent(&self) -> f64 {
        pct(self.methods_run, self.methods)
    }
}

/// Classes, least covered first; classes without line numbers last, fewest
/// methods run first. A class listed twice (by name) is merged.
pub fn coverage_table(classes: &[CoverageClass]) -> Vec<ClassCoverage> {
    let mut by_name: BTreeMap<&str, Vec<&CoverageClass>> = BTreeMap::new();
    for c in classes {
        by_name.entry(c.name.as_str()).or_default().push(c);
    }
    let mut rows: Vec<ClassCoverage> = by_name
        .into_iter()
        .map(|(name, parts)| {
            let methods = || parts.iter().flat_map(|c| &c.methods);
            let lines = class_lines(methods());
            let (branches, branches_covered) = method_branches(methods());
            ClassCoverage {
                name: name.to_owned(),
                source: parts.iter().find_map(|c| c.source.clone()),
                lines: lines.len() as u64,
                covered: lines.values().filter(|&&v| v).count() as u64,
                methods: methods().count() as u64,
                methods_run: methods().filter(|m| m.count > 0).count() as u64,
                branches,
                branches_covered,
            }
        })
        .collect();
    rows.sort_by(|a, b| match (a.percent(), b.percent()) {
        (Some(pa), Some(pb)) => pa
            .total_cmp(&pb)
            .then((b.lines - b.covered).cmp(&(a.lines - a.covered)))
            .then(a.name.cmp(&b.name)),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a
            .methods_percent()
            .total_cmp(&b.methods_percent())
            .then(a.name.cmp(&b.name)),
    });
    rows
}

/// Sums of a coverage table: (lines covered, lines with code, methods run, methods).
pub fn coverage_totals(rows: &[ClassCoverage]) -> (u64, u64, u64, u64) {
    rows.iter().fold((0, 0, 0, 0), |t, r| {
        (
            t.0.saturating_add(r.covered),
            t.1.saturating_add(r.lines),
            t.2.saturating_add(r.methods_run),
            t.3.saturating_add(r.methods),
        )
    })
}

/// (branch outcomes, outcomes taken) of some methods' `<branches>`.
pub fn method_branches<'a>(methods: impl IntoIterator<Item = &'a CoverageMethod>) -> (u64, u64) {
    methods
        .into_iter()
        .flat_map(|m| &m.branches)
        .fold((0, 0), |(valid, covered), b| {
            let taken = b.outcomes.iter().filter(|&&n| n > 0).count() as u64;
            (valid + b.outcomes.len() as u64, covered + taken)
        })
}

/// The `report --section coverage` table: a summary line, one row per class
/// (least covered first), a total row; with branch counts, the methods
/// with branches, most outcomes missed first.
pub fn coverage_report(classes: &[CoverageClass], top: usize) -> String {
    let rows = coverage_table(classes);
    let (covered, lines, run, methods) = coverage_totals(&rows);
    let (branches, taken) = rows.iter().fold((0u64, 0u64), |t, r| {
        (t.0 + r.branches, t.1 + r.branches_covered)
    });
    let mut out = String::new();
    let total = (lines > 0).then(|| pct(covered, lines));
    let share = |p: Option<f64>| p.map_or("-".to_owned(), |p| format!("{p:.1}%"));
    let branch_share = match branches {
        0 => String::new(),
        _ => format!(
            ", branches {taken}/{branches} ({})",
            share(Some(pct(taken, branches)))
        ),
    };
    let _ = writeln!(
        out,
        "COVERAGE <{}>: {} classes, lines {covered}/{lines} ({}), methods run {run}/{methods}{branch_share}",
        section_tag(Section::Coverage),
        rows.len(),
        share(total)
    );
    let _ = writeln!(out, "least covered first:");
    let _ = writeln!(
        out,
        "{:>4} {:>7} {:>15} {:>11} {:>11}  class",
        "rank", "lines%", "covered/code", "methods run", "branches"
    );
    let row = |out: &mut String,
               rank: &str,
               percent: Option<f64>,
               r: (u64, u64, u64, u64),
               b: (u64, u64),
               name: &str| {
        let b = match b.1 {
            0 => "-".to_owned(),
            _ => format!("{}/{}", b.0, b.1),
        };
        let _ = writeln!(
            out,
            "{rank:>4} {:>7} {:>15} {:>11} {b:>11}  {name}",
            share(percent),
            format!("{}/{}", r.0, r.1),
            format!("{}/{}", r.2, r.3),
        );
    };
    for (i, r) in rows.iter().take(top).enumerate() {
        let mut name = r.name.clone();
        if let Some(s) = &r.source {
            let _ = write!(name, " ({s})");
        }
        if r.lines == 0 && r.methods > 0 {
            name.push_str(" [no line numbers]");
        }
        let figures = (r.covered, r.lines, r.methods_run, r.methods);
        row(
            &mut out,
            &(i + 1).to_string(),
            r.percent(),
            figures,
            (r.branches_covered, r.branches),
            &shown(&name),
        );
    }
    if rows.len() > top {
        let _ = writeln!(
            out,
            "     … {} more (--top 0 shows every class)",
            rows.len() - top
        );
    }
    let label = format!("total ({} classes)", rows.len());
    let figures = (covered, lines, run, methods);
    row(&mut out, "", total, figures, (taken, branches), &label);
    if rows.iter().any(|r| r.lines == 0 && r.methods > 0) {
        let _ = writeln!(
            out,
            "(no line numbers: compiled without them, e.g. javac -g:none; only calls are known)"
        );
    }
    if branches > 0 {
        method_branch_table(&mut out, classes, top);
    }
    out
}

/// The methods with branches, most outcomes missed first: taken/outcomes.
fn method_branch_table(out: &mut String, classes: &[CoverageClass], top: usize) {
    let mut methods: Vec<(u64, u64, String)> = classes
        .iter()
        .flat_map(|c| c.methods.iter().map(move |m| (c, m)))
        .filter(|(_, m)| !m.branches.is_empty())
        .map(|(c, m)| {
            let (valid, taken) = method_branches([m]);
            (
                valid,
                taken,
                format!("{}.{}{}", c.name, m.name, m.signature),
            )
        })
        .collect();
    methods.sort_by(|a, b| (b.0 - b.1).cmp(&(a.0 - a.1)).then(a.2.cmp(&b.2)));
    let _ = writeln!(out, "branches by method, most missed first:");
    let _ = writeln!(out, "{:>4} {:>7} {:>11}  method", "rank", "missed", "taken");
    for (i, (valid, taken, name)) in methods.iter().take(top).enumerate() {
        let _ = writeln!(
            out,
            "{:>4} {:>7} {:>11}  {}",
            i + 1,
            valid - taken,
            format!("{taken}/{valid}"),
            shown(name)
        );
    }
    if methods.len() > top {
        let _ = writeln!(
            out,
            "     … {} more (--top 0 shows every method)",
            methods.len() - top
        );
    }
}

/// `s` for a terminal: escaped as every writer escapes names
/// (`profrj_format::names::escape`: a control character, such as an ANSI escape
/// sequence a snapshot may carry in a name, as `\uXXXX`, never sent raw; a
/// backslash `\\`).
pub(crate) fn shown(s: &str) -> std::borrow::Cow<'_, str> {
    profrj_format::names::escape(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::parse_bytes;

    #[test]
    fn memory_merged_and_per_thread() {
        let xml = r#"<doc><memory>
          <thread name="a"><memory class="X" count="5" max="9"/><memory class="Y" count="1" max="1"/></thread>
          <thread name="b"><memory class="Y" count="10" max="12"/></thread>
        </memory></doc>"#;
        let s = parse_bytes(xml.as_bytes()).unwrap();
        let m = s.memory.as_ref().unwrap();
        let all = memory_report(m, None, 10).unwrap();
        let lines: Vec<_> = all.lines().collect();
        assert!(lines[0].contains("16 objects of 2 classes"), "{all}");
        assert!(
            lines[2].ends_with("  Y") && lines[2].contains(" 11 "),
            "{all}"
        );
        assert!(lines[2].contains(" 13"), "{all}");
        let a = memory_report(m, Some("a"), 10).unwrap();
        assert!(a.lines().nth(2).unwrap().ends_with("  X"), "{a}");
        assert!(memory_report(m, Some("zz"), 10).is_err());
    }

    #[test]
    fn coverage_least_covered_first() {
        let xml = r#"<doc><coverage>
          <class name="Good" source="Good.java">
            <method name="a" signature="()V" firstline="3" count="2"><footprints>2 -1 2</footprints></method>
          </class>
          <class name="Half">
            <method name="&lt;init&gt;" signature="()V" firstline="10" count="1"><footprints>1 0</footprints></method>
            <method name="&lt;init&gt;" signature="(I)V" firstline="10" count="0"><footprints>0 0 0 0</footprints></method>
          </class>
        </coverage></doc>"#;
        let s = parse_bytes(xml.as_bytes()).unwrap();
        let rows = coverage_table(&s.coverage.as_ref().unwrap().classes);
        // Half: lines 10..13 have code, only 10 ran (both constructors share 10, 11).
        assert_eq!(
            (rows[0].name.as_str(), rows[0].covered, rows[0].lines),
            ("Half", 1, 4)
        );
        assert_eq!((rows[0].methods_run, rows[0].methods), (1, 2));
        assert_eq!((rows[1].covered, rows[1].lines), (2, 2));
        let text = coverage_report(&s.coverage.as_ref().unwrap().classes, 10);
        assert!(
            text.contains("lines 3/6 (50.0%), methods run 2/3"),
            "{text}"
        );
        assert!(text.contains("Good (Good.java)"), "{text}");
        assert!(
            text.lines().last().unwrap().ends_with("total (2 classes)"),
            "{text}"
        );
    }

    /// A class listed twice is one row; a class without line numbers has no
    /// share and comes last.
    #[test]
    fn coverage_merges_a_class_and_puts_classes_without_lines_last() {
        let xml = r#"<doc><coverage>
          <class name="NoLines"><method name="f" signature="()V" firstline="-1" count="0"><footprints></footprints></method></class>
          <class name="A"><method name="f" signature="()V" firstline="3" count="1"><footprints>1 0 </footprints></method></class>
          <class name="A" source="A.java"><method name="g" signature="()V" firstline="4" count="0"><footprints>0 0 </footprints></method></class>
        </coverage></doc>"#;
        let s = parse_bytes(xml.as_bytes()).unwrap();
        let classes = &s.coverage.as_ref().unwrap().classes;
        let rows = coverage_table(classes);
        assert_eq!(rows.len(), 2);
        assert_eq!(
            (rows[0].name.as_str(), rows[0].covered, rows[0].lines),
            ("A", 1, 3)
        );
        assert_eq!(rows[0].source.as_deref(), Some("A.java"));
        assert_eq!((rows[0].methods_run, rows[0].methods), (1, 2));
        assert_eq!(
            (rows[1].name.as_str(), rows[1].percent()),
            ("NoLines", None)
        );
        let text = coverage_report(classes, usize::MAX);
        assert!(
            text.contains("lines 1/3 (33.3%), methods run 1/3"),
            "{text}"
        );
        assert!(text.contains("NoLines [no line numbers]"), "{text}");
    }
}
