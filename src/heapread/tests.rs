//! Hand-built dumps whose dominator trees are known: a long linked list
//! (nothing may recurse along it), the same list closed into a cycle, a
//! reference to no object, a random graph checked against a plain
//! iterative computation; and cut, lying and duplicated files, which must
//! each be a clear error.

use super::views::{self, Row};
use super::Heap;
use crate::test_dump::B;
use std::path::PathBuf;

const OBJECT: u32 = 0x10;
const NODE: u32 = 0x20;
const HOLDER: u32 = 0x30;
/// The LOAD CLASS records of both dumps: Object, the node class, Holder.
const CLASSES: [(u32, u32, u32); 3] = [(1, OBJECT, 1), (2, NODE, 2), (3, HOLDER, 3)];
/// Node `i`'s id.
fn node(i: u32) -> u32 {
    0x1000 + 8 * i
}

/// A class dump: id, super, instance size, statics (name, object), fields.
fn class(id: u32, sup: u32, size: u32, statics: &[(u32, u32)], fields: &[u32]) -> B {
    let mut c = B::default().u1(0x20).u4(id).u4(1).u4(sup);
    c = c.u4(0).u4(0).u4(0).u4(0).u4(0).u4(size).u2(0);
    c = c.u2(statics.len() as u16);
    for &(name, value) in statics {
        c = c.u4(name).u1(2).u4(value);
    }
    c = c.u2(fields.len() as u16);
    for &name in fields {
        c = c.u4(name).u1(2);
    }
    c
}

/// `Holder.head` → node 0 → node 1 → … → node n-1, whose `next` is
/// `last_next`; Holder a sticky class.
fn list(n: u32, last_next: u32) -> Vec<u8> {
    let b = B::default;
    let strings = [
        (1, "java/lang/Object"),
        (2, "p/Node"),
        (3, "p/Holder"),
        (4, "next"),
        (5, "head"),
    ];
    let mut f = B::start(&strings, &CLASSES);
    let mut seg = b()
        .raw(&class(OBJECT, 0, 0, &[], &[]).0)
        .raw(&class(NODE, OBJECT, 4, &[], &[4]).0)
        .raw(&class(HOLDER, OBJECT, 0, &[(5, node(0))], &[]).0)
        .u1(0x05)
        .u4(HOLDER);
    for i in 0..n {
        let next = if i + 1 == n { last_next } else { node(i + 1) };
        seg = seg.u1(0x21).u4(node(i)).u4(1).u4(NODE).u4(4).u4(next);
    }
    f = f.record(0x1C, seg);
    f.record(0x2C, b()).0
}

fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("profrj-heapread-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// The Node row of the class table.
fn node_row(h: &Heap) -> Row {
    let mut s = super::scratch::Scratch::new().unwrap();
    let v = views::compute(h, None, 5, &mut s).unwrap();
    let t = (0..h.g.types())
        .find(|&t| h.g.type_name(&h.d, t) == "p.Node")
        .unwrap();
    v.by_type[t as usize]
}

/// Node size as NetBeans states it: 4 bytes of field, two 4-byte ids.
const SIZE: u64 = 12;

#[test]
fn a_long_list_is_walked_without_recursion() {
    let n = 300_000;
    let h = Heap::read(&write("list.hprof", &list(n, 0)), false).unwrap();
    let row = node_row(&h);
    assert_eq!(row.count, n as u64);
    assert_eq!(row.shallow, SIZE * n as u64);
    assert_eq!(row.retained, SIZE * n as u64);
    for i in [0, 1, n / 2, n - 1] {
        let v = h.g.node(node(i).into()).unwrap();
        assert_eq!(
            h.tree.retained[v as usize],
            SIZE * (n - i) as u64,
            "node {i}"
        );
    }
    // A node 50,000 deep: the root's side, the object's, the rest counted.
    let deep = 50_000;
    let v = h.g.node(node(deep).into()).unwrap();
    let lines = h.path_lines(v);
    assert_eq!(lines[0], "sticky class -> class p.Holder");
    assert_eq!(lines[1], format!("static head -> p.Node@0x{:x}", node(0)));
    let more = format!("... {} more steps ...", deep + 3 - 24);
    assert!(lines.contains(&more), "{lines:?}");
    assert_eq!(
        lines.last().unwrap(),
        &format!(".next -> p.Node@0x{:x}", node(deep))
    );
    // The last, 300,000 deep: its root side is not looked for.
    let last = h.g.node(node(n - 1).into()).unwrap();
    let lines = h.path_lines(last);
    assert_eq!(
        lines[0],
        format!(
            "... more than {} steps from a GC root (not followed further) ...",
            super::paths::FOLLOWED - 12
        )
    );
    assert_eq!(lines.len(), 12, "{lines:?}");
    assert_eq!(
        lines.last().unwrap(),
        &format!(".next -> p.Node@0x{:x}", node(n - 1))
    );
}

/// `Holder.head` → pair 0 and `Holder.tail` → pair 1; each of n pairs has
/// two fields, each a random pair or null (a fixed seed).
fn random_pairs(n: u32) -> Vec<u8> {
    let b = B::default;
    let strings = [
        (1, "java/lang/Object"),
        (2, "p/Pair"),
        (3, "p/Holder"),
        (4, "a"),
        (5, "head"),
        (6, "b"),
        (7, "tail"),
    ];
    let mut f = B::start(&strings, &CLASSES);
    let statics = [(5, node(0)), (7, node(1))];
    let mut seg = b()
        .raw(&class(OBJECT, 0, 0, &[], &[]).0)
        .raw(&class(NODE, OBJECT, 8, &[], &[4, 6]).0)
        .raw(&class(HOLDER, OBJECT, 0, &statics, &[]).0)
        .u1(0x05)
        .u4(HOLDER);
    let mut seed = 39u64;
    let mut pick = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let r = (seed >> 33) as u32;
        // About one field in eight null; links mostly to nearby pairs, some far.
        match r % 8 {
            0 => 0,
            1 => node((r >> 3) % n),
            _ => node(((r >> 3) % 16 + (seed >> 50) as u32) % n),
        }
    };
    for i in 0..n {
        let (a, c) = (pick(), pick());
        seg = seg.u1(0x21).u4(node(i)).u4(1).u4(NODE).u4(8).u4(a).u4(c);
    }
    f = f.record(0x1C, seg);
    f.record(0x2C, b()).0
}

/// Immediate dominators by the plain iterative algorithm (Cooper, Harvey
/// and Kennedy) over the same graph: `u32::MAX` where no root reaches.
fn plain_idoms(g: &super::graph::Graph) -> Vec<u32> {
    let (total, root) = (g.n + 1, g.n);
    // Postorder numbers, by an explicit stack.
    let mut post = vec![usize::MAX; total];
    let mut order = Vec::new();
    let mut seen = vec![false; total];
    let mut stack = vec![(root, 0usize)];
    seen[root] = true;
    while let Some(&mut (v, ref mut i)) = stack.last_mut() {
        let out = g.out_of(v as u32);
        if *i < out.len() {
            let w = out[*i] as usize;
            *i += 1;
            if !seen[w] {
                seen[w] = true;
                stack.push((w, 0));
            }
        } else {
            post[v] = order.len();
            order.push(v);
            stack.pop();
        }
    }
    let mut preds = vec![Vec::new(); total];
    for &v in &order {
        for &w in g.out_of(v as u32) {
            preds[w as usize].push(v);
        }
    }
    let mut idom = vec![usize::MAX; total];
    idom[root] = root;
    let mut changed = true;
    while changed {
        changed = false;
        for &v in order.iter().rev().skip(1) {
            let mut new = usize::MAX;
            for &p in &preds[v] {
                if idom[p] == usize::MAX {
                    continue;
                }
                new = if new == usize::MAX {
                    p
                } else {
                    let (mut a, mut b) = (p, new);
                    while a != b {
                        while post[a] < post[b] {
                            a = idom[a];
                        }
                        while post[b] < post[a] {
                            b = idom[b];
                        }
                    }
                    a
                };
            }
            if idom[v] != new {
                idom[v] = new;
                changed = true;
            }
        }
    }
    idom.iter()
        .map(|&d| if d == usize::MAX { u32::MAX } else { d as u32 })
        .collect()
}

#[test]
fn a_random_graph_has_the_plain_algorithms_dominators_in_one_pass_or_many() {
    let n = 3000;
    let h = Heap::read(&write("pairs.hprof", &random_pairs(n)), false).unwrap();
    let want = plain_idoms(&h.g);
    assert_eq!(&h.tree.idom[..], &want[..]);
    // Not a tree in disguise: some pair is dominated by neither the root
    // nor the pair that first refers to it.
    let far = (0..h.g.n).filter(|&v| want[v] != u32::MAX && want[v] != h.g.n as u32);
    assert!(far.count() > (n / 4) as usize);
    // The predecessors placed a few at a time (hundreds of passes): the
    // same tree and the same retained sizes.
    let mut s = super::scratch::Scratch::new().unwrap();
    let t = super::dominators::compute_placing(&h.g, &mut s, 7).unwrap();
    assert_eq!(&t.idom[..], &want[..]);
    assert_eq!(&t.retained[..], &h.tree.retained[..]);
    // Retained sizes: each reached pair's own 16 bytes plus what it dominates.
    let mut sum = vec![0u64; h.g.n + 1];
    for v in 0..h.g.n {
        if want[v] != u32::MAX {
            let mut d = v;
            loop {
                sum[d] += h.g.shallow[v];
                if d == h.g.n {
                    break;
                }
                d = want[d] as usize;
            }
        }
    }
    assert_eq!(&h.tree.retained[..], &sum[..]);
}

#[test]
fn a_cycle_is_dominated_by_its_entry() {
    let n = 1000;
    let h = Heap::read(&write("cycle.hprof", &list(n, node(0))), false).unwrap();
    let first = h.g.node(node(0).into()).unwrap();
    assert_eq!(h.tree.retained[first as usize], SIZE * n as u64);
    let second = h.g.node(node(1).into()).unwrap();
    assert_eq!(h.tree.retained[second as usize], SIZE * (n - 1) as u64);
    assert_eq!(node_row(&h).retained, SIZE * n as u64);
}

#[test]
fn a_reference_to_no_object_is_counted_and_ignored() {
    let h = Heap::read(&write("dangling.hprof", &list(10, 0xdead_0000)), false).unwrap();
    assert_eq!(h.g.dangling, 1);
    assert_eq!(node_row(&h).retained, SIZE * 10);
}

#[test]
fn cut_lying_and_duplicated_dumps_are_errors() {
    let whole = list(100, 0);
    let cut = write("cut.hprof", &whole[..whole.len() - 7]);
    let e = Heap::read(&cut, false)
        .err()
        .expect("a cut dump read")
        .to_string();
    assert!(e.contains("cut.hprof: byte "), "{e}");
    // The segment's length says more than the file has.
    let mut lying = whole.clone();
    let end = lying.len() - 9; // HEAP_DUMP_END
    let seg = (0..end)
        .find(|&i| lying[i] == 0x1C && lying[i + 5..i + 9] == ((end - i - 9) as u32).to_be_bytes());
    let seg = seg.unwrap();
    lying[seg + 5..seg + 9].copy_from_slice(&u32::MAX.to_be_bytes());
    let e = Heap::read(&write("lying.hprof", &lying), false)
        .err()
        .expect("read")
        .to_string();
    assert!(e.contains("lying.hprof: byte "), "{e}");
    // Two objects of one id.
    let mut twice = list(3, 0);
    let at = twice
        .windows(5)
        .position(|w| w == [0x21, 0, 0, 0x10, 0x08])
        .unwrap();
    twice[at + 1..at + 5].copy_from_slice(&node(0).to_be_bytes());
    let e = Heap::read(&write("twice.hprof", &twice), false)
        .err()
        .expect("read")
        .to_string();
    assert!(e.contains("two objects have the id 0x1000"), "{e}");
}

#[test]
fn the_private_directory_is_0700_and_goes_with_the_reading() {
    use std::os::unix::fs::PermissionsExt;
    let mut s = super::scratch::Scratch::new().unwrap();
    let dir = s.dir().to_owned();
    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let mut a = s.array::<u64>("a", 1000).unwrap();
    a[999] = 7;
    // The array's file has no name: the directory stays empty.
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
    drop(a);
    drop(s);
    assert!(!dir.exists(), "{} left", dir.display());
}

#[test]
fn a_cut_gzipped_dump_is_an_error() {
    use std::io::Write;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let whole = list(100, 0);
    gz.write_all(&whole[..whole.len() - 30]).unwrap();
    let path = write("cut.hprof.gz", &gz.finish().unwrap());
    let e = Heap::read(&path, true)
        .err()
        .expect("a cut dump read")
        .to_string();
    assert!(e.contains("cut.hprof.gz: byte "), "{e}");
    let h = {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&whole).unwrap();
        Heap::read(&write("whole.hprof.gz", &gz.finish().unwrap()), true).unwrap()
    };
    assert_eq!(node_row(&h).count, 100);
}
