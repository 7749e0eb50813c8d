//! What `alloc` hands a snapshot: per thread, the call paths that
//! allocated, the allocated class as each path's top frame; figures are
//! estimates in bytes and objects, rounded, with the samples they come from.

use super::{Alloc, Captured};
use crate::calltree;
use crate::model::{CallTrees, Part, Section, Unit, Value, Weight};
use crate::threads::ThreadRecord;

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
pub fn section(
    data: &Captured,
    threads: &[std::sync::Arc<ThreadRecord>],
    window: (u64, u64),
) -> Section {
    let mut attributes = vec![
        (
            profrj_format::alloc::INTERVAL,
            Value::Number(data.interval as u64),
        ),
        (
            profrj_format::alloc::LIVE,
            Value::Flag(data.live_rule.is_some()),
        ),
    ];
    if let Some(rule) = data.live_rule {
        attributes.push((profrj_format::alloc::LIVE_RULE, Value::Word(rule.name())));
    }
    Section {
        name: profrj_format::alloc::SECTION,
        extra: false,
        attributes,
        parts: vec![Part::Trees(trees(data, threads, window))],
    }
}

/// [`section`]'s trees.
pub fn trees(
    data: &Captured,
    threads: &[std::sync::Arc<ThreadRecord>],
    window: (u64, u64),
) -> CallTrees {
    CallTrees {
        weights: WEIGHTS.to_vec(),
        period: None,
        frames: calltree::frames(&data.names, &data.classes),
        threads: calltree::threads_in_window(&data.trees, threads, window, |v, own, cum| {
            v.extend(figures(own));
            v.extend(figures(cum));
        }),
    }
}

fn figures(a: &Alloc) -> [u64; 3] {
    [round(a.bytes), round(a.objects), a.samples]
}

/// An estimate as a whole number (never negative).
fn round(x: f64) -> u64 {
    x.max(0.0).round() as u64
}
