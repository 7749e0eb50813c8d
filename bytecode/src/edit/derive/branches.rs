//! Branch outcomes as counts: how many times each way out of a conditional
//! jump or a switch was taken. An outcome is an edge; its count is made of
//! arrival counts at instructions (points the planner derives or counts)
//! and, where no arrival count gives it, a counter on the edge itself (only
//! ever a fall-through edge: code inserted after an instruction runs on its
//! fall-through path only).
//!
//! - A side reached only by its edge counts as its arrivals.
//! - A conditional's two edges add up to its arrivals (it cannot throw):
//!   one edge is the branch's arrivals less the other.
//! - A conditional both of whose sides are also reached from elsewhere
//!   counts its fall-through edge (a counter after it).
//! - A switch's targets reached only from it count as their arrivals; one
//!   target reached from elsewhere too is the switch's arrivals less the
//!   others; where several are, each is its arrivals less the other ways in
//!   (a case falling into the next: a counter after the last instruction of
//!   the case).

use super::graph::Source;
use crate::code::{Code, Insn};
use crate::opcodes::{is_conditional, GOTO, GOTO_W};

/// What an outcome's count is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ref {
    /// The calls (counter 0).
    Calls,
    /// Arrivals at this instruction (a point).
    At(u32),
    /// The fall-through edge out of this instruction (a counter after it).
    After(u32),
}

pub(super) type Formula = Vec<(Ref, i64)>;

/// A branching instruction and its outcomes' formulas, in the snapshot's
/// order (a conditional: fell through, jumped; a switch: each distinct
/// target, the default's first).
pub(super) struct BranchFormula {
    pub(super) at: u32,
    pub(super) outcomes: Vec<Formula>,
}

/// The distinct targets of a switch, the default's first, then in the
/// order of the first key leading to each.
pub fn switch_targets(code: &Code<'_>, insn: &Insn) -> Option<Vec<u32>> {
    let at = |l: crate::code::Label| code.labels[l.0 as usize];
    let (default, keyed): (u32, Vec<u32>) = match insn {
        Insn::TableSwitch(s) => (at(s.default), s.targets.iter().map(|&t| at(t)).collect()),
        Insn::LookupSwitch(s) => (at(s.default), s.pairs.iter().map(|p| at(p.1)).collect()),
        _ => return None,
    };
    let mut out = vec![default];
    for t in keyed {
        if !out.contains(&t) {
            out.push(t);
        }
    }
    Some(out)
}

struct Edges<'c, 'a> {
    code: &'c Code<'a>,
    incoming: &'c [Vec<Source>],
    calls_counted: bool,
}

impl Edges<'_, '_> {
    /// Is `via` the only way into instruction `t`?
    fn lone(&self, t: u32, via: Source) -> bool {
        self.incoming
            .get(t as usize)
            .is_some_and(|v| !v.is_empty() && v.iter().all(|s| *s == via))
    }

    fn taken(&self, j: u32) -> Option<u32> {
        match &self.code.insns[j as usize] {
            Insn::Branch { target, .. } => Some(self.code.labels[target.0 as usize]),
            _ => None,
        }
    }

    /// A conditional's fall-through edge.
    fn fell(&self, j: u32) -> Formula {
        let taken = self.taken(j).unwrap_or(j + 1);
        if self.lone(j + 1, Source::Fall(j)) {
            vec![(Ref::At(j + 1), 1)]
        } else if taken != j + 1 && self.lone(taken, Source::Jump(j)) {
            vec![(Ref::At(j), 1), (Ref::At(taken), -1)]
        } else {
            vec![(Ref::After(j), 1)]
        }
    }

    /// A conditional's jump edge.
    fn jumped(&self, j: u32) -> Formula {
        let taken = self.taken(j).unwrap_or(j + 1);
        if taken != j + 1 && self.lone(taken, Source::Jump(j)) {
            return vec![(Ref::At(taken), 1)];
        }
        let mut f = vec![(Ref::At(j), 1)];
        f.extend(self.fell(j).into_iter().map(|(r, c)| (r, -c)));
        f
    }

    /// The edge from `src` into a switch target also reached from elsewhere; `None` where no count gives it (another switch, a
    /// handler, a subroutine's return: never in javac's code).
    fn edge(&self, src: Source) -> Option<Formula> {
        let insns = &self.code.insns;
        match src {
            Source::Entry => self.calls_counted.then(|| vec![(Ref::Calls, 1)]),
            Source::Fall(p) => match &insns[p as usize] {
                Insn::Branch { op, .. } if is_conditional(*op) => Some(self.fell(p)),
                _ => Some(vec![(Ref::After(p), 1)]),
            },
            Source::Jump(p) => match &insns[p as usize] {
                Insn::Branch { op, .. } if is_conditional(*op) => Some(self.jumped(p)),
                Insn::Branch {
                    op: GOTO | GOTO_W, ..
                } => Some(vec![(Ref::At(p), 1)]),
                _ => None,
            },
            _ => None,
        }
    }

    fn switch(&self, j: u32, targets: &[u32]) -> Vec<Formula> {
        let via = Source::Switch(j);
        let shared: Vec<u32> = targets
            .iter()
            .copied()
            .filter(|&t| !self.lone(t, via))
            .collect();
        targets
            .iter()
            .map(|&t| {
                if self.lone(t, via) {
                    return vec![(Ref::At(t), 1)];
                }
                if shared.len() == 1 {
                    // The switch's arrivals less its other targets'.
                    let mut f = vec![(Ref::At(j), 1)];
                    f.extend(
                        targets
                            .iter()
                            .filter(|&&o| o != t)
                            .map(|&o| (Ref::At(o), -1)),
                    );
                    return f;
                }
                // The target's arrivals less the other ways in.
                let mut f = vec![(Ref::At(t), 1)];
                let mut seen = Vec::new();
                for &src in &self.incoming[t as usize] {
                    if src == via || seen.contains(&src) {
                        continue;
                    }
                    seen.push(src);
                    if let Some(e) = self.edge(src) {
                        f.extend(e.into_iter().map(|(r, c)| (r, -c)));
                    }
                }
                f
            })
            .collect()
    }
}

/// Every branching instruction's outcomes, in code order.
pub(super) fn branch_formulas(
    code: &Code<'_>,
    incoming: &[Vec<Source>],
    calls_counted: bool,
) -> Vec<BranchFormula> {
    let edges = Edges {
        code,
        incoming,
        calls_counted,
    };
    let mut out = Vec::new();
    for (j, insn) in code.insns.iter().enumerate() {
        let j = j as u32;
        let outcomes = match insn {
            Insn::Branch { op, .. } if is_conditional(*op) => {
                vec![edges.fell(j), edges.jumped(j)]
            }
            Insn::TableSwitch(_) | Insn::LookupSwitch(_) => {
                let targets = switch_targets(code, insn).unwrap_or_default();
                edges.switch(j, &targets)
            }
            _ => continue,
        };
        out.push(BranchFormula { at: j, outcomes });
    }
    out
}

/// The instructions whose arrivals some formula uses.
pub(super) fn arrival_points(formulas: &[BranchFormula]) -> Vec<u32> {
    let mut out: Vec<u32> = formulas
        .iter()
        .flat_map(|b| b.outcomes.iter().flatten())
        .filter_map(|(r, _)| match r {
            Ref::At(i) => Some(*i),
            _ => None,
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// The fall-through edges counted by counters of their own, ascending.
pub(super) fn edge_counters(formulas: &[BranchFormula]) -> Vec<u32> {
    let mut out: Vec<u32> = formulas
        .iter()
        .flat_map(|b| b.outcomes.iter().flatten())
        .filter_map(|(r, _)| match r {
            Ref::After(i) => Some(*i),
            _ => None,
        })
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}
