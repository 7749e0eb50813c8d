//! What every page shares: the head with its small stylesheet (no script:
//! the pages are static, for a CI artifact; HTML that is well-formed XML
//! too, so `xmllint` reads it both ways), the trail of links back to the
//! index, escaping, and the cells of a summary table.

use super::model::{Figures, Ratio};
use std::io::{self, Write};

const CSS: &str = "\
body{font:14px/1.4 system-ui,sans-serif;margin:1em 2em;color:#222}\
a{color:#0645ad;text-decoration:none}a:hover{text-decoration:underline}\
p.trail{margin:0 0 .5em;color:#666}\
table{border-collapse:collapse;margin:.5em 0}\
th,td{padding:2px 8px;text-align:left}\
table.summary td,table.summary th{border-bottom:1px solid #ddd}\
table.summary td.num,table.summary th.num{text-align:right;font-variant-numeric:tabular-nums}\
tr.total td{font-weight:bold;border-top:2px solid #999}\
.bar{display:inline-block;width:120px;height:10px;background:#e33;vertical-align:middle}\
.bar span{display:block;height:10px;background:#3a3}\
.nobar{display:inline-block;width:120px;height:10px;background:#ccc;vertical-align:middle}\
table.src{font:13px/1.3 ui-monospace,monospace;width:100%}\
table.src td{padding:0 6px;white-space:pre;tab-size:4;vertical-align:top}\
table.src td.n,table.src td.count{text-align:right;color:#888;user-select:none}\
table.src td.n a{color:#888}\
tr.covered td.code{background:#cfc}tr.partly td.code{background:#ffe38a}tr.missed td.code{background:#fcc}\
tr.covered td.count{color:#070}tr.missed td.count{color:#b00}\
.d{cursor:help}.d.all{color:#2a2}.d.some{color:#c90}.d.none{color:#d22}\
.cut{color:#888;font-style:italic}\
.note{background:#f4f4f4;border-left:4px solid #999;padding:.3em .8em;margin:.5em 0}\
";

/// `s` for HTML text or a quoted attribute.
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A name from the snapshot for HTML: escaped as every writer escapes names
/// (a control character as `\uXXXX`, a backslash `\\`), then as HTML.
pub fn name(s: &str) -> String {
    html(&profrj_format::names::escape(s))
}

/// The page's start: head, stylesheet, the trail of links (label, page
/// name) and the title as a heading. `title` is HTML already.
pub fn head(w: &mut dyn Write, title: &str, trail: &[(String, String)]) -> io::Result<()> {
    write!(
        w,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n\
         <title>{title} - profrj coverage</title>\n<style>{CSS}</style>\n</head>\n<body>\n<p class=\"trail\">"
    )?;
    for (i, (label, href)) in trail.iter().enumerate() {
        if i > 0 {
            write!(w, " › ")?;
        }
        write!(w, "<a href=\"{href}\">{label}</a>")?;
    }
    writeln!(w, "</p>\n<h1>{title}</h1>")
}

pub fn tail(w: &mut dyn Write) -> io::Result<()> {
    writeln!(w, "<p class=\"note\">Written by profrj {} from a snapshot's &lt;coverage&gt; section.</p>\n</body>\n</html>", env!("CARGO_PKG_VERSION"))
}

pub fn pct(r: Ratio) -> Option<f64> {
    (r.total > 0).then(|| r.covered as f64 * 100.0 / r.total as f64)
}

/// The head row of a summary table; `first` names the first column.
pub fn summary_head(w: &mut dyn Write, first: &str, branches: bool, extra: &str) -> io::Result<()> {
    write!(
        w,
        "<thead><tr><th>{first}</th><th class=\"num\">Lines</th><th class=\"num\">%</th><th>Covered</th>"
    )?;
    if branches {
        write!(w, "<th class=\"num\">Branches</th><th class=\"num\">%</th>")?;
    }
    writeln!(w, "<th class=\"num\">Methods</th>{extra}</tr></thead>")
}

/// The figures' cells of a summary row: lines covered/total, their share
/// and its bar, branches (a column only when `branches`; `-` where this
/// row's are unknown), methods run/total.
pub fn figure_cells(w: &mut dyn Write, f: &Figures, branches: bool) -> io::Result<()> {
    let share = |r: Ratio| pct(r).map_or("-".to_owned(), |p| format!("{p:.1}%"));
    write!(
        w,
        "<td class=\"num lines\">{}/{}</td><td class=\"num lpct\">{}</td><td>",
        f.lines.covered,
        f.lines.total,
        share(f.lines)
    )?;
    match pct(f.lines) {
        Some(p) => write!(
            w,
            "<span class=\"bar\"><span style=\"width:{p:.1}%\"></span></span>"
        )?,
        None => write!(w, "<span class=\"nobar\" title=\"no line numbers\"></span>")?,
    }
    write!(w, "</td>")?;
    if branches {
        match f.branches {
            Some(b) => write!(
                w,
                "<td class=\"num branches\">{}/{}</td><td class=\"num bpct\">{}</td>",
                b.covered,
                b.total,
                share(b)
            )?,
            None => write!(
                w,
                "<td class=\"num branches\">-</td><td class=\"num bpct\">-</td>"
            )?,
        }
    }
    write!(
        w,
        "<td class=\"num methods\">{}/{}</td>",
        f.methods.covered, f.methods.total
    )
}

/// A branch marker's tooltip, as JaCoCo words it.
pub fn branch_title(b: Ratio) -> String {
    if b.missed() == 0 {
        format!("all {} branches covered", b.total)
    } else {
        format!("{} of {} branches missed", b.missed(), b.total)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_and_titles() {
        assert_eq!(
            html("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(name("A\u{1b}<b>\\"), "A\\u001B&lt;b&gt;\\\\");
        assert_eq!(
            branch_title(Ratio {
                covered: 2,
                total: 4
            }),
            "2 of 4 branches missed"
        );
        assert_eq!(
            branch_title(Ratio {
                covered: 2,
                total: 2
            }),
            "all 2 branches covered"
        );
    }
}
