//! One number per call-tree node: which figure of the snapshot is "the weight"
//! (`--metric`), the totals over subtrees computed from it, and the tables
//! of methods and of sites (a class frame and its method) it makes.

use super::parse::NO_JAVA_FRAME;
use super::{CallKind, MetricDesc, MetricName, Names, Tree, Values, NONE};
use crate::error::CliError;
use std::collections::HashMap;

/// What a node weighs (`--metric`): one of its section's metrics
/// ([`SectionDesc::metrics`]), with the slot of the node's own figure.
#[derive(Clone, Copy, Debug)]
pub struct Metric {
    pub kind: CallKind,
    pub desc: &'static MetricDesc,
    slot: usize,
}

impl Metric {
    /// The metric `name` of section `kind`, or its default; refuses one the
    /// section does not have, naming those it has.
    pub fn of(kind: CallKind, name: Option<MetricName>) -> Result<Metric, CliError> {
        let d = kind.desc();
        let wanted = name.map_or(d.default_metric, |n| n.0);
        let desc = d.metric_desc(wanted).ok_or_else(|| {
            CliError::Usage(format!(
                "the <{}> section has no metric {wanted}: use --metric {}",
                d.tag,
                d.metric_list()
            ))
        })?;
        Ok(Metric::from_desc(kind, desc))
    }

    fn from_desc(kind: CallKind, desc: &'static MetricDesc) -> Metric {
        let slot = kind.desc().slot(desc.own).expect("descriptors are checked");
        Metric { kind, desc, slot }
    }

    /// Every metric of the section, in its order.
    pub fn all(kind: CallKind) -> impl Iterator<Item = Metric> {
        kind.desc()
            .metrics
            .iter()
            .map(move |d| Metric::from_desc(kind, d))
    }

    /// The node's own weight (without callees).
    pub fn own(&self, v: &Values) -> u64 {
        v.0[self.slot]
    }

    pub fn name(&self) -> &'static str {
        self.desc.name
    }

    pub fn unit(&self) -> &'static str {
        self.desc.unit
    }

    pub fn describe(&self) -> &'static str {
        self.desc.describe
    }
}

impl PartialEq for Metric {
    fn eq(&self, other: &Metric) -> bool {
        self.kind == other.kind && self.slot == other.slot
    }
}

/// A tree with each node's own weight and its subtree's, in memory (the
/// readers walk trees with [`tree_total`] and their own path instead).
#[cfg(test)]
pub struct Weighted {
    /// `total[0]` is the whole thread.
    pub total: Vec<u64>,
}

#[cfg(test)]
impl Weighted {
    pub fn new(tree: &Tree, metric: Metric) -> Weighted {
        let nodes = tree.nodes();
        let mut total: Vec<u64> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| if i == 0 { 0 } else { metric.own(&n.v) })
            .collect();
        // Children follow their parent: summing backwards adds each finished
        // subtree into its parent.
        for i in (1..nodes.len()).rev() {
            let p = nodes[i].parent as usize;
            total[p] = total[p].saturating_add(total[i]);
        }
        Weighted { total }
    }
}

/// The whole thread's weight: every node's own, summed.
pub fn tree_total(tree: &Tree, metric: Metric) -> u64 {
    tree.walk()
        .fold(0u64, |s, n| s.saturating_add(metric.own(&n.v)))
}

/// One method's figures over every call path (and thread) it appears in.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MethodRow {
    pub name: String,
    /// Own weight: summed over its nodes, and over the class frames right
    /// above them (what the method allocated itself).
    pub own: u64,
    /// Weight with callees, counting a recursive method once per stack.
    pub total: u64,
    /// The section's count column (profile: calls) summed over its nodes.
    pub calls: u64,
}

/// Methods of the given trees merged by name, heaviest own weight first, and
/// the sum of every node's own weight (the 100 %). A class frame is no row:
/// its weight is its method's own (a class frame at a root stays a row).
pub fn method_table(names: &Names, trees: &[&Tree], metric: Metric) -> (Vec<MethodRow>, u64) {
    let count = metric
        .kind
        .desc()
        .count_column
        .and_then(|(_, m)| Metric::of(metric.kind, Some(MetricName(m))).ok());
    let mut rows: HashMap<u32, MethodRow> = HashMap::new();
    let mut grand = 0u64;
    /// A node on the walk's path: its subtree's weight so far, and whether
    /// it is its method's row's outermost on the path (its total counts).
    struct Open {
        name: u32,
        class: bool,
        total: u64,
        counts: bool,
    }
    // Only the current path is held: a node's total is known when the walk
    // leaves it (the next node at its depth or above).
    let close = |path: &mut Vec<Open>,
                 on_path: &mut HashMap<u32, u32>,
                 rows: &mut HashMap<u32, MethodRow>| {
        let o = path.pop().expect("non-empty");
        *on_path.get_mut(&o.name).expect("counted") -= 1;
        if o.counts {
            if let Some(row) = rows.get_mut(&o.name) {
                row.total = row.total.saturating_add(o.total);
            }
        }
        if let Some(p) = path.last_mut() {
            p.total = p.total.saturating_add(o.total);
        }
    };
    for tree in trees {
        // Names on the current path, to count recursion once.
        let mut path: Vec<Open> = Vec::new();
        let mut on_path: HashMap<u32, u32> = HashMap::new();
        for n in tree.walk() {
            while path.len() >= n.depth as usize {
                close(&mut path, &mut on_path, &mut rows);
            }
            let own = metric.own(&n.v);
            grand = grand.saturating_add(own);
            let seen = on_path.entry(n.name).or_insert(0);
            *seen += 1;
            let first = *seen == 1;
            let parent = path.last().filter(|_| n.depth > 1);
            let under_method = parent.is_some_and(|p| !p.class);
            let mut open = Open {
                name: n.name,
                class: n.class,
                total: own,
                counts: false,
            };
            if n.class && under_method {
                // The parent's row exists: it came first.
                let p = parent.expect("a parent").name;
                if let Some(row) = rows.get_mut(&p) {
                    row.own = row.own.saturating_add(own);
                }
                path.push(open);
                continue;
            }
            let row = rows.entry(n.name).or_insert_with(|| MethodRow {
                name: names.get(n.name).to_owned(),
                ..MethodRow::default()
            });
            row.own = row.own.saturating_add(own);
            if let Some(c) = count {
                row.calls = row.calls.saturating_add(c.own(&n.v));
            }
            open.counts = first;
            path.push(open);
        }
        while !path.is_empty() {
            close(&mut path, &mut on_path, &mut rows);
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

/// An allocation site: a class frame and the method right below it, merged
/// over call paths and threads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SiteRow {
    pub method: String,
    pub class: String,
    /// Per metric of the section, in its order: the class frames' own figures.
    pub values: Vec<u64>,
}

/// The sites of the given trees, heaviest by `metric` first, and each
/// metric's sum over every node (the 100 %s).
pub fn site_table(names: &Names, trees: &[&Tree], metric: Metric) -> (Vec<SiteRow>, Vec<u64>) {
    let metrics: Vec<Metric> = Metric::all(metric.kind).collect();
    let mut grand = vec![0u64; metrics.len()];
    let mut sites: HashMap<(u32, u32), Vec<u64>> = HashMap::new();
    for tree in trees {
        // The names on the walk's path: a class frame's method is the last.
        let mut path: Vec<u32> = Vec::new();
        for n in tree.walk() {
            path.truncate(n.depth as usize - 1);
            path.push(n.name);
            for (g, m) in grand.iter_mut().zip(&metrics) {
                *g = g.saturating_add(m.own(&n.v));
            }
            if !n.class {
                continue;
            }
            let method = match n.depth {
                1 => NONE,
                d => path[d as usize - 2],
            };
            let v = sites
                .entry((method, n.name))
                .or_insert_with(|| vec![0; metrics.len()]);
            for (x, m) in v.iter_mut().zip(&metrics) {
                *x = x.saturating_add(m.own(&n.v));
            }
        }
    }
    let at = metrics.iter().position(|m| *m == metric).unwrap_or(0);
    let mut rows: Vec<SiteRow> = sites
        .into_iter()
        .filter(|(_, v)| v.iter().any(|&x| x > 0))
        .map(|((method, class), values)| SiteRow {
            method: match method {
                NONE => NO_JAVA_FRAME.to_owned(),
                m => names.get(m).to_owned(),
            },
            class: names.get(class).to_owned(),
            values,
        })
        .collect();
    rows.sort_by(|a, b| {
        b.values[at]
            .cmp(&a.values[at])
            .then(b.values.cmp(&a.values))
            .then(a.method.cmp(&b.method))
            .then(a.class.cmp(&b.class))
    });
    (rows, grand)
}
