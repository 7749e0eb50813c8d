//! Per node of a sampled tree, how its frame ran: samples per frame type
//! over those with the node on their stack (`frameTypes`) and those with it
//! on top (`selfTypes`). A side table: only nodes that saw a known type
//! have counts (two rows of 9 `u32`), the others one `u32` of index.

use crate::calltree::NodeId;
use profrj_format::frame_types::{self, FrameType, ALL};

const TYPES: usize = ALL.len();

/// One node's counts: [through the node, with it on top], by type code - 1.
type Row = [[u32; TYPES]; 2];

#[derive(Default)]
pub struct TypeCounts {
    /// Node id -> index into `rows` + 1 (0: no count).
    slot: Vec<u32>,
    rows: Vec<Row>,
}

impl TypeCounts {
    /// Counts `n` samples whose frame at `node` ran as `kind` (a
    /// [`FrameType`] code; 0, not known, counts nowhere); `top`: the node
    /// was the sample's top frame.
    pub fn add(&mut self, node: NodeId, kind: u8, top: bool, n: u64) {
        let Some(t) = FrameType::from_code(kind) else {
            return;
        };
        let row = self.row(node);
        let n = n.min(u32::MAX as u64) as u32;
        let i = t as usize - 1;
        row[0][i] = row[0][i].saturating_add(n);
        if top {
            row[1][i] = row[1][i].saturating_add(n);
        }
    }

    fn row(&mut self, node: NodeId) -> &mut Row {
        let at = node.0 as usize;
        if self.slot.len() <= at {
            self.slot.resize(at + 1, 0);
        }
        if self.slot[at] == 0 {
            self.rows.push([[0; TYPES]; 2]);
            self.slot[at] = self.rows.len() as u32;
        }
        let r = self.slot[at] as usize - 1;
        &mut self.rows[r]
    }

    /// Adds `other`'s counts, its node `i` going to `map[i]` here.
    pub fn absorb(&mut self, other: &TypeCounts, map: &[NodeId]) {
        for (i, &s) in other.slot.iter().enumerate() {
            let (Some(&to), true) = (map.get(i), s != 0) else {
                continue;
            };
            let from = other.rows[s as usize - 1];
            let row = self.row(to);
            for (mine, theirs) in row.iter_mut().zip(from) {
                for (m, t) in mine.iter_mut().zip(theirs) {
                    *m = m.saturating_add(t);
                }
            }
        }
    }

    /// `node`'s `frameTypes` and `selfTypes` values (empty: no count).
    pub fn values(&self, node: NodeId) -> [String; 2] {
        let Some(&s) = self.slot.get(node.0 as usize).filter(|&&s| s != 0) else {
            return [String::new(), String::new()];
        };
        let row = &self.rows[s as usize - 1];
        row.map(|counts| {
            let pairs: Vec<(FrameType, u64)> = ALL
                .iter()
                .zip(counts)
                .map(|(&t, n)| (t, n as u64))
                .collect();
            frame_types::write(&pairs)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_by_type_through_and_on_top() {
        let mut c = TypeCounts::default();
        let node = NodeId(3);
        c.add(node, FrameType::C2 as u8, false, 4);
        c.add(node, FrameType::Inlined as u8, true, 1);
        c.add(node, 0, true, 7);
        c.add(node, 200, true, 7);
        assert_eq!(
            c.values(node),
            ["c2:4 inlined:1".to_owned(), "inlined:1".into()]
        );
        assert_eq!(c.values(NodeId(2)), [String::new(), String::new()]);
        assert_eq!(c.values(NodeId(99)), [String::new(), String::new()]);
        let mut group = TypeCounts::default();
        group.add(NodeId(1), FrameType::C2 as u8, true, 2);
        group.absorb(&c, &[NodeId(0), NodeId(0), NodeId(0), NodeId(1)]);
        assert_eq!(
            group.values(NodeId(1)),
            ["c2:6 inlined:1".to_owned(), "c2:2 inlined:1".into()]
        );
    }
}
