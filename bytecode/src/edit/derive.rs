//! Fewer line counters, same counts. Most of a hot loop's line entry points
//! are reached only through code that cannot throw, call or wait (local
//! variable arithmetic, a `goto`, a condition on locals): their counts follow
//! exactly from other counters, so they get no increment of their own.
//!
//! Three rules, all exact at every instant a snapshot can be taken (the code
//! between a counter and what is derived from it cannot call, wait or take
//! a monitor, so it cannot stop half-way for long):
//! - a point reached only by certain transfers counts the sum of the points
//!   those transfers start from (a `for` header = its initialisation + its
//!   increment statement);
//! - one edge of a conditional branch reached certainly from point Q counts
//!   Q minus the other edge, when the other edge is the only way into a point
//!   R (a loop's exit = header − body);
//! - a point whose straight code ends in a conditional branch counts the
//!   sum of its two sides, when each side is reached only from there (a
//!   one-line `n < 2 ? n : f(n - 1) + f(n - 2)` counts its calls with two
//!   counters, one per side, instead of one on every call: two addresses
//!   whose increments do not wait on each other).
//!
//! Besides line entry points, the sides of conditional branches that have no
//! line entry are points too (with no line), so they can hold a counter.
//!
//! The straight code from a point to its transfer may hold instructions that
//! throw without calling anything (array and field access, division, casts).
//! Such a stretch gets an exception counter, subtracted wherever the stretch
//! is used: the method keeps the stretch's number in a local of its own
//! (`pos`, set at each block start: in compiled code a constant, free), and
//! each handler, and a catch-all for exceptions leaving the method, adds one
//! to the counter `pos` names. Constructors do not use such stretches (their
//! catch-all cannot cover the super() call).
//!
//! Every cycle keeps at least one counter; where several points could break
//! one, the point nested in the fewest loops gets the counter (a branch side
//! before a line), or of those the one that lets the most others be derived.

use crate::code::{Code, Insn};
use crate::ConstantPool;

/// A count as Σ coefficient × counter: counter 0 is the call count (when
/// the method has one), counter k ≥ 1 the k-th entry of
/// [`CounterPlan::counters`].
pub type Count = Vec<(u32, i64)>;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CounterPlan {
    /// Instruction index (as read) of each counter from 1 on: an increment
    /// goes before it.
    pub counters: Vec<u32>,
    /// The count of each line entry point, in the order given.
    pub counts: Vec<Count>,
    /// Slots of the counter array: calls, `counters`, the exception
    /// counters, and one that counts exceptions outside any stretch (never
    /// read).
    pub slots: u32,
    /// `pos` stores: before instruction i (as read), `pos = slot`; `None`
    /// when no stretch needs an exception counter (then nothing below).
    pub exceptions: Option<Exceptions>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Exceptions {
    /// `pos` at method entry.
    pub entry: u32,
    /// (instruction, slot): `pos = slot` before the instruction.
    pub sets: Vec<(u32, u32)>,
    /// Existing handlers' first instructions: `counters[pos]++` there.
    pub handlers: Vec<u32>,
}

/// Longest count kept as a sum; a longer one gets a counter.
const MAX_TERMS: usize = 32;
/// Methods with more points than this get a counter per point (the
/// resolution below is quadratic).
const MAX_POINTS: usize = 2000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Source {
    Entry,
    Fall(u32),
    Jump(u32),
    Switch,
    Handler,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Goes on to the next instruction (or a `goto`'s target), always.
    Certain,
    /// May throw, but calls nothing and cannot wait.
    Faults,
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    Entry,
    Point(usize),
}

/// Where a stretch of straight code starts, and whether it may throw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stretch {
    origin: Origin,
    faults: bool,
}

#[derive(Debug, Clone, Copy)]
enum Term {
    From(Stretch),
    /// From(stretch) minus point r.
    Minus(Stretch, usize),
    /// A point by where its stretch leads: both sides of the conditional
    /// branch that ends it (points reached only that way), plus the
    /// exceptions in the stretch when it may throw.
    Out(Stretch, usize, usize),
}

#[derive(Clone)]
enum State {
    Measured,
    Pending(Vec<Term>),
    Derived(Count),
}

/// Keys of exception counters while planning: `EXC + 0` the entry's
/// stretch, `EXC + k + 1` point k's.
const EXC: u32 = 1 << 30;

/// Plans the counters of `points` (instruction index, line) of `code`.
/// `calls_counted`: counter 0 counts calls at entry (else the first point
/// is at instruction 0, reached only by entry, and is the call count).
/// `constructor`: no stretch that may throw is used. `derive = false` gives
/// every point a counter of its own.
pub fn plan_counters(
    code: &Code<'_>,
    cp: &ConstantPool<'_>,
    points: &[u32],
    calls_counted: bool,
    constructor: bool,
    derive: bool,
) -> CounterPlan {
    let n = code.insns.len();
    let incoming = incoming_edges(code);
    let has_subroutines = code.insns.iter().any(|i| {
        matches!(
            i,
            Insn::Branch {
                op: 0xa8 | 0xc9,
                ..
            }
        ) || is_ret(i)
    });
    let deriving = derive && !has_subroutines && points.len() <= MAX_POINTS;
    // Line points, then (when deriving) the sides of conditional branches
    // that have no line entry: points with no line, counted when that is
    // cheaper (a one-line method's two branches instead of its calls).
    let mut all: Vec<u32> = points.to_vec();
    if deriving {
        all.extend(branch_sides(code, &incoming, points));
    }
    // The first point at each instruction stands for all of them.
    let mut point_at: Vec<Option<usize>> = vec![None; n];
    let rep: Vec<usize> = all
        .iter()
        .enumerate()
        .map(|(k, &ix)| *point_at[ix as usize].get_or_insert(k))
        .collect();
    let mut states: Vec<State> = (0..all.len()).map(|_| State::Measured).collect();
    if deriving {
        // Handlers must be entered only by exceptions, for their counters.
        let handlers_clean = code.handlers.iter().all(|h| {
            let at = code.labels[h.handler.0 as usize] as usize;
            incoming[at].iter().all(|s| *s == Source::Handler)
        });
        let g = Graph {
            code,
            cp,
            incoming: &incoming,
            point_at: &point_at,
            calls_counted,
            faults_ok: !constructor && handlers_clean,
        };
        for (k, &ix) in all.iter().enumerate() {
            if rep[k] == k {
                if let Some(terms) = g.terms(ix).or_else(|| g.out_terms(ix)) {
                    states[k] = State::Pending(terms);
                }
            }
        }
        let depth = loop_depths(code);
        let order: Vec<(u32, bool, u32)> = all
            .iter()
            .enumerate()
            .map(|(k, &ix)| (depth[ix as usize], k < points.len(), ix))
            .collect();
        resolve(&mut states, &order);
    }
    // Each line's count by key; the counters those name are the ones kept
    // (a branch side nobody's count needs gets none).
    let keyed: Vec<Count> = rep[..points.len()]
        .iter()
        .map(|&r| match &states[r] {
            State::Derived(c) => c.clone(),
            _ => vec![(r as u32 + 1, 1)],
        })
        .collect();
    let mut needed = vec![false; all.len()];
    for &(key, _) in keyed.iter().flatten() {
        if key != 0 && key < EXC {
            needed[key as usize - 1] = true;
        }
    }
    // Counters in point order (lines first, then branch sides).
    let mut slot = vec![0u32; all.len()];
    let mut counters = Vec::new();
    for k in 0..all.len() {
        if needed[k] {
            counters.push(all[k]);
            slot[k] = counters.len() as u32;
        }
    }
    // Exception counters of the stretches some count uses, after those.
    let mut used: Vec<u32> = keyed
        .iter()
        .flatten()
        .filter(|t| t.0 >= EXC)
        .map(|t| t.0 - EXC)
        .collect();
    used.sort_unstable();
    used.dedup();
    let exc_slot =
        |key: u32| counters.len() as u32 + 1 + used.binary_search(&key).unwrap_or(0) as u32;
    let slot_of = |key: u32| match key {
        0 => 0,
        k if k >= EXC => exc_slot(k - EXC),
        k => slot[k as usize - 1],
    };
    let counts = keyed
        .iter()
        .map(|c| c.iter().map(|&(key, coef)| (slot_of(key), coef)).collect())
        .collect();
    let dummy = counters.len() as u32 + 1 + used.len() as u32;
    let exceptions = (!used.is_empty()).then(|| {
        let pos_for = |key: u32| {
            if used.binary_search(&key).is_ok() {
                exc_slot(key)
            } else {
                dummy
            }
        };
        // Every block start and every point: leaving a stretch leads to one.
        let sets = (0..n)
            .filter(|&i| {
                // Mid-block instructions, and the first when only entry
                // leads there (the entry code sets `pos`), keep it.
                point_at[i].is_some()
                    || !matches!(incoming[i].as_slice(), [Source::Entry] | [Source::Fall(_)]
                        if !is_branch_into(code, &incoming[i]))
            })
            .map(|i| {
                (
                    i as u32,
                    point_at[i].map_or(dummy, |k| pos_for(k as u32 + 1)),
                )
            })
            .collect();
        let mut handlers: Vec<u32> = code
            .handlers
            .iter()
            .map(|h| code.labels[h.handler.0 as usize])
            .collect();
        handlers.sort_unstable();
        handlers.dedup();
        Exceptions {
            entry: pos_for(0),
            sets,
            handlers,
        }
    });
    // The catch-all slot only where there are exception counters.
    let slots = if exceptions.is_some() {
        dummy + 1
    } else {
        dummy
    };
    CounterPlan {
        counters,
        counts,
        slots,
        exceptions,
    }
}

/// Derives what can be, in rounds. When every pending point waits on
/// another (a cycle), one gets a counter: of the first few by `order`
/// (loop depth, a line's point after a branch side's, instruction), the one
/// whose counter lets the most others be derived.
fn resolve(states: &mut [State], order: &[(u32, bool, u32)]) {
    while settle(states) {
        let mut stuck: Vec<usize> = (0..states.len())
            .filter(|&k| matches!(states[k], State::Pending(_)))
            .collect();
        stuck.sort_by_key(|&k| order[k]);
        // Trials cost a round each: few, and none in a large tangle.
        let trials = if stuck.len() > 64 { 1 } else { 8 };
        let best = stuck
            .iter()
            .take(trials)
            .map(|&k| {
                let mut trial = states.to_vec();
                trial[k] = State::Measured;
                settle(&mut trial);
                let left = trial
                    .iter()
                    .filter(|s| matches!(s, State::Pending(_)))
                    .count();
                (left, k)
            })
            .min_by_key(|&(left, k)| (left, order[k]));
        match best {
            Some((_, k)) => states[k] = State::Measured,
            None => return,
        }
    }
}

/// Derives every pending point it can; true if some are left waiting.
fn settle(states: &mut [State]) -> bool {
    loop {
        let mut progress = false;
        let mut waiting = false;
        for k in 0..states.len() {
            let State::Pending(terms) = &states[k] else {
                continue;
            };
            match evaluate(terms, states) {
                Some(count) => {
                    states[k] = if count.len() > MAX_TERMS {
                        State::Measured
                    } else {
                        State::Derived(count)
                    };
                    progress = true;
                }
                None => waiting = true,
            }
        }
        if !progress {
            return waiting;
        }
    }
}

/// A count keyed by calls (0), point k (k + 1) and exceptions (`EXC` +
/// origin), once every term is known.
fn evaluate(terms: &[Term], states: &[State]) -> Option<Count> {
    let point = |q: usize| -> Option<Count> {
        match &states[q] {
            State::Measured => Some(vec![(q as u32 + 1, 1)]),
            State::Derived(c) => Some(c.clone()),
            State::Pending(_) => None,
        }
    };
    // What a stretch passes on: its origin's count less its exceptions.
    let stretch = |s: Stretch| -> Option<Count> {
        let (mut c, key) = match s.origin {
            Origin::Entry => (vec![(0, 1)], 0),
            Origin::Point(q) => (point(q)?, q as u32 + 1),
        };
        if s.faults {
            c.push((EXC + key, -1));
        }
        Some(c)
    };
    let mut sum: Count = Vec::new();
    let mut add = |c: Count, sign: i64| {
        for (key, coef) in c {
            match sum.iter_mut().find(|t| t.0 == key) {
                Some(t) => t.1 += sign * coef,
                None => sum.push((key, sign * coef)),
            }
        }
    };
    for t in terms {
        match *t {
            Term::From(s) => add(stretch(s)?, 1),
            Term::Minus(s, r) => {
                add(stretch(s)?, 1);
                add(point(r)?, -1);
            }
            Term::Out(s, taken, fall) => {
                add(point(taken)?, 1);
                add(point(fall)?, 1);
                if let (true, Origin::Point(q)) = (s.faults, s.origin) {
                    add(vec![(EXC + q as u32 + 1, 1)], 1);
                }
            }
        }
    }
    sum.retain(|t| t.1 != 0);
    sum.sort_unstable();
    Some(sum)
}

struct Graph<'c, 'a, 'p> {
    code: &'c Code<'a>,
    cp: &'c ConstantPool<'p>,
    incoming: &'c [Vec<Source>],
    point_at: &'c [Option<usize>],
    calls_counted: bool,
    /// May a stretch hold instructions that throw?
    faults_ok: bool,
}

impl Graph<'_, '_, '_> {
    /// How the point at instruction `ix` is reached, as terms; `None` if
    /// some way in is not certain (a handler, a switch, a call before it).
    fn terms(&self, ix: u32) -> Option<Vec<Term>> {
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
                        op: 0xa7 | 0xc8, ..
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
    fn out_terms(&self, ix: u32) -> Option<Vec<Term>> {
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
            if !alone || self.point_at[next as usize].is_some() {
                return None;
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
            Insn::Branch { op, .. } if *op == 0xa7 || *op == 0xc8 || is_conditional(*op) => {
                Kind::Certain
            }
            Insn::Plain { op: 0xc4, operands } => match operands.as_slice().first() {
                Some(0x15..=0x19 | 0x36..=0x3a | 0x84) => Kind::Certain,
                _ => Kind::Other,
            },
            Insn::Plain { op, operands } => match op {
                0x12..=0x14 => {
                    let index = match operands.as_slice() {
                        [i] => *i as u16,
                        [h, l] => u16::from_be_bytes([*h, *l]),
                        _ => return Kind::Other,
                    };
                    // int, float, long, double, string: nothing to load or run.
                    match self.cp.tag(index) {
                        Some(3..=6 | 8) => Kind::Certain,
                        _ => Kind::Other,
                    }
                }
                // Constants, loads, stores, stack shuffles.
                0x00..=0x11 | 0x15..=0x2d | 0x36..=0x4e | 0x57..=0x5f => Kind::Certain,
                // Array loads and stores, integer division and remainder,
                // field access, arraylength, checkcast: an exception at most.
                0x2e..=0x35 | 0x4f..=0x56 | 0x6c | 0x6d | 0x70 | 0x71 => Kind::Faults,
                0xb4 | 0xb5 | 0xbe | 0xc0 => Kind::Faults,
                // Arithmetic, iinc, conversions, comparisons.
                0x60..=0x98 => Kind::Certain,
                _ => Kind::Other,
            },
            _ => Kind::Other,
        }
    }
}

/// Is the one way into an instruction the fall-through of a branch?
fn is_branch_into(code: &Code<'_>, incoming: &[Source]) -> bool {
    matches!(incoming, [Source::Fall(p)] if matches!(code.insns[*p as usize], Insn::Branch { .. }))
}

fn is_conditional(op: u8) -> bool {
    matches!(op, 0x99..=0xa6 | 0xc6 | 0xc7)
}

fn is_ret(insn: &Insn) -> bool {
    match insn {
        Insn::Plain { op: 0xa9, .. } => true,
        Insn::Plain { op: 0xc4, operands } => operands.as_slice().first() == Some(&0xa9),
        _ => false,
    }
}

/// Every way into each instruction (index as read).
fn incoming_edges(code: &Code<'_>) -> Vec<Vec<Source>> {
    let n = code.insns.len();
    let mut inc: Vec<Vec<Source>> = vec![Vec::new(); n];
    if n == 0 {
        return inc;
    }
    inc[0].push(Source::Entry);
    let at = |l: crate::code::Label| code.labels[l.0 as usize] as usize;
    for (j, insn) in code.insns.iter().enumerate() {
        if j + 1 < n && super::lines::falls_through(insn) {
            inc[j + 1].push(Source::Fall(j as u32));
        }
        match insn {
            Insn::Branch { target, .. } => {
                if let Some(v) = inc.get_mut(at(*target)) {
                    v.push(Source::Jump(j as u32));
                }
            }
            Insn::TableSwitch(s) => {
                for &t in s.targets.iter().chain([&s.default]) {
                    if let Some(v) = inc.get_mut(at(t)) {
                        v.push(Source::Switch);
                    }
                }
            }
            Insn::LookupSwitch(s) => {
                for t in s.pairs.iter().map(|p| p.1).chain([s.default]) {
                    if let Some(v) = inc.get_mut(at(t)) {
                        v.push(Source::Switch);
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
fn branch_sides(code: &Code<'_>, incoming: &[Vec<Source>], lines: &[u32]) -> Vec<u32> {
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

/// How many loops (backward jumps' spans) hold each instruction.
fn loop_depths(code: &Code<'_>) -> Vec<u32> {
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
