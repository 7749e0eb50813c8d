//! `report --html DIR --sources PATH`: the coverage pages, loaded in
//! headless Chromium. CoverageTruth's source page against the `//=` counts
//! of its lines (count and colour of every line), the summary tables
//! against the snapshot; every page read by xmllint as HTML and as XML;
//! hostile names, hostile sources and a hostile DIR.

use super::coverage::{coverage_run, coverage_truth_from_xml, COV};
use crate::common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

const SOURCES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/java-test-harness/src");

/// CoverageTruth.java's lines with code: line → count, the `//= N` of the
/// line plus the `name=N` of other methods on it.
fn line_truth() -> BTreeMap<u32, u64> {
    let src =
        std::fs::read_to_string(format!("{SOURCES}/profrj/harness/CoverageTruth.java")).unwrap();
    let mut out = BTreeMap::new();
    for (i, line) in src.lines().enumerate() {
        let Some((code, spec)) = line.split_once("//=") else {
            continue;
        };
        if code.trim_start().starts_with(['*', '/']) {
            continue; // the class comment explaining the notation
        }
        let spec = spec.split("//").next().unwrap();
        let n: u64 = spec
            .split_whitespace()
            .map(|w| w.rsplit('=').next().unwrap().parse::<u64>().unwrap())
            .sum();
        out.insert(i as u32 + 1, n);
    }
    out
}

/// A source page's rows as Chromium has them: line → (class, count text).
fn source_rows(dom: &str) -> BTreeMap<u32, (Option<String>, String)> {
    let mut out = BTreeMap::new();
    for chunk in dom.split("<tr id=\"L").skip(1) {
        let n: u32 = chunk[..chunk.find('"').unwrap()].parse().unwrap();
        let tag = &chunk[..chunk.find('>').unwrap()];
        let class = tag
            .split_once("class=\"")
            .map(|(_, rest)| rest[..rest.find('"').unwrap()].to_owned());
        let cell = &chunk[chunk.find("class=\"count\"").expect("a count cell")..];
        let cell = &cell[cell.find('>').unwrap() + 1..];
        let count = cell[..cell.find("</td>").unwrap()].to_owned();
        assert!(out.insert(n, (class, count)).is_none(), "line {n} twice");
    }
    out
}

/// The cells of the row `data-name="NAME"` (or the total row) of a summary
/// table: class of the cell → its text.
fn summary_row(dom: &str, name: Option<&str>) -> BTreeMap<String, String> {
    let start = match name {
        Some(n) => format!("<tr data-name=\"{n}\">"),
        None => "<tr class=\"total\">".to_owned(),
    };
    let row = &dom[dom
        .find(&start)
        .unwrap_or_else(|| panic!("no row {start}: {dom}"))..];
    let row = &row[..row.find("</tr>").unwrap()];
    let mut cells = BTreeMap::new();
    for cell in row.split("<td class=\"num ").skip(1) {
        let class = &cell[..cell.find('"').unwrap()];
        let text = &cell[cell.find('>').unwrap() + 1..cell.find("</td>").unwrap()];
        cells.insert(class.to_owned(), text.to_owned());
    }
    cells
}

fn figures(cells: &BTreeMap<String, String>) -> [String; 2] {
    [cells["lines"].clone(), cells["methods"].clone()]
}

fn want_figures(f: &[u64; 4]) -> [String; 2] {
    [format!("{}/{}", f[0], f[1]), format!("{}/{}", f[2], f[3])]
}

fn load(page: &Path) -> String {
    assert!(page.is_file(), "{} missing", page.display());
    chromium(&["--dump-dom", &format!("file://{}", page.display())])
}

/// Every page in `dir`: a safe name, read without an error by xmllint as
/// HTML and as XML, no raw control character.
fn check_pages(dir: &Path) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        assert!(e.file_type().unwrap().is_file(), "{name}");
        let safe = name == "index.html"
            || (name.len() > 7
                && name.as_bytes()[1] == b'-'
                && name.ends_with(".html")
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._$~-".contains(c)));
        assert!(safe, "page name {name:?}");
        for html in [true, false] {
            let mut cmd = Command::new("xmllint");
            if html {
                cmd.arg("--html");
            }
            let out = cmd
                .args(["--noout"])
                .arg(e.path())
                .output()
                .expect("xmllint (libxml2-utils) is required: scripts/test-all installs it");
            assert!(
                out.status.success() && out.stderr.is_empty(),
                "xmllint{} {name}: {}",
                if html { " --html" } else { "" },
                String::from_utf8_lossy(&out.stderr)
            );
        }
        let text = std::fs::read_to_string(e.path()).unwrap();
        let bad: Vec<char> = text
            .chars()
            .filter(|&c| c.is_control() && c != '\n' && c != '\t')
            .collect();
        assert!(bad.is_empty(), "{name}: raw control characters {bad:?}");
        names.insert(name);
    }
    names
}

/// CoverageTruth's pages: every line's count and colour equal its `//=`
/// count (missed when 0, covered otherwise: the snapshot has no branches),
/// every summary row the snapshot's figures.
#[test]
fn html_pages_of_coverage_truth_match_its_counts() {
    let (snap, xml) = coverage_run("html-cov", "coverage", harness_classes());
    let want = coverage_truth_from_xml(&xml);
    let dir = snap.parent().unwrap().join("pages");
    let out = profrj(&[
        "report",
        s(&snap),
        "--html",
        s(&dir),
        "--sources",
        &format!("/nonexistent:{SOURCES}"),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(out.stdout.is_empty(), "the pages are the output");
    assert!(
        stderr.contains("1 source files shown, 0 classes without"),
        "{stderr}"
    );
    let pages = check_pages(&dir);
    assert!(
        pages.contains("s-profrj.harness.CoverageTruth.java.html"),
        "{pages:?}"
    );

    // The source page: each line's count and colour.
    let dom = load(&dir.join("s-profrj.harness.CoverageTruth.java.html"));
    let rows = source_rows(&dom);
    let truth = line_truth();
    let src_lines = std::fs::read_to_string(format!("{SOURCES}/profrj/harness/CoverageTruth.java"))
        .unwrap()
        .lines()
        .count() as u32;
    assert_eq!(
        rows.keys().copied().collect::<Vec<_>>(),
        (1..=src_lines).collect::<Vec<_>>()
    );
    for (n, (class, count)) in &rows {
        match truth.get(n) {
            Some(&want) => {
                let colour = if want > 0 { "covered" } else { "missed" };
                assert_eq!(
                    (class.as_deref(), count.as_str()),
                    (Some(colour), want.to_string().as_str()),
                    "line {n}"
                );
            }
            None => assert_eq!(
                (class.as_deref(), count.as_str()),
                (None, ""),
                "line {n}: no code"
            ),
        }
    }
    assert!(
        !dom.contains("class=\"d "),
        "no branch marker without <branches>"
    );
    assert!(!dom.contains("class=\"num branches\""), "no branch column");
    // The file's classes, each with its figures, linked to its first line.
    for class in want.keys().filter(|k| k.starts_with(COV)) {
        assert_eq!(
            figures(&summary_row(&dom, Some(class))),
            want_figures(&want[class]),
            "{class}"
        );
    }
    let first = truth.keys().next().unwrap();
    assert!(dom.contains(&format!("href=\"#L{first}\"")), "{dom}");

    // The package page: a row per class, linked to its page and source line.
    let dom = load(&dir.join("p-profrj.harness.html"));
    for (class, f) in &want {
        assert_eq!(
            figures(&summary_row(&dom, Some(class))),
            want_figures(f),
            "{class}"
        );
    }
    assert!(
        dom.contains("href=\"c-profrj.harness.CoverageTruth$Idle.html\""),
        "{dom}"
    );
    let idle_line = harness_line("CoverageTruth", "static class Idle {");
    assert!(
        dom.contains(&format!(
            "href=\"s-profrj.harness.CoverageTruth.java.html#L{idle_line}\""
        )),
        "{dom}"
    );

    // The index: the package and the total equal the snapshot's sums.
    let dom = load(&dir.join("index.html"));
    let sum = want.values().fold([0; 4], |mut t, c| {
        for i in 0..4 {
            t[i] += c[i];
        }
        t
    });
    assert_eq!(figures(&summary_row(&dom, None)), want_figures(&sum));
    assert_eq!(
        figures(&summary_row(&dom, Some("profrj.harness"))),
        want_figures(&sum)
    );
    assert!(!dom.contains("Source not found"), "{dom}");

    // A class page: a row per method, its calls as the snapshot's.
    let dom = load(&dir.join("c-profrj.harness.CoverageTruth.html"));
    let never = summary_row(&dom, Some("neverCalled()V"));
    assert_eq!(never["calls"], "0");
    assert_eq!(summary_row(&dom, Some("pick(I)I"))["calls"], "5");

    // Again: refused whole; with --replace, the same pages.
    let before = std::fs::read(dir.join("index.html")).unwrap();
    let again = profrj(&["report", s(&snap), "--html", s(&dir), "--sources", SOURCES]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("pass --replace"));
    profrj_ok(&[
        "report",
        s(&snap),
        "--html",
        s(&dir),
        "--sources",
        SOURCES,
        "--replace",
    ]);
    assert_eq!(std::fs::read(dir.join("index.html")).unwrap(), before);
    assert_eq!(check_pages(&dir), pages);
}

/// A snapshot written here, with the names and sources an attacker would
/// choose: a class name and source that climb out of DIR and out of the
/// sources, markup in names, a control character; a source of 100 MB on
/// one line, a binary source, a FIFO. Nothing is written outside DIR,
/// nothing outside the sources is read, every name is shown escaped, the
/// long line is cut, and memory stays bounded.
#[test]
fn html_pages_of_hostile_names_and_sources() {
    let d = temp_dir("html-hostile");
    let src = d.join("src");
    std::fs::create_dir_all(src.join("big")).unwrap();
    std::fs::create_dir_all(src.join("bin")).unwrap();
    std::fs::create_dir_all(src.join("fifo")).unwrap();
    // Beside the sources, reachable only through `..`: never read.
    std::fs::write(d.join("Outside.java"), "secret outside the sources\n").unwrap();
    // 100 MB on line 2.
    {
        use std::io::Write;
        let mut f =
            std::io::BufWriter::new(std::fs::File::create(src.join("big/Big.java")).unwrap());
        writeln!(f, "class Big {{").unwrap();
        let chunk = vec![b'x'; 1 << 20];
        for _ in 0..100 {
            f.write_all(&chunk).unwrap();
        }
        write!(f, "\n}}\n").unwrap();
    }
    std::fs::write(
        src.join("bin/Bin.java"),
        b"\x7fELF\x02\x01\x01\0\0\0<script>",
    )
    .unwrap();
    let fifo = std::ffi::CString::new(
        src.join("fifo/F.java")
            .into_os_string()
            .into_encoded_bytes(),
    )
    .unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    let method = |first: u32, prints: &str| {
        format!("<method name=\"m\" signature=\"()V\" firstline=\"{first}\" count=\"1\"><footprints>{prints}</footprints></method>")
    };
    let classes = [
        ("../../escape", "../../../Outside.java", method(1, "1")),
        ("x", "../../Outside.java", method(1, "1")),
        (
            "p.&lt;script&gt;alert(1)&lt;/script&gt;",
            "&quot;&amp;&apos;&lt;b&gt;.java",
            method(1, "0"),
        ),
        ("q.Ctl\\u0001\\u001B[31m", "Ctl.java", method(1, "1")),
        // Line 5 is past the file's end (3 lines).
        ("big.Big", "Big.java", method(1, "1 7 1 -1 2")),
        ("bin.Bin", "Bin.java", method(1, "1")),
        ("fifo.F", "F.java", method(1, "1")),
    ];
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<doc>\n<coverage>\n");
    for (name, source, m) in &classes {
        xml += &format!("<class name=\"{name}\" source=\"{source}\">{m}</class>\n");
    }
    xml += "</coverage>\n</doc>\n";
    let snap = d.join("hostile.xml");
    std::fs::write(&snap, &xml).unwrap();
    let dir = d.join("pages");
    let run = run_measured(Command::new(env!("CARGO_BIN_EXE_profrj")).args([
        "report",
        s(&snap),
        "--html",
        s(&dir),
        "--sources",
        s(&src.join("big")),
        "--sources",
        s(&src),
    ]));
    assert_eq!(run.code, 0, "{}", run.text());
    // The 100 MB line is never held: a few MB (reader_budget.rs's bound).
    assert!(
        run.max_rss_kib < 32 << 10,
        "peak RSS {} KiB",
        run.max_rss_kib
    );
    let top: BTreeSet<String> = std::fs::read_dir(&d)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(
        top,
        ["Outside.java", "hostile.xml", "pages", "src"]
            .map(String::from)
            .into()
    );
    let pages = check_pages(&dir);
    // index, 7 packages (`../.`, the default one, p, q, big, bin, fifo), 7
    // classes, 2 sources found (Bin.java shown as binary); 5 not found
    // (2 climbing out, 2 not there, a FIFO).
    assert_eq!(pages.len(), 1 + 7 + 7 + 2, "{pages:?}");
    let sources: Vec<_> = pages.iter().filter(|p| p.starts_with("s-")).collect();
    assert_eq!(sources.len(), 2, "{pages:?}");
    for page in &pages {
        let text = std::fs::read_to_string(dir.join(page)).unwrap();
        assert!(
            !text.contains("secret outside"),
            "{page} read a file outside the sources"
        );
        assert!(!text.contains("<script"), "{page}: markup from a name");
    }

    let index = load(&dir.join("index.html"));
    assert!(index.contains("Source not found (5 classes)"), "{index}");
    assert!(
        index.contains("p.&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{index}"
    );
    assert!(index.contains("q.Ctl\\u0001\\u001B[31m"), "{index}");
    assert!(index.contains("p/\"&amp;'&lt;b&gt;.java"), "{index}");
    assert!(!index.contains("<script"), "{index}");

    let big = load(&dir.join(sources.iter().find(|p| p.contains("Big")).unwrap()));
    let rows = source_rows(&big);
    assert_eq!(rows.len(), 3, "{big}");
    assert_eq!(rows[&2], (Some("covered".into()), "7".into()));
    assert!(big.contains("… cut at 4096 bytes"), "the cut line says so");
    assert!(big.contains(&format!(">{}<span class=\"cut\">", "x".repeat(4096))));
    assert!(
        big.contains("code on lines past the file's end (1 lines: 5…)"),
        "{big}"
    );
    let bin = load(&dir.join(sources.iter().find(|p| p.contains("Bin")).unwrap()));
    assert!(
        bin.contains("The file is binary") && !bin.contains("ELF"),
        "{bin}"
    );

    // A DIR that is a link is refused; so is a page already there (the
    // pages are left as they were); --replace replaces a link planted at a
    // page's name, never writing through it.
    std::os::unix::fs::symlink(&dir, d.join("link")).unwrap();
    let out = profrj(&["report", s(&snap), "--html", s(&d.join("link"))]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is a link"),
        "{out:?}"
    );
    std::fs::write(d.join("victim"), "keep").unwrap();
    std::fs::remove_file(dir.join("index.html")).unwrap();
    std::os::unix::fs::symlink(d.join("victim"), dir.join("index.html")).unwrap();
    let out = profrj(&["report", s(&snap), "--html", s(&dir), "--sources", s(&src)]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("--replace"));
    assert!(std::fs::symlink_metadata(dir.join("index.html"))
        .unwrap()
        .is_symlink());
    profrj_ok(&[
        "report",
        s(&snap),
        "--html",
        s(&dir),
        "--sources",
        s(&src),
        "--replace",
    ]);
    assert_eq!(std::fs::read_to_string(d.join("victim")).unwrap(), "keep");
    assert_eq!(check_pages(&dir), pages);
    std::fs::remove_dir_all(&d).unwrap();
}
