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
    /// What JaCoCo's filters inside a method leave out or count as one
    /// (`rewrite::filtered`).
    pub filtered: JacocoFilters,
    /// Per run of instructions: they ran when one of these counts is
    /// above 0 (`CounterPlan::blocks`).
    pub runs: Vec<Vec<Count>>,
    /// Which of JaCoCo's filters leaves the method out of its report, if
    /// one does (`rewrite::generated`): the snapshot's `generated`.
    pub generated: Option<&'static str>,
}

/// What JaCoCo's filters inside a method leave out of its report, or
/// count as one; empty when none does anything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct JacocoFilters {
    /// Of [`MethodLines::insns`], those JaCoCo ignores, told the same way.
    pub insns: Vec<(u16, u32, u32)>,
    /// Copies of a `finally` block's instruction that JaCoCo counts as one,
    /// on one line: (line, how many such sets, the run of each copy). Of a
    /// set, every copy but one is left out, and the one kept counts as run
    /// when any copy ran.
    pub copies: Vec<(u16, u32, Vec<u32>)>,
    /// Of [`MethodLines::branches`], the indexes of those JaCoCo leaves
    /// out.
    pub branches: Vec<u32>,
    /// `(k, j)`: branch `k` (left out) is a `finally` copy of branch `j`,
    /// whose outcomes JaCoCo counts as taken when either copy took them.
    pub merged_branches: Vec<(u32, u32)>,
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
        let f = &self.filtered;
        if f.insns.is_empty() && f.copies.is_empty() {
            return (cells(&self.insns), Vec::new());
        }
        let mut filtered = cells(&f.insns);
        // Of a set of copies, those left out: all but one that ran (where
        // any did), so that the line keeps one instruction, run when any
        // copy ran.
        for (line, sets, runs) in &f.copies {
            let Some(cell) = line
                .checked_sub(first)
                .and_then(|k| filtered.get_mut(k as usize))
            else {
                continue;
            };
            let ran_copies = runs
                .iter()
                .filter(|&&r| ran.get(r as usize).copied().unwrap_or(false))
                .count() as u32;
            let left_out = (runs.len() as u32).saturating_sub(1);
            cell.1 += sets * left_out;
            cell.0 += sets * ran_copies.saturating_sub(1);
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Of a set of `finally` copies, all but one are left out, and a copy
    /// that ran where any did: the line keeps one instruction per set, run
    /// when any copy ran.
    #[test]
    fn copies_leave_out_all_but_one_that_ran() {
        let m = MethodLines {
            class: "A".into(),
            name: "f".into(),
            descriptor: "()V".into(),
            lines: vec![10, 11],
            counts: vec![vec![(1, 1)], vec![(2, 1)]],
            slots: 4,
            calls_in_first_line: false,
            branches: Vec::new(),
            // Line 10: 3 instructions of each run; 11: 2 of run 1.
            insns: vec![(10, 3, 0), (10, 3, 1), (10, 3, 2), (11, 2, 1)],
            filtered: JacocoFilters {
                insns: vec![(10, 1, 0)],
                // Two sets, copies in runs 1, 0 and 2; one set on 11,
                // copies in runs 1 and 1.
                copies: vec![(10, 2, vec![1, 0, 2]), (11, 1, vec![1, 1])],
                branches: Vec::new(),
                merged_branches: Vec::new(),
            },
            // Run 0 ran (slot 1), run 1 never (slot 3), run 2 ran (slot 2).
            runs: vec![vec![vec![(1, 1)]], vec![vec![(3, 1)]], vec![vec![(2, 1)]]],
            generated: None,
        };
        let (all, filtered) = m.instruction_counts(10, 11, Some(&[0, 4, 1, 0]));
        assert_eq!(all, vec![(6, 9), (0, 2)]);
        // Line 10: the one ignored (ran) and 2 × 2 copies, of which 1 per
        // set ran (2 ran, one is kept); line 11: 1 left out, none ran.
        assert_eq!(filtered, vec![(1 + 2, 1 + 4), (0, 1)]);
        // Nothing ran: the copies left out never ran either.
        let (_, filtered) = m.instruction_counts(10, 11, None);
        assert_eq!(filtered, vec![(0, 5), (0, 1)]);
    }
}
