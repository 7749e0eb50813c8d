//! How each sampled frame ran (issue 40), against FrameTypes, whose answer
//! the JVM's flags fix by construction: a method excluded from compilation
//! is interpreted in every sample; with -Xbatch (a call that triggers a
//! compilation waits for it) the warmed-up work() is C1's under
//! -XX:TieredStopAtLevel=1 and C2's under -XX:-TieredCompilation, its
//! helper() inlined into it or, with dontinline, C2's itself; a thread in
//! Thread.sleep is in a native method. The driver methods are excluded from
//! compilation, so they stay interpreted and inline nothing.

mod common;

use common::*;
use std::collections::BTreeMap;

const MAIN: &str = "profrj.harness.FrameTypes";

/// A `frameTypes` / `selfTypes` value as a map (empty when absent).
fn types(n: roxmltree::Node, attr: &str) -> BTreeMap<String, u64> {
    n.attribute(attr)
        .unwrap_or("")
        .split_whitespace()
        .map(|p| {
            let (t, c) = p.split_once(':').expect("TYPE:COUNT");
            (t.to_owned(), c.parse().expect("a count"))
        })
        .collect()
}

/// The types of the nodes named `name` under `thread`, summed.
fn types_of(thread: roxmltree::Node, name: &str, attr: &str) -> BTreeMap<String, u64> {
    let mut sum = BTreeMap::new();
    for n in find_nodes(thread, name) {
        for (t, c) in types(n, attr) {
            *sum.entry(t).or_default() += c;
        }
    }
    sum
}

/// Runs FrameTypes `args` with `flags` under `options`; the snapshot's
/// text, after checking that on every node the types add up to at most
/// `cumulatedElapsed` (`frameTypes`) and `elapsed` (`selfTypes`).
fn run(name: &str, flags: &[&str], options: &str, args: &[&str]) -> String {
    let dir = temp_dir(name);
    let xml = dir.join("snap.xml");
    let opts = format!("{options},file={}", xml.display());
    let mut jvm = vec!["-XX:CompileCommand=quiet"];
    jvm.extend_from_slice(flags);
    run_java_with(&dir, &jvm, &opts, MAIN, args).assert_success();
    let text = read_snapshot(&xml);
    let doc = roxmltree::Document::parse(&text).unwrap();
    for n in doc.descendants().filter(|n| n.has_tag_name("profile")) {
        let through: u64 = types(n, "frameTypes").values().sum();
        let top: u64 = types(n, "selfTypes").values().sum();
        assert!(through <= attr_u64(n, "cumulatedElapsed"), "{n:?}");
        assert!(top <= attr_u64(n, "elapsed"), "{n:?}");
    }
    text
}

fn main_thread<'a, 'i>(doc: &'a roxmltree::Document<'i>) -> roxmltree::Node<'a, 'i> {
    threads(doc, "sampler", "main")[0]
}

/// Only `want` among `got`'s types, with a count.
fn only(got: &BTreeMap<String, u64>, want: &str) {
    assert_eq!(got.keys().collect::<Vec<_>>(), [want], "{got:?}");
}

const EXCLUDE_DRIVERS: [&str; 3] = [
    "-Xbatch",
    "-XX:CompileCommand=exclude,profrj.harness.FrameTypes::measured",
    "-XX:CompileCommand=exclude,profrj.harness.FrameTypes::warm",
];

#[test]
fn a_method_excluded_from_compilation_is_interpreted_in_every_sample() {
    let flags = ["-XX:CompileCommand=exclude,profrj.harness.FrameTypes::slow"];
    let text = run(
        "ft-interp",
        &flags,
        "sampling,event=cpu",
        &["interpreted", "1500"],
    );
    let doc = roxmltree::Document::parse(&text).unwrap();
    let t = main_thread(&doc);
    let slow = "profrj.harness.FrameTypes.slow()";
    only(&types_of(t, slow, "selfTypes"), "interpreted");
    only(&types_of(t, slow, "frameTypes"), "interpreted");
}

/// FrameTypes' compiled phase under `tier`, helper() as `helper` says: the
/// main thread's types of measured(), work() and helper() under it.
fn compiled(name: &str, tier: &str, helper: &str) -> [BTreeMap<String, u64>; 3] {
    let mut flags = EXCLUDE_DRIVERS.to_vec();
    let helper = format!("-XX:CompileCommand={helper},profrj.harness.FrameTypes::helper");
    flags.extend([tier, helper.as_str()]);
    let text = run(name, &flags, "sampling,event=cpu", &["compiled", "1500"]);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let t = main_thread(&doc);
    let measured = find_nodes(t, "profrj.harness.FrameTypes.measured()");
    assert_eq!(measured.len(), 1, "{text}");
    let m = measured[0];
    let m_types = types(m, "frameTypes");
    let work = types_of(m, "profrj.harness.FrameTypes.work()", "frameTypes");
    let helper = types_of(m, "profrj.harness.FrameTypes.helper()", "frameTypes");
    [m_types, work, helper]
}

#[test]
fn c1_compiles_the_hot_method_and_inlines_its_helper() {
    let [measured, work, helper] = compiled("ft-c1", "-XX:TieredStopAtLevel=1", "inline");
    only(&measured, "interpreted");
    only(&work, "c1");
    // C1 may leave no sample in the inlined helper; where it does, inlined.
    if !helper.is_empty() {
        only(&helper, "inlined");
    }
}

#[test]
fn c2_compiles_the_hot_method_and_its_inlined_helper_has_no_frame_of_its_own() {
    let [measured, work, helper] = compiled("ft-c2", "-XX:-TieredCompilation", "inline");
    only(&measured, "interpreted");
    only(&work, "c2");
    only(&helper, "inlined");
}

#[test]
fn a_helper_kept_out_of_line_is_c2_itself() {
    let [measured, work, helper] = compiled("ft-c2-out", "-XX:-TieredCompilation", "dontinline");
    only(&measured, "interpreted");
    only(&work, "c2");
    only(&helper, "c2");
}

/// A method calling itself out of line, 20 deep, every frame C2's: the walk
/// goes through each (the code's inline records say it is never inlined
/// into itself, so the first frame of it is its compiled frame).
#[test]
fn every_frame_of_a_compiled_recursion_is_typed() {
    let mut flags = EXCLUDE_DRIVERS.to_vec();
    flags.extend([
        "-XX:CompileCommand=exclude,profrj.harness.FrameTypes::warmRec",
        "-XX:CompileCommand=exclude,profrj.harness.FrameTypes::measuredRec",
        "-XX:CompileCommand=dontinline,profrj.harness.FrameTypes::rec",
        "-XX:-TieredCompilation",
    ]);
    let text = run(
        "ft-rec",
        &flags,
        "sampling,event=cpu",
        &["recursive", "1500"],
    );
    let doc = roxmltree::Document::parse(&text).unwrap();
    let t = main_thread(&doc);
    let measured = find_nodes(t, "profrj.harness.FrameTypes.measuredRec()");
    assert_eq!(measured.len(), 1, "{text}");
    let recs = find_nodes(measured[0], "profrj.harness.FrameTypes.rec()");
    assert_eq!(recs.len(), 21, "rec() 21 deep: {text}");
    for r in recs {
        only(&types(r, "frameTypes"), "c2");
    }
}

/// Thread.sleep is a native method (sleep0 from JDK 21): every sample of a
/// sleeping thread has it on top, typed native, whichever walker took it.
#[test]
fn a_sleeping_thread_is_in_a_native_method() {
    let text = run("ft-sleep", &[], "sampling,event=wall", &["sleep", "1000"]);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let t = main_thread(&doc);
    let sleeps: Vec<_> = t
        .descendants()
        .filter(|n| n.has_tag_name("profile") && attr_u64(*n, "elapsed") > 0)
        .filter(|n| {
            let name = n.attribute("name").unwrap();
            name.starts_with("java.lang.Thread.sleep") && name.ends_with("(native)")
        })
        .collect();
    assert!(!sleeps.is_empty(), "{text}");
    for n in sleeps {
        let elapsed = attr_u64(n, "elapsed");
        assert_eq!(
            n.attribute("selfTypes"),
            Some(format!("native:{elapsed}").as_str())
        );
    }
}
