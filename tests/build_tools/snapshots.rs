//! A snapshot's `<coverage>` section read into a map, and sums of them.

use std::collections::BTreeMap;
use std::fmt;
use std::path::Path;

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct MethodKey {
    pub class: String,
    pub name: String,
    pub signature: String,
}

impl MethodKey {
    pub fn new(class: &str, name: &str, signature: &str) -> MethodKey {
        MethodKey {
            class: class.to_owned(),
            name: name.to_owned(),
            signature: signature.to_owned(),
        }
    }
}

impl fmt::Display for MethodKey {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "{}.{}{}", self.class, self.name, self.signature)
    }
}

#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Method {
    pub count: u64,
    pub firstline: i64,
    /// -1 no code, else times run, one per line from `firstline`.
    pub footprints: Vec<i64>,
}

pub type Coverage = BTreeMap<MethodKey, Method>;

/// Every `<method>` of the snapshot's `<coverage>` section (which must be there).
pub fn read_coverage(path: &Path) -> Coverage {
    let text = crate::common::read_snapshot(path);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let section = doc
        .root_element()
        .children()
        .find(|n| n.has_tag_name("coverage"))
        .unwrap_or_else(|| panic!("{}: no <coverage>", path.display()));
    let mut out = Coverage::new();
    for class in section.children().filter(|n| n.has_tag_name("class")) {
        for m in class.children().filter(|n| n.has_tag_name("method")) {
            let key = MethodKey::new(
                class.attribute("name").unwrap(),
                m.attribute("name").unwrap(),
                m.attribute("signature").unwrap(),
            );
            let method = Method {
                count: crate::common::attr_u64(m, "count"),
                firstline: m.attribute("firstline").unwrap().parse().unwrap(),
                footprints: crate::common::footprints(m)
                    .into_iter()
                    .map(|(_, n)| n)
                    .collect(),
            };
            let dup = out.insert(key.clone(), method);
            assert!(dup.is_none(), "{}: {key} twice", path.display());
        }
    }
    out
}

/// Adds `more` into `sum`: calls, and footprints cell by cell (a line with
/// no code in one is a line with no code in all: the same class file).
pub fn add_coverage(sum: &mut Coverage, more: &Coverage) {
    for (key, m) in more {
        let Some(s) = sum.get_mut(key) else {
            sum.insert(key.clone(), m.clone());
            continue;
        };
        assert_eq!(
            (s.firstline, s.footprints.len()),
            (m.firstline, m.footprints.len()),
            "{key}: another class file"
        );
        s.count += m.count;
        for (a, b) in s.footprints.iter_mut().zip(&m.footprints) {
            assert_eq!(*a < 0, *b < 0, "{key}: another class file");
            if *a >= 0 {
                *a += b;
            }
        }
    }
}
