//! Branch counts in `coverage` on real JVMs: every token of every
//! `<branches>` of a harness class against the counts written beside each
//! line of its source (BranchTruth), with derived counts and without, run
//! with full bytecode verification.

mod common;

use common::*;
use std::collections::BTreeMap;

const H: &str = "profrj.harness.BranchTruth";

/// Expected tokens from the source: line → the `//@` tokens, in order.
fn expectations() -> BTreeMap<i64, Vec<String>> {
    let src = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/java-test-harness/src/profrj/harness/BranchTruth.java"
    ))
    .unwrap();
    let mut out = BTreeMap::new();
    for (i, line) in src.lines().enumerate() {
        let Some((code, spec)) = line.split_once("//@") else {
            continue;
        };
        if code.trim_start().starts_with(['*', '/']) {
            continue; // the class comment explaining the notation
        }
        let tokens = spec.split_whitespace().map(str::to_owned).collect();
        out.insert(i as i64 + 1, tokens);
    }
    out
}

/// Every `<branches>` token of BranchTruth and its nested classes, by line
/// (methods in document order, tokens in bytecode order).
fn branches(text: &str) -> BTreeMap<i64, Vec<String>> {
    let doc = roxmltree::Document::parse(text).unwrap();
    let mut out: BTreeMap<i64, Vec<String>> = BTreeMap::new();
    let mut classes = 0;
    for class in doc.descendants().filter(|n| {
        n.has_tag_name("class")
            && n.attribute("name")
                .is_some_and(|c| c == H || c.starts_with(&format!("{H}$")))
    }) {
        classes += 1;
        for m in class.children().filter(|c| c.has_tag_name("method")) {
            let children: Vec<_> = m.children().filter(|c| c.is_element()).collect();
            let Some(at) = children.iter().position(|c| c.has_tag_name("branches")) else {
                continue;
            };
            assert!(
                children[at - 1].has_tag_name("footprints"),
                "<branches> follows <footprints>"
            );
            let text = children[at].text().unwrap_or_default();
            assert!(!text.trim().is_empty(), "an empty <branches> is left out");
            for token in text.split(' ') {
                let (line, counts) = token.split_once(':').unwrap_or_else(|| panic!("{token:?}"));
                let line: i64 = line.parse().unwrap();
                assert!(line > 0, "{token}: every instruction has a line");
                out.entry(line).or_default().push(counts.to_owned());
            }
        }
    }
    assert_eq!(
        classes, 1,
        "BranchTruth (its lambda is a method of its own)"
    );
    out
}

fn check(name: &str, options: &str) {
    let (_, text) = run_verified(name, options, H, &[]);
    assert_eq!(branches(&text), expectations(), "{options}");
}

#[test]
fn branch_counts_match_the_source() {
    check("branches-derived", "coverage");
}

/// Every point and outcome counted by its own counter: the same answer.
#[test]
fn branch_counts_match_without_derived_counts() {
    check("branches-each", "coverage,derive=off");
}

#[test]
fn branch_counts_match_with_stripes() {
    check("branches-stripes", "coverage,stripes=4");
}
