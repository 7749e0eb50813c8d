//! A sampler node's frame types as read: `frameTypes` (samples with the
//! node anywhere on the stack) and `selfTypes` (samples with it on top),
//! a count per [`FrameType`] each (docs/SNAPSHOT.md). All zero for a
//! snapshot written before the agent recorded types, and for the other
//! sections.

use profrj_format::frame_types::{self, FrameType, ALL};

/// Counts per type, indexed by [`slot`].
pub type PerType = [u64; ALL.len()];

/// A node's two type counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrameCounts {
    /// `frameTypes`: how the node's frame ran, over the samples through it.
    pub through: PerType,
    /// `selfTypes`: the same over the samples with the node on top.
    pub own: PerType,
}

/// A type's index in [`PerType`].
pub fn slot(t: FrameType) -> usize {
    ALL.iter()
        .position(|&u| u == t)
        .expect("every type is in ALL")
}

impl FrameCounts {
    /// Whether the snapshot gave the node any type.
    pub fn any(&self) -> bool {
        self.through.iter().chain(&self.own).any(|&n| n > 0)
    }

    /// Reads one attribute's value into `into` (`through` or `own`).
    pub fn read(into: &mut PerType, value: &str) -> Result<(), frame_types::FrameTypesError> {
        for (t, n) in frame_types::parse(value)? {
            into[slot(t)] = n;
        }
        Ok(())
    }

    /// The non-zero counts of `of`, as `(type, count)`.
    pub fn pairs(of: &PerType) -> impl Iterator<Item = (FrameType, u64)> + '_ {
        ALL.iter()
            .zip(of)
            .filter(|(_, &n)| n > 0)
            .map(|(&t, &n)| (t, n))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_attributes() {
        let mut c = FrameCounts::default();
        assert!(!c.any());
        FrameCounts::read(&mut c.through, "c2:40 inlined:5").unwrap();
        FrameCounts::read(&mut c.own, "interpreted:3").unwrap();
        assert!(c.any());
        assert_eq!(c.through[slot(FrameType::C2)], 40);
        assert_eq!(c.through[slot(FrameType::Inlined)], 5);
        assert_eq!(
            FrameCounts::pairs(&c.own).collect::<Vec<_>>(),
            [(FrameType::Interpreted, 3)]
        );
        assert!(FrameCounts::read(&mut c.own, "c3:1").is_err());
    }
}
