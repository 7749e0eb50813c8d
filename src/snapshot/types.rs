//! A sampler node's frame types as the readers hold them: the counts of
//! `frameTypes` (the samples through the node, by how the node's frame ran
//! in each) and of `selfTypes` (the samples with the node on top), one slot
//! per [`FrameType`] (docs/SNAPSHOT.md; `profrj_format::frame_types`).
//!
//! Kept beside a tree's nodes, not in [`Node`](super::Node): most trees
//! have none (a JFR recording's, a profile's), and a node held in memory
//! should not grow by two arrays for them.

use profrj_format::frame_types::{self, FrameType, ALL};

/// Types in [`ALL`]'s order.
pub const TYPES: usize = ALL.len();

/// One node's counts per type (zero: none).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameCounts {
    /// `frameTypes`: every sample with the node on its stack.
    pub through: [u64; TYPES],
    /// `selfTypes`: the samples with the node on top.
    pub top: [u64; TYPES],
}

/// A type's slot in [`FrameCounts`]' arrays.
pub fn slot(t: FrameType) -> usize {
    ALL.iter()
        .position(|&u| u == t)
        .expect("every type is in ALL")
}

/// The non-zero counts of `counts` as (type, count), in [`ALL`]'s order.
pub fn pairs(counts: &[u64; TYPES]) -> Vec<(FrameType, u64)> {
    ALL.iter()
        .zip(counts)
        .filter(|(_, &n)| n > 0)
        .map(|(&t, &n)| (t, n))
        .collect()
}

/// The type most of `counts` have (ties: the first in [`ALL`]'s order).
pub fn dominant(counts: &[u64; TYPES]) -> Option<FrameType> {
    frame_types::dominant(&pairs(counts))
}

/// Adds `from` into `to`, slot by slot.
pub fn add(to: &mut [u64; TYPES], from: &[u64; TYPES]) {
    for (a, b) in to.iter_mut().zip(from) {
        *a = a.saturating_add(*b);
    }
}

/// Reads an attribute's value (`c2:40 inlined:5`) into `counts`.
pub fn read(value: &str, counts: &mut [u64; TYPES]) -> Result<(), frame_types::FrameTypesError> {
    for (t, n) in frame_types::parse(value)? {
        counts[slot(t)] = n;
    }
    Ok(())
}

impl FrameCounts {
    pub fn is_empty(&self) -> bool {
        self.through.iter().chain(&self.top).all(|&n| n == 0)
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;

    #[test]
    fn counts_read_and_rank() {
        let mut c = [0u64; TYPES];
        read("c2:40 inlined:5", &mut c).unwrap();
        assert_eq!(c[slot(FrameType::C2)], 40);
        assert_eq!(dominant(&c), Some(FrameType::C2));
        assert_eq!(
            pairs(&c),
            vec![(FrameType::C2, 40), (FrameType::Inlined, 5)]
        );
        assert!(read("c2:x", &mut c).is_err());
        assert_eq!(dominant(&[0; TYPES]), None);
    }

    /// A sampler tree with types; `b()`'s second line (no types) between
    /// two typed nodes.
    pub const TYPED: &str = r#"<doc><sampler><thread name="t">
      <profile name="a()" hits="1" elapsed="1" cumulated="6" cumulatedElapsed="6" frameTypes="interpreted:5 c2:1" selfTypes="interpreted:1">
        <profile name="b()" hits="2" elapsed="2" cumulated="2" cumulatedElapsed="2"/>
        <profile name="c()" hits="3" elapsed="3" cumulated="3" cumulatedElapsed="3" frameTypes="c2:2 inlined:1" selfTypes="inlined:1 c2:2"/>
      </profile></thread></sampler></doc>"#;

    fn walked(s: &crate::snapshot::Snapshot) -> Vec<(String, FrameCounts)> {
        let sec = s.calls(crate::snapshot::CallKind::Sampler).unwrap();
        assert!(sec.typed);
        let mut w = sec.threads[0].tree.walk();
        let mut out = Vec::new();
        while let Some(n) = w.next() {
            out.push((s.names.get(n.name).to_owned(), w.types()));
        }
        out
    }

    #[test]
    fn types_read_alike_in_memory_and_spilled() {
        let mem = crate::snapshot::parse_bytes(TYPED.as_bytes()).unwrap();
        let path = std::env::temp_dir().join(format!("profrj-types-{}", std::process::id()));
        std::fs::write(&path, TYPED).unwrap();
        let spilled = crate::snapshot::read_file(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        let (m, s) = (walked(&mem), walked(&spilled));
        assert_eq!(m, s);
        let mut a = FrameCounts::default();
        a.through[slot(FrameType::Interpreted)] = 5;
        a.through[slot(FrameType::C2)] = 1;
        a.top[slot(FrameType::Interpreted)] = 1;
        let mut c = FrameCounts::default();
        c.through[slot(FrameType::C2)] = 2;
        c.through[slot(FrameType::Inlined)] = 1;
        c.top = c.through;
        let want = vec![
            ("a()".to_owned(), a),
            ("b()".to_owned(), FrameCounts::default()),
            ("c()".to_owned(), c),
        ];
        assert_eq!(m, want);
    }

    #[test]
    fn bad_types_name_the_attribute() {
        for (attr, value) in [("frameTypes", "c3:1"), ("selfTypes", "c2")] {
            let xml = format!(
                r#"<doc><sampler><thread name="t"><profile name="a()" hits="1" {attr}="{value}"/></thread></sampler></doc>"#
            );
            let e = crate::snapshot::parse_bytes(xml.as_bytes()).unwrap_err();
            assert!(e.message.contains(&format!("{attr}=\"{value}\"")), "{e}");
            assert_eq!((e.line, e.column), (1, 32), "{e}");
        }
        let untyped = crate::snapshot::parse_bytes(
            br#"<doc><sampler><thread name="t"><profile name="a()" hits="1"/></thread></sampler></doc>"#,
        )
        .unwrap();
        assert!(!untyped.call_sections[0].typed);
    }
}
