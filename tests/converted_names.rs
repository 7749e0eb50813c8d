//! Issue 29, item 4: every converter writes a name as the snapshot does
//! (`profrj_format::escape`: a control character as `\uXXXX`, a backslash
//! as `\\`, everything else as it is), and a real parser reads each output:
//! xmllint and pycobertura the Cobertura XML, genhtml the LCOV tracefile,
//! xmllint the coverage pages (`report --html`),
//! protoc the pprof profile, stackcollapse-hprof (PyPI's hprof2flamegraph)
//! the HPROF report. The names come from a real JVM (OddNames: threads,
//! a class, its method and its source file named with U+0001, ESC, BEL and a
//! backslash) and, for characters beyond the Basic Multilingual Plane and a
//! lone surrogate's escape (which the agent's decoding gives), from a
//! snapshot written here.

mod common;

use common::*;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// A consumer's run: it must exist and succeed (scripts/test-all installs
/// xmllint, genhtml, pycobertura and hprof2flamegraph).
fn consumer(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run {what} ({e}): scripts/test-all installs it"));
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !stderr.contains("Traceback"),
        "{what} failed: {:?}\n{stdout}\n{stderr}",
        out.status
    );
    stdout
}

/// No byte a line-based or XML reader would trip on: no control character
/// but the newline (and the tab HPROF indents frames with).
fn assert_no_control(what: &str, text: &str) {
    let bad: Vec<char> = text
        .chars()
        .filter(|&c| c.is_control() && c != '\n' && c != '\t')
        .collect();
    assert!(bad.is_empty(), "{what}: raw control characters {bad:?}");
}

/// The escaped names a section's attributes hold that need escaping or are
/// beyond ASCII: the text each output must carry as it is.
fn odd_names(xml: &str, section: &str, tag: &str, attr: &str) -> BTreeSet<String> {
    let doc = roxmltree::Document::parse(xml).unwrap();
    let sec = doc
        .root_element()
        .children()
        .find(|c| c.has_tag_name(section))
        .unwrap_or_else(|| panic!("no <{section}>"));
    sec.descendants()
        .skip(1)
        .filter(|n| n.has_tag_name(tag))
        .filter_map(|n| n.attribute(attr))
        .filter(|v| v.contains('\\') || !v.is_ascii())
        .map(str::to_owned)
        .collect()
}

fn convert(snap: &Path, args: &[&str]) -> String {
    let mut all = vec!["convert", s(snap)];
    all.extend_from_slice(args);
    profrj_ok(&all)
}

/// Every converter on a real JVM's names: each output parses, carries the
/// snapshot's escaped names unchanged, and holds no raw control character.
#[test]
fn odd_names_of_a_real_jvm_reach_every_format_escaped() {
    let dir = temp_dir("converted-names");
    let snap = dir.join("odd.xml");
    let run = run_java(
        &dir,
        &format!(
            "sampling,alloc=64k,coverage,include=profrj.harness.*,file={}",
            snap.display()
        ),
        "profrj.harness.OddNames",
        &[],
    );
    run.assert_success();
    let xml = read_snapshot(&snap);
    let payload = "profrj.harness.OddNamesPayload\\u0001\\u001B\\u0007\\\\";
    let spin = format!("{payload}.spinPayload\\u0001\\u001B\\u0007\\\\()");
    let frames = odd_names(&xml, "sampler", "profile", "name");
    let threads = odd_names(&xml, "sampler", "thread", "name");
    assert!(frames.contains(&spin), "{frames:?}");
    for t in ["odd\\u0001one", "\\u001B[31mred\\u001B[0m", "back\\\\slash"] {
        assert!(threads.contains(t), "{threads:?}");
    }

    // Collapsed: each frame and `[thread]` frame as the snapshot has it.
    let text = convert(
        &snap,
        &["--to", "collapsed", "--thread-frames", "--metric", "wall"],
    );
    assert_no_control("collapsed", &text);
    let got: BTreeSet<String> = collapsed_lines(&text)
        .keys()
        .flat_map(|stack| stack.split(';').map(str::to_owned).collect::<Vec<_>>())
        .map(|f| f.trim_start_matches('[').trim_end_matches(']').to_owned())
        .collect();
    for name in frames.iter().chain(&threads) {
        assert!(got.contains(name), "collapsed lacks {name:?}");
    }

    // pprof, decoded by protoc: the string table holds the names.
    let pb = dir.join("odd.pb.gz");
    convert(&snap, &["--to", "pprof", "--metric", "wall", "-o", s(&pb)]);
    let decoded = parse_decoded(&protoc_decode(&pb));
    for s in &decoded.strings {
        assert_no_control("pprof string", s);
    }
    let strings: BTreeSet<&String> = decoded.strings.iter().collect();
    for name in frames.iter().chain(&threads) {
        assert!(strings.contains(name), "pprof lacks {name:?}");
    }

    // LCOV, read by genhtml: the payload's functions under its own names.
    let info = dir.join("odd.info");
    convert(&snap, &["--to", "lcov", "-o", s(&info)]);
    let lcov = std::fs::read_to_string(&info).unwrap();
    assert_no_control("lcov", &lcov);
    let simple = "OddNamesPayload\\u0001\\u001B\\u0007\\\\";
    assert!(
        lcov.contains(&format!("\nSF:profrj/harness/{simple}.java\n"))
            && lcov.contains(&format!(
                ",{simple}.spinPayload\\u0001\\u001B\\u0007\\\\(J)J\n"
            )),
        "{lcov}"
    );
    let html = dir.join("html");
    let out = consumer(
        Command::new("genhtml")
            .args(["--ignore-errors", "source", "-o"])
            .arg(&html)
            .arg(&info),
        "genhtml",
    );
    assert!(out.contains("Overall coverage rate"), "{out}");

    // Cobertura: well-formed for xmllint, read by pycobertura, the class
    // and method names the snapshot's.
    let cob = dir.join("odd.cobertura.xml");
    convert(&snap, &["--to", "cobertura", "-o", s(&cob)]);
    consumer(Command::new("xmllint").arg("--noout").arg(&cob), "xmllint");
    let out = consumer(
        Command::new("python3")
            .args(["-m", "pycobertura", "show", "--format", "json"])
            .arg(&cob),
        "pycobertura",
    );
    assert!(out.contains("OddNamesPayload\\\\u0001"), "{out}");
    let text = std::fs::read_to_string(&cob).unwrap();
    let opts = roxmltree::ParsingOptions {
        allow_dtd: true,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(&text, opts).unwrap();
    let class = doc
        .descendants()
        .find(|n| n.has_tag_name("class") && n.attribute("name") == Some(payload))
        .unwrap_or_else(|| panic!("no class {payload:?}"));
    assert_eq!(
        class.attribute("filename"),
        Some(format!("profrj/harness/{simple}.java").as_str())
    );
    let methods: BTreeSet<&str> = class
        .descendants()
        .filter(|n| n.has_tag_name("method"))
        .filter_map(|n| n.attribute("name"))
        .collect();
    for m in odd_names(&xml, "coverage", "method", "name") {
        assert!(methods.contains(m.as_str()), "{m:?} not in {methods:?}");
    }

    // The coverage pages (report --html): each page read by xmllint as HTML
    // and as XML, named safely inside DIR, with no raw control character;
    // the payload's class and methods under their escaped names, its
    // source (a name with control characters) not found.
    let pages = dir.join("pages");
    profrj_ok(&[
        "report",
        s(&snap),
        "--html",
        s(&pages),
        "--sources",
        concat!(env!("CARGO_MANIFEST_DIR"), "/java-test-harness/src"),
    ]);
    let mut class_page = None;
    for e in std::fs::read_dir(&pages).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        assert!(
            name.ends_with(".html")
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "._$~-".contains(c)),
            "{name:?}"
        );
        consumer(
            Command::new("xmllint")
                .args(["--html", "--noout"])
                .arg(&path),
            "xmllint --html",
        );
        consumer(Command::new("xmllint").arg("--noout").arg(&path), "xmllint");
        let text = std::fs::read_to_string(&path).unwrap();
        assert_no_control(&name, &text);
        if name.starts_with("c-") && text.contains(&format!("<h1>{payload}</h1>")) {
            class_page = Some(text);
        }
    }
    let index = std::fs::read_to_string(pages.join("index.html")).unwrap();
    assert!(index.contains("Source not found"), "{index}");
    assert!(
        index.contains(&format!("profrj/harness/{simple}.java")),
        "{index}"
    );
    let class_page = class_page.unwrap_or_else(|| panic!("no page for {payload}"));
    for m in odd_names(&xml, "coverage", "method", "name") {
        assert!(class_page.contains(&format!("<td>{m}(")), "{m:?}");
    }

    // HPROF, read by stackcollapse-hprof: the frames under their names.
    let report = dir.join("odd.hprof.txt");
    convert(
        &snap,
        &["--to", "hprof", "--depth", "2048", "-o", s(&report)],
    );
    let hprof = std::fs::read_to_string(&report).unwrap();
    assert_no_control("hprof", &hprof);
    for t in &threads {
        assert!(
            hprof.contains(&format!("name=\"{t}\"")),
            "THREAD START {t:?}"
        );
    }
    let out = consumer(
        Command::new("python3")
            .args(["-W", "ignore", "-m", "stackcollapse_hprof"])
            .arg(&report),
        "stackcollapse-hprof",
    );
    let want = format!("{payload}.spinPayload\\u0001\\u001B\\u0007\\\\");
    assert!(
        out.lines()
            .any(|l| l.split(';').any(|f| f.starts_with(&want))),
        "{out}"
    );
    // SITES from <alloc>: the allocated class (`Payload[]`) as the snapshot.
    assert!(hprof.contains(&format!(" {payload}[]\n")), "{hprof}");
}

/// A snapshot as the agent writes names beyond the BMP (as they are) and a
/// lone surrogate (its escape, which the reader keeps as text): each
/// converter carries both through unchanged.
#[test]
fn names_beyond_the_bmp_and_lone_surrogates_are_carried_unchanged() {
    let dir = temp_dir("converted-bmp");
    let crab = "p.Crab\u{1F980}.run()";
    let lone = "p.Lone\\uD800.f()";
    let thread = "t \u{1F980} \\uDC00";
    let xml = format!(
        "<doc><sampler><thread name=\"{thread}\" cumulated=\"3\" cumulatedElapsed=\"3\">\
         <profile name=\"{crab}\" hits=\"1\" elapsed=\"1\" cumulated=\"3\" cumulatedElapsed=\"3\">\
         <profile name=\"{lone}\" hits=\"2\" elapsed=\"2\" cumulated=\"2\" cumulatedElapsed=\"2\"/>\
         </profile></thread></sampler>\
         <coverage><class name=\"p.Crab\u{1F980}\" source=\"Crab\u{1F980}.java\">\
         <method name=\"lone\\uD800\" signature=\"()V\" firstline=\"3\" count=\"1\">\
         <footprints>1</footprints></method></class></coverage></doc>"
    );
    let snap = dir.join("bmp.xml");
    std::fs::write(&snap, xml).unwrap();

    let text = convert(&snap, &["--to", "collapsed", "--thread-frames"]);
    assert_eq!(
        text,
        format!("[{thread}];{crab} 1\n[{thread}];{crab};{lone} 2\n")
    );

    let pb = dir.join("bmp.pb.gz");
    convert(&snap, &["--to", "pprof", "-o", s(&pb)]);
    let strings = parse_decoded(&protoc_decode(&pb)).strings;
    for name in [crab, lone, thread] {
        assert!(
            strings.iter().any(|s| s == name),
            "pprof lacks {name:?}: {strings:?}"
        );
    }

    let lcov = convert(&snap, &["--to", "lcov"]);
    assert!(lcov.contains("SF:p/Crab\u{1F980}.java\n"), "{lcov}");
    assert!(
        lcov.contains("FNDA:1,Crab\u{1F980}.lone\\uD800()V\n"),
        "{lcov}"
    );

    let cob = dir.join("bmp.cobertura.xml");
    convert(&snap, &["--to", "cobertura", "-o", s(&cob)]);
    consumer(Command::new("xmllint").arg("--noout").arg(&cob), "xmllint");
    let text = std::fs::read_to_string(&cob).unwrap();
    assert!(
        text.contains("<class name=\"p.Crab\u{1F980}\" filename=\"p/Crab\u{1F980}.java\"")
            && text.contains("<method name=\"lone\\uD800\""),
        "{text}"
    );

    let hprof = convert(&snap, &["--to", "hprof"]);
    assert!(
        hprof.contains("\tp.Lone\\uD800.f(Lone\\uD800.java:Unknown line)\n\tp.Crab\u{1F980}.run(Crab\u{1F980}.java:Unknown line)\n")
            && hprof.contains(&format!("name=\"{thread}\"")),
        "{hprof}"
    );
    let html = dir.join("bmp.html");
    profrj_ok(&["flame", s(&snap), "-o", s(&html)]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(
        page.contains(r#""p.Lone\\uD800.f()""#),
        "the JSON string of the name"
    );
}
