//! Cobertura's XML report (coverage-04.dtd; read by Jenkins, GitLab, Azure
//! DevOps, pycobertura…): packages, classes (one per JVM class, inner ones
//! too, as Cobertura itself writes them), methods, and a `<line number hits>`
//! per line with code.
//!
//! - A class's `<lines>` sum its methods' counts per line (a line two methods
//!   share is one line with the sum); a method's `<lines>` are its own.
//! - Line rates: lines run / lines with code, per method, class, package and
//!   in all; with no line, 1 (Cobertura's own rule for an empty rate).
//! - No branch data: every `branch-rate` is 1, `branches-valid` and
//!   `branches-covered` 0, no `branch="true"` line; `complexity` is 0 (not
//!   measured). Both are required by the DTD.
//! - `filename` is the source path relative to `<source>`: the
//!   `--source-root` given, else `.`.
//! - `timestamp`: the snapshot file's modification time, ms since the epoch
//!   (the same snapshot gives the same report); `version`: profrj's.

use super::coverage::{line_totals, package, source_path, sum_lines};
use crate::snapshot::{CoverageClass, CoverageSection};
use quick_xml::escape::escape;
use std::collections::BTreeMap;
use std::fmt::Write as _;

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

fn write_lines(out: &mut String, indent: &str, lines: &BTreeMap<u32, u64>) {
    if lines.is_empty() {
        let _ = writeln!(out, "{indent}<lines/>");
        return;
    }
    let _ = writeln!(out, "{indent}<lines>");
    for (n, hits) in lines {
        let _ = writeln!(
            out,
            r#"{indent}  <line number="{n}" hits="{hits}" branch="false"/>"#
        );
    }
    let _ = writeln!(out, "{indent}</lines>");
}

pub fn cobertura(cov: &CoverageSection, root: Option<&str>, timestamp_ms: u64) -> String {
    // Package → its classes, by name.
    let mut packages: BTreeMap<&str, Vec<&CoverageClass>> = BTreeMap::new();
    for c in &cov.classes {
        packages.entry(package(c)).or_default().push(c);
    }
    let mut body = String::new();
    let mut all = (0, 0);
    for (name, mut classes) in packages {
        classes.sort_by(|a, b| a.name.cmp(&b.name));
        let mut pkg = (0, 0);
        let mut text = String::new();
        for c in classes {
            let lines = sum_lines(&c.methods);
            let totals = line_totals(&lines);
            pkg = add(pkg, totals);
            let _ = writeln!(
                text,
                r#"        <class name="{}" filename="{}" line-rate="{}" branch-rate="1.0" complexity="0">"#,
                escape(c.name.as_str()),
                escape(source_path(c).as_str()),
                rate(totals)
            );
            if c.methods.is_empty() {
                let _ = writeln!(text, "          <methods/>");
            } else {
                let _ = writeln!(text, "          <methods>");
                for m in &c.methods {
                    let own = sum_lines([m]);
                    let _ = writeln!(
                        text,
                        r#"            <method name="{}" signature="{}" line-rate="{}" branch-rate="1.0" complexity="0">"#,
                        escape(m.name.as_str()),
                        escape(m.signature.as_str()),
                        rate(line_totals(&own))
                    );
                    write_lines(&mut text, "              ", &own);
                    let _ = writeln!(text, "            </method>");
                }
                let _ = writeln!(text, "          </methods>");
            }
            write_lines(&mut text, "          ", &lines);
            let _ = writeln!(text, "        </class>");
        }
        all = add(all, pkg);
        let _ = writeln!(
            body,
            r#"    <package name="{}" line-rate="{}" branch-rate="1.0" complexity="0">"#,
            escape(name),
            rate(pkg)
        );
        let _ = writeln!(body, "      <classes>");
        body.push_str(&text);
        let _ = writeln!(body, "      </classes>");
        let _ = writeln!(body, "    </package>");
    }
    let mut out = String::new();
    let _ = writeln!(out, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(out, "{DOCTYPE}");
    let _ = writeln!(
        out,
        r#"<coverage line-rate="{}" branch-rate="1.0" lines-covered="{}" lines-valid="{}" branches-covered="0" branches-valid="0" complexity="0" version="profrj {}" timestamp="{timestamp_ms}">"#,
        rate(all),
        all.1,
        all.0,
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(out, "  <sources>");
    let source = root.filter(|r| !r.is_empty()).unwrap_or(".");
    let _ = writeln!(out, "    <source>{}</source>", escape(source));
    let _ = writeln!(out, "  </sources>");
    if body.is_empty() {
        let _ = writeln!(out, "  <packages/>");
    } else {
        let _ = writeln!(out, "  <packages>");
        out.push_str(&body);
        let _ = writeln!(out, "  </packages>");
    }
    let _ = writeln!(out, "</coverage>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::convert::coverage::tests::section;

    #[test]
    fn classes_lines_and_rates() {
        let xml = cobertura(&section(), None, 7);
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
