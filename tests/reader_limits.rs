//! Inputs that used to hang, exhaust or corrupt the readers (issue 18,
//! findings 5 and 10). Bounds on time are generous (the old code took 30 s to
//! 4 minutes on the first input), so a loaded machine cannot fail them.

mod common;

use common::*;
use std::process::Command;
use std::time::{Duration, Instant};

fn profrj(args: &[&str]) -> (bool, String, Duration) {
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_profrj"))
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text, t.elapsed())
}

/// Finding 5: an element with 200,000 attributes is read in linear time
/// (one pass per element; quick-xml's quadratic duplicate check is off), and
/// a known attribute given twice is refused.
#[test]
fn two_hundred_thousand_attributes_read_in_linear_time() {
    let dir = temp_dir("attrs");
    let attrs: String = (0..200_000).map(|i| format!(" a{i}=\"1\"")).collect();
    let xml = format!(
        "<doc><sampler><thread name=\"t\" cumulated=\"1\" cumulatedElapsed=\"1\"{attrs}>\
         <profile name=\"m()\" hits=\"1\" elapsed=\"1\" cumulated=\"1\" cumulatedElapsed=\"1\"{attrs}/>\
         </thread></sampler></doc>"
    );
    let path = dir.join("attrs.xml");
    std::fs::write(&path, xml).unwrap();
    let (ok, out, took) = profrj(&["report", &path.display().to_string()]);
    assert!(ok, "{out}");
    assert!(out.contains("m()"), "{out}");
    assert!(took < Duration::from_secs(10), "took {took:?}");

    let dup = dir.join("dup.xml");
    std::fs::write(
        &dup,
        "<doc><sampler><thread name=\"t\"><profile name=\"m()\" hits=\"1\" hits=\"2\"/></thread></sampler></doc>",
    )
    .unwrap();
    let (ok, out, _) = profrj(&["report", &dup.display().to_string()]);
    assert!(!ok);
    assert!(out.contains("attribute hits twice"), "{out}");
}

/// Finding 10: counts near u64::MAX saturate in sums instead of wrapping to
/// a small, wrong number.
#[test]
fn counts_near_the_maximum_saturate() {
    let dir = temp_dir("wrap");
    let big = u64::MAX - 5;
    let node = |hits: u64| {
        format!(
            "<profile name=\"m()\" hits=\"{hits}\" elapsed=\"{hits}\" cumulated=\"{hits}\" cumulatedElapsed=\"{hits}\"/>"
        )
    };
    let xml = format!(
        "<doc><sampler>\
         <thread name=\"a\" cumulated=\"{big}\" cumulatedElapsed=\"{big}\">{}</thread>\
         <thread name=\"b\" cumulated=\"100\" cumulatedElapsed=\"100\">{}</thread>\
         </sampler></doc>",
        node(big),
        node(100)
    );
    let path = dir.join("wrap.xml");
    std::fs::write(&path, xml).unwrap();
    let (ok, out, _) = profrj(&["report", &path.display().to_string()]);
    assert!(ok, "{out}");
    assert!(
        out.contains(&u64::MAX.to_string()),
        "saturated total expected: {out}"
    );
    assert!(!out.contains("total = 94 "), "wrapped: {out}");
    let (ok, out, _) = profrj(&["convert", "--to", "collapsed", &path.display().to_string()]);
    assert!(ok, "{out}");
    assert!(out.contains(&u64::MAX.to_string()), "{out}");
}
