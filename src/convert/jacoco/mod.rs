//! JaCoCo's XML report (`report.dtd`, `-//JACOCO//DTD Report 1.1//EN`;
//! read by SonarQube, Codecov, GitLab, diff-cover…) from a `<coverage>`
//! section: `<package>`s (VM names, `p/q`), each with its `<class>`es
//! (`<method name desc line>` and counters) and `<sourcefile>`s (a
//! `<line nr mi ci mb cb>` per line with code), and `<counter type missed
//! covered>` at every level, as JaCoCo counts them (`counters.rs`).
//!
//! - Levels sum as JaCoCo's do: a class its methods (LINE from the lines of
//!   its methods merged: a line two methods share is one line), a source
//!   file its classes (lines merged again), a package its source files
//!   and its classes without one, the report its packages. CLASS: a class
//!   is covered when one of its methods is.
//! - A counter is written where it has items (total above 0), as JaCoCo's
//!   XMLFormatter does; one unknown (an older snapshot) is left out of the
//!   node and of every level above it.
//! - What JaCoCo's method filters leave out is left out: the methods the
//!   agent marks `generated` (synthetic methods but lambdas' bodies, an
//!   enum's `values`/`valueOf` and empty constructor, a private empty
//!   no-argument constructor), and for older snapshots javac's synthetic
//!   accessors (`access$NNN`), `$values` and `$deserializeLambda$` by name;
//!   a class left with no method is left out, as JaCoCo leaves out a class
//!   without code. A class without `source` has no
//!   `<sourcefile>` and no `sourcefilename`, as in JaCoCo.
//! - `<sessioninfo>`: id the snapshot's file name, `start` and `dump` its
//!   modification time (ms): profrj's snapshot has one session, its time
//!   not recorded otherwise.

mod counters;

use super::coverage::escaped;
use crate::snapshot::{CoverageClass, CoverageSection};
use counters::{line_counter, method, Counter, Counters, Line};
use std::collections::BTreeMap;
use std::io::{self, Write};

pub const DOCTYPE: &str =
    r#"<!DOCTYPE report PUBLIC "-//JACOCO//DTD Report 1.1//EN" "report.dtd">"#;

/// Methods JaCoCo's filters leave out: those the agent named
/// (`generated`: synthetic, an enum's `values`/`valueOf` and empty
/// constructor, a private empty constructor), and by name, for snapshots
/// from before it did, javac's synthetic ones.
fn filtered(m: &crate::snapshot::CoverageMethod) -> bool {
    let name = m.name.as_str();
    m.generated.is_some()
        || name.starts_with("access$")
        || name == "$values"
        || name == "$deserializeLambda$"
}

fn attr(s: &str) -> String {
    quick_xml::escape::escape(escaped(s).as_str()).into_owned()
}

/// A class with its counters and lines, ready to write.
struct ClassReport<'a> {
    class: &'a CoverageClass,
    methods: Vec<(&'a crate::snapshot::CoverageMethod, Counters)>,
    lines: BTreeMap<u32, Line>,
    counters: Counters,
}

/// A class whose every method JaCoCo's filters leave out is still a class
/// of JaCoCo's report: an empty `<class>`, no counters (JaCoCo 0.8.6's
/// CoverageBuilder keeps every class it analysed).
fn class_report(class: &CoverageClass) -> ClassReport<'_> {
    let mut methods = Vec::new();
    let mut lines: BTreeMap<u32, Line> = BTreeMap::new();
    let mut counters = Counters::default();
    for m in class.methods.iter().filter(|m| !filtered(m)) {
        let mc = method(m, class.id.is_some());
        for (n, l) in &mc.lines {
            lines.entry(*n).or_default().add(l);
        }
        counters.add_child(&mc.counters, methods.is_empty());
        methods.push((m, mc.counters));
    }
    counters.line = line_counter(&lines);
    if !methods.is_empty() {
        counters.class = Counter::one(counters.method.covered > 0);
    }
    ClassReport {
        class,
        methods,
        lines,
        counters,
    }
}

fn write_counters(out: &mut dyn Write, indent: &str, c: &Counters) -> io::Result<()> {
    let all = [
        ("INSTRUCTION", c.instruction),
        ("BRANCH", c.branch),
        ("LINE", Some(c.line)),
        ("COMPLEXITY", c.complexity),
        ("METHOD", Some(c.method)),
        ("CLASS", Some(c.class)),
    ];
    for (kind, counter) in all {
        if let Some(k) = counter.filter(|k| k.total() > 0) {
            writeln!(
                out,
                r#"{indent}<counter type="{kind}" missed="{}" covered="{}"/>"#,
                k.missed, k.covered
            )?;
        }
    }
    Ok(())
}

/// The VM name of a class (`p/q/A$B`) and of its package (`p/q`).
fn vm_name(name: &str) -> String {
    name.replace('.', "/")
}

/// Writes the report; `name`: the report's name, `session`: its id,
/// `time_ms`: the session's start and dump time.
pub fn jacoco(
    out: &mut dyn Write,
    cov: &CoverageSection,
    name: &str,
    session: &str,
    time_ms: u64,
) -> io::Result<()> {
    let mut packages: BTreeMap<&str, Vec<&CoverageClass>> = BTreeMap::new();
    for c in &cov.classes {
        packages
            .entry(super::coverage::package(c))
            .or_default()
            .push(c);
    }
    // Not `standalone="yes"` as JaCoCo's: with the indentation, a
    // validating parser would then reject the whitespace between elements.
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(out, "{DOCTYPE}")?;
    writeln!(out, r#"<report name="{}">"#, attr(name))?;
    writeln!(
        out,
        r#"  <sessioninfo id="{}" start="{time_ms}" dump="{time_ms}"/>"#,
        attr(session)
    )?;
    let mut report = Counters::default();
    let mut first = true;
    for (package, classes) in packages {
        let mut reports: Vec<ClassReport> = classes.into_iter().map(class_report).collect();
        reports.sort_by(|a, b| a.class.name.cmp(&b.class.name));
        // (A package of empty classes only has no counters to add.)
        if let Some(counters) = write_package(out, package, &reports)? {
            report.add_all(&counters, first);
            first = false;
        }
    }
    write_counters(out, "  ", &report)?;
    writeln!(out, "</report>")
}

/// One package: its classes, then its source files, then its counters
/// (its source files' and those of its classes without one); `None` when
/// no class of it has a method.
fn write_package(
    out: &mut dyn Write,
    package: &str,
    classes: &[ClassReport],
) -> io::Result<Option<Counters>> {
    writeln!(out, r#"  <package name="{}">"#, attr(&vm_name(package)))?;
    let mut files: BTreeMap<&str, (BTreeMap<u32, Line>, Counters, bool)> = BTreeMap::new();
    let mut package_counters = Counters::default();
    let mut first = true;
    for c in classes {
        write_class(out, c)?;
        let source = c.class.source.as_deref().filter(|s| !s.trim().is_empty());
        if c.methods.is_empty() {
            // Its source file is one of JaCoCo's, if empty; no counters.
            if let Some(source) = source {
                files.entry(source).or_default();
            }
            continue;
        }
        match source {
            Some(source) => {
                let (lines, counters, any) = files.entry(source).or_default();
                for (n, l) in &c.lines {
                    lines.entry(*n).or_default().add(l);
                }
                counters.add_child(&c.counters, !*any);
                *any = true;
            }
            None => {
                package_counters.add_all(&c.counters, first);
                first = false;
            }
        }
    }
    for (source, (lines, mut counters, any)) in files {
        counters.line = line_counter(&lines);
        writeln!(out, r#"    <sourcefile name="{}">"#, attr(source))?;
        for (n, l) in &lines {
            writeln!(
                out,
                r#"      <line nr="{n}" mi="{}" ci="{}" mb="{}" cb="{}"/>"#,
                l.instructions.missed,
                l.instructions.covered,
                l.branches.missed,
                l.branches.covered
            )?;
        }
        write_counters(out, "      ", &counters)?;
        writeln!(out, "    </sourcefile>")?;
        if any {
            package_counters.add_all(&counters, first);
            first = false;
        }
    }
    write_counters(out, "    ", &package_counters)?;
    writeln!(out, "  </package>")?;
    Ok((!first).then_some(package_counters))
}

fn write_class(out: &mut dyn Write, c: &ClassReport) -> io::Result<()> {
    write!(
        out,
        r#"    <class name="{}""#,
        attr(&vm_name(&c.class.name))
    )?;
    if let Some(s) = c.class.source.as_deref().filter(|s| !s.trim().is_empty()) {
        write!(out, r#" sourcefilename="{}""#, attr(s))?;
    }
    writeln!(out, ">")?;
    for (m, counters) in &c.methods {
        write!(
            out,
            r#"      <method name="{}" desc="{}""#,
            attr(&m.name),
            attr(&m.signature)
        )?;
        if let Some(line) = m.first_line {
            write!(out, r#" line="{line}""#)?;
        }
        writeln!(out, ">")?;
        write_counters(out, "        ", counters)?;
        writeln!(out, "      </method>")?;
    }
    write_counters(out, "      ", &c.counters)?;
    writeln!(out, "    </class>")
}
