//! What the outputs of frame types share: a node's dominant type, and
//! counts summed (the flame page's threads of one name). The counts
//! themselves are [`FrameCounts`](super::FrameCounts) (`frame_counts.rs`).

use super::frame_counts::PerType;
use profrj_format::frame_types::{self, FrameType};

/// The type most of `counts` have (ties: the first in encoding order), as
/// `profrj_format::frame_types::dominant`.
pub fn dominant(counts: &PerType) -> Option<FrameType> {
    frame_types::dominant(&super::FrameCounts::pairs(counts).collect::<Vec<_>>())
}

/// Adds `from` into `to`, type by type.
pub fn add(to: &mut PerType, from: &PerType) {
    for (a, b) in to.iter_mut().zip(from) {
        *a = a.saturating_add(*b);
    }
}

#[cfg(test)]
pub mod tests {
    use super::*;
    use crate::snapshot::{type_slot as slot, FrameCounts};

    #[test]
    fn dominant_type_and_sums() {
        let mut c = FrameCounts::default();
        FrameCounts::read(&mut c.through, "c2:40 inlined:5").unwrap();
        assert_eq!(dominant(&c.through), Some(FrameType::C2));
        FrameCounts::read(&mut c.own, "interpreted:2 c1:2").unwrap();
        assert_eq!(
            dominant(&c.own),
            Some(FrameType::Interpreted),
            "ties: encoding order"
        );
        assert_eq!(dominant(&[0; 9]), None);
        add(&mut c.through, &c.own.clone());
        assert_eq!(c.through[slot(FrameType::Interpreted)], 2);
        assert_eq!(c.through[slot(FrameType::C2)], 40);
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
        sec.threads[0]
            .tree
            .walk()
            .map(|n| (s.names.get(n.name).to_owned(), n.types))
            .collect()
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
        a.own[slot(FrameType::Interpreted)] = 1;
        let mut c = FrameCounts::default();
        c.through[slot(FrameType::C2)] = 2;
        c.through[slot(FrameType::Inlined)] = 1;
        c.own = c.through;
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
            assert!(e.message.contains(&format!("attribute {attr}: ")), "{e}");
            assert!(e.message.contains(&format!("{value:?}")), "{e}");
            assert_eq!((e.line, e.column), (1, 32), "{e}");
        }
        let untyped = crate::snapshot::parse_bytes(
            br#"<doc><sampler><thread name="t"><profile name="a()" hits="1"/></thread></sampler></doc>"#,
        )
        .unwrap();
        assert!(!untyped.call_sections[0].typed);
    }
}
