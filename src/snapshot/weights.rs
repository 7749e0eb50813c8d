//! One number per call-tree node: which figure of the snapshot is "the weight"
//! (`--metric`), and the totals over subtrees computed from it.

use super::{CallKind, Names, Tree, Values};
use std::collections::HashMap;

/// What a node weighs. Sampler: `cpu` = samples with the thread RUNNABLE
/// (`hits`), `wall` = samples in any state (`elapsed`). Profile: `cpu` = CPU µs
/// without callees (`method`), `wall` = wall µs without callees
/// (`methodElapsed`), `calls` = calls (`count`).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, clap::ValueEnum)]
pub enum Metric {
    #[default]
    #[value(alias = "hits")]
    Cpu,
    #[value(alias = "elapsed")]
    Wall,
    #[value(alias = "count")]
    Calls,
}

impl Metric {
    /// Refuses a metric the section does not have.
    pub fn check(self, kind: CallKind) -> Result<(), String> {
        if kind == CallKind::Sampler && self == Metric::Calls {
            return Err(format!(
                "the <{}> section counts samples, not calls: use --metric cpu \
                 (RUNNABLE samples) or wall (all samples)",
                kind.tag()
            ));
        }
        Ok(())
    }

    /// The node's own weight (without callees).
    pub fn self_value(self, kind: CallKind, v: &Values) -> u64 {
        match (kind, self) {
            (CallKind::Sampler, Metric::Cpu) => v.hits,
            (CallKind::Sampler, _) => v.elapsed,
            (CallKind::Profile, Metric::Cpu) => v.method,
            (CallKind::Profile, Metric::Wall) => v.method_elapsed,
            (CallKind::Profile, Metric::Calls) => v.count,
        }
    }

    /// Unit of the weight.
    pub fn unit(self, kind: CallKind) -> &'static str {
        match (kind, self) {
            (CallKind::Sampler, _) => "samples",
            (CallKind::Profile, Metric::Calls) => "calls",
            (CallKind::Profile, _) => "us",
        }
    }

    /// What the weight is, for headers.
    pub fn describe(self, kind: CallKind) -> &'static str {
        match (kind, self) {
            (CallKind::Sampler, Metric::Cpu) => "samples with the thread RUNNABLE (hits)",
            (CallKind::Sampler, _) => "samples in any thread state (elapsed)",
            (CallKind::Profile, Metric::Cpu) => "CPU time, microseconds (method)",
            (CallKind::Profile, Metric::Wall) => "wall time, microseconds (methodElapsed)",
            (CallKind::Profile, Metric::Calls) => "calls (count)",
        }
    }

    pub fn flag(self) -> &'static str {
        match self {
            Metric::Cpu => "cpu",
            Metric::Wall => "wall",
            Metric::Calls => "calls",
        }
    }
}

/// A tree with each node's own weight and its subtree's.
pub struct Weighted {
    pub own: Vec<u64>,
    /// `total[0]` is the whole thread.
    pub total: Vec<u64>,
}

impl Weighted {
    pub fn new(tree: &Tree, kind: CallKind, metric: Metric) -> Weighted {
        let own: Vec<u64> = tree
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                if i == 0 {
                    0
                } else {
                    metric.self_value(kind, &n.v)
                }
            })
            .collect();
        let mut total = own.clone();
        // Children follow their parent: summing backwards adds each finished
        // subtree into its parent.
        for i in (1..tree.nodes.len()).rev() {
            let p = tree.nodes[i].parent as usize;
            total[p] = total[p].saturating_add(total[i]);
        }
        Weighted { own, total }
    }
}

/// One method's figures over every call path (and thread) it appears in.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MethodRow {
    pub name: String,
    /// Own weight: summed over its nodes.
    pub own: u64,
    /// Weight with callees, counting a recursive method once per stack.
    pub total: u64,
    /// Profile: calls (count) summed over its nodes.
    pub calls: u64,
}

/// Methods of the given trees merged by name, heaviest own weight first, and
/// the sum of every node's own weight (the 100 %).
pub fn method_table(
    names: &Names,
    trees: &[&Tree],
    kind: CallKind,
    metric: Metric,
) -> (Vec<MethodRow>, u64) {
    let mut rows: HashMap<u32, MethodRow> = HashMap::new();
    let mut grand = 0u64;
    for tree in trees {
        let w = Weighted::new(tree, kind, metric);
        grand = grand.saturating_add(w.total[0]);
        // Names on the current path, to count recursion once.
        let mut path: Vec<u32> = Vec::new();
        let mut on_path: HashMap<u32, u32> = HashMap::new();
        for (i, n) in tree.nodes.iter().enumerate().skip(1) {
            while path.len() >= n.depth as usize {
                let gone = path.pop().expect("non-empty");
                *on_path.get_mut(&gone).expect("counted") -= 1;
            }
            let row = rows.entry(n.name).or_insert_with(|| MethodRow {
                name: names.get(n.name).to_owned(),
                ..MethodRow::default()
            });
            row.own = row.own.saturating_add(w.own[i]);
            row.calls = row.calls.saturating_add(n.v.count);
            let seen = on_path.entry(n.name).or_insert(0);
            if *seen == 0 {
                row.total = row.total.saturating_add(w.total[i]);
            }
            *seen += 1;
            path.push(n.name);
        }
    }
    let mut rows: Vec<MethodRow> = rows.into_values().collect();
    rows.sort_by(|a, b| {
        b.own
            .cmp(&a.own)
            .then(b.total.cmp(&a.total))
            .then(a.name.cmp(&b.name))
    });
    (rows, grand)
}
