//! What the sampler remembers of each thread between ticks: its last CPU
//! time and stack, the request it has not yet answered, the samples it owes,
//! its OS id and CPU timer. Apart from the tick, which reads and updates it
//! (`mod.rs`, `wall.rs`, `answers.rs`), because it is the one state they
//! share.

use crate::sampler::signal::cpu_timer::CpuTimer;
use crate::sampler::tree::NodeId;
use crate::threads::{ThreadId, Threads};
use crate::vm::hotspot;
use crate::vm::sys::{JVMTI_JAVA_LANG_THREAD_STATE_MASK, JVMTI_THREAD_STATE_IN_NATIVE};
use crate::vm::{jthread, Jni};

#[derive(Default, Clone, Copy)]
pub(super) enum Tid {
    #[default]
    Unknown,
    Known(i32),
    /// Not readable, or the thread does not take signals: JVMTI walks it.
    Unavailable,
}

/// A stack asked for and not yet arrived.
pub(super) struct Pending {
    pub(super) seq: u32,
    pub(super) asked_tick: u64,
    pub(super) asked_cpu: Option<u64>,
    /// The thread's state when asked ([`state_key`]), and whole (JVMTI's).
    pub(super) state: i32,
    pub(super) full_state: i32,
    /// Samples that will count on the stack when it arrives, and how many are hits.
    pub(super) owed: u64,
    pub(super) hits: u64,
}

/// Samples a signal walk could not place because the thread was inside the
/// VM (a GC, a safepoint, a call into the VM, deoptimisation), with the
/// failure they stand under if no stack can be had for them.
#[derive(Clone, Copy)]
pub(super) struct Deferred {
    pub(super) owed: u64,
    pub(super) hits: u64,
    pub(super) failure: &'static str,
    /// The thread's JVMTI state when the first of them was taken.
    pub(super) state: i32,
}

/// What the sampler remembers of a thread between ticks.
#[derive(Default)]
pub(in crate::sampler) struct ThreadState {
    pub(super) last_cpu: Option<u64>,
    /// `last_cpu` was read by the signal handler (allow `wall.rs`'s `SIGNAL_TAIL_NS`).
    pub(super) cpu_from_signal: bool,
    /// Where the thread's last stack ended.
    pub(super) leaf: Option<NodeId>,
    /// The thread's state ([`state_key`]) when that stack was taken.
    pub(super) leaf_state: i32,
    /// That stack's frame types, root first: a thread that has not run
    /// since still runs its frames so.
    pub(super) leaf_kinds: Vec<u8>,
    /// The last signal walk failed (`leaf` is a synthetic frame).
    pub(super) walk_failed: bool,
    /// `event=wall`: samples whose signal found the thread busy inside the
    /// VM, to count on its stack from JVMTI at the next tick.
    pub(super) deferred: Option<Deferred>,
    pub(super) tid: Tid,
    pub(super) pending: Option<Pending>,
    pub(super) timer: Option<CpuTimer>,
    /// `event=cpu`: the CPU its samples were credited with (`cpu_credit.rs`).
    pub(super) credit: super::cpu_credit::CpuCredit,
    pub(super) timer_failed: bool,
    pub(super) seen_tick: u64,
    pub(super) missing: u32,
}

/// The OS id of `thread`: told by the thread itself at ThreadStart, else read
/// from the VM's structures once.
pub(super) fn resolve_tid(
    jni: &Jni,
    threads: &Threads,
    thread: jthread,
    id: ThreadId,
    tid: &mut Tid,
) -> Option<i32> {
    if let Tid::Unknown = tid {
        *tid = match threads
            .tid(id)
            .or_else(|| hotspot::os_thread_id(jni, thread))
        {
            Some(t) => Tid::Known(t),
            None => Tid::Unavailable,
        };
    }
    match *tid {
        Tid::Known(t) => Some(t),
        _ => None,
    }
}

/// What of a thread's JVMTI state decides whether its last stack still
/// holds: its java.lang.Thread.State and whether it is in native code.
pub(super) fn state_key(state: i32) -> i32 {
    state & (JVMTI_JAVA_LANG_THREAD_STATE_MASK | JVMTI_THREAD_STATE_IN_NATIVE)
}
