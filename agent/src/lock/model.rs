//! What `lock` hands a snapshot: per thread, the call paths where it waited
//! for a contended monitor or lock, the monitor's class as each path's top
//! frame, with the waits counted and their nanoseconds summed; then the
//! monitor dump.

use super::{Captured, Wait};
use crate::calltree;
use crate::model::{CallTrees, Part, Section, Unit, Value, Weight};
use crate::threads::ThreadRecord;

const WEIGHTS: [Weight; 4] = [
    Weight::own("waits", Unit::Count),
    Weight::own("wait_time", Unit::Nanoseconds),
    Weight::total("waits", Unit::Count),
    Weight::total("wait_time", Unit::Nanoseconds),
];

/// One tree per thread that lived during `window` and waited, in thread
/// order, then the monitor dump.
pub fn section(
    data: Captured,
    threads: &[std::sync::Arc<ThreadRecord>],
    window: (u64, u64),
) -> Section {
    let trees = trees(&data, threads, window);
    let mut parts = vec![Part::Trees(trees)];
    if let Some(dump) = data.dump {
        parts.push(Part::Monitors(dump));
    }
    Section {
        name: profrj_format::lock::SECTION,
        extra: false,
        attributes: vec![(
            profrj_format::lock::THRESHOLD,
            Value::Number(data.threshold),
        )],
        parts,
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
        threads: calltree::threads_in_window(
            &data.trees,
            threads,
            window,
            |v, own: &Wait, cum: &Wait| {
                v.extend([own.count, own.time, cum.count, cum.time]);
            },
        ),
    }
}
