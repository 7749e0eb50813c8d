//! HeapTruth's heap as a reader must read it: the counts of its classes,
//! each leaf's fields and chain, the holder chain, the arrays' contents.

use crate::common::heap_readers::{Object, ReaderView, Value};
use std::collections::{BTreeMap, BTreeSet};

/// HeapTruth's main class, and those of the objects it makes.
pub const MAIN: &str = "profrj.harness.HeapTruth";
pub const LEAF: &str = "profrj.harness.HeapTruth$Leaf";
pub const HOLDER: &str = "profrj.harness.HeapTruth$Holder";
pub const LEAF_ARRAY: &str = "profrj.harness.HeapTruth$Leaf[]";
/// The classes whose objects the Java readers print.
pub const NAMED: [&str; 5] = [LEAF, HOLDER, LEAF_ARRAY, "int[]", "byte[]"];

// HeapTruth's numbers (its constants of the same names).
pub const N_A: u64 = 1234;
pub const N_B: u64 = 567;
pub const N_INTS: u64 = 89;
pub const N_BYTES: u64 = 61;
pub const DEPTH: u64 = 25;
pub const INT_LEN: usize = 7;
pub const BYTE_LEN: usize = 33;
pub const LEAF_ARRAY_LEN: usize = 12;
pub const WEIGHT_A: i64 = 1_000_000_000_000;
pub const WEIGHT_B: i64 = 2_000_000_000_000;

/// The counts a dump of HeapTruth holds: exact for its own classes, at least
/// its arrays for int[] and byte[] (the JDK has some too).
pub fn assert_counts(v: &ReaderView) {
    let r = v.reader;
    assert_eq!(v.count(LEAF), N_A + N_B, "{r}: Leaf instances");
    assert_eq!(v.count(HOLDER), DEPTH, "{r}: Holder instances");
    assert_eq!(v.count(LEAF_ARRAY), 1, "{r}: Leaf[] arrays");
    assert!(v.count("int[]") >= N_INTS, "{r}: int[] arrays");
    assert!(v.count("byte[]") >= N_BYTES, "{r}: byte[] arrays");
}

/// HeapTruth's heap, object by object: each site's leaves (index 0..N,
/// weight, the chain of `next`), the holder chain, the arrays' contents.
pub fn assert_heap_truth(v: &ReaderView) {
    let r = v.reader;
    assert_counts(v);
    let sites = leaf_sites(v);
    assert_eq!(sites[0].len() as u64, N_A, "{r}: leaves of site a");
    assert_eq!(sites[1].len() as u64, N_B, "{r}: leaves of site b");
    for (site, leaves) in sites.iter().enumerate() {
        assert!(
            leaves.keys().copied().eq(0..leaves.len() as i64),
            "{r}: site {site}'s indexes are not 0..{}",
            leaves.len()
        );
        for (&index, leaf) in leaves {
            let next = leaf.field("next");
            if index == 0 {
                assert_eq!(*next, Value::Null, "{r}: site {site}'s leaf 0");
            } else {
                assert_eq!(
                    next,
                    &ref_to(leaves[&(index - 1)]),
                    "{r}: site {site}'s leaf {index} points elsewhere"
                );
            }
        }
    }
    // The holders: one chain from the outermost (no holder points to it).
    let holders: BTreeMap<u64, &Object> = v
        .objects_of(HOLDER)
        .into_iter()
        .map(|o| (o.id, o))
        .collect();
    assert_eq!(holders.len() as u64, DEPTH, "{r}: holders read");
    let inner: BTreeSet<&Value> = holders.values().map(|h| h.field("inner")).collect();
    let outer: Vec<&&Object> = holders
        .values()
        .filter(|h| !inner.contains(&ref_to(h)))
        .collect();
    assert_eq!(outer.len(), 1, "{r}: holder chains {outer:?}");
    let (mut at, mut depth) = (Some(*outer[0]), DEPTH as i64);
    while let Some(h) = at {
        depth -= 1;
        assert_eq!(
            h.field("depth").int(),
            depth,
            "{r}: holder {} in the chain",
            h.id
        );
        at = match h.field("inner") {
            Value::Null => None,
            Value::Ref { id, class } if class == HOLDER => Some(holders[id]),
            other => panic!("{r}: holder {}'s inner is {other:?}", h.id),
        };
    }
    assert_eq!(depth, 0, "{r}: the holder chain ends early");
    // The arrays.
    assert_eq!(
        arrays_like(v, "int[]", &int_contents()).len() as u64,
        N_INTS,
        "{r}: int[7] 0..6"
    );
    assert_eq!(
        arrays_like(v, "byte[]", &byte_contents()).len() as u64,
        N_BYTES,
        "{r}: byte[33] -16..16"
    );
    let [array] = v.objects_of(LEAF_ARRAY)[..] else {
        panic!("{r}: not one Leaf[]");
    };
    let e = array.elements();
    assert_eq!(e.len(), LEAF_ARRAY_LEN, "{r}: the Leaf[]'s length");
    for (k, leaf) in sites[0].range(0..10) {
        assert_eq!(e[*k as usize], ref_to(leaf), "{r}: Leaf[{k}]");
    }
    assert_eq!(e[10], ref_to(sites[1][&0]), "{r}: Leaf[10]");
    assert_eq!(e[11], Value::Null, "{r}: Leaf[11]");
    // Field types: a reader that read `weight` as an int would still pass above
    // where the values are small; they are not, but say what was read.
    let leaf = sites[0][&1];
    for (name, ty) in [("index", "int"), ("weight", "long"), ("next", "object")] {
        let read = leaf
            .fields
            .iter()
            .find(|f| f.0 == name)
            .map(|f| f.1.as_str());
        assert_eq!(read, Some(ty), "{r}: Leaf.{name}'s type");
    }
}

/// The leaves of site a and of site b, by index; each leaf's weight says
/// its site (the site's base plus its index).
pub fn leaf_sites(v: &ReaderView) -> [BTreeMap<i64, &Object>; 2] {
    let mut sites = [BTreeMap::new(), BTreeMap::new()];
    for leaf in v.objects_of(LEAF) {
        let index = leaf.field("index").int();
        let site = match leaf.field("weight").int() - index {
            WEIGHT_A => 0,
            WEIGHT_B => 1,
            w => panic!("{}: leaf {} has weight {w} + its index", v.reader, leaf.id),
        };
        let twice = sites[site].insert(index, leaf);
        assert!(
            twice.is_none(),
            "{}: two leaves {index} in site {site}",
            v.reader
        );
    }
    sites
}

pub fn ref_to(o: &Object) -> Value {
    Value::Ref {
        id: o.id,
        class: o.class.clone(),
    }
}

pub fn int_contents() -> Vec<Value> {
    (0..INT_LEN).map(|j| Value::Prim(j.to_string())).collect()
}

pub fn byte_contents() -> Vec<Value> {
    (0..BYTE_LEN as i32)
        .map(|j| Value::Prim((j - 16).to_string()))
        .collect()
}

/// The arrays of `class` holding exactly `contents`.
pub fn arrays_like<'v>(v: &'v ReaderView, class: &str, contents: &[Value]) -> Vec<&'v Object> {
    v.objects_of(class)
        .into_iter()
        .filter(|a| a.elements() == contents)
        .collect()
}
