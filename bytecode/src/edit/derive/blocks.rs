//! Which counted points tell whether an instruction ran: for each
//! instruction, the points whose straight code leads to it (an instruction
//! counts as run when one of them was reached). Where straight code
//! begins at a point, that point; at a merge with no point of its own,
//! every way in; at method entry, the calls. Branching instructions'
//! arrival points are passed over (they would need counters of their own).

use super::graph::Source;
use crate::code::Code;

/// A leader: a point (its index) or the calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Leader {
    Calls,
    Point(usize),
}

/// Most leaders kept for one instruction (a merge of many ways).
const MAX_LEADERS: usize = 8;
/// Passes over the code for merges reached from later code (a loop head
/// without a point of its own).
const PASSES: usize = 4;

/// Each instruction's leaders. `point_at`: the first point at each
/// instruction; `skip`: instructions whose point does not lead.
pub(super) fn leaders(
    code: &Code<'_>,
    incoming: &[Vec<Source>],
    point_at: &[Option<usize>],
    skip: &[bool],
    calls_counted: bool,
) -> Vec<Vec<Leader>> {
    let n = code.insns.len();
    let mut out: Vec<Vec<Leader>> = vec![Vec::new(); n];
    for pass in 0..PASSES {
        let mut changed = false;
        for i in 0..n {
            let mut set = match point_at[i] {
                Some(k) if !skip[i] => vec![Leader::Point(k)],
                _ => {
                    let mut set = Vec::new();
                    for &src in &incoming[i] {
                        match src {
                            Source::Entry if calls_counted => set.push(Leader::Calls),
                            Source::Fall(p) | Source::Jump(p) | Source::Switch(p) => {
                                set.extend(out[p as usize].iter().copied())
                            }
                            _ => {}
                        }
                    }
                    set.sort_unstable();
                    set.dedup();
                    set.truncate(MAX_LEADERS);
                    set
                }
            };
            if set != out[i] {
                std::mem::swap(&mut out[i], &mut set);
                changed = true;
            }
        }
        if !changed || pass + 1 == PASSES {
            break;
        }
    }
    out
}
