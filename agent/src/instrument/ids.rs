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
        self.counts.get(k).map_or(0, |c| {
            c.iter()
                .map(|&(slot, coef)| coef * counts.get(slot as usize).copied().unwrap_or(0))
                .sum::<i64>()
                .max(0)
        })
    }
}
