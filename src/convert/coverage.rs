//! A `<coverage>` section regrouped by source file, as LCOV (`lcov.rs`) and
//! Cobertura (`cobertura.rs`) want it: what both share.
//!
//! - A class's source path is its package as directories plus its
//!   `SourceFile` name (the `source` attribute); a class without one (no
//!   debug information) is given its outer class's simple name + `.java`
//!   (`p.Outer$Inner` → `p/Outer.java`), where javac would have put it.
//! - A line's count is the sum over every method that has code on it (of
//!   every class of the file, for LCOV; of the class, for Cobertura's class
//!   lines): field initialisers copied into several constructors, a lambda on
//!   its enclosing method's line, count once with the sum.
//! - A footprint of -1 (no code) is no line; 0 is a line never run.
//! - Names and paths are escaped as the snapshot escapes them ([`escaped`]).
//! - A method without line numbers (`firstline="-1"`) has no lines; LCOV
//!   cannot place it (`FN` needs a line), so it is left out of `FN`/`FNDA`.

use crate::snapshot::{CoverageClass, CoverageMethod, CoverageSection};
use std::collections::BTreeMap;

/// A class's source path, relative: `p/q/File.java` (as the names are:
/// each writer escapes it).
pub fn source_path(class: &CoverageClass) -> String {
    let (package, simple) = match class.name.rsplit_once('.') {
        Some((p, s)) => (Some(p), s),
        None => (None, class.name.as_str()),
    };
    let file = match class.source.as_deref().map(str::trim) {
        Some(s) if !s.is_empty() => s.to_owned(),
        _ => default_source(simple),
    };
    match package {
        Some(p) => format!("{}/{file}", p.replace('.', "/")),
        None => file,
    }
}

/// The source file javac gives a class without a `SourceFile` name: its
/// outer class's simple name + `.java` (`Outer$Inner` → `Outer.java`).
pub fn default_source(simple: &str) -> String {
    let outer = simple.split('$').next().filter(|o| !o.is_empty());
    format!("{}.java", outer.unwrap_or(simple))
}

/// A name or path as every writer escapes it (`profrj_format::escape`): a
/// control character (a newline would start a record of its own in a
/// line-based format; XML 1.0 forbids most) as `\uXXXX`, a backslash `\\`.
pub fn escaped(s: &str) -> String {
    profrj_format::names::escape(s).into_owned()
}

/// The package of a class (`""` for the default package).
pub fn package(class: &CoverageClass) -> &str {
    class.name.rsplit_once('.').map_or("", |(p, _)| p)
}

/// A method's lines with code: (line, count), in line order. Lines past
/// `u32::MAX` (impossible in a class file) are dropped.
pub fn method_lines(m: &CoverageMethod) -> impl Iterator<Item = (u32, u64)> + '_ {
    let first = m.first_line.unwrap_or(0);
    m.footprints
        .iter()
        .enumerate()
        .filter(|&(_, &n)| n >= 0)
        .filter_map(move |(i, &n)| {
            let line = u32::try_from(i).ok()?.checked_add(first)?;
            Some((line, n as u64))
        })
}

/// Line → summed count, over the given methods.
pub fn sum_lines<'a>(methods: impl IntoIterator<Item = &'a CoverageMethod>) -> BTreeMap<u32, u64> {
    let mut lines = BTreeMap::new();
    for m in methods {
        for (line, n) in method_lines(m) {
            let e: &mut u64 = lines.entry(line).or_insert(0);
            *e = e.saturating_add(n);
        }
    }
    lines
}

/// Line → the branching instructions on it (each its outcomes' counts), in
/// method and bytecode order, over the given methods. An instruction
/// without a line is left out (no format can place it).
pub fn sum_branches<'a>(
    methods: impl IntoIterator<Item = &'a CoverageMethod>,
) -> BTreeMap<u32, Vec<&'a [u64]>> {
    let mut lines: BTreeMap<u32, Vec<&[u64]>> = BTreeMap::new();
    for m in methods {
        for b in &m.branches {
            if let Some(line) = b.line {
                lines.entry(line).or_default().push(&b.outcomes);
            }
        }
    }
    lines
}

/// (outcomes, outcomes taken) of some branching instructions: an outcome
/// is covered when it was taken at least once (as JaCoCo counts).
pub fn branch_totals<'a>(branches: impl IntoIterator<Item = &'a [u64]>) -> (u64, u64) {
    branches.into_iter().fold((0, 0), |(valid, covered), b| {
        let taken = b.iter().filter(|&&n| n > 0).count() as u64;
        (valid + b.len() as u64, covered + taken)
    })
}

/// (lines with code, lines run).
pub fn line_totals(lines: &BTreeMap<u32, u64>) -> (u64, u64) {
    let valid = lines.len() as u64;
    let covered = lines.values().filter(|&&n| n > 0).count() as u64;
    (valid, covered)
}

/// The classes of one source file.
pub struct SourceFile<'a> {
    pub path: String,
    pub classes: Vec<&'a CoverageClass>,
}

/// The section's classes by source path, in path order; classes keep their
/// document order within a file.
pub fn by_source(cov: &CoverageSection) -> Vec<SourceFile<'_>> {
    let mut files: BTreeMap<String, Vec<&CoverageClass>> = BTreeMap::new();
    for c in &cov.classes {
        files.entry(source_path(c)).or_default().push(c);
    }
    files
        .into_iter()
        .map(|(path, classes)| SourceFile { path, classes })
        .collect()
}

/// `root/path`, or `path` without a root.
pub fn under_root(root: Option<&str>, path: &str) -> String {
    match root {
        Some(r) if !r.is_empty() => format!("{}/{path}", r.trim_end_matches('/')),
        _ => path.to_owned(),
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    pub fn method(name: &str, first: Option<u32>, count: u64, prints: &[i64]) -> CoverageMethod {
        CoverageMethod {
            name: name.into(),
            signature: "()V".into(),
            first_line: first,
            count,
            footprints: prints.to_vec(),
            branches: Vec::new(),
            instructions: None,
            filtered: None,
            generated: None,
        }
    }

    /// Two classes of one file (one without a source name), a line two
    /// methods share, a method without lines, the default package.
    pub fn section() -> CoverageSection {
        CoverageSection {
            classes: vec![
                CoverageClass {
                    name: "p.q.A".into(),
                    source: Some("A.java".into()),
                    id: None,
                    methods: vec![
                        method("<init>", Some(3), 2, &[2, -1, 2]),
                        method("run", Some(10), 3, &[3, 0, -1, 3]),
                        method("lambda$run$0", Some(10), 5, &[5]),
                        method("bridge", None, 1, &[]),
                    ],
                },
                CoverageClass {
                    name: "p.q.A$Inner".into(),
                    source: None,
                    id: None,
                    methods: vec![method("<init>", Some(20), 0, &[0])],
                },
                CoverageClass {
                    name: "Top".into(),
                    source: Some("Top.kt".into()),
                    id: None,
                    methods: vec![method("f", Some(1), 1, &[1])],
                },
            ],
        }
    }

    #[test]
    fn paths_and_shared_lines() {
        let cov = section();
        let files = by_source(&cov);
        let paths: Vec<_> = files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["Top.kt", "p/q/A.java"]);
        assert_eq!(files[1].classes.len(), 2);
        let lines = sum_lines(files[1].classes.iter().flat_map(|c| &c.methods));
        let want: BTreeMap<u32, u64> = [(3, 2), (5, 2), (10, 8), (11, 0), (13, 3), (20, 0)]
            .into_iter()
            .collect();
        assert_eq!(lines, want);
        assert_eq!(line_totals(&lines), (6, 4));
        assert_eq!(under_root(Some("/src/"), "p/A.java"), "/src/p/A.java");
        let odd = CoverageClass {
            name: "x.Y".into(),
            source: Some("Y\n.java".into()),
            id: None,
            methods: vec![],
        };
        assert_eq!(escaped(&source_path(&odd)), "x/Y\\u000A.java");
    }
}
