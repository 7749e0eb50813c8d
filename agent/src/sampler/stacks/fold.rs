//! How samples are counted: under a synthetic one-frame stack when no stack
//! can be had, and told to the listeners of sampled stacks (a recording) as
//! they are folded. Apart because the tick, `event=wall`'s samples and the
//! signals' answers all count this way.

use super::thread_state::ThreadState;
use crate::events::{Events, SampledStack, Samples};
use crate::sampler::frames::NameTables;
use crate::sampler::tree::{CallTree, NodeId};
use crate::sampler::{Counters, NO_LINE};
use crate::threads::ThreadId;

/// Counts samples under a one-frame synthetic stack (`[GC_active]`, …).
pub(super) fn fold_synthetic(
    tree: &mut CallTree,
    tables: &mut NameTables,
    counters: &mut Counters,
    name: &'static str,
    owed: u64,
    hits: u64,
) -> NodeId {
    *counters.failures.entry(name).or_default() += owed;
    counters.failed_walks += 1;
    let key = tables.keys.key(tables.names.intern(name), NO_LINE);
    tree.add_samples(&[key], owed, hits)
}

/// Counts a thread's deferred samples (if any) under the failure they came
/// with: no stack could be taken for them (the thread ended, sampling stopped).
pub(super) fn fold_deferred(
    events: &Events,
    id: ThreadId,
    st: &mut ThreadState,
    tree: &mut CallTree,
    tables: &mut NameTables,
    counters: &mut Counters,
) {
    if let Some(d) = st.deferred.take() {
        let stack = SampledStack::Synthetic(d.failure);
        publish(events, id, stack, d.state, (d.owed, d.hits));
        fold_synthetic(tree, tables, counters, d.failure, d.owed, d.hits);
    }
}

/// Tells the listeners of `Kind::Sampled` (a recording) of samples as they
/// are folded: one load when nobody listens.
#[inline(always)]
pub(super) fn publish(
    events: &Events,
    thread: ThreadId,
    stack: SampledStack<'_>,
    state: i32,
    (count, hits): (u64, u64),
) {
    events.sampled(&Samples {
        thread,
        stack,
        state,
        count,
        hits,
    });
}
