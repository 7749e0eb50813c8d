//! The four kinds of page: the index (packages, and the classes whose
//! source was not found), a package (its classes), a class (its methods)
//! and a source file (its lines, coloured, with counts and branches).

use super::model::{figures, line_facts, ClassModel, Figures, LineFacts, PackageModel};
use super::page::{branch_title, figure_cells, head, html, name, summary_head, tail};
use super::source::{Lines, MAX_LINE};
use super::{Plan, SourceEntry};
use std::fs::File;
use std::io::{self, Write};

/// How a package is shown: its name, or `(default package)`.
fn package_label(p: &PackageModel) -> String {
    if p.name.is_empty() {
        "(default package)".to_owned()
    } else {
        name(p.name)
    }
}

/// A class's name without its package.
fn simple(class: &str) -> &str {
    class.rsplit_once('.').map_or(class, |(_, s)| s)
}

fn total_row(
    w: &mut dyn Write,
    label: &str,
    f: &Figures,
    branches: bool,
    extra: &str,
) -> io::Result<()> {
    write!(w, "<tfoot><tr class=\"total\"><td>{label}</td>")?;
    figure_cells(w, f, branches)?;
    writeln!(w, "{extra}</tr></tfoot>")
}

pub fn index(w: &mut dyn Write, plan: &Plan) -> io::Result<()> {
    head(w, "Coverage", &[("index".into(), "index.html".into())])?;
    let all = plan
        .packages
        .iter()
        .fold(Figures::default(), |f, p| f.add(p.figures));
    writeln!(w, "<table class=\"summary\" id=\"packages\">")?;
    summary_head(
        w,
        "Package",
        plan.branches,
        "<th class=\"num\">Classes</th>",
    )?;
    writeln!(w, "<tbody>")?;
    for (i, p) in plan.packages.iter().enumerate() {
        write!(
            w,
            "<tr data-name=\"{}\"><td><a href=\"{}\">{}</a></td>",
            name(p.name),
            plan.package_pages[i],
            package_label(p)
        )?;
        figure_cells(w, &p.figures, plan.branches)?;
        writeln!(w, "<td class=\"num\">{}</td></tr>", p.classes.len())?;
    }
    writeln!(w, "</tbody>")?;
    let classes: usize = plan.packages.iter().map(|p| p.classes.len()).sum();
    let extra = format!("<td class=\"num\">{classes}</td>");
    total_row(
        w,
        &format!("total ({} packages)", plan.packages.len()),
        &all,
        plan.branches,
        &extra,
    )?;
    writeln!(w, "</table>")?;
    let missing: Vec<(usize, usize)> = plan
        .class_refs()
        .filter(|&(p, c)| plan.source_page(&plan.packages[p].classes[c]).is_none())
        .collect();
    if !missing.is_empty() {
        writeln!(
            w,
            "<h2 id=\"not-found\">Source not found ({} classes)</h2>\n<p>Searched under: {}</p>",
            missing.len(),
            plan.roots_text()
        )?;
        writeln!(w, "<table class=\"summary\" id=\"missing\"><thead><tr><th>Class</th><th>Source file</th></tr></thead><tbody>")?;
        for (p, c) in missing {
            let class = &plan.packages[p].classes[c];
            writeln!(
                w,
                "<tr data-name=\"{}\"><td><a href=\"{}\">{}</a></td><td>{}</td></tr>",
                name(class.name),
                plan.class_pages[p][c],
                name(class.name),
                name(&class.source)
            )?;
        }
        writeln!(w, "</tbody></table>")?;
    }
    tail(w)
}

pub fn package(w: &mut dyn Write, plan: &Plan, p: usize) -> io::Result<()> {
    let pk = &plan.packages[p];
    let label = package_label(pk);
    head(
        w,
        &label,
        &[
            ("index".into(), "index.html".into()),
            (label.clone(), plan.package_pages[p].clone()),
        ],
    )?;
    writeln!(w, "<table class=\"summary\" id=\"classes\">")?;
    summary_head(w, "Class", plan.branches, "<th>Source</th>")?;
    writeln!(w, "<tbody>")?;
    for (c, class) in pk.classes.iter().enumerate() {
        write!(
            w,
            "<tr data-name=\"{}\"><td><a href=\"{}\">{}</a></td>",
            name(class.name),
            plan.class_pages[p][c],
            name(simple(class.name))
        )?;
        figure_cells(w, &class.figures, plan.branches)?;
        writeln!(w, "<td>{}</td></tr>", source_link(plan, class))?;
    }
    writeln!(w, "</tbody>")?;
    total_row(
        w,
        &format!("total ({} classes)", pk.classes.len()),
        &pk.figures,
        plan.branches,
        "<td></td>",
    )?;
    writeln!(w, "</table>")?;
    tail(w)
}

/// A link to the class's first line in its source page, or why there is none.
fn source_link(plan: &Plan, class: &ClassModel) -> String {
    match plan.source_page(class) {
        Some(page) => {
            let anchor = class.first_line.map_or(String::new(), |l| format!("#L{l}"));
            format!("<a href=\"{page}{anchor}\">{}</a>", name(&class.source))
        }
        None => format!(
            "<span class=\"missing\">source not found: {}</span>",
            name(&class.source)
        ),
    }
}

pub fn class(w: &mut dyn Write, plan: &Plan, p: usize, c: usize) -> io::Result<()> {
    let pk = &plan.packages[p];
    let class = &pk.classes[c];
    let label = name(class.name);
    head(
        w,
        &label,
        &[
            ("index".into(), "index.html".into()),
            (package_label(pk), plan.package_pages[p].clone()),
            (name(simple(class.name)), plan.class_pages[p][c].clone()),
        ],
    )?;
    writeln!(w, "<p>Source: {}</p>", source_link(plan, class))?;
    if class.first_line.is_none() && !class.methods.is_empty() {
        writeln!(w, "<p class=\"note\">No line numbers (compiled without them, e.g. javac -g:none): only calls are known.</p>")?;
    }
    writeln!(w, "<table class=\"summary\" id=\"methods\">")?;
    summary_head(
        w,
        "Method",
        plan.branches,
        "<th class=\"num\">Calls</th><th>Line</th>",
    )?;
    writeln!(w, "<tbody>")?;
    let page = plan.source_page(class);
    for m in &class.methods {
        let f = figures([*m]);
        let sig = format!("{}{}", m.name, m.signature);
        write!(
            w,
            "<tr data-name=\"{}\"><td>{}</td>",
            name(&sig),
            name(&sig)
        )?;
        figure_cells(w, &f, plan.branches)?;
        let line = match (m.first_line.filter(|_| !m.footprints.is_empty()), page) {
            (Some(l), Some(page)) => format!("<a href=\"{page}#L{l}\">{l}</a>"),
            (Some(l), None) => l.to_string(),
            (None, _) => "-".to_owned(),
        };
        writeln!(
            w,
            "<td class=\"num calls\">{}</td><td>{line}</td></tr>",
            m.count
        )?;
    }
    writeln!(w, "</tbody>")?;
    total_row(
        w,
        &format!("total ({} methods)", class.methods.len()),
        &class.figures,
        plan.branches,
        "<td></td><td></td>",
    )?;
    writeln!(w, "</table>")?;
    tail(w)
}

/// A source file's page: its classes' table, then every line of `file`.
pub fn source(
    w: &mut dyn Write,
    plan: &Plan,
    path: &str,
    entry: &SourceEntry,
    file: File,
) -> io::Result<()> {
    let classes: Vec<(usize, usize, &ClassModel)> = entry
        .classes
        .iter()
        .map(|&(p, c)| (p, c, &plan.packages[p].classes[c]))
        .collect();
    let page = entry.page.as_str();
    let p = classes.first().map_or(0, |c| c.0);
    head(
        w,
        &name(path),
        &[
            ("index".into(), "index.html".into()),
            (
                package_label(&plan.packages[p]),
                plan.package_pages[p].clone(),
            ),
            (
                name(path.rsplit('/').next().unwrap_or(path)),
                page.to_owned(),
            ),
        ],
    )?;
    writeln!(w, "<table class=\"summary\" id=\"classes\">")?;
    summary_head(w, "Class", plan.branches, "")?;
    writeln!(w, "<tbody>")?;
    let mut all = Figures::default();
    for &(p, c, class) in &classes {
        let anchor = class.first_line.map_or(String::new(), |l| {
            format!(" (<a href=\"#L{l}\">line {l}</a>)")
        });
        write!(
            w,
            "<tr data-name=\"{}\"><td><a href=\"{}\">{}</a>{anchor}</td>",
            name(class.name),
            plan.class_pages[p][c],
            name(simple(class.name))
        )?;
        figure_cells(w, &class.figures, plan.branches)?;
        writeln!(w, "</tr>")?;
        all = all.add(class.figures);
    }
    writeln!(w, "</tbody>")?;
    total_row(
        w,
        &format!("total ({} classes)", classes.len()),
        &all,
        plan.branches,
        "",
    )?;
    writeln!(w, "</table>")?;
    let lines = line_facts(
        classes
            .iter()
            .flat_map(|(_, _, c)| c.methods.iter().copied()),
    );
    let Some(mut text) = Lines::new(file)? else {
        writeln!(w, "<p class=\"note\" id=\"binary\">The file is binary (a NUL byte in its first block): not shown.</p>")?;
        return tail(w);
    };
    writeln!(w, "<table class=\"src\" id=\"source\"><tbody>")?;
    let mut n: u32 = 0;
    while let Some(line) = text.next_line()? {
        n = n.saturating_add(1);
        source_row(w, n, lines.get(&n), &line.text)?;
        if line.cut {
            write!(w, "<span class=\"cut\"> … cut at {MAX_LINE} bytes</span>")?;
        }
        writeln!(w, "</td></tr>")?;
    }
    writeln!(w, "</tbody></table>")?;
    let past: Vec<String> = lines
        .range(n.saturating_add(1)..)
        .map(|(l, _)| l.to_string())
        .collect();
    if !past.is_empty() {
        writeln!(
            w,
            "<p class=\"note\" id=\"past-end\">The snapshot has code on lines past the file's end ({} lines: {}…): the source is not the one the classes were compiled from.</p>",
            past.len(),
            past.iter().take(10).cloned().collect::<Vec<_>>().join(", ")
        )?;
    }
    tail(w)
}

/// A line's row, up to its text (the caller closes the cell and row).
fn source_row(w: &mut dyn Write, n: u32, facts: Option<&LineFacts>, text: &str) -> io::Result<()> {
    let Some(f) = facts else {
        return write!(
            w,
            "<tr id=\"L{n}\"><td class=\"n\"><a href=\"#L{n}\">{n}</a></td><td class=\"count\"></td><td class=\"br\"></td><td class=\"code\">{}",
            html(text)
        );
    };
    let title = f.instructions.map_or(String::new(), |i| {
        format!(" title=\"{} of {} instructions run\"", i.covered, i.total)
    });
    let diamond = f.branches.map_or(String::new(), |b| {
        let kind = match (b.covered, b.missed()) {
            (_, 0) => "all",
            (0, _) => "none",
            _ => "some",
        };
        format!(
            "<span class=\"d {kind}\" title=\"{}\">◆</span>",
            branch_title(b)
        )
    });
    write!(
        w,
        "<tr id=\"L{n}\" class=\"{}\"><td class=\"n\"><a href=\"#L{n}\">{n}</a></td><td class=\"count\"{title}>{}</td><td class=\"br\">{diamond}</td><td class=\"code\">{}",
        f.status().css(),
        f.count,
        html(text)
    )
}
