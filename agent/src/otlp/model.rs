//! The push's view of a mode's call trees: the agent's format-neutral model
//! ([`crate::model::CallTrees`]) as `profrj_otlp`'s, with the sample types
//! pprof and OTLP name (Go's runtime profiles' where one exists). Each
//! node keeps its own figures (events that ended on it); a thread's events
//! with an empty stack go on a node of their own
//! ([`profrj_otlp::NO_JAVA_FRAME_ID`]), as a snapshot's reader shows them.
//! A frame's line (sampling's `lines`) goes with it: each line of a method
//! its own location.

use crate::model::{CallTrees, Weight};
use crate::threads::ThreadRecord;
use profrj_otlp::{types, ValueType};

/// The sample types of a section, each from the model's own weight of
/// that name.
fn types_of(section: &str) -> Option<&'static [(ValueType, &'static str)]> {
    Some(match section {
        "sampling" => &[
            (types::SAMPLES, "samples"),
            (types::RUNNABLE_SAMPLES, "runnable_samples"),
        ],
        "profile" => &[
            (types::CALLS, "calls"),
            (types::WALL, "wall"),
            (types::CPU, "cpu"),
        ],
        "alloc" => &[
            (types::ALLOC_OBJECTS, "objects"),
            (types::ALLOC_SPACE, "bytes"),
        ],
        "lock" => &[(types::CONTENTIONS, "waits"), (types::DELAY, "wait_time")],
        _ => return None,
    })
}

/// The value types of `mode`'s samples, in order.
fn value_types(mode: &str) -> Option<&'static [ValueType]> {
    Some(match mode {
        "sampling" => &[types::SAMPLES, types::RUNNABLE_SAMPLES],
        "profile" => &[types::CALLS, types::WALL, types::CPU],
        "alloc" => &[types::ALLOC_OBJECTS, types::ALLOC_SPACE],
        "lock" => &[types::CONTENTIONS, types::DELAY],
        _ => return None,
    })
}

fn position(weights: &[Weight], name: &str, total: bool) -> Option<usize> {
    weights
        .iter()
        .position(|w| w.name == name && w.total == total)
}

/// `trees` of mode `mode` as the push sends them; `None` for a mode the
/// push does not send.
pub fn call_trees(
    mode: &str,
    trees: &CallTrees,
    threads: &[std::sync::Arc<ThreadRecord>],
) -> Option<profrj_otlp::CallTrees> {
    let sent = types_of(mode)?;
    let own: Vec<Option<usize>> = sent
        .iter()
        .map(|(_, name)| position(&trees.weights, name, false))
        .collect();
    let total: Vec<Option<usize>> = sent
        .iter()
        .map(|(_, name)| position(&trees.weights, name, true))
        .collect();
    let n = trees.weights.len();
    let period = trees.period.map(|p| {
        let ty = match p.name {
            "cpu" => types::CPU_PERIOD,
            _ => types::WALL_PERIOD,
        };
        (ty, p.value as i64)
    });
    let out_threads = trees
        .threads
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let mut nodes = Vec::with_capacity(t.nodes.len() + 1);
            // The model's parent of each depth, depth first.
            let mut parents: Vec<u32> = Vec::new();
            let mut outermost = vec![0u64; sent.len()];
            for (k, node) in t.nodes.iter().enumerate() {
                let depth = node.depth as usize;
                parents.truncate(depth - 1);
                let values = t.values_of(k, n);
                let mut weights = [0u64; profrj_otlp::MAX_WEIGHTS];
                for (j, w) in own.iter().enumerate() {
                    weights[j] = w.map_or(0, |w| values[w]);
                    if depth == 1 {
                        outermost[j] += total[j].map_or(0, |w| values[w]);
                    }
                }
                nodes.push(profrj_otlp::Node {
                    parent: parents.last().copied().unwrap_or(profrj_otlp::ROOT),
                    name: node.frame,
                    own: weights,
                });
                parents.push(k as u32);
            }
            // Events with no frame: the thread's totals less its outermost
            // frames'.
            let mut frameless = [0u64; profrj_otlp::MAX_WEIGHTS];
            for (j, w) in total.iter().enumerate() {
                let all = w.and_then(|w| t.root.get(w)).copied().unwrap_or(0);
                frameless[j] = all.saturating_sub(outermost[j]);
            }
            if frameless != [0; profrj_otlp::MAX_WEIGHTS] {
                nodes.push(profrj_otlp::Node {
                    parent: profrj_otlp::ROOT,
                    name: profrj_otlp::NO_JAVA_FRAME_ID,
                    own: frameless,
                });
            }
            if nodes.is_empty() {
                return None;
            }
            let (key, name) = match t.thread {
                Some(id) => (
                    id.0 as u64,
                    threads
                        .get(id.0 as usize)
                        .map_or_else(|| format!("thread {}", id.0), |r| r.name.clone()),
                ),
                None => (1 << 32 | i as u64, "(unknown)".to_owned()),
            };
            Some(profrj_otlp::ThreadTree { key, name, nodes })
        })
        .collect();
    Some(profrj_otlp::CallTrees {
        weights: value_types(mode)?,
        period,
        names: trees.frames.iter().map(|f| f.name.clone()).collect(),
        // Sampling's `lines` keys frames by line: each location its line.
        lines: match trees.frames.iter().any(|f| f.line.is_some()) {
            true => trees
                .frames
                .iter()
                .map(|f| f.line.unwrap_or(profrj_otlp::NO_LINE))
                .collect(),
            false => Vec::new(),
        },
        threads: out_threads,
    })
}
