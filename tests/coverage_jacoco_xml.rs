//! `convert --to jacoco` against JaCoCo's own XML report of the same
//! program: each harness program runs under Debian's JaCoCo 0.8.6 agent
//! (its report written by org.jacoco.report, java-test-harness/jacoco/
//! JacocoReport.java, over the classes profrj's snapshot lists) and under
//! profrj (`coverage`, converted). profrj's report must validate against
//! JaCoCo's report.dtd (xmllint), and:
//!
//! - per source line: the same instructions and branches missed and
//!   covered (`mi ci mb cb`);
//! - per class: the same METHOD and CLASS counters, and INSTRUCTION, LINE,
//!   BRANCH and COMPLEXITY where the class's file has no known difference;
//! - in total: the same counters, once each known difference is accounted
//!   for at its line.
//!
//! Known differences are JaCoCo's probes, which the snapshot cannot
//! reproduce (docs/READING.md): a line whose call always throws (JaCoCo:
//! missed, no probe after it ran), marked `// JaCoCo: missed` in the
//! harness sources. Each must be a real difference, so a stale one fails.
//! The markers of JaCoCo's finally filter (`no code`, `branches`,
//! `instructions`: the copies javac makes of a `finally` block) are
//! differences of the snapshot's own counts (tests/coverage_jacoco.rs);
//! converted, the snapshot's `<filtered>` merges the copies as JaCoCo does,
//! so here they are no difference.

mod common;

use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// JaCoCo's agent as a jar with a manifest (Debian ships it without), with
/// JacocoReport compiled beside it, and report.dtd out of the report jar.
fn tools() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = jacoco_tools_in("jacoco-xml-tools", "JacocoReport");
        let jar = std::fs::File::open(Path::new(JACOCO_DIR).join("org.jacoco.report.jar")).unwrap();
        let mut zip = zip::ZipArchive::new(jar).unwrap();
        let mut dtd = zip.by_name("org/jacoco/report/xml/report.dtd").unwrap();
        let mut out = std::fs::File::create(dir.join("report.dtd")).unwrap();
        std::io::copy(&mut dtd, &mut out).unwrap();
        dir
    })
}

/// Runs `main` (of class path `classes`) under profrj and converts its
/// snapshot: (snapshot, report).
fn profrj_report(dir: &Path, classes: &str, main: &str, args: &[&str]) -> (PathBuf, PathBuf) {
    let snap = dir.join("cov.xml");
    let options = format!("coverage,file={}", snap.display());
    run_java_on(dir, classes, &[], &[], &options, main, args).assert_success();
    let report = dir.join("profrj-jacoco.xml");
    let (code, text) = profrj_run(&[
        "convert",
        snap.to_str().unwrap(),
        "--to",
        "jacoco",
        "-o",
        report.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    (snap, report)
}

/// Runs `main` (of class path `path`) under JaCoCo and writes its XML
/// report over `classes`.
fn jacoco_report(dir: &Path, path: &str, main: &str, args: &[&str], classes: &[String]) -> PathBuf {
    let tools = tools();
    let exec = dir.join("jacoco.exec");
    let cp = under_jacoco_class_path(path);
    let agent = format!(
        "-javaagent:{}=destfile={},excludes=org.jacoco.*:org.objectweb.*",
        tools.join("jacocoagent.jar").display(),
        exec.display()
    );
    let out = Command::new(java())
        .current_dir(dir)
        .args([agent.as_str(), "-cp", &cp, main])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{main} under JaCoCo: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = dir.join("jacoco.xml");
    let files: Vec<String> = classes
        .iter()
        .map(|c| format!("{path}/{}.class", c.replace('.', "/")))
        .collect();
    stdout_of(
        Command::new(java())
            .args([
                "-cp",
                &format!("{}:{}", tools.display(), jacoco_class_path()),
            ])
            .arg("JacocoReport")
            .arg(&exec)
            .arg(&report)
            .args(&files),
    );
    report
}

type Counter = (u64, u64);

/// What the comparison reads of a JaCoCo XML report.
#[derive(Default)]
struct Report {
    /// class → counter type → (missed, covered).
    classes: BTreeMap<String, BTreeMap<String, Counter>>,
    /// class → its source file.
    sources: BTreeMap<String, String>,
    /// (source file, line) → (mi, ci, mb, cb).
    lines: BTreeMap<(String, u32), [u64; 4]>,
    totals: BTreeMap<String, Counter>,
}

fn counters(n: roxmltree::Node) -> BTreeMap<String, Counter> {
    n.children()
        .filter(|c| c.has_tag_name("counter"))
        .map(|c| {
            (
                c.attribute("type").unwrap().to_owned(),
                (attr_u64(c, "missed"), attr_u64(c, "covered")),
            )
        })
        .collect()
}

fn read_report(path: &Path) -> Report {
    let text = std::fs::read_to_string(path).unwrap();
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&text, opts).unwrap();
    let mut r = Report {
        totals: counters(doc.root_element()),
        ..Default::default()
    };
    for c in doc.descendants().filter(|n| n.has_tag_name("class")) {
        let name = c.attribute("name").unwrap().replace('/', ".");
        if let Some(s) = c.attribute("sourcefilename") {
            r.sources.insert(name.clone(), s.to_owned());
        }
        r.classes.insert(name, counters(c));
    }
    for f in doc.descendants().filter(|n| n.has_tag_name("sourcefile")) {
        let file = f.attribute("name").unwrap();
        for l in f.children().filter(|n| n.has_tag_name("line")) {
            let v = ["mi", "ci", "mb", "cb"].map(|k| attr_u64(l, k));
            r.lines
                .insert((file.to_owned(), attr_u64(l, "nr") as u32), v);
        }
    }
    r
}

/// A known difference at a line: JaCoCo's view of it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Known {
    /// JaCoCo: missed (the call on it throws); profrj: covered.
    Missed,
}

/// The `// JaCoCo: missed` markers of a harness source (those of its
/// finally filter are no difference once converted).
fn known(file: &str) -> BTreeMap<u32, Known> {
    let src = std::fs::read_to_string(format!(
        "{}/java-test-harness/src/profrj/harness/{file}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let mut out = BTreeMap::new();
    for (i, l) in src.lines().enumerate() {
        if let Some((_, v)) = l.split_once("// JaCoCo: ") {
            if v.contains("its finally filter") {
                continue;
            }
            assert!(v.starts_with("missed"), "bad marker: {l}");
            let k = Known::Missed;
            out.insert(i as u32 + 1, k);
        }
    }
    out
}

/// A line's LINE item: none, missed (1, 0) or covered (0, 1).
fn line_item(l: Option<&[u64; 4]>) -> (i64, i64) {
    match l {
        None => (0, 0),
        Some(v) if v[1] > 0 => (0, 1),
        Some(_) => (1, 0),
    }
}

/// Compares the two reports of `main`; answers profrj's snapshot.
fn compare(name: &str, main: &str, args: &[&str]) -> String {
    compare_on(name, harness_classes(), main, args)
}

/// [`compare`], `main` on class path `path`.
fn compare_on(name: &str, path: &str, main: &str, args: &[&str]) -> String {
    let dir = temp_dir(&format!("jacoco-xml-{name}"));
    let (snap, ours) = profrj_report(&dir, path, main, args);
    let out = Command::new("xmllint")
        .args(["--noout", "--dtdvalid"])
        .arg(tools().join("report.dtd"))
        .arg(&ours)
        .output()
        .expect("xmllint (libxml2-utils) missing: scripts/test-all --install-only");
    assert!(
        out.status.success(),
        "report.dtd: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let snapshot = read_snapshot(&snap);
    let doc = roxmltree::Document::parse(&snapshot).unwrap();
    let classes: Vec<String> = doc
        .descendants()
        .filter(|n| n.has_tag_name("class"))
        .map(|n| n.attribute("name").unwrap().to_owned())
        .collect();
    let theirs = read_report(&jacoco_report(&dir, path, main, args, &classes));
    let ours = read_report(&ours);
    let file = format!("{}.java", main.rsplit('.').next().unwrap());
    let known = known(&file);
    let mut problems = Vec::new();
    // Lines: status and branches, but at the known differences.
    let keys: BTreeSet<_> = theirs
        .lines
        .keys()
        .chain(ours.lines.keys())
        .cloned()
        .collect();
    let mut delta_line = (0i64, 0i64);
    let mut delta_branch = (0i64, 0i64);
    let mut delta_instr = (0i64, 0i64);
    let mut seen = BTreeSet::new();
    for key in &keys {
        let (t, o) = (theirs.lines.get(key), ours.lines.get(key));
        let same = match (t, o) {
            (Some(t), Some(o)) => t == o,
            _ => false,
        };
        let k = if key.0 == file {
            known.get(&key.1)
        } else {
            None
        };
        match (same, k) {
            (true, None) => {}
            (true, Some(k)) => {
                problems.push(format!("{}:{} marked {k:?} but agrees", key.0, key.1))
            }
            (false, None) => {
                problems.push(format!("{}:{} JaCoCo {t:?}, profrj {o:?}", key.0, key.1))
            }
            (false, Some(&k)) => {
                // The difference must be of the kind marked.
                let fits = match (k, t, o) {
                    (Known::Missed, Some(t), Some(o)) => t[1] == 0 && o[1] > 0,
                    _ => false,
                };
                if !fits {
                    problems.push(format!(
                        "{}:{} marked {k:?}, differs otherwise: JaCoCo {t:?}, profrj {o:?}",
                        key.0, key.1
                    ));
                }
                seen.insert(key.1);
                let (a, b) = (line_item(t), line_item(o));
                delta_line = (delta_line.0 + b.0 - a.0, delta_line.1 + b.1 - a.1);
                let br = |l: Option<&[u64; 4]>| l.map_or((0, 0), |v| (v[2] as i64, v[3] as i64));
                let (a, b) = (br(t), br(o));
                delta_branch = (delta_branch.0 + b.0 - a.0, delta_branch.1 + b.1 - a.1);
                let ins = |l: Option<&[u64; 4]>| l.map_or((0, 0), |v| (v[0] as i64, v[1] as i64));
                let (a, b) = (ins(t), ins(o));
                delta_instr = (delta_instr.0 + b.0 - a.0, delta_instr.1 + b.1 - a.1);
            }
        }
    }
    for line in known.keys().filter(|l| !seen.contains(l)) {
        if !problems
            .iter()
            .any(|p| p.starts_with(&format!("{file}:{line} ")))
        {
            problems.push(format!("{file}:{line} known difference not found"));
        }
    }
    // Classes.
    assert_eq!(
        theirs.classes.keys().collect::<Vec<_>>(),
        ours.classes.keys().collect::<Vec<_>>(),
        "the same classes"
    );
    for (class, t) in &theirs.classes {
        let o = &ours.classes[class];
        let clean = known.is_empty() || theirs.sources.get(class) != Some(&file);
        for kind in [
            "METHOD",
            "CLASS",
            "LINE",
            "BRANCH",
            "COMPLEXITY",
            "INSTRUCTION",
        ] {
            let checked = matches!(kind, "METHOD" | "CLASS") || clean;
            if checked && t.get(kind) != o.get(kind) {
                problems.push(format!(
                    "{class} {kind}: JaCoCo {:?}, profrj {:?}",
                    t.get(kind),
                    o.get(kind)
                ));
            }
        }
    }
    // Totals, with the known differences added to JaCoCo's.
    let adjust = |c: Option<&Counter>, d: (i64, i64)| {
        c.map(|&(m, k)| ((m as i64 + d.0) as u64, (k as i64 + d.1) as u64))
    };
    let total = |r: &Report, k: &str| r.totals.get(k).copied();
    let mut want = vec![
        ("METHOD", total(&theirs, "METHOD")),
        ("CLASS", total(&theirs, "CLASS")),
        ("LINE", adjust(theirs.totals.get("LINE"), delta_line)),
        ("BRANCH", adjust(theirs.totals.get("BRANCH"), delta_branch)),
        (
            "INSTRUCTION",
            adjust(theirs.totals.get("INSTRUCTION"), delta_instr),
        ),
    ];
    if delta_branch == (0, 0) {
        want.push(("COMPLEXITY", total(&theirs, "COMPLEXITY")));
    }
    for (kind, w) in want {
        if total(&ours, kind) != w {
            problems.push(format!(
                "total {kind}: JaCoCo (adjusted) {w:?}, profrj {:?}",
                total(&ours, kind)
            ));
        }
    }
    assert!(problems.is_empty(), "{main}:\n{}", problems.join("\n"));
    assert!(
        ours.lines.len() >= 15,
        "{main}: only {} lines",
        ours.lines.len()
    );
    snapshot
}

#[test]
fn coverage_truth_matches_jacocos_report() {
    compare("truth", "profrj.harness.CoverageTruth", &[]);
}

/// JaCoCo's method filters (FilterTruth): the agent names each method they
/// leave out (`generated`, every other method without it), and with them
/// left out the report's counters equal JaCoCo's, METHOD and CLASS
/// included: an enum's `values`, `valueOf`, constructor and `$values`, a
/// bridge, a private empty constructor never called, a method and a whole
/// class annotated `@Generated`; a lambda's body kept.
#[test]
fn filter_truth_matches_jacocos_report() {
    let snapshot = compare("filters", "profrj.harness.FilterTruth", &[]);
    let doc = roxmltree::Document::parse(&snapshot).unwrap();
    let found: BTreeMap<String, Option<&str>> = doc
        .descendants()
        .filter(|n| n.has_tag_name("method"))
        .map(|m| {
            let class = m.parent().unwrap().attribute("name").unwrap();
            let class = class.rsplit('.').next().unwrap();
            let method = m.attribute("name").unwrap();
            let sig = m.attribute("signature").unwrap();
            (format!("{class}.{method}{sig}"), m.attribute("generated"))
        })
        .collect();
    let color = "Lprofrj/harness/FilterTruth$Color;";
    let named = "Lprofrj/harness/FilterTruth$Named;";
    let expected: BTreeMap<String, Option<&str>> = [
        ("FilterTruth.<init>()V".to_owned(), None),
        ("FilterTruth.main([Ljava/lang/String;)V".to_owned(), None),
        (
            "FilterTruth.lambda$main$0()Ljava/lang/String;".to_owned(),
            None,
        ),
        (format!("FilterTruth$Color.values()[{color}"), Some("enum")),
        (
            format!("FilterTruth$Color.valueOf(Ljava/lang/String;){color}"),
            Some("enum"),
        ),
        (
            "FilterTruth$Color.<init>(Ljava/lang/String;I)V".to_owned(),
            Some("enum"),
        ),
        (
            format!("FilterTruth$Color.$values()[{color}"),
            Some("synthetic"),
        ),
        ("FilterTruth$Color.<clinit>()V".to_owned(), None),
        (
            "FilterTruth$Util.<init>()V".to_owned(),
            Some("empty constructor"),
        ),
        ("FilterTruth$Util.twice(I)I".to_owned(), None),
        (
            "FilterTruth$Named.<init>(Ljava/lang/String;)V".to_owned(),
            None,
        ),
        (format!("FilterTruth$Named.compareTo({named})I"), None),
        (
            "FilterTruth$Named.compareTo(Ljava/lang/Object;)I".to_owned(),
            Some("synthetic"),
        ),
        ("FilterTruth$Gen.<init>()V".to_owned(), None),
        ("FilterTruth$Gen.made()I".to_owned(), Some("annotated")),
        ("FilterTruth$AllGen.<init>()V".to_owned(), Some("annotated")),
        ("FilterTruth$AllGen.one()I".to_owned(), Some("annotated")),
    ]
    .into_iter()
    .collect();
    assert_eq!(found, expected);
}

/// JaCoCo's filters inside a method (InMethodFilterTruth): a `switch` on a
/// `String`, javac 11+'s try-with-resources, a `synchronized` block. The snapshot keeps every
/// branching instruction as it ran (exactly, asserted here) and names in
/// `<filtered>` those JaCoCo leaves out, and their instructions; converted,
/// the report equals JaCoCo's, line by line, with no known difference.
#[test]
fn in_method_filter_truth_matches_jacocos_report() {
    let snapshot = compare("in-method", "profrj.harness.InMethodFilterTruth", &[]);
    let doc = roxmltree::Document::parse(&snapshot).unwrap();
    let method = |name: &str| {
        doc.descendants()
            .find(|n| n.has_tag_name("method") && n.attribute("name") == Some(name))
            .unwrap_or_else(|| panic!("no method {name}"))
    };
    let child = |m: roxmltree::Node, tag: &str| {
        m.children().find(|c| c.has_tag_name(tag)).map(|c| {
            (
                c.text().unwrap_or_default().to_owned(),
                c.attribute("branches").map(str::to_owned),
            )
        })
    };
    let first = |m: roxmltree::Node| -> u32 { m.attribute("firstline").unwrap().parse().unwrap() };
    // kind("apple"), ("pear"), ("BB"), ("cherry"): the switch on hashCode()
    // (default, then the buckets 2112 "Aa"/"BB", "pear", "apple"), the
    // equals tests (apple, pear, BB, Aa: never reached), the switch on the
    // case (default, apple, pear, Aa, BB). JaCoCo keeps only the last.
    let kind = method("kind");
    let l = first(kind);
    let branches = format!("{l}:1,1,1,1 {l}:1,0 {l}:1,0 {l}:1,0 {l}:0,0 {l}:1,1,1,0,1");
    assert_eq!(child(kind, "branches").unwrap().0, branches);
    let filtered = child(kind, "filtered").expect("kind: <filtered>");
    assert_eq!(filtered.1.as_deref(), Some("0 1 2 3 4"));
    // Its line: 36 instructions, the lookupswitch and the tests (28) left
    // out, of which Aa's 6 never ran.
    assert!(filtered.0.starts_with("22/28 "), "kind: {}", filtered.0);
    // made(false), made(true): a resource made by `new` (no null test), its
    // close after the body and the handler left out, no branch of them.
    let made = method("made");
    let filtered = child(made, "filtered").expect("made: <filtered>");
    assert_eq!(filtered.1, None);
    assert_eq!(filtered.0, "6/10 0/0 2/2 0/0");
    // opened(false), opened(true): the null tests of the close after the
    // body (taken once each way) and in the handler (never run) left out.
    let opened = method("opened");
    let l = first(opened);
    let (b, c, d) = (l + 1, l + 2, l + 3);
    assert_eq!(
        child(opened, "branches").unwrap().0,
        format!("{c}:1,1 {d}:1,1 {b}:0,0")
    );
    assert_eq!(child(opened, "filtered").unwrap().1.as_deref(), Some("1 2"));
    // locked(0): the synchronized block's handler (5 instructions, never
    // run) left out.
    let filtered = child(method("locked"), "filtered").expect("locked: <filtered>");
    let (ran, all) = filtered.0.split_whitespace().fold((0, 0), |(r, a), cell| {
        let (c, t) = cell.split_once('/').unwrap();
        (r + c.parse::<u32>().unwrap(), a + t.parse::<u32>().unwrap())
    });
    assert_eq!((ran, all, filtered.1), (0, 5, None));
}

/// JaCoCo's FinallyFilter (FinallyTruth): every copy javac makes of a
/// `finally` block — at a return, the end of a try or a catch, a `break`
/// or `continue`, after an empty catch, nested, with a loop inside —
/// counted once, converted, as JaCoCo counts it: the report equals
/// JaCoCo's line by line with no known difference. The snapshot keeps
/// every copy as it ran (exits' branches asserted exactly).
#[test]
fn finally_truth_matches_jacocos_report() {
    let snapshot = compare("finally", "profrj.harness.FinallyTruth", &[]);
    let doc = roxmltree::Document::parse(&snapshot).unwrap();
    let exits = doc
        .descendants()
        .find(|n| n.has_tag_name("method") && n.attribute("name") == Some("exits"))
        .expect("exits");
    let child = |tag: &str| exits.children().find(|c| c.has_tag_name(tag)).unwrap();
    // `if (v > 1)` (2 goes on, 1 and 0 jump), then `if (v == 2)` in the
    // return's copy (2 goes on), the try's (1 jumps), the catch's (0
    // jumps) and the handler's (never run): JaCoCo keeps the handler's.
    let l: u32 = exits.attribute("firstline").unwrap().parse().unwrap();
    let (test, copy) = (l, l + 7);
    assert_eq!(
        child("branches").text().unwrap(),
        format!("{test}:1,2 {copy}:1,0 {copy}:0,1 {copy}:0,1 {copy}:0,0")
    );
    let filtered = child("filtered");
    assert_eq!(filtered.attribute("branches"), Some("1 2 3"));
    assert_eq!(filtered.attribute("merged"), Some("1:4 2:4 3:4"));
}

/// FinallyTruth compiled by Eclipse's compiler (ecj), which writes a
/// `finally` block's copies after a jump out of the region rather than at
/// its end: JaCoCo's filter and the converted snapshot merge them alike
/// (no known difference), and the program's answer is javac's.
#[test]
fn finally_truth_compiled_by_ecj_matches_jacocos_report() {
    let dir = temp_dir("ecj-finally");
    let classes = dir.join("classes");
    let source = format!(
        "{}/java-test-harness/src/profrj/harness/FinallyTruth.java",
        env!("CARGO_MANIFEST_DIR")
    );
    stdout_of(
        Command::new("ecj")
            .args([
                "-source",
                "11",
                "-target",
                "11",
                "-g",
                "-nowarn",
                "-proc:none",
                "-d",
            ])
            .arg(&classes)
            .arg(&source),
    );
    let classes = classes.to_str().unwrap();
    let out = stdout_of(Command::new(java()).args(["-cp", classes, "profrj.harness.FinallyTruth"]));
    assert_eq!(out.trim(), "52");
    compare_on("ecj-finally", classes, "profrj.harness.FinallyTruth", &[]);
}

#[test]
fn profile_truth_matches_jacocos_report() {
    compare("profile", "profrj.harness.ProfileTruth", &[]);
}

#[test]
fn merge_truth_matches_jacocos_report() {
    compare("merge", "profrj.harness.MergeTruth", &["7"]);
}

/// BranchTruth's `tryFinally`: javac copies the finally block (after the
/// try, in the handler), which JaCoCo merges, as the converted snapshot
/// does; JaCoCo calls the line whose call throws missed (marked in the
/// source).
#[test]
fn branch_truth_matches_jacocos_report() {
    compare("branch", "profrj.harness.BranchTruth", &[]);
}
