//! A published HPROF reader (stackcollapse-hprof) reads every frame of a
//! real conversion: its stacks equal `convert --to collapsed`'s.

use crate::common::*;
use crate::hprof_text::*;
use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

/// stackcollapse-hprof's stacks (PyPI's hprof2flamegraph, a published
/// HPROF reader): `profrj convert --to hprof` of `snap`, read by it, must
/// give the same stacks and counts as `profrj convert --to collapsed` of the
/// sampler section's RUNNABLE samples, each frame named as HPROF names it
/// (`class.method`, `:LINE` where the snapshot has one; a pseudo-frame
/// `[…]` as it is).
fn stackcollapse_equals_collapsed(snap: &Path, xml: &str) -> usize {
    let dir = snap.parent().unwrap();
    let report = dir.join("java.hprof.txt");
    profrj_ok(&[
        "convert",
        s(snap),
        "--to",
        "hprof",
        "--depth",
        "2048",
        "-o",
        s(&report),
    ]);
    let out = Command::new("python3")
        .args(["-W", "ignore", "-m", "stackcollapse_hprof"])
        .arg(&report)
        .output()
        .expect("python3 with hprof2flamegraph (scripts/test-all installs it)");
    let theirs = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "stackcollapse-hprof failed on our frames: {}\n{theirs}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc = roxmltree::Document::parse(xml).unwrap();
    let classes = classes(&doc);
    let hprof_frame = |f: &str| match f.rsplit_once("):") {
        Some((head, line)) if line.bytes().all(|b| b.is_ascii_digit()) => {
            format!("{}:{line}", method_column(&format!("{head})"), &classes))
        }
        _ => method_column(f, &classes),
    };
    let ours = profrj_ok(&[
        "convert",
        s(snap),
        "--to",
        "collapsed",
        "--section",
        "sampler",
        "--metric",
        "cpu",
    ]);
    let mut want: HashMap<String, u64> = HashMap::new();
    for (stack, n) in collapsed_lines(&ours) {
        // HPROF's rows are split at white space: a space in a name is `_`.
        let frames: Vec<String> = stack
            .split(';')
            .map(|f| hprof_frame(f).replace(' ', "_"))
            .collect();
        *want.entry(frames.join(";")).or_default() += n;
    }
    let mut got: HashMap<String, u64> = HashMap::new();
    for line in theirs.lines() {
        let (stack, n) = line.rsplit_once(' ').unwrap();
        *got.entry(stack.to_owned()).or_default() += n.parse::<u64>().unwrap();
    }
    assert_eq!(got, want);
    got.len()
}

/// Issue 29, item 10: every frame is in HPROF's `Class.method(File:LINE)`
/// form, pseudo-frames included, so a published reader parses the report
/// (it crashed on `[unknown_not_Java]`), and the stacks it prints are ours:
/// a real sampled snapshot (stacks cut by the agent's `depth` under
/// `[truncated]`), and one with every kind of frame the converter meets.
#[test]
fn a_published_hprof_reader_reads_every_frame() {
    let dir = temp_dir("hprof-reader");
    let snap = dir.join("deep.xml");
    let run = run_java(
        &dir,
        &format!("sampling,interval=1ms,depth=16,file={}", snap.display()),
        "profrj.harness.DeepStack",
        &["40", "300"],
    );
    run.assert_success();
    let xml = read_snapshot(&snap);
    assert!(
        xml.contains("name=\"[truncated]\""),
        "stacks cut at 16 frames"
    );
    assert!(stackcollapse_equals_collapsed(&snap, &xml) > 0);

    let node = |name: &str, hits: u64, kids: &str| {
        let name = name.replace('<', "&lt;").replace('>', "&gt;");
        format!("<profile name=\"{name}\" hits=\"{hits}\" elapsed=\"{hits}\">{kids}</profile>")
    };
    let frames = [
        "[unknown_not_Java]",
        "[not_walkable_Java]",
        "[GC_active]",
        "m0()",
        "p.Point(int,int)",
        "p.A.f():12",
        "p.A.g(java.lang.String)",
        "p.Foo$$Lambda$16.0x0000000800c03000.run()",
        "p.Outer$Inner.<clinit>()",
        "p.N.read(native)",
    ];
    let mut tree = String::new();
    for (i, f) in frames.iter().enumerate().rev() {
        tree = node(f, i as u64 + 1, &tree);
    }
    let xml = format!(
        "<doc><sampler>\
         <thread name=\"a\" cumulated=\"100\" cumulatedElapsed=\"100\">{tree}{}{}</thread>\
         <thread name=\"b\" cumulated=\"7\" cumulatedElapsed=\"7\">{}</thread>\
         </sampler></doc>",
        node("[truncated]", 0, &node("p.A.f():12", 4, "")),
        node("[unknown_Java]", 3, ""),
        node("p.A.f():12", 2, "")
    );
    let snap = dir.join("frames.xml");
    std::fs::write(&snap, &xml).unwrap();
    // Thread a's 100 samples less the 62 in its tree, and b's 5, have no
    // Java frame: `[no Java frame]`, a frame of its own.
    let ours = profrj_ok(&["convert", s(&snap), "--to", "collapsed", "--metric", "cpu"]);
    // Collapsed stacks come per thread (a and b): their counts add up.
    assert_eq!(collapsed_lines(&ours)["[no Java frame]"], 43, "{ours}");
    assert_eq!(
        stackcollapse_equals_collapsed(&snap, &xml),
        1 + frames.len() + 3
    );
}
