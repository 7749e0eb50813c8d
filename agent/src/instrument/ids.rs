//! What the rewriter asks of the modes whose probes it inserts: the ids
//! their probes pass. The session hands an implementation to the
//! instrumenter, so the rewriter names no mode.

use profrj_bytecode::edit::Count;

/// Ids for probes, given out by the modes that read what the probes record.
pub trait ProbeIds: Send + Sync {
    /// Coverage: the id of a method's counter layout (one layout, one id).
    fn coverage_method(&self, layout: MethodLines) -> u32;
    /// Coverage: the copies of each method's counters (1: one, unpadded).
    fn coverage_stripes(&self) -> u32;
    /// Coverage: a class in scope, its source file and its methods' ids.
    fn coverage_class(&self, class: &str, source: Option<String>, methods: &[u32]);
    /// Memory: the id of an allocation site, a place and the type it
    /// allocates (named as Java writes it: `int[]`): what its probe passes.
    fn alloc_site(&self, place: AllocPlace, java_type: &str) -> u32;
    /// Memory: the id of a place whose calls make objects of types known
    /// only when they run (reflection, clone): what their probes pass.
    fn alloc_place(&self, place: AllocPlace) -> u32;
}

/// Where code allocates: a method and the source line of the instruction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AllocPlace {
    /// Internal class name.
    pub class: String,
    pub method: String,
    pub descriptor: String,
    /// `None`: the class has no line numbers.
    pub line: Option<u16>,
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
