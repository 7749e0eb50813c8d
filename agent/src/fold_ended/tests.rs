//! The fold on hand-made models: sums node by node, peaks by their rule,
//! a group's own rows merged with its threads', any depth. (Which threads
//! fold is the thread table's rule: `threads.rs`' tests.)

use super::*;
use crate::model::{Row, Unit};

fn thread(name: &str, start: u64, end: Option<u64>, cpu: u64) -> ThreadRecord {
    let mut t = ThreadRecord::platform(name.into(), start);
    t.end_ns = end;
    t.cpu_ns = cpu;
    t
}

/// Appends a group named `name` and folds `members` into it.
fn fold_into(table: &mut Vec<ThreadRecord>, name: &str, members: &[usize]) -> u32 {
    let mut g = ThreadRecord::ended_group(name.into(), 0);
    g.ended_threads = members.len() as u64;
    g.end_ns = Some(1);
    table.push(g);
    let id = table.len() as u32 - 1;
    for &m in members {
        table[m].folded_into = Some(ThreadId(id));
    }
    id
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
fn folded_threads_sum_into_their_group_and_the_others_stay() {
    let mut table = vec![
        thread("main", 0, None, 5),
        thread("pool-1-thread-1", 10, Some(110), 30),
        thread("pool-1-thread-2", 20, Some(70), 20),
        thread("pool-2-thread-1", 30, None, 9),
    ];
    let g = fold_into(&mut table, "pool-#-thread-#", &[1, 2]);
    assert_eq!(g, 4);
    let section = trees(vec![
        tree(0, &[(&[1, 2], 4)]),
        tree(1, &[(&[1, 2], 3), (&[1, 3], 1)]),
        tree(2, &[(&[1, 3], 5), (&[4], 2)]),
        tree(3, &[(&[1, 2], 1)]),
    ]);
    let sections = fold_ended(&crate::threads::shared(&table), vec![section]);
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
        "the threads not folded as they were; the group's nodes summed, heaviest first"
    );
    let Part::Trees(t) = &sections[0].parts[0] else {
        panic!()
    };
    assert_eq!(t.threads[2].root, vec![0, 11], "the group's total");
}

#[test]
fn a_groups_own_tree_merges_with_its_threads() {
    let mut table = vec![thread("w-1", 0, Some(5), 1), thread("w-2", 0, Some(5), 1)];
    fold_into(&mut table, "w-#", &[1]);
    // A mode that folded w-... earlier already wrote under the group (2).
    let section = trees(vec![
        tree(2, &[(&[7], 5)]),
        tree(1, &[(&[7], 1)]),
        tree(0, &[(&[7], 2)]),
    ]);
    let sections = fold_ended(&crate::threads::shared(&table), vec![section]);
    assert_eq!(
        shape(&sections[0]),
        vec![(Some(0), vec![(7, 1, 2, 2)]), (Some(2), vec![(7, 1, 6, 6)])]
    );
}

/// Frame types (sampling's node words) add up type by type in a group.
#[test]
fn a_groups_frame_types_add_up_type_by_type() {
    use crate::model::NodeText;
    let mut table = vec![thread("w-1", 0, Some(5), 1)];
    fold_into(&mut table, "w-#", &[0]);
    let typed = |id: u32, w: u64, through: &str, top: &str| {
        let mut t = tree(id, &[(&[7, 8], w)]);
        let text = |node: u32, name: &'static str, value: &str| NodeText {
            node,
            name,
            value: value.into(),
        };
        t.texts = vec![
            text(0, "frameTypes", through),
            text(1, "frameTypes", top),
            text(1, "selfTypes", top),
        ];
        t
    };
    let section = trees(vec![
        typed(1, 5, "interpreted:5", "c2:4 inlined:1"),
        typed(0, 3, "interpreted:2", "c2:1 c1:2"),
    ]);
    let sections = fold_ended(&crate::threads::shared(&table), vec![section]);
    let Part::Trees(t) = &sections[0].parts[0] else {
        panic!()
    };
    let words: Vec<(u32, &str, &str)> = t.threads[0]
        .texts
        .iter()
        .map(|x| (x.node, x.name, x.value.as_str()))
        .collect();
    assert_eq!(
        words,
        [
            (0, "frameTypes", "interpreted:7"),
            (1, "frameTypes", "c2:5 c1:2 inlined:1"),
            (1, "selfTypes", "c2:5 c1:2 inlined:1"),
        ]
    );
}

#[test]
fn a_peak_is_the_highest_of_the_threads_never_below_what_is_alive() {
    let mut table = vec![
        thread("w-1", 0, Some(10), 0),
        thread("w-2", 0, Some(10), 0),
        thread("main", 0, None, 0),
    ];
    fold_into(&mut table, "w-#", &[0, 1]);
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
    let sections = fold_ended(&crate::threads::shared(&table), vec![section]);
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
fn a_stack_a_hundred_thousand_frames_deep_folds_without_recursion() {
    let mut table = vec![thread("d-1", 0, Some(5), 1), thread("d-2", 0, Some(5), 1)];
    fold_into(&mut table, "d-#", &[0, 1]);
    let path: Vec<u32> = (0..100_000).collect();
    let section = trees(vec![tree(0, &[(&path, 1)]), tree(1, &[(&path, 2)])]);
    let sections = fold_ended(&crate::threads::shared(&table), vec![section]);
    let s = shape(&sections[0]);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].1.len(), 100_000);
    assert_eq!(s[0].1[99_999], (99_999, 100_000, 3, 3));
}

#[test]
fn equal_frames_under_different_ids_merge() {
    let mut table = vec![thread("s-1", 0, Some(5), 1), thread("s-2", 0, Some(5), 1)];
    fold_into(&mut table, "s-#", &[0, 1]);
    let mut section = trees(vec![tree(0, &[(&[0], 1)]), tree(1, &[(&[1], 2)])]);
    let Part::Trees(t) = &mut section.parts[0] else {
        panic!()
    };
    t.frames = vec![crate::model::Frame::method("a.B.c():3"); 2];
    let sections = fold_ended(&crate::threads::shared(&table), vec![section]);
    assert_eq!(shape(&sections[0]), vec![(Some(2), vec![(0, 1, 3, 3)])]);
}

#[test]
fn nothing_folded_leaves_the_model_as_it_was() {
    let table = vec![thread("main", 0, None, 1), thread("w-1", 0, Some(4), 1)];
    let sections = fold_ended(
        &crate::threads::shared(&table),
        vec![trees(vec![tree(1, &[(&[1], 1)])])],
    );
    assert_eq!(shape(&sections[0]), vec![(Some(1), vec![(1, 1, 1, 1)])]);
}
