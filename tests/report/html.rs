//! `report --html DIR --sources PATH`: the coverage pages, loaded in
//! headless Chromium. CoverageTruth's source page against the `//=` counts
//! of its lines (count and colour of every line), the summary tables
//! against the snapshot; every page read by xmllint as HTML and as XML;
//! hostile names, hostile sources and a hostile DIR.

use super::coverage::{coverage_run, coverage_run_of, coverage_truth_from_xml, COV};
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

/// The `<branches>` of CoverageTruth's classes in the snapshot, read here
/// with no help from profrj: line → (outcomes, outcomes taken).
fn snapshot_branches(xml: &str) -> BTreeMap<u32, (u64, u64)> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let mut out: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for b in doc.descendants().filter(|n| {
        n.has_tag_name("branches")
            && n.ancestors().any(|c| {
                c.has_tag_name("class") && c.attribute("name").is_some_and(|n| n.starts_with(COV))
            })
    }) {
        for token in b.text().unwrap_or_default().split_whitespace() {
            let (line, counts) = token.split_once(':').unwrap();
            let e = out.entry(line.parse().unwrap()).or_default();
            for n in counts.split(',').map(|n| n.parse::<u64>().unwrap()) {
                e.0 += 1;
                e.1 += (n > 0) as u64;
            }
        }
    }
    out
}

/// The `<instructions>` of `class` and its nested classes in the
/// snapshot, read here: line → (instructions run, instructions), summed
/// over methods.
fn snapshot_instructions(xml: &str, class: &str) -> BTreeMap<u32, (u64, u64)> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let mut out: BTreeMap<u32, (u64, u64)> = BTreeMap::new();
    for m in doc.descendants().filter(|n| {
        n.has_tag_name("method")
            && n.parent()
                .and_then(|c| c.attribute("name"))
                .is_some_and(|n| n.starts_with(class))
    }) {
        let Some(cells) = m.children().find(|c| c.has_tag_name("instructions")) else {
            continue;
        };
        let first: u32 = m.attribute("firstline").unwrap().parse().unwrap();
        for (i, cell) in cells.text().unwrap().split_whitespace().enumerate() {
            let (ran, all) = cell.split_once('/').unwrap();
            let (ran, all): (u64, u64) = (ran.parse().unwrap(), all.parse().unwrap());
            if all > 0 {
                let e = out.entry(first + i as u32).or_default();
                e.0 += ran;
                e.1 += all;
            }
        }
    }
    out
}

/// A source page's count cells' tooltips: line → title.
fn count_titles(dom: &str) -> BTreeMap<u32, String> {
    let mut out = BTreeMap::new();
    for chunk in dom.split("<tr id=\"L").skip(1) {
        let n: u32 = chunk[..chunk.find('"').unwrap()].parse().unwrap();
        let cell = &chunk[chunk.find("class=\"count\"").unwrap()..];
        let tag = &cell[..cell.find('>').unwrap()];
        if let Some((_, t)) = tag.split_once("title=\"") {
            out.insert(n, t[..t.find('"').unwrap()].to_owned());
        }
    }
    out
}

/// A marker's tooltip, as the page words it (JaCoCo's words).
fn branch_title(total: u64, taken: u64) -> String {
    match total - taken {
        0 => format!("all {total} branches covered"),
        missed => format!("{missed} of {total} branches missed"),
    }
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

/// CoverageTruth's pages: every line's count equals its `//=` count, its
/// colour missed when 0, else partly where the snapshot's `<branches>` have
/// an outcome never taken on it, else covered; every branch marker the
/// snapshot's; every summary row the snapshot's figures.
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

    // The source page: each line's count and colour, and branch marker.
    let dom = load(&dir.join("s-profrj.harness.CoverageTruth.java.html"));
    let rows = source_rows(&dom);
    let truth = line_truth();
    let branches = snapshot_branches(&xml);
    let instructions = snapshot_instructions(&xml, COV);
    assert!(
        instructions.len() == truth.len(),
        "every line with code has instructions: {instructions:?}"
    );
    assert!(
        branches.values().any(|b| b.1 < b.0),
        "CoverageTruth has branches never taken (sign's v < 0)"
    );
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
                let missed = |r: Option<&(u64, u64)>| r.is_some_and(|(a, b)| a != b);
                let colour = if want == 0 {
                    "missed"
                } else if missed(branches.get(n).map(|(t, c)| (*c, *t)).as_ref())
                    || missed(instructions.get(n))
                {
                    "partly"
                } else {
                    "covered"
                };
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
    let titles: BTreeMap<u32, String> = instructions
        .iter()
        .map(|(&l, &(ran, all))| (l, format!("{ran} of {all} instructions run")))
        .collect();
    assert_eq!(count_titles(&dom), titles);
    let marks = diamonds(&dom);
    let want_marks: BTreeMap<u32, String> = branches
        .iter()
        .map(|(&l, &(total, taken))| (l, branch_title(total, taken)))
        .collect();
    let got_marks: BTreeMap<u32, String> = marks.into_iter().map(|(l, (_, t))| (l, t)).collect();
    assert_eq!(got_marks, want_marks);
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
    let (total, taken) = branches
        .values()
        .fold((0, 0), |t, b| (t.0 + b.0, t.1 + b.1));
    assert!(
        want.keys().all(|c| c.starts_with(COV)),
        "only CoverageTruth's classes: their branches are the total"
    );
    assert_eq!(
        summary_row(&dom, None)["branches"],
        format!("{taken}/{total}")
    );

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
    // The 100 MB line is never held: profrj runs within 48 MiB of address
    // space (it needs under 32; reading the file whole could not). A limit,
    // not a peak RSS: wait4's ru_maxrss of a child spawned from this test
    // process counts this process's own peak (the mm it ran in before exec).
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_profrj"));
    cmd.args([
        "report",
        s(&snap),
        "--html",
        s(&dir),
        "--sources",
        s(&src.join("big")),
        "--sources",
        s(&src),
    ]);
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between
    // fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let limit = libc::rlimit {
                rlim_cur: 48 << 20,
                rlim_max: 48 << 20,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        })
    };
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
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
    // A snapshot without <branches> (an older one): no branch column, no marker.
    for dom in [&index, &big] {
        assert!(!dom.contains("class=\"num branches\""), "{dom}");
        assert!(!dom.contains("class=\"d "), "{dom}");
    }
    let bin = load(&dir.join(sources.iter().find(|p| p.contains("Bin")).unwrap()));
    assert!(
        bin.contains("The file is binary") && !bin.contains("ELF"),
        "{bin}"
    );

    // Options of the terminal tables are refused with --html, --sources
    // without it; a snapshot without <coverage> has no pages.
    let unused = d.join("unused");
    let html = ["--html", s(&unused)];
    for (args, why) in [
        (
            [&html[..], &["--section", "sampler"]].concat(),
            "--section, --metric and --thread",
        ),
        (
            [&html[..], &["--thread", "main"]].concat(),
            "--section, --metric and --thread",
        ),
        (vec!["--sources", "x"], "--html"),
    ] {
        let all = [&["report", s(&snap)][..], &args].concat();
        let out = profrj(&all);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            !out.status.success() && stderr.contains(why),
            "{all:?}: {stderr}"
        );
    }
    let bare = d.join("bare.xml");
    std::fs::write(&bare, "<doc><memory></memory></doc>").unwrap();
    let out = profrj(&["report", s(&bare), "--html", s(&unused)]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("has no <coverage> section"), "{stderr}");
    assert!(!unused.exists(), "nothing made for a refused command");

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

/// BranchTruth's `//@` tokens: line → (outcomes, outcomes taken, whether
/// the line's branching instructions ran at all).
fn branch_truth() -> BTreeMap<u32, (u64, u64, bool)> {
    let src =
        std::fs::read_to_string(format!("{SOURCES}/profrj/harness/BranchTruth.java")).unwrap();
    let mut out = BTreeMap::new();
    for (i, line) in src.lines().enumerate() {
        let Some((code, spec)) = line.split_once("//@") else {
            continue;
        };
        if code.trim_start().starts_with(['*', '/']) {
            continue; // the class comment explaining the notation
        }
        let spec = spec.split("//").next().unwrap(); // a further comment
        let (mut total, mut taken, mut ran) = (0, 0, false);
        for token in spec.split_whitespace() {
            for n in token.split(',').map(|n| n.parse::<u64>().unwrap()) {
                total += 1;
                taken += (n > 0) as u64;
                ran |= n > 0;
            }
        }
        out.insert(i as u32 + 1, (total, taken, ran));
    }
    out
}

/// A source page's branch markers: line → (marker class, tooltip).
fn diamonds(dom: &str) -> BTreeMap<u32, (String, String)> {
    let mut out = BTreeMap::new();
    for chunk in dom.split("<tr id=\"L").skip(1) {
        let n: u32 = chunk[..chunk.find('"').unwrap()].parse().unwrap();
        let row = &chunk[..chunk.find("</tr>").unwrap()];
        let Some((_, d)) = row.split_once("<span class=\"d ") else {
            continue;
        };
        let kind = d[..d.find('"').unwrap()].to_owned();
        let title = d.split_once("title=\"").unwrap().1;
        out.insert(n, (kind, title[..title.find('"').unwrap()].to_owned()));
    }
    out
}

/// BranchTruth's pages: every line with branches has a marker whose
/// tooltip and colour, and a row colour (partly where an outcome was never
/// taken), equal its `//@` tokens'; no other line has one; a line without
/// branches is partly exactly where the snapshot's `<instructions>` have
/// one never run; the summary's branch figures are the tokens' sums.
#[test]
fn html_branches_of_branch_truth_match_its_tokens() {
    let (snap, xml) = coverage_run_of(
        "html-branches",
        "coverage",
        harness_classes(),
        "profrj.harness.BranchTruth",
    );
    let dir = snap.parent().unwrap().join("pages");
    profrj_ok(&["report", s(&snap), "--html", s(&dir), "--sources", SOURCES]);
    check_pages(&dir);
    let dom = load(&dir.join("s-profrj.harness.BranchTruth.java.html"));
    let truth = branch_truth();
    let rows = source_rows(&dom);
    let marks = diamonds(&dom);
    assert_eq!(
        marks.keys().collect::<Vec<_>>(),
        truth.keys().collect::<Vec<_>>()
    );
    let (mut total, mut taken) = (0, 0);
    for (line, &(n, hit, ran)) in &truth {
        let missed = n - hit;
        let title = branch_title(n, hit);
        let kind = match (hit, missed) {
            (_, 0) => "all",
            (0, _) => "none",
            _ => "some",
        };
        assert_eq!(marks[line], (kind.to_owned(), title), "line {line}");
        let colour = match (ran, missed) {
            (false, _) => "missed",
            (true, 0) => "covered",
            (true, _) => "partly",
        };
        assert_eq!(rows[line].0.as_deref(), Some(colour), "line {line}");
        total += n;
        taken += hit;
    }
    // Without a branch, a line is partly covered only where some of its
    // instructions never ran (the copy of tryFinally's `sink++` in the
    // handler: its `if` never fell through there).
    let instructions = snapshot_instructions(&xml, "profrj.harness.BranchTruth");
    assert!(
        instructions.values().any(|(ran, all)| ran < all),
        "{instructions:?}"
    );
    for (line, (class, _)) in &rows {
        if !truth.contains_key(line) {
            let ran = class.as_deref() != Some("missed");
            let partly = ran && instructions.get(line).is_some_and(|(ran, all)| ran < all);
            assert_eq!(class.as_deref() == Some("partly"), partly, "line {line}");
        }
    }
    let want = format!("{taken}/{total}");
    assert_eq!(
        summary_row(&dom, Some("profrj.harness.BranchTruth"))["branches"],
        want
    );
    let index = load(&dir.join("index.html"));
    assert_eq!(summary_row(&index, None)["branches"], want);
}
