//! What the rewriter asks of the mode whose counters it inserts: the ids
//! of the counter layouts its code passes, and the layout of the arrays
//! that code counts in. The coverage mode hands its implementation to the
//! instrumenter when it opens, so the rewriter names no mode.

use profrj_bytecode::edit::Count;

/// Counter layouts by id, given out by the mode that reads the counters.
pub trait CoverageLayouts: Send + Sync {
    /// The id of a method's counter layout (one layout, one id).
    fn method_id(&self, layout: MethodLines) -> u32;
    /// The copies of each method's counters (1: one, unpadded).
    fn stripes(&self) -> u32;
    /// A class in scope, its source file, its class id (JaCoCo's CRC64 of
    /// its bytes as received) and its methods' ids.
    fn add_class(&self, class: &str, source: Option<String>, id: u64, methods: &[u32]);
}

/// Longs between two copies of a method's `slots` counters: `slots` with
/// one copy; else the slots and 7 more rounded up to a multiple of 8, so
/// two copies' counters are at least 64 bytes apart whatever the array's
/// alignment (each copy counts on cache lines of its own).
pub fn stride(slots: usize, stripes: u32) -> usize {
    if stripes <= 1 {
        slots
    } else {
        (slots + 7).next_multiple_of(8)
    }
}

/// One instrumented method as the snapshot shows it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MethodLines {
    /// Internal class name.
    pub class: String,
    pub name: String,
    pub descriptor: String,
    /// Source line of each line entry point, in code order.
    pub lines: Vec<u16>,
    /// Each entry point's count from the counters (slot 0 the calls, then
    /// one per counted point): Σ coefficient × slot. Points whose count
    /// follows from others have no slot of their own (`plan_counters`).
    pub counts: Vec<Count>,
    /// Slots of the method's counter array, slot 0 included.
    pub slots: usize,
    /// The first line (at the method's first instruction, where no jump
    /// leads) counts the calls, and slot 0 is unused: one increment less
    /// per call.
    pub calls_in_first_line: bool,
    /// Each branching instruction (conditional jump, switch), in code
    /// order: its source line (-1 if none) and each outcome's count from
    /// the counters (`CounterPlan::branches`).
    pub branches: Vec<(i32, Vec<Count>)>,
    /// The method's instructions as loaded, by line: (line, how many, the
    /// entry of `runs` that tells whether they ran).
    pub insns: Vec<(u16, u32, u32)>,
    /// Of `insns`, those JaCoCo's filters inside a method ignore
    /// (`rewrite::filtered`), the same way; empty when none.
    pub filtered_insns: Vec<(u16, u32, u32)>,
    /// Of `branches`, the indexes of those JaCoCo's filters ignore.
    pub filtered_branches: Vec<u32>,
    /// Per run of instructions: they ran when one of these counts is
    /// above 0 (`CounterPlan::blocks`).
    pub runs: Vec<Vec<Count>>,
    /// Which of JaCoCo's filters leaves the method out of its report, if
    /// one does (`rewrite::generated`): the snapshot's `generated`.
    pub generated: Option<&'static str>,
}

impl MethodLines {
    /// The call count from the method's counters.
    pub fn calls(&self, counts: &[i64]) -> i64 {
        match self.calls_in_first_line {
            true => self.point_count(0, counts),
            false => counts.first().copied().unwrap_or(0),
        }
    }

    /// Entry point `k`'s count from the method's counters. A difference
    /// whose terms lost increments to a race (counters are not atomic) could
    /// come out below 0: a count is never negative.
    pub fn point_count(&self, k: usize, counts: &[i64]) -> i64 {
        self.counts.get(k).map_or(0, |c| count_of(c, counts))
    }

    /// Each branching instruction's line and outcome counts.
    pub fn branch_counts(&self, counts: Option<&[i64]>) -> Vec<(i64, Vec<i64>)> {
        self.branches
            .iter()
            .map(|(line, outcomes)| {
                let n = outcomes
                    .iter()
                    .map(|c| counts.map_or(0, |counts| count_of(c, counts)))
                    .collect();
                (*line as i64, n)
            })
            .collect()
    }
}

/// A line's (instructions that ran, instructions).
pub type Cell = (u32, u32);

impl MethodLines {
    /// Per line: (instructions that ran, instructions), for lines
    /// `first..=last`; (0, 0) on a line without instructions. Then the
    /// same of the instructions JaCoCo's filters ignore (empty when none
    /// are).
    pub fn instruction_counts(
        &self,
        first: u16,
        last: u16,
        counts: Option<&[i64]>,
    ) -> (Vec<Cell>, Vec<Cell>) {
        let ran: Vec<bool> = self
            .runs
            .iter()
            .map(|any| counts.is_some_and(|c| any.iter().any(|n| count_of(n, c) > 0)))
            .collect();
        let cells = |insns: &[(u16, u32, u32)]| {
            let mut out = vec![(0u32, 0u32); (last.saturating_sub(first)) as usize + 1];
            for &(line, n, run) in insns {
                let Some(cell) = line
                    .checked_sub(first)
                    .and_then(|k| out.get_mut(k as usize))
                else {
                    continue;
                };
                cell.1 += n;
                if ran.get(run as usize).copied().unwrap_or(false) {
                    cell.0 += n;
                }
            }
            out
        };
        let filtered = match self.filtered_insns.is_empty() {
            true => Vec::new(),
            false => cells(&self.filtered_insns),
        };
        (cells(&self.insns), filtered)
    }
}

/// Σ coefficient × slot, never below 0 (a difference whose terms lost
/// increments to a race could be).
fn count_of(c: &Count, counts: &[i64]) -> i64 {
    c.iter()
        .map(|&(slot, coef)| coef.wrapping_mul(counts.get(slot as usize).copied().unwrap_or(0)))
        .fold(0i64, i64::wrapping_add)
        .max(0)
}
