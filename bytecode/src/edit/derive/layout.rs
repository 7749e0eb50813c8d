//! The points of a plan laid out: their order, the first point at each
//! instruction, and which branching instructions count only arrivals.

use super::is_branching;
use crate::code::Code;

/// The points of a plan, in order, and where they are.
pub(super) struct Layout {
    pub(super) all: Vec<u32>,
    /// The first point at each instruction, which stands for all of them.
    pub(super) point_at: Vec<Option<usize>>,
    /// Each point's representative (the first at its instruction).
    pub(super) rep: Vec<usize>,
    /// Branching instructions whose first point is an arrival point.
    pub(super) arrival: Vec<bool>,
    /// Points before this have a line or are sides and merges; those from
    /// it on are the arrival points and handlers.
    pub(super) lineless: usize,
}

impl Layout {
    /// `groups`: line points, branch sides, merges, then the arrival points
    /// and handlers (those of the last group are the arrival points').
    pub(super) fn new(code: &Code<'_>, groups: [&[u32]; 4]) -> Self {
        let n = code.insns.len();
        let all: Vec<u32> = groups.concat();
        let lineless = all.len() - groups[3].len();
        let mut point_at: Vec<Option<usize>> = vec![None; n];
        let rep: Vec<usize> = all
            .iter()
            .enumerate()
            .map(|(k, &ix)| *point_at[ix as usize].get_or_insert(k))
            .collect();
        let arrival: Vec<bool> = (0..n)
            .map(|i| point_at[i].is_some_and(|k| k >= lineless) && is_branching(&code.insns[i]))
            .collect();
        Layout {
            all,
            point_at,
            rep,
            arrival,
            lineless,
        }
    }
}
