//! `profrj diff A.hprof B.hprof` on HeapRetain's two dumps: between them
//! its leak grew by K Leaked objects (each with its long[LEAK_LEN]) per
//! round, ROUNDS rounds, and nothing else of HeapRetain changed.

use crate::*;

/// One row of a diff table: (A, B) of objects, shallow, retained.
type Both = [(u64, u64); 3];

/// The diff's tables: block name → row name → both sides.
fn diff(args: &[&str]) -> BTreeMap<String, BTreeMap<String, Both>> {
    let (a, b) = dumps();
    let mut all = vec!["diff", a.to_str().unwrap(), b.to_str().unwrap()];
    all.extend(args);
    let (code, text) = profrj_run(&all);
    assert_eq!(code, 0, "profrj diff: {text}");
    let mut out: BTreeMap<String, BTreeMap<String, Both>> = BTreeMap::new();
    let mut block = String::new();
    for line in text.lines().skip(1) {
        let w: Vec<&str> = line.split_whitespace().collect();
        if line.chars().next().is_some_and(|c| c.is_ascii_uppercase()) {
            block = w[0].to_owned();
            continue;
        }
        // Both sides of each measure, and the change between them.
        let sides: Vec<u64> = [0, 1, 3, 4, 6, 7]
            .iter()
            .filter_map(|&i| w.get(i)?.parse().ok())
            .collect();
        if sides.len() < 6 {
            continue;
        }
        for (i, c) in [(0, 2), (2, 5), (4, 8)] {
            let change: i128 = w[c].parse().unwrap();
            assert_eq!(change, sides[i + 1] as i128 - sides[i] as i128, "{line}");
        }
        let both = [
            (sides[0], sides[1]),
            (sides[2], sides[3]),
            (sides[4], sides[5]),
        ];
        let rows = out.entry(block.clone()).or_default();
        rows.insert(w[9..].join(" "), both);
    }
    out
}

#[test]
fn diff_gives_the_leak_exactly_by_class_and_by_retaining_path() {
    let grown = K * ROUNDS;
    let each = 24 + long_array(LEAK_LEN);
    let t = diff(&["--top", "0"]);
    assert_eq!(
        t["CLASSES"]["profrj.harness.HeapRetain$Leaked"],
        [(0, grown), (0, 24 * grown), (0, each * grown)]
    );
    let arrays = t["CLASSES"]["long[]"];
    assert_eq!(arrays[0].1 - arrays[0].0, grown, "long[]: {arrays:?}");
    assert_eq!(arrays[1].1 - arrays[1].0, grown * long_array(LEAK_LEN));
    for c in ["Cache", "Key", "Pair", "HolderA", "HolderB", "Shared"] {
        let c = format!("profrj.harness.HeapRetain${c}");
        assert!(
            !t["CLASSES"].contains_key(&c),
            "{c} changed: {:?}",
            t["CLASSES"][&c]
        );
    }
    // The list: its backing array was made large enough before the first
    // dump, so it and the list keep their sizes; what they retain grows by
    // the leak.
    let paths = &t["RETAINING"];
    let list = paths
        .iter()
        .find(|(p, _)| p.ends_with("static leak java.util.ArrayList"))
        .unwrap_or_else(|| panic!("no path to the list: {paths:?}"));
    let own = 32 + 24 + 8 * K * (ROUNDS + 1);
    assert_eq!(
        *list.1,
        [(1, 1), (32, 32), (own, own + each * grown)],
        "{}",
        list.0
    );
}

#[test]
fn diff_refuses_a_heap_dump_beside_a_snapshot() {
    let (a, _) = dumps();
    let any = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/golden/17/alloc.xml");
    let (code, text) = profrj_run(&["diff", a.to_str().unwrap(), any.to_str().unwrap()]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("two heap dumps or two snapshots"), "{text}");
}
