//! JaCoCo's counters computed from a `<coverage>` method, as JaCoCo
//! computes them (`org.jacoco.core.internal.analysis`): per line the
//! instructions missed and covered (`mi`/`ci`) and the branches (`mb`/`cb`);
//! per method INSTRUCTION, BRANCH, LINE, COMPLEXITY and METHOD.
//!
//! - A line is covered when one of its instructions ran (`ci > 0`), missed
//!   when it has instructions and none ran (JaCoCo's `LineImpl` status).
//! - BRANCH: each outcome of each branching instruction (a conditional
//!   jump's two, a switch's distinct targets) is a branch, covered if taken.
//! - COMPLEXITY (`MethodCoverageImpl`): for each instruction with more
//!   than one branch, `c = max(0, covered - 1)` covered and
//!   `max(0, total - c - 1)` missed; plus 1 for the method, covered if it
//!   ran an instruction (McCabe: branches - decision points + 1).
//! - METHOD: 1, covered if the method ran an instruction.
//! - Unknown (a snapshot without `<instructions>`, or without `<branches>`
//!   and class ids: an older profrj's, docs/SNAPSHOT.md): INSTRUCTION,
//!   resp. BRANCH and COMPLEXITY, are not counted; a line then counts as
//!   one instruction, run when its footprint is above 0.

use crate::snapshot::CoverageMethod;
use std::collections::{BTreeMap, HashMap, HashSet};

/// missed, covered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counter {
    pub missed: u64,
    pub covered: u64,
}

impl Counter {
    pub const MISSED_ONE: Counter = Counter {
        missed: 1,
        covered: 0,
    };
    pub const COVERED_ONE: Counter = Counter {
        missed: 0,
        covered: 1,
    };

    pub fn add(&mut self, o: Counter) {
        self.missed = self.missed.saturating_add(o.missed);
        self.covered = self.covered.saturating_add(o.covered);
    }

    pub fn total(&self) -> u64 {
        self.missed.saturating_add(self.covered)
    }

    /// One item, covered or missed.
    pub fn one(covered: bool) -> Counter {
        if covered {
            Counter::COVERED_ONE
        } else {
            Counter::MISSED_ONE
        }
    }
}

/// A line's instructions and branches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Line {
    pub instructions: Counter,
    pub branches: Counter,
}

impl Line {
    pub fn add(&mut self, o: &Line) {
        self.instructions.add(o.instructions);
        self.branches.add(o.branches);
    }

    /// JaCoCo's line status: covered when an instruction ran.
    pub fn covered(&self) -> bool {
        self.instructions.covered > 0
    }
}

/// The counters of a node (method, class, source file, package, report),
/// `None` where unknown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub instruction: Option<Counter>,
    pub branch: Option<Counter>,
    pub line: Counter,
    pub complexity: Option<Counter>,
    pub method: Counter,
    pub class: Counter,
}

fn add_opt(a: &mut Option<Counter>, b: Option<Counter>, first: bool) {
    // Unknown in one part is unknown in the whole, except for the very
    // first part added.
    *a = match (first, *a, b) {
        (true, _, b) => b,
        (false, Some(mut x), Some(y)) => {
            x.add(y);
            Some(x)
        }
        _ => None,
    };
}

impl Counters {
    /// Adds a child's counters but LINE (which the caller counts from the
    /// merged lines); `first`: the first child added.
    pub fn add_child(&mut self, c: &Counters, first: bool) {
        add_opt(&mut self.instruction, c.instruction, first);
        add_opt(&mut self.branch, c.branch, first);
        add_opt(&mut self.complexity, c.complexity, first);
        self.method.add(c.method);
        self.class.add(c.class);
    }

    /// Every counter summed, LINE too (package and report: their source
    /// files' lines never overlap).
    pub fn add_all(&mut self, c: &Counters, first: bool) {
        self.add_child(c, first);
        self.line.add(c.line);
    }
}

/// The LINE counter of merged lines.
pub fn line_counter(lines: &BTreeMap<u32, Line>) -> Counter {
    let mut c = Counter::default();
    for l in lines.values() {
        if l.instructions.total() > 0 {
            c.add(Counter::one(l.covered()));
        }
    }
    c
}

/// A method's lines and counters.
pub struct MethodCoverage {
    pub lines: BTreeMap<u32, Line>,
    pub counters: Counters,
}

/// `versioned`: the method's class has an `id`, which the agent that writes
/// `<branches>` writes too: there, a method without `<branches>` has no
/// branching instruction (known: none); in an older snapshot, unknown.
pub fn method(m: &CoverageMethod, versioned: bool) -> MethodCoverage {
    let mut lines: BTreeMap<u32, Line> = BTreeMap::new();
    let first = m.first_line.unwrap_or(0);
    let known_instructions = m.instructions.is_some();
    let mut instruction = Counter::default();
    for (i, &n) in m.footprints.iter().enumerate() {
        if n < 0 {
            continue;
        }
        let Some(line) = u32::try_from(i).ok().and_then(|i| i.checked_add(first)) else {
            continue;
        };
        let c = match m.instructions.as_ref().and_then(|v| v.get(i)) {
            Some(&(c, t)) => {
                // Less what JaCoCo's filters inside a method ignore.
                let (fc, ft) = filtered_cell(m, i);
                let (c, t) = (c.saturating_sub(fc), t.saturating_sub(ft));
                if t == 0 {
                    continue; // only what JaCoCo ignores: no line for it
                }
                Counter {
                    missed: t.saturating_sub(c),
                    covered: c,
                }
            }
            None => Counter::one(n > 0),
        };
        instruction.add(c);
        lines.entry(line).or_default().instructions.add(c);
    }
    let ran = if known_instructions {
        instruction.covered > 0
    } else {
        m.count > 0 || m.footprints.iter().any(|&n| n > 0)
    };
    let base = Counter::one(ran);
    // No `<branches>`: no branching instruction where the snapshot is new
    // enough to say, unknown in an older one.
    let points = (!m.branches.is_empty() || versioned || known_instructions).then_some(&m.branches);
    let (branch, complexity) = match points {
        None => (None, None),
        Some(points) => {
            let mut branch = Counter::default();
            let mut complexity = base;
            let ignored: HashSet<u32> = m
                .filtered
                .iter()
                .flat_map(|f| f.branches.iter().copied())
                .collect();
            // A kept branch's `finally` copies: JaCoCo takes an outcome
            // where any copy took it.
            let mut copies: HashMap<u32, Vec<u32>> = HashMap::new();
            for &(k, j) in m.filtered.iter().flat_map(|f| f.merged.iter()) {
                copies.entry(j).or_default().push(k);
            }
            let taken = |k: usize, o: usize| {
                let took = |k: usize| {
                    (points.get(k))
                        .and_then(|p| p.outcomes.get(o))
                        .is_some_and(|&n| n > 0)
                };
                took(k)
                    || (copies.get(&(k as u32)).into_iter().flatten()).any(|&c| took(c as usize))
            };
            for (k, p) in points.iter().enumerate() {
                if ignored.contains(&(k as u32)) {
                    continue;
                }
                let total = p.outcomes.len() as u64;
                let covered = (0..p.outcomes.len()).filter(|&o| taken(k, o)).count() as u64;
                let b = Counter {
                    missed: total - covered,
                    covered,
                };
                branch.add(b);
                if let Some(line) = p.line {
                    lines.entry(line).or_default().branches.add(b);
                }
                if total > 1 {
                    let c = covered.saturating_sub(1);
                    let missed = total.saturating_sub(c + 1);
                    complexity.add(Counter { missed, covered: c });
                }
            }
            (Some(branch), Some(complexity))
        }
    };
    let counters = Counters {
        instruction: known_instructions.then_some(instruction),
        branch,
        line: line_counter(&lines),
        complexity,
        method: base,
        class: Counter::default(),
    };
    MethodCoverage { lines, counters }
}

/// Of footprint cell `i`, (instructions run, instructions) that JaCoCo's
/// filters inside a method ignore.
fn filtered_cell(m: &CoverageMethod, i: usize) -> (u64, u64) {
    (m.filtered.as_ref())
        .and_then(|f| f.instructions.get(i).copied())
        .unwrap_or((0, 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::CoverageBranch;

    fn m(prints: &[i64]) -> CoverageMethod {
        CoverageMethod {
            name: "f".into(),
            signature: "()V".into(),
            first_line: Some(10),
            count: 1,
            footprints: prints.to_vec(),
            branches: Vec::new(),
            instructions: None,
            filtered: None,
            generated: None,
        }
    }

    /// A method `if (a) {…} switch (k) {3 targets}` at lines 10–13: the
    /// counters JaCoCo gives the same coverage (worked by hand from
    /// MethodCoverageImpl and CounterImpl).
    #[test]
    fn counters_as_jacoco_counts_them() {
        let mut f = m(&[4, 0, -1, 4]);
        f.instructions = Some(vec![(3, 3), (0, 2), (0, 0), (2, 5)]);
        f.branches = vec![
            CoverageBranch {
                line: Some(10),
                outcomes: vec![4, 0],
            },
            CoverageBranch {
                line: Some(13),
                outcomes: vec![1, 3, 0],
            },
        ];
        let c = method(&f, false);
        let l = |n: u32| c.lines[&n];
        assert_eq!(
            l(10).instructions,
            Counter {
                missed: 0,
                covered: 3
            }
        );
        assert_eq!(
            l(10).branches,
            Counter {
                missed: 1,
                covered: 1
            }
        );
        assert_eq!(
            l(11).instructions,
            Counter {
                missed: 2,
                covered: 0
            }
        );
        assert!(!c.lines.contains_key(&12));
        assert_eq!(
            l(13).branches,
            Counter {
                missed: 1,
                covered: 2
            }
        );
        let k = c.counters;
        assert_eq!(
            k.instruction,
            Some(Counter {
                missed: 5,
                covered: 5
            })
        );
        assert_eq!(
            k.branch,
            Some(Counter {
                missed: 2,
                covered: 3
            })
        );
        assert_eq!(
            k.line,
            Counter {
                missed: 1,
                covered: 2
            }
        );
        // 1 (method, covered) + jump (c 0, m 1) + switch (c 1, m 1).
        assert_eq!(
            k.complexity,
            Some(Counter {
                missed: 2,
                covered: 2
            })
        );
        assert_eq!(k.method, Counter::COVERED_ONE);
    }

    #[test]
    fn a_method_never_run_and_an_old_snapshot() {
        let mut f = m(&[0, 0]);
        f.count = 0;
        f.instructions = Some(vec![(0, 2), (0, 1)]);
        f.branches = vec![CoverageBranch {
            line: Some(10),
            outcomes: vec![0, 0],
        }];
        let k = method(&f, false).counters;
        assert_eq!(k.method, Counter::MISSED_ONE);
        // 1 (method) + jump: c 0, m 1.
        assert_eq!(
            k.complexity,
            Some(Counter {
                missed: 2,
                covered: 0
            })
        );
        let old = method(&m(&[3, 0]), false).counters;
        assert_eq!(
            (old.instruction, old.branch, old.complexity),
            (None, None, None)
        );
        // A class with an id: no <branches> is no branch; complexity 1.
        let new = method(&m(&[3, 0]), true).counters;
        assert_eq!(new.branch, Some(Counter::default()));
        assert_eq!(new.complexity, Some(Counter::COVERED_ONE));
        assert_eq!(
            old.line,
            Counter {
                missed: 1,
                covered: 1
            }
        );
        assert_eq!(old.method, Counter::COVERED_ONE);
    }

    /// What JaCoCo's filters inside a method ignore leaves its lines and
    /// branches: a line of only ignored instructions is no line, an ignored
    /// branching instruction no branch and no decision.
    #[test]
    fn filtered_instructions_and_branches_are_left_out() {
        let mut f = m(&[2, 1, 0]);
        f.instructions = Some(vec![(9, 12), (3, 3), (0, 4)]);
        f.branches = vec![
            CoverageBranch {
                line: Some(10),
                outcomes: vec![1, 1, 0, 0],
            },
            CoverageBranch {
                line: Some(10),
                outcomes: vec![1, 1, 0],
            },
            CoverageBranch {
                line: Some(11),
                outcomes: vec![0, 1],
            },
        ];
        f.filtered = Some(crate::snapshot::CoverageFiltered {
            instructions: vec![(6, 8), (3, 3), (0, 0)],
            branches: vec![0, 2],
            merged: Vec::new(),
        });
        let c = method(&f, true);
        assert_eq!(
            c.lines[&10],
            Line {
                instructions: Counter {
                    missed: 1,
                    covered: 3
                },
                branches: Counter {
                    missed: 1,
                    covered: 2
                },
            }
        );
        assert!(!c.lines.contains_key(&11), "{:?}", c.lines);
        let k = c.counters;
        assert_eq!(
            k.instruction,
            Some(Counter {
                missed: 5,
                covered: 3
            })
        );
        assert_eq!(
            k.line,
            Counter {
                missed: 1,
                covered: 1
            }
        );
        // 1 (method) + the kept switch: 2 of 3 taken, c 1, m 1.
        assert_eq!(
            k.complexity,
            Some(Counter {
                missed: 1,
                covered: 2
            })
        );
    }

    /// A `finally` copy's branch merged into another: left out, and each
    /// outcome of the kept one taken where either copy took it (JaCoCo's
    /// FinallyFilter: BranchTruth's `tryFinally`, 1,1 and 0,1 → 2 of 2).
    #[test]
    fn merged_copies_count_once_taken_where_either_was() {
        let mut f = m(&[3, 3]);
        f.instructions = Some(vec![(7, 7), (5, 9)]);
        f.branches = vec![
            CoverageBranch {
                line: Some(10),
                outcomes: vec![1, 1],
            },
            CoverageBranch {
                line: Some(10),
                outcomes: vec![0, 1],
            },
        ];
        f.filtered = Some(crate::snapshot::CoverageFiltered {
            instructions: vec![(4, 4), (1, 5)],
            branches: vec![0],
            merged: vec![(0, 1)],
        });
        let c = method(&f, true);
        let line = |missed, covered| Counter { missed, covered };
        assert_eq!(c.lines[&10].branches, line(0, 2));
        assert_eq!(c.lines[&10].instructions, line(0, 3));
        assert_eq!(c.lines[&11].instructions, line(0, 4));
        // Without the merge, the kept copy alone: 1 of 2.
        f.filtered.as_mut().unwrap().merged.clear();
        assert_eq!(method(&f, true).lines[&10].branches, line(1, 1));
    }
}
