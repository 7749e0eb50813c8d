//! What every reading command shares: the `--section/--thread/--metric`
//! flags, and the line and column named when a snapshot is malformed or
//! truncated.

use crate::common::*;
use crate::snapshots::*;

#[test]
fn malformed_and_truncated_snapshots_fail_with_line_and_column() {
    let snap = split_snapshot();
    let xml = std::fs::read_to_string(snap).unwrap();
    let dir = temp_dir("report-broken");
    // Cut inside an attribute, about line 11.
    let line11 = xml.match_indices('\n').nth(9).unwrap().0 + 1;
    let cut_at = line11 + xml[line11..].find("name=\"").unwrap() + 8;
    let cut_line = xml[..cut_at].matches('\n').count() + 1;
    let truncated = dir.join("truncated.xml");
    std::fs::write(&truncated, &xml[..cut_at]).unwrap();
    // A wrong closing tag on line 5.
    let mut lines: Vec<&str> = xml.lines().collect();
    let bad_line = "  </sampler>";
    lines.insert(4, bad_line);
    let mismatched = dir.join("mismatched.xml");
    std::fs::write(&mismatched, lines.join("\n")).unwrap();
    // A clean cut between elements: the open ones are named.
    let cut_clean = xml.match_indices('\n').nth(5).unwrap().0 + 1;
    let unclosed = dir.join("unclosed.xml");
    std::fs::write(&unclosed, &xml[..cut_clean]).unwrap();

    for (file, line, what) in [
        (&truncated, cut_line, "malformed XML"),
        (&mismatched, 5, "malformed XML"),
        (&unclosed, 7, "truncated snapshot"),
    ] {
        for cmd in [
            vec!["report", s(file)],
            vec!["convert", s(file), "--to", "collapsed"],
            vec!["flame", s(file), "-o", s(&dir.join("x.html"))],
        ] {
            let out = profrj(&cmd);
            let err = String::from_utf8_lossy(&out.stderr);
            eprintln!("{cmd:?}: {err}");
            assert!(!out.status.success(), "{cmd:?} succeeded");
            assert_eq!(out.status.code(), Some(1));
            assert!(
                err.contains(&format!("{}: line {line}, column ", file.display())),
                "{err}"
            );
            assert!(err.contains(what), "{err}");
            assert!(out.stdout.is_empty());
        }
    }
    assert!(!dir.join("x.html").exists());
    let out = profrj(&["report", s(&dir.join("missing.xml"))]);
    assert!(!out.status.success());
}

/// `--section/--thread/--metric` are one set of flags for every reading
/// command: each command's help names every call section and metric (made
/// from the section table), and `--thread` selects in each, `flame` too.
#[test]
fn every_reading_command_takes_the_same_selection() {
    let dir = temp_dir("selection");
    let snap = dir.join("two.xml");
    std::fs::write(
        &snap,
        "<doc><sampler>\
         <thread name=\"alpha-thread\" cumulated=\"3\" cumulatedElapsed=\"3\">\
         <profile name=\"p.A.f()\" hits=\"3\" elapsed=\"3\" cumulated=\"3\" cumulatedElapsed=\"3\"/></thread>\
         <thread name=\"beta-thread\" cumulated=\"2\" cumulatedElapsed=\"2\">\
         <profile name=\"p.B.g()\" hits=\"2\" elapsed=\"2\" cumulated=\"2\" cumulatedElapsed=\"2\"/></thread>\
         </sampler></doc>",
    )
    .unwrap();
    for cmd in ["report", "flame", "convert", "diff"] {
        let help = profrj_ok(&[cmd, "--help"]);
        for word in [
            "--section",
            "--thread",
            "--metric",
            "sampler",
            "profile",
            "alloc",
        ] {
            assert!(help.contains(word), "{cmd} --help lacks {word}:\n{help}");
        }
        for metric in ["cpu", "wall", "calls", "bytes", "objects", "samples"] {
            assert!(help.contains(metric), "{cmd} --help lacks {metric}");
        }
    }
    let p = s(&snap);
    let report = profrj_ok(&["report", p, "--thread", "beta-thread"]);
    assert!(
        report.contains("p.B.g()") && !report.contains("p.A.f()"),
        "{report}"
    );
    let folded = profrj_ok(&[
        "convert",
        p,
        "--to",
        "collapsed",
        "--thread",
        "alpha-thread",
    ]);
    assert_eq!(folded, "p.A.f() 3\n");
    let diff = profrj_ok(&["diff", p, p, "--thread", "alpha-thread", "--metric", "wall"]);
    assert!(
        diff.contains("before = 3 samples, after = 3 samples"),
        "{diff}"
    );
    let html = dir.join("two.html");
    profrj_ok(&["flame", p, "--thread", "beta-thread", "-o", s(&html)]);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("p.B.g()") && !page.contains("p.A.f()"));
    assert!(!page.contains("alpha-thread"));
    let out = profrj(&["flame", p, "--thread", "nobody", "-o", s(&html)]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no thread named \"nobody\""));
}
