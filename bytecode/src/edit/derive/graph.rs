//! The code as the planner sees it: the ways into each instruction, what
//! each instruction may do, and the terms a point's count can be made of.

use crate::code::{Code, Insn};
use crate::opcodes::*;
use crate::tags::*;
use crate::ConstantPool;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    Entry,
    Fall(u32),
    Jump(u32),
    /// From the switch at this instruction.
    Switch(u32),
    Handler,
    /// A subroutine's `ret`, back after its `jsr`.
    Ret,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    /// Goes on to the next instruction (or a `goto`'s target), always.
    Certain,
    /// May throw, but calls nothing and cannot wait.
    Faults,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    Entry,
    Point(usize),
}

/// Where a stretch of straight code starts, and whether it may throw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stretch {
    pub(super) origin: Origin,
    pub(super) faults: bool,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Term {
    From(Stretch),
    /// From(stretch) minus point r.
    Minus(Stretch, usize),
    /// A point by where its stretch leads: both sides of the conditional
    /// branch that ends it (points reached only that way), plus the
    /// exceptions in the stretch when it may throw.
    Out(Stretch, usize, usize),
    /// A point whose stretch falls, alone, into a branching instruction's
    /// point: that point, plus the stretch's exceptions.
    Into(Stretch, usize),
}

pub(super) struct Graph<'c, 'a, 'p> {
    pub(super) code: &'c Code<'a>,
    pub(super) cp: &'c ConstantPool<'p>,
    pub(super) incoming: &'c [Vec<Source>],
    pub(super) point_at: &'c [Option<usize>],
    pub(super) calls_counted: bool,
    /// May a stretch hold instructions that throw?
    pub(super) faults_ok: bool,
    /// Per instruction: a branching instruction whose point only counts
    /// its arrivals (for its outcomes), no line's.
    pub(super) arrival: &'c [bool],
}

impl Graph<'_, '_, '_> {
    /// How the point at instruction `ix` is reached, as terms; `None` if
    /// some way in is not certain (a handler, a switch, a call before it).
    pub(super) fn terms(&self, ix: u32) -> Option<Vec<Term>> {
        let insns = &self.code.insns;
        let mut terms = Vec::new();
        for &src in &self.incoming[ix as usize] {
            let term = match src {
                Source::Entry if self.calls_counted => Term::From(Stretch {
                    origin: Origin::Entry,
                    faults: false,
                }),
                Source::Fall(j) => match &insns[j as usize] {
                    Insn::Branch { op, target } if is_conditional(*op) => {
                        let taken = self.code.labels[target.0 as usize];
                        Term::Minus(self.walk(j)?, self.only_way_in(taken, Source::Jump(j))?)
                    }
                    Insn::Branch { .. } => return None,
                    _ => Term::From(self.walk(j)?),
                },
                Source::Jump(j) => match &insns[j as usize] {
                    Insn::Branch {
                        op: GOTO | GOTO_W, ..
                    } => Term::From(self.walk(j)?),
                    Insn::Branch { op, target } if is_conditional(*op) => {
                        if self.code.labels[target.0 as usize] == j + 1 {
                            return None; // both edges to one place
                        }
                        Term::Minus(self.walk(j)?, self.only_way_in(j + 1, Source::Fall(j))?)
                    }
                    _ => return None,
                },
                _ => return None,
            };
            terms.push(term);
        }
        (!terms.is_empty()).then_some(terms)
    }

    /// The stretch of straight code through instruction `i` (its last):
    /// where it starts, at a point or at entry, with nothing on the way that
    /// calls, waits or merges.
    fn walk(&self, mut i: u32) -> Option<Stretch> {
        let mut faults = false;
        loop {
            match self.kind(&self.code.insns[i as usize]) {
                Kind::Certain => {}
                Kind::Faults if self.faults_ok => faults = true,
                _ => return None,
            }
            if let Some(q) = self.point_at[i as usize] {
                let origin = Origin::Point(q);
                return Some(Stretch { origin, faults });
            }
            match self.incoming[i as usize].as_slice() {
                [Source::Entry] if self.calls_counted => {
                    let origin = Origin::Entry;
                    return Some(Stretch { origin, faults });
                }
                [Source::Fall(p)]
                    if !matches!(self.code.insns[*p as usize], Insn::Branch { .. }) =>
                {
                    i = *p
                }
                _ => return None,
            }
        }
    }

    /// The point at `ix` by where it leads: its stretch of straight code
    /// ends in a conditional branch whose two sides are points reached only
    /// from there.
    pub(super) fn out_terms(&self, ix: u32) -> Option<Vec<Term>> {
        let insns = &self.code.insns;
        let origin = Origin::Point(self.point_at[ix as usize]?);
        let (mut i, mut faults) = (ix, false);
        loop {
            match self.kind(&insns[i as usize]) {
                Kind::Certain => {}
                Kind::Faults if self.faults_ok => faults = true,
                _ => return None,
            }
            match &insns[i as usize] {
                Insn::Branch { op, target } if is_conditional(*op) => {
                    let taken = self.code.labels[target.0 as usize];
                    if taken == i + 1 {
                        return None;
                    }
                    let t = self.only_way_in(taken, Source::Jump(i))?;
                    let f = self.only_way_in(i + 1, Source::Fall(i))?;
                    return Some(vec![Term::Out(Stretch { origin, faults }, t, f)]);
                }
                Insn::Branch { .. } => return None,
                _ => {}
            }
            let next = i + 1;
            let alone = self.incoming.get(next as usize)? == &[Source::Fall(i)];
            if !alone {
                return None;
            }
            if let Some(r) = self.point_at[next as usize] {
                if !self.arrival[next as usize] {
                    return None;
                }
                return Some(vec![Term::Into(Stretch { origin, faults }, r)]);
            }
            i = next;
        }
    }

    /// The point at instruction `i`, if `via` is the only way there.
    fn only_way_in(&self, i: u32, via: Source) -> Option<usize> {
        let q = (*self.point_at.get(i as usize)?)?;
        (self.incoming[i as usize] == [via]).then_some(q)
    }

    fn kind(&self, insn: &Insn) -> Kind {
        match insn {
            // goto; a conditional (only ever the last of a stretch).
            Insn::Branch { op, .. } if *op == GOTO || *op == GOTO_W || is_conditional(*op) => {
                Kind::Certain
            }
            Insn::Plain { op: WIDE, operands } => match operands.as_slice().first() {
                Some(&(ILOAD..=ALOAD | ISTORE..=ASTORE | IINC)) => Kind::Certain,
                _ => Kind::Other,
            },
            Insn::Plain { op, operands } => match *op {
                LDC..=LDC2_W => {
                    let index = match operands.as_slice() {
                        [i] => *i as u16,
                        [h, l] => u16::from_be_bytes([*h, *l]),
                        _ => return Kind::Other,
                    };
                    // int, float, long, double, string: nothing to load or run.
                    match self.cp.tag(index) {
                        Some(CONSTANT_INTEGER..=CONSTANT_DOUBLE | CONSTANT_STRING) => Kind::Certain,
                        _ => Kind::Other,
                    }
                }
                // Constants, loads, stores, stack shuffles.
                NOP..=SIPUSH | ILOAD..=ALOAD_3 | ISTORE..=ASTORE_3 | POP..=SWAP => Kind::Certain,
                // Array loads and stores, integer division and remainder,
                // field access, arraylength, checkcast: an exception at most.
                IALOAD..=SALOAD | IASTORE..=SASTORE | IDIV | LDIV | IREM | LREM => Kind::Faults,
                GETFIELD | PUTFIELD | ARRAYLENGTH | CHECKCAST => Kind::Faults,
                // Arithmetic, iinc, conversions, comparisons.
                IADD..=DCMPG => Kind::Certain,
                _ => Kind::Other,
            },
            _ => Kind::Other,
        }
    }
}

/// Is the one way into an instruction the fall-through of a branch?
pub(super) fn is_branch_into(code: &Code<'_>, incoming: &[Source]) -> bool {
    matches!(incoming, [Source::Fall(p)] if matches!(code.insns[*p as usize], Insn::Branch { .. }))
}

pub(super) fn is_ret(insn: &Insn) -> bool {
    match insn {
        Insn::Plain { op: RET, .. } => true,
        Insn::Plain { op: WIDE, operands } => operands.as_slice().first() == Some(&RET),
        _ => false,
    }
}

/// Every way into each instruction (index as read).
pub(super) fn incoming_edges(code: &Code<'_>) -> Vec<Vec<Source>> {
    let n = code.insns.len();
    let mut inc: Vec<Vec<Source>> = vec![Vec::new(); n];
    if n == 0 {
        return inc;
    }
    inc[0].push(Source::Entry);
    let at = |l: crate::code::Label| code.labels[l.0 as usize] as usize;
    for (j, insn) in code.insns.iter().enumerate() {
        if j + 1 < n && crate::edit::lines::falls_through(insn) {
            inc[j + 1].push(Source::Fall(j as u32));
        }
        match insn {
            Insn::Branch { op, target } => {
                if let Some(v) = inc.get_mut(at(*target)) {
                    v.push(Source::Jump(j as u32));
                }
                // A subroutine returns after its call.
                if matches!(*op, JSR | JSR_W) && j + 1 < n {
                    inc[j + 1].push(Source::Ret);
                }
            }
            Insn::TableSwitch(s) => {
                for &t in s.targets.iter().chain([&s.default]) {
                    if let Some(v) = inc.get_mut(at(t)) {
                        v.push(Source::Switch(j as u32));
                    }
                }
            }
            Insn::LookupSwitch(s) => {
                for t in s.pairs.iter().map(|p| p.1).chain([s.default]) {
                    if let Some(v) = inc.get_mut(at(t)) {
                        v.push(Source::Switch(j as u32));
                    }
                }
            }
            Insn::Plain { .. } => {}
        }
    }
    for h in &code.handlers {
        if let Some(v) = inc.get_mut(at(h.handler)) {
            if !v.contains(&Source::Handler) {
                v.push(Source::Handler);
            }
        }
    }
    inc
}

/// The sides of each conditional branch that only it leads to and that
/// have no line entry: instruction indices, ascending.
pub(super) fn branch_sides(code: &Code<'_>, incoming: &[Vec<Source>], lines: &[u32]) -> Vec<u32> {
    let mut out = Vec::new();
    for (j, insn) in code.insns.iter().enumerate() {
        let Insn::Branch { op, target } = insn else {
            continue;
        };
        if !is_conditional(*op) {
            continue;
        }
        let j = j as u32;
        let taken = code.labels[target.0 as usize];
        for (side, via) in [(taken, Source::Jump(j)), (j + 1, Source::Fall(j))] {
            let alone = incoming.get(side as usize).is_some_and(|v| v == &[via]);
            if alone && !lines.contains(&side) {
                out.push(side);
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Instructions where straight code merges with no line starting there
/// (a loop's header test, the code after an `if`/`else`), reached only by
/// falls and jumps: as points with no line, a stretch that runs through
/// one can start there, so what follows a loop can take its count from
/// the loop's (its exits = its entries) instead of a counter of its own.
pub(super) fn merge_points(code: &Code<'_>, incoming: &[Vec<Source>], lines: &[u32]) -> Vec<u32> {
    // In instruction order already.
    (0..code.insns.len() as u32)
        .filter(|&i| {
            let ways = &incoming[i as usize];
            ways.len() >= 2
                && ways
                    .iter()
                    .all(|s| matches!(s, Source::Fall(_) | Source::Jump(_)))
                && !lines.contains(&i)
        })
        .collect()
}

/// How many loops (backward jumps' spans) hold each instruction.
pub(super) fn loop_depths(code: &Code<'_>) -> Vec<u32> {
    let n = code.insns.len();
    let mut delta = vec![0i64; n + 1];
    for (j, insn) in code.insns.iter().enumerate() {
        if let Insn::Branch { target, .. } = insn {
            let t = code.labels[target.0 as usize] as usize;
            if t <= j {
                delta[t] += 1;
                delta[j + 1] -= 1;
            }
        }
    }
    let mut depth = 0i64;
    delta[..n]
        .iter()
        .map(|d| {
            depth += d;
            depth.max(0) as u32
        })
        .collect()
}
