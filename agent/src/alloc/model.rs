//! What `alloc` hands a snapshot: per thread, the call paths that
//! allocated, the allocated class as each path's top frame; figures are
//! estimates in bytes and objects, rounded, with the samples they come from.

use super::{Alloc, Captured};
use crate::model::{CallTrees, Frame, Part, Section, Unit, Value, Weight};
use crate::threads::{ThreadId, ThreadRecord};

const WEIGHTS: [Weight; 6] = [
    Weight::own("bytes", Unit::Bytes),
    Weight::own("objects", Unit::Count),
    Weight::own("samples", Unit::Count),
    Weight::total("bytes", Unit::Bytes),
    Weight::total("objects", Unit::Count),
    Weight::total("samples", Unit::Count),
];

/// One tree per thread that lived during `window` and has samples, in
/// thread order.
pub fn section(data: &Captured, threads: &[ThreadRecord], window: (u64, u64)) -> Section {
    let frames = data
        .names
        .iter()
        .enumerate()
        .map(|(id, name)| Frame {
            name: name.clone(),
            class: data.classes.contains(&(id as u32)),
            descriptor: None,
        })
        .collect();
    let mut trees = CallTrees {
        weights: WEIGHTS.to_vec(),
        frames,
        threads: Vec::new(),
    };
    for (i, t) in threads.iter().enumerate() {
        let id = ThreadId(i as u32);
        let Some(tree) = data.trees.get(&id) else {
            continue;
        };
        if !t.lived_in(window) || tree.is_empty() {
            continue;
        }
        trees.threads.push(tree.to_model(Some(id), |v, own, cum| {
            v.extend(figures(own));
            v.extend(figures(cum));
        }));
    }
    Section {
        name: profrj_format::alloc::SECTION,
        extra: false,
        attributes: vec![
            (
                profrj_format::alloc::INTERVAL,
                Value::Number(data.interval as u64),
            ),
            (profrj_format::alloc::LIVE, Value::Flag(data.live)),
        ],
        parts: vec![Part::Trees(trees)],
    }
}

fn figures(a: &Alloc) -> [u64; 3] {
    [round(a.bytes), round(a.objects), a.samples]
}

/// An estimate as a whole number (never negative).
fn round(x: f64) -> u64 {
    x.max(0.0).round() as u64
}
