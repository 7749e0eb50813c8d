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
//! (`pos`, set at each block start; in compiled code a constant, whose cost
//! was not measured alone: CoverageBench runs faster with these stretches
//! than with their points counted, docs/BENCHMARKS.md), and
//! each handler, and a catch-all for exceptions leaving the method, adds one
//! to the counter `pos` names. Constructors do not use such stretches (their
//! catch-all cannot cover the super() call).
//!
//! Branch outcomes (`plan_coverage` with `branches`): see `branches`. The
//! branching instructions whose arrivals an outcome needs are points too
//! (with no line); a line whose straight code falls into one counts as it
//! (plus the stretch's exceptions), so a one-line conditional keeps its
//! counters on its two sides.
//!
//! Where straight code merges with no line starting there (a loop's header
//! test, the code after an `if`/`else`), the merge is a point with no line
//! too, when every way into it can be derived: a stretch may then start
//! there, so the line after a loop counts the loop's entries (its exits)
//! instead of a counter of its own.
//!
//! Every cycle keeps at least one counter; where several points could break
//! one, the point nested in the fewest loops gets the counter (a branch side
//! before a line, a merge last), or of those the one that lets the most
//! others be derived.

mod blocks;
mod branches;
mod graph;
mod layout;
mod solve;

pub use branches::switch_targets;

use crate::code::{Code, Insn};
use crate::edit::lines;
use crate::opcodes::{JSR, JSR_W};
use crate::ConstantPool;
use branches::{arrival_points, branch_formulas, edge_counters, Ref};
use graph::{
    branch_sides, incoming_edges, is_branch_into, is_ret, loop_depths, merge_points, Graph, Source,
};
use layout::Layout;
use solve::{resolve, State};

/// A count as Σ coefficient × counter: counter 0 is the call count (when
/// the method has one), counter k ≥ 1 the k-th entry of
/// [`CounterPlan::counters`].
pub type Count = Vec<(u32, i64)>;

/// Where a method's line counters go and how each line's count is made of
/// them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CounterPlan {
    /// Instruction index (as read) of each counter from 1 on: an increment
    /// goes before it.
    pub counters: Vec<u32>,
    /// The count of each line entry point, in the order given.
    pub counts: Vec<Count>,
    /// Slots of the counter array: calls, `counters`, and with
    /// `exceptions` the exception counters and one for exceptions outside
    /// any stretch (never read).
    pub slots: u32,
    /// The exception counting; `None` when no stretch needs it.
    pub exceptions: Option<Exceptions>,
    /// Instruction index (as read) of each edge counter: an increment goes
    /// after it, on its fall-through path only. Their slots follow
    /// `counters`' (`counters.len() + 1 + k`).
    pub after: Vec<u32>,
    /// Each branching instruction's outcome counts, in code order (empty
    /// unless asked for).
    pub branches: Vec<BranchCounts>,
    /// Runs of instructions and what tells whether they ran (empty unless
    /// branches are asked for): every instruction of the method in one.
    pub blocks: Vec<InsnBlock>,
}

/// Instructions `start..end` (indices as read) ran when one of `any_of`
/// is above 0: the counts of the points whose straight code leads there.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct InsnBlock {
    /// First instruction.
    pub start: u32,
    /// Past the last.
    pub end: u32,
    /// The leaders' counts.
    pub any_of: Vec<Count>,
}

/// How many times each way out of a branching instruction was taken.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BranchCounts {
    /// Instruction index, as read.
    pub at: u32,
    /// A conditional: fell through, jumped. A switch: each distinct target
    /// ([`switch_targets`]' order).
    pub outcomes: Vec<Count>,
}

/// Counting the exceptions thrown out of stretches some counts use: a local
/// `pos` names the stretch running, each handler adds one to its counter.
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
pub(super) const MAX_TERMS: usize = 32;
/// Methods with more points than this get a counter per point (the
/// resolution below is quadratic).
const MAX_POINTS: usize = 2000;

/// Keys of exception counters while planning: `EXC + 0` the entry's
/// stretch, `EXC + k + 1` point k's.
pub(super) const EXC: u32 = 1 << 30;
/// Keys of edge counters while planning: `AFTER + k`, `after[k]`'s.
const AFTER: u32 = 1 << 29;

/// [`plan_coverage`] without branch outcomes.
pub fn plan_counters(
    code: &Code<'_>,
    cp: &ConstantPool<'_>,
    points: &[u32],
    calls_counted: bool,
    constructor: bool,
    derive: bool,
) -> CounterPlan {
    plan_coverage(code, cp, points, calls_counted, constructor, derive, false)
}

/// Plans the counters of `points` (instruction index, line) of `code`.
/// `calls_counted`: counter 0 counts calls at entry (else the first point
/// is at instruction 0, reached only by entry, and is the call count).
/// `constructor`: no stretch that may throw is used. `derive = false` gives
/// every point a counter of its own. `branches`: plan the outcome counts
/// of every branching instruction too ([`CounterPlan::branches`]).
pub fn plan_coverage(
    code: &Code<'_>,
    cp: &ConstantPool<'_>,
    points: &[u32],
    calls_counted: bool,
    constructor: bool,
    derive: bool,
    branches: bool,
) -> CounterPlan {
    let n = code.insns.len();
    let has_subroutines = code.insns.iter().any(|i| {
        matches!(
            i,
            Insn::Branch {
                op: JSR | JSR_W,
                ..
            }
        ) || is_ret(i)
    });
    let deriving = derive && !has_subroutines && points.len() <= MAX_POINTS;
    // Derivation (and the exception counting it may need) and branch
    // outcomes read these.
    let incoming = if deriving || branches {
        incoming_edges(code)
    } else {
        Vec::new()
    };
    let formulas = if branches {
        branch_formulas(code, &incoming, calls_counted)
    } else {
        Vec::new()
    };
    // Handlers must be entered only by exceptions, for their counters.
    let faults_ok = deriving
        && !constructor
        && code.handlers.iter().all(|h| {
            let at = code.labels[h.handler.0 as usize] as usize;
            incoming[at].iter().all(|s| *s == Source::Handler)
        });
    // Line points, then (when deriving) the sides of conditional branches
    // that have no line entry: points with no line, counted when that is
    // cheaper (a one-line method's two branches instead of its calls); and
    // the merges of straight code that can be derived (`merge_points`).
    let sides = if deriving {
        branch_sides(code, &incoming, points)
    } else {
        Vec::new()
    };
    // Then the arrivals branch outcomes use, with no line either, and the
    // handlers' first instructions, for whether their code ran (a counter
    // there costs only when an exception is caught).
    let mut later = arrival_points(&formulas);
    if branches {
        later.extend(
            code.handlers
                .iter()
                .map(|h| code.labels[h.handler.0 as usize]),
        );
    }
    let mut merges = if deriving {
        merge_points(code, &incoming, points)
    } else {
        Vec::new()
    };
    merges.retain(|ix| !later.contains(ix));
    // A merge whose ways in cannot all be derived would only need a
    // counter of its own: left out, and again until every one left can.
    let layout = loop {
        let layout = Layout::new(code, [points, &sides, &merges, &later]);
        let g = Graph {
            code,
            cp,
            incoming: &incoming,
            point_at: &layout.point_at,
            calls_counted,
            faults_ok,
            arrival: &layout.arrival,
        };
        let before = merges.len();
        merges.retain(|&ix| g.terms(ix).is_some());
        if merges.len() == before {
            break layout;
        }
    };
    let Layout {
        all,
        point_at,
        rep,
        arrival,
        lineless,
    } = layout;
    let merge_range = lineless - merges.len()..lineless;
    let mut states: Vec<State> = (0..all.len()).map(|_| State::Measured).collect();
    if deriving {
        let g = Graph {
            code,
            cp,
            incoming: &incoming,
            point_at: &point_at,
            calls_counted,
            faults_ok,
            arrival: &arrival,
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
            .map(|(k, &ix)| {
                // A merge breaks a cycle last: the loop's body line then
                // keeps the counter, not its header (run once more per
                // entry into the loop).
                let depth = depth[ix as usize] + if merge_range.contains(&k) { 1 << 16 } else { 0 };
                (depth, k < points.len() || k >= lineless, ix)
            })
            .collect();
        resolve(&mut states, &order);
    }
    // Each line's count by key; the counters those name are the ones kept
    // (a branch side nobody's count needs gets none).
    let count_of = |r: usize| match &states[r] {
        State::Derived(c) => c.clone(),
        _ => vec![(r as u32 + 1, 1)],
    };
    let keyed: Vec<Count> = rep[..points.len()].iter().map(|&r| count_of(r)).collect();
    let mut by_lines = vec![false; all.len()];
    for &(key, _) in keyed.iter().flatten() {
        if key != 0 && key < AFTER {
            by_lines[key as usize - 1] = true;
        }
    }
    // A point only a branch outcome would count (a side whose straight code
    // calls before its line, as a for-each loop's `next()`): the point its
    // code falls into, alone, plus the exceptions thrown on the way (the
    // stretch's, counted as for lines) — no counter more in the loop. Exact
    // once the calls on the way return; while one runs, the outcome reads
    // one less.
    let through = |k: usize| -> Option<Count> {
        if !faults_ok || !matches!(states[k], State::Measured) || by_lines[k] {
            return None;
        }
        let mut i = all[k] as usize;
        loop {
            let insn = &code.insns[i];
            if matches!(insn, Insn::Branch { .. }) || !lines::falls_through(insn) {
                return None;
            }
            let next = i + 1;
            if incoming.get(next)? != &[Source::Fall(i as u32)] {
                return None;
            }
            if let Some(r) = point_at[next] {
                let known = by_lines[r] || matches!(states[r], State::Derived(_));
                if !known || arrival[next] {
                    return None;
                }
                let mut c = count_of(r);
                add_scaled(&mut c, &vec![(EXC + k as u32 + 1, 1)], 1);
                return Some(c);
            }
            i = next;
        }
    };
    // Each branch outcome's, likewise.
    let after = edge_counters(&formulas);
    let keyed_branches: Vec<(u32, Vec<Count>)> = formulas
        .iter()
        .map(|b| {
            let outcomes = b.outcomes.iter().map(|f| {
                let mut sum: Count = Vec::new();
                for &(r, coef) in f {
                    let c = match r {
                        Ref::Calls => vec![(0, 1)],
                        Ref::At(i) => {
                            let k = point_at[i as usize].expect("a point");
                            through(k).unwrap_or_else(|| count_of(k))
                        }
                        Ref::After(i) => {
                            let k = after.binary_search(&i).expect("listed");
                            vec![(AFTER + k as u32, 1)]
                        }
                    };
                    add_scaled(&mut sum, &c, coef);
                }
                sum
            });
            (b.at, outcomes.collect())
        })
        .collect();
    // Whether each instruction ran, by runs of instructions that share
    // their leaders.
    let mut keyed_blocks: Vec<(u32, u32, Vec<Count>)> = Vec::new();
    if branches {
        // A merge's point is passed over too: a run of instructions is
        // known to have run by the ways into the merge, as before merges
        // were points (a merge's count is for the lines after it).
        let mut skip = arrival.clone();
        for &ix in &all[merge_range.clone()] {
            skip[ix as usize] = true;
        }
        let lead = blocks::leaders(code, &incoming, &point_at, &skip, calls_counted);
        let mut start = 0;
        for i in 1..=n {
            if i == n || lead[i] != lead[start] {
                let any_of = lead[start]
                    .iter()
                    .map(|l| match *l {
                        blocks::Leader::Calls => vec![(0, 1)],
                        blocks::Leader::Point(k) => through(k).unwrap_or_else(|| count_of(k)),
                    })
                    .collect();
                keyed_blocks.push((start as u32, i as u32, any_of));
                start = i;
            }
        }
    }
    let every_key = || {
        keyed
            .iter()
            .chain(keyed_branches.iter().flat_map(|b| &b.1))
            .chain(keyed_blocks.iter().flat_map(|b| &b.2))
            .flatten()
    };
    let mut needed = vec![false; all.len()];
    for &(key, _) in every_key() {
        if key != 0 && key < AFTER {
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
    // Edge counters after those, then the exception counters of the
    // stretches some count uses.
    let mut used: Vec<u32> = every_key()
        .filter(|t| t.0 >= EXC)
        .map(|t| t.0 - EXC)
        .collect();
    used.sort_unstable();
    used.dedup();
    let first_exc = counters.len() as u32 + 1 + after.len() as u32;
    let exc_slot = |key: u32| first_exc + used.binary_search(&key).unwrap_or(0) as u32;
    let slot_of = |key: u32| match key {
        0 => 0,
        k if k >= EXC => exc_slot(k - EXC),
        k if k >= AFTER => counters.len() as u32 + 1 + (k - AFTER),
        k => slot[k as usize - 1],
    };
    let to_slots = |c: &Count| -> Count {
        let mut out: Count = c.iter().map(|&(key, coef)| (slot_of(key), coef)).collect();
        out.sort_unstable();
        out
    };
    let counts = keyed.iter().map(to_slots).collect();
    let branches = keyed_branches
        .iter()
        .map(|(at, outcomes)| BranchCounts {
            at: *at,
            outcomes: outcomes.iter().map(to_slots).collect(),
        })
        .collect();
    let blocks = keyed_blocks
        .iter()
        .map(|(start, end, any_of)| InsnBlock {
            start: *start,
            end: *end,
            any_of: any_of.iter().map(to_slots).collect(),
        })
        .collect();
    let dummy = first_exc + used.len() as u32;
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
                // leads there (the entry code sets `pos`), keep it; so do
                // branching instructions counted for their outcomes only
                // (they cannot throw).
                (point_at[i].is_some() && !arrival[i])
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
        after,
        branches,
        blocks,
    }
}

/// `sum += coef × c`, dropping terms that cancel.
fn add_scaled(sum: &mut Count, c: &Count, coef: i64) {
    for &(key, k) in c {
        match sum.iter_mut().find(|t| t.0 == key) {
            Some(t) => t.1 += coef * k,
            None => sum.push((key, coef * k)),
        }
    }
    sum.retain(|t| t.1 != 0);
}

/// A conditional jump or a switch.
pub(super) fn is_branching(insn: &Insn) -> bool {
    match insn {
        Insn::Branch { op, .. } => crate::opcodes::is_conditional(*op),
        Insn::TableSwitch(_) | Insn::LookupSwitch(_) => true,
        Insn::Plain { .. } => false,
    }
}
