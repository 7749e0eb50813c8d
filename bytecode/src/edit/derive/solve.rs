//! Turning terms into counts: points are derived in rounds, and where they
//! wait on each other (a cycle) one of them gets a counter.

use super::graph::{Origin, Stretch, Term};
use super::{Count, EXC, MAX_TERMS};

#[derive(Clone)]
pub(super) enum State {
    Measured,
    Pending(Vec<Term>),
    Derived(Count),
}

/// Derives what can be, in rounds. When every pending point waits on
/// another (a cycle), one gets a counter: of the first few by `order`
/// (loop depth, a line's point after a branch side's, instruction), the one
/// whose counter lets the most others be derived.
pub(super) fn resolve(states: &mut [State], order: &[(u32, bool, u32)]) {
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
            Term::Into(s, r) => {
                add(point(r)?, 1);
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
