//! Cobertura's XML report (coverage-04.dtd; read by Jenkins, GitLab, Azure
//! DevOps, pycobertura…): packages, classes (one per JVM class, inner ones
//! too, as Cobertura itself writes them), methods, and a `<line number hits>`
//! per line with code.
//!
//! - A class's `<lines>` sum its methods' counts per line (a line two methods
//!   share is one line with the sum); a method's `<lines>` are its own.
//! - Line rates: lines run / lines with code, per method, class, package and
//!   in all; with no line, 1 (Cobertura's own rule for an empty rate).
//! - Branches (from `<branches>`): a line with branching instructions is
//!   `branch="true"` with `condition-coverage="P% (taken/outcomes)"` (P
//!   rounded down, so 100% only when every outcome was taken), over the
//!   instructions of the method, or of the class's methods on that line;
//!   `branch-rate`s are outcomes taken / outcomes per method, class,
//!   package and in all, and the root's `branches-valid` and
//!   `branches-covered` their sums. Without branches (none, or a snapshot
//!   without them) a rate is 1, as Cobertura's own rule for an empty rate.
//! - `complexity` is 0 (not measured), required by the DTD.
//! - `filename` is the source path relative to `<source>`: the
//!   `--source-root` given, else `.`.
//! - `timestamp`: the snapshot file's modification time, ms since the epoch
//!   (the same snapshot gives the same report); `version`: profrj's.
//! - Names and paths are escaped as the snapshot escapes them (a control
//!   character, which XML 1.0 forbids, as `\uXXXX`, a backslash `\\`), then
//!   as XML wants (`&lt;`…).

use super::coverage::{
    branch_totals, escaped, line_totals, package, source_path, sum_branches, sum_lines,
};
use crate::snapshot::{CoverageClass, CoverageSection};
use std::collections::BTreeMap;
use std::io::{self, Write};

pub const DOCTYPE: &str =
    r#"<!DOCTYPE coverage SYSTEM "http://cobertura.sourceforge.net/xml/coverage-04.dtd">"#;

/// Covered / valid, 1 when there is nothing to cover.
fn rate((valid, covered): (u64, u64)) -> String {
    let r = if valid == 0 {
        1.0
    } else {
        covered as f64 / valid as f64
    };
    format!("{r:?}")
}

fn add(a: (u64, u64), b: (u64, u64)) -> (u64, u64) {
    (a.0.saturating_add(b.0), a.1.saturating_add(b.1))
}

/// A name or path for an attribute: escaped as the snapshot escapes it
/// (no control character, which XML 1.0 forbids), then XML's `&<>"'`.
fn attr(s: &str) -> String {
    quick_xml::escape::escape(escaped(s).as_str()).into_owned()
}

/// Branches by line, as [`sum_branches`] gives them.
type Branches<'a> = BTreeMap<u32, Vec<&'a [u64]>>;

/// (outcomes, taken) of every branch of `branches`.
fn totals_of(branches: &Branches<'_>) -> (u64, u64) {
    branch_totals(branches.values().flatten().copied())
}

fn write_lines(
    out: &mut dyn Write,
    indent: &str,
    lines: &BTreeMap<u32, u64>,
    branches: &Branches<'_>,
) -> io::Result<()> {
    if lines.is_empty() {
        return writeln!(out, "{indent}<lines/>");
    }
    writeln!(out, "{indent}<lines>")?;
    for (n, hits) in lines {
        match branches.get(n) {
            Some(on_line) => {
                let (valid, covered) = branch_totals(on_line.iter().copied());
                let percent = covered * 100 / valid.max(1);
                writeln!(
                    out,
                    r#"{indent}  <line number="{n}" hits="{hits}" branch="true" condition-coverage="{percent}% ({covered}/{valid})"/>"#
                )?
            }
            None => writeln!(
                out,
                r#"{indent}  <line number="{n}" hits="{hits}" branch="false"/>"#
            )?,
        }
    }
    writeln!(out, "{indent}</lines>")
}

/// Writes the report: the totals first (the root element carries them),
/// then each package as it is formatted. What is held: the classes grouped
/// by package and each package's totals.
pub fn cobertura(
    out: &mut dyn Write,
    cov: &CoverageSection,
    root: Option<&str>,
    timestamp_ms: u64,
) -> io::Result<()> {
    // Package → its classes, by name; and its totals (lines, branches).
    type Totals = ((u64, u64), (u64, u64));
    let mut packages: BTreeMap<&str, (Vec<&CoverageClass>, Totals)> = BTreeMap::new();
    for c in &cov.classes {
        packages.entry(package(c)).or_default().0.push(c);
    }
    let (mut all, mut all_branches) = ((0, 0), (0, 0));
    for (classes, (totals, branches)) in packages.values_mut() {
        classes.sort_by(|a, b| a.name.cmp(&b.name));
        for c in classes.iter() {
            *totals = add(*totals, line_totals(&sum_lines(&c.methods)));
            *branches = add(*branches, totals_of(&sum_branches(&c.methods)));
        }
        all = add(all, *totals);
        all_branches = add(all_branches, *branches);
    }
    writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#)?;
    writeln!(out, "{DOCTYPE}")?;
    writeln!(
        out,
        r#"<coverage line-rate="{}" branch-rate="{}" lines-covered="{}" lines-valid="{}" branches-covered="{}" branches-valid="{}" complexity="0" version="profrj {}" timestamp="{timestamp_ms}">"#,
        rate(all),
        rate(all_branches),
        all.1,
        all.0,
        all_branches.1,
        all_branches.0,
        env!("CARGO_PKG_VERSION")
    )?;
    writeln!(out, "  <sources>")?;
    let source = root.filter(|r| !r.is_empty()).unwrap_or(".");
    writeln!(out, "    <source>{}</source>", attr(source))?;
    writeln!(out, "  </sources>")?;
    if packages.is_empty() {
        writeln!(out, "  <packages/>")?;
    } else {
        writeln!(out, "  <packages>")?;
        for (name, (classes, totals)) in &packages {
            write_package(out, name, classes, *totals)?;
        }
        writeln!(out, "  </packages>")?;
    }
    writeln!(out, "</coverage>")
}

fn write_package(
    out: &mut dyn Write,
    name: &str,
    classes: &[&CoverageClass],
    (totals, branch_totals): ((u64, u64), (u64, u64)),
) -> io::Result<()> {
    writeln!(
        out,
        r#"    <package name="{}" line-rate="{}" branch-rate="{}" complexity="0">"#,
        attr(name),
        rate(totals),
        rate(branch_totals)
    )?;
    writeln!(out, "      <classes>")?;
    for c in classes {
        let lines = sum_lines(&c.methods);
        let branches = sum_branches(&c.methods);
        writeln!(
            out,
            r#"        <class name="{}" filename="{}" line-rate="{}" branch-rate="{}" complexity="0">"#,
            attr(&c.name),
            attr(&source_path(c)),
            rate(line_totals(&lines)),
            rate(totals_of(&branches))
        )?;
        if c.methods.is_empty() {
            writeln!(out, "          <methods/>")?;
        } else {
            writeln!(out, "          <methods>")?;
            for m in &c.methods {
                let own = sum_lines([m]);
                let own_branches = sum_branches([m]);
                writeln!(
                    out,
                    r#"            <method name="{}" signature="{}" line-rate="{}" branch-rate="{}" complexity="0">"#,
                    attr(&m.name),
                    attr(&m.signature),
                    rate(line_totals(&own)),
                    rate(totals_of(&own_branches))
                )?;
                write_lines(out, "              ", &own, &own_branches)?;
                writeln!(out, "            </method>")?;
            }
            writeln!(out, "          </methods>")?;
        }
        write_lines(out, "          ", &lines, &branches)?;
        writeln!(out, "        </class>")?;
    }
    writeln!(out, "      </classes>")?;
    writeln!(out, "    </package>")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::coverage::tests::section;

    #[test]
    fn classes_lines_and_rates() {
        let mut out = Vec::new();
        cobertura(&mut out, &section(), None, 7).unwrap();
        let xml = String::from_utf8(out).unwrap();
        let doc = roxmltree::Document::parse_with_options(
            &xml,
            roxmltree::ParsingOptions {
                allow_dtd: true,
                ..Default::default()
            },
        )
        .unwrap();
        let root = doc.root_element();
        assert_eq!(root.attribute("lines-valid"), Some("7"));
        assert_eq!(root.attribute("lines-covered"), Some("5"));
        assert_eq!(root.attribute("timestamp"), Some("7"));
        let class = |name: &str| {
            doc.descendants()
                .find(|n| n.has_tag_name("class") && n.attribute("name") == Some(name))
                .unwrap()
        };
        let a = class("p.q.A");
        assert_eq!(a.attribute("filename"), Some("p/q/A.java"));
        assert_eq!(a.attribute("line-rate"), Some("0.8"));
        let lines: Vec<(String, String)> = a
            .children()
            .find(|n| n.has_tag_name("lines"))
            .unwrap()
            .children()
            .filter(|n| n.is_element())
            .map(|l| {
                (
                    l.attribute("number").unwrap().to_owned(),
                    l.attribute("hits").unwrap().to_owned(),
                )
            })
            .collect();
        let want = [
            ("3", "2"),
            ("5", "2"),
            ("10", "8"),
            ("11", "0"),
            ("13", "3"),
        ];
        let want: Vec<(String, String)> = want
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect();
        assert_eq!(lines, want);
        assert_eq!(class("p.q.A$Inner").attribute("line-rate"), Some("0.0"));
        let pkg = doc
            .descendants()
            .find(|n| n.has_tag_name("package") && n.attribute("name") == Some("p.q"))
            .unwrap();
        assert_eq!(pkg.attribute("line-rate"), Some("0.6666666666666666"));
        let top = doc
            .descendants()
            .find(|n| n.has_tag_name("package") && n.attribute("name") == Some(""))
            .unwrap();
        assert_eq!(top.attribute("line-rate"), Some("1.0"));
    }
}
