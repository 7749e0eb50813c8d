//! The fold on hand-made models: sums node by node, peaks by their rule,
//! live threads untouched, the groups' cap, any depth.

use super::*;
use crate::model::{Row, Unit};

const WINDOW: (u64, u64) = (0, 1_000);

fn thread(name: &str, start: u64, end: Option<u64>, cpu: u64) -> ThreadRecord {
    let mut t = ThreadRecord::platform(name.into(), start);
    t.end_ns = end;
    t.cpu_ns = cpu;
    t
}

/// A tree of `paths` (root frame first), each path's leaf weighing `w`
/// own and every node on it `w` total: weights [samples own, samples total].
fn tree(id: u32, paths: &[(&[u32], u64)]) -> ThreadTree {
    let mut trie = Trie::new(2);
    let no_peaks = [None, None];
    for &(path, w) in paths {
        let mut t = ThreadTree::new(Some(ThreadId(id)), vec![0, w]);
        for (d, &f) in path.iter().enumerate() {
            let own = if d + 1 == path.len() { w } else { 0 };
            t.push(f, d as u32 + 1, &[own, w]);
        }
        trie.add(&t, &no_peaks);
    }
    trie.into_tree(ThreadId(id), 1, &no_peaks)
}

fn trees(threads: Vec<ThreadTree>) -> Section {
    Section {
        name: "sampler",
        extra: false,
        attributes: Vec::new(),
        parts: vec![Part::Trees(CallTrees {
            weights: vec![
                Weight::own("samples", Unit::Count),
                Weight::total("samples", Unit::Count),
            ],
            period: None,
            frames: Vec::new(),
            threads,
        })],
    }
}

/// (frame, depth, own, total) of a node.
type Shape = (u32, u32, u64, u64);

/// (thread, its nodes' [`Shape`]s) of every tree.
fn shape(s: &Section) -> Vec<(Option<u32>, Vec<Shape>)> {
    let Part::Trees(t) = &s.parts[0] else {
        panic!("trees")
    };
    t.threads
        .iter()
        .map(|tree| {
            let nodes = tree
                .nodes
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    let v = tree.values_of(i, 2);
                    (n.frame, n.depth, v[0], v[1])
                })
                .collect();
            (tree.thread.map(|t| t.0), nodes)
        })
        .collect()
}

#[test]
fn ended_threads_of_one_name_sum_into_one_group_and_live_ones_stay() {
    let table = vec![
        thread("main", 0, None, 5),
        thread("pool-1-thread-1", 10, Some(110), 30),
        thread("pool-1-thread-2", 20, Some(70), 20),
        thread("pool-2-thread-1", 30, None, 9),
    ];
    let section = trees(vec![
        tree(0, &[(&[1, 2], 4)]),
        tree(1, &[(&[1, 2], 3), (&[1, 3], 1)]),
        tree(2, &[(&[1, 3], 5), (&[4], 2)]),
        tree(3, &[(&[1, 2], 1)]),
    ]);
    let (table, sections) = fold_ended(&table, WINDOW, 0, vec![section]);
    assert_eq!(table.len(), 5, "one group appended");
    let g = &table[4];
    assert_eq!(g.name, "pool-#-thread-#");
    assert_eq!(g.ended_threads, 2);
    assert_eq!((g.start_ns, g.end_ns, g.cpu_ns), (10, Some(110), 50));
    assert_eq!(g.elapsed_ns(WINDOW), 150, "lifetimes summed");
    assert!(!g.is_alive() && !g.is_group());
    assert_eq!(
        shape(&sections[0]),
        vec![
            (Some(0), vec![(1, 1, 0, 4), (2, 2, 4, 4)]),
            (Some(3), vec![(1, 1, 0, 1), (2, 2, 1, 1)]),
            (
                Some(4),
                vec![(1, 1, 0, 9), (3, 2, 6, 6), (2, 2, 3, 3), (4, 1, 2, 2)]
            ),
        ],
        "the live threads (a live pool thread too) as they were; the group's nodes summed, heaviest first"
    );
    let Part::Trees(t) = &sections[0].parts[0] else {
        panic!()
    };
    assert_eq!(t.threads[2].root, vec![0, 11], "the group's total");
}

#[test]
fn a_peak_is_the_highest_of_the_threads_never_below_what_is_alive() {
    let table = vec![
        thread("w-1", 0, Some(10), 0),
        thread("w-2", 0, Some(10), 0),
        thread("main", 0, None, 0),
    ];
    let rows = |values: [i64; 2]| Row {
        key: "byte[]".into(),
        values: values.to_vec(),
    };
    let section = Section {
        name: "memory",
        extra: false,
        attributes: Vec::new(),
        parts: vec![Part::Rows(Rows {
            key: "class",
            columns: vec![
                Weight::own("live", Unit::Count),
                Weight::own("max_live", Unit::Count),
            ],
            threads: vec![
                (Some(ThreadId(0)), vec![rows([3, 10])]),
                (Some(ThreadId(1)), vec![rows([8, 9])]),
                (Some(ThreadId(2)), vec![rows([1, 1])]),
                (None, vec![rows([2, 2])]),
            ],
        })],
    };
    let (table, sections) = fold_ended(&table, WINDOW, 0, vec![section]);
    assert_eq!(table[3].name, "w-#");
    let Part::Rows(r) = &sections[0].parts[0] else {
        panic!()
    };
    let got: Vec<_> = r
        .threads
        .iter()
        .map(|(id, rows)| (id.map(|t| t.0), rows[0].values.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (Some(2), vec![1, 1]),
            (None, vec![2, 2]),
            (Some(3), vec![11, 11]),
        ],
        "live summed (3 + 8), the peak the higher of 10 and 9 raised to the 11 alive"
    );
}

#[test]
fn names_past_the_cap_go_into_one_group() {
    let table: Vec<_> = (0..MAX_GROUPS + 3)
        .map(|i| thread(&format!("t{}x", "a".repeat(i)), 0, Some(5), 1))
        .collect();
    let section = trees(
        (0..table.len() as u32)
            .map(|i| tree(i, &[(&[7], 1)]))
            .collect(),
    );
    let (table, sections) = fold_ended(&table, WINDOW, 0, vec![section]);
    let groups = &table[MAX_GROUPS + 3..];
    assert_eq!(groups.len(), MAX_GROUPS + 1);
    assert_eq!(groups[MAX_GROUPS].name, ENDED_GROUP);
    assert_eq!(groups[MAX_GROUPS].ended_threads, 3);
    assert_eq!(shape(&sections[0]).len(), MAX_GROUPS + 1);
}

#[test]
fn a_thread_that_ended_before_the_window_is_no_groups() {
    let table = vec![
        thread("old-1", 0, Some(5), 1),
        thread("new-1", 0, Some(50), 1),
    ];
    let (table, _) = fold_ended(&table, (10, 100), 0, vec![trees(Vec::new())]);
    assert_eq!(table.len(), 3);
    assert_eq!(
        (table[2].name.as_str(), table[2].ended_threads),
        ("new-#", 1)
    );
}

#[test]
fn keep_leaves_a_model_without_ended_threads_as_it_was() {
    let table = vec![thread("main", 0, None, 1)];
    let (out, sections) = fold_ended(&table, WINDOW, 0, vec![trees(vec![tree(0, &[(&[1], 1)])])]);
    assert_eq!(out.len(), 1);
    assert_eq!(shape(&sections[0]), vec![(Some(0), vec![(1, 1, 1, 1)])]);
}

#[test]
fn a_stack_a_hundred_thousand_frames_deep_folds_without_recursion() {
    let table = vec![thread("d-1", 0, Some(5), 1), thread("d-2", 0, Some(5), 1)];
    let path: Vec<u32> = (0..100_000).collect();
    let section = trees(vec![tree(0, &[(&path, 1)]), tree(1, &[(&path, 2)])]);
    let (_, sections) = fold_ended(&table, WINDOW, 0, vec![section]);
    let s = shape(&sections[0]);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].1.len(), 100_000);
    assert_eq!(s[0].1[99_999], (99_999, 100_000, 3, 3));
}

#[test]
fn the_first_of_each_pattern_to_start_keep_their_rows() {
    let table = vec![
        thread("job-1", 0, Some(5), 1),
        thread("job-2", 0, Some(5), 1),
        thread("job-3", 0, Some(5), 1),
        thread("solo", 0, Some(5), 1),
        thread("job-4", 0, Some(5), 1),
    ];
    let section = trees((0..5).map(|i| tree(i, &[(&[7], 1)])).collect());
    let (table, sections) = fold_ended(&table, WINDOW, 2, vec![section]);
    assert_eq!(table.len(), 6);
    assert_eq!(
        (table[5].name.as_str(), table[5].ended_threads),
        ("job-#", 2)
    );
    let ids: Vec<_> = shape(&sections[0]).into_iter().map(|s| s.0).collect();
    assert_eq!(
        ids,
        vec![Some(0), Some(1), Some(3), Some(5)],
        "job-1, job-2, solo, the group"
    );
}

#[test]
fn equal_frames_under_different_ids_merge() {
    let table = vec![thread("s-1", 0, Some(5), 1), thread("s-2", 0, Some(5), 1)];
    let mut section = trees(vec![tree(0, &[(&[0], 1)]), tree(1, &[(&[1], 2)])]);
    let Part::Trees(t) = &mut section.parts[0] else {
        panic!()
    };
    t.frames = vec![crate::model::Frame::method("a.B.c():3"); 2];
    let (_, sections) = fold_ended(&table, WINDOW, 0, vec![section]);
    assert_eq!(shape(&sections[0]), vec![(Some(2), vec![(0, 1, 3, 3)])]);
}
