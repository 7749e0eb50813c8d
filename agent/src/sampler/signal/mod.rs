//! Stacks taken in the thread itself, from a signal, with AsyncGetCallTrace:
//! no safepoint bias (compiled code records debug information between
//! safepoints once CompiledMethodLoad events are on), and the sampler thread
//! never waits for the thread it samples.
//!
//! What AsyncGetCallTrace needs, prepared here on the sampler's side:
//! - a jmethodID for every method that can be on a stack: made for the loaded
//!   classes at start and for each class as it is prepared (ClassPrepare);
//! - the ClassLoad event enabled (HotSpot refuses to walk otherwise);
//! - CompiledMethodLoad enabled, which makes the JIT keep debug information
//!   at every instruction, not only at safepoints (as `-XX:+DebugNonSafepoints`).

pub mod cpu_timer;
pub mod diag;
mod frame_kinds;
pub mod handler;
pub mod pending;
mod perf_event;
pub mod recover;
pub mod ring;
mod unwind;

use crate::error::AgentError;
use crate::log;
use crate::threads::ThreadId;
use crate::vm::{async_trace, hotspot, Jni, Jvmti, VmHandle};
use ring::Ring;

/// The signal samples arrive on. HotSpot does not use SIGPROF; if the
/// application handles it, signal sampling is off and the JVMTI sampler runs.
pub const SIGNAL: (i32, &str) = (libc::SIGPROF, "SIGPROF");

/// A ring slot per thread in flight; a ring is never smaller than this.
const MIN_SLOTS: usize = 256;
const MAX_SLOTS: usize = 2048;
/// Address space for the ring's frames (committed only as stacks touch it).
const RING_BYTES: usize = 64 << 20;

/// Everything signal sampling needs, ready to use.
pub struct Setup {
    pub signo: i32,
    pub ring: &'static Ring,
}

/// Makes signal sampling ready for stacks of up to `depth` frames (one more
/// frame is taken, to tell a stack of exactly `depth` from a deeper one).
pub fn setup(vm: VmHandle, jvmti: Jvmti, jni: &Jni, depth: u32) -> Result<Setup, AgentError> {
    async_trace::prepare(vm, jvmti, jni)?;
    let bounds = jvmti
        .current_thread()
        .map(|t| {
            let known = hotspot::learn_stack_bounds(jni, t);
            jni.delete_local_ref(t);
            known
        })
        .unwrap_or(false);
    if !bounds || !hotspot::learn_code_cache() {
        log::warn_once(
            "stack-bounds",
            "sampling: thread stack or code cache bounds unknown in this JVM; walks are not guarded near a stack's end nor retried from the caller",
        );
    } else if !hotspot::learn_thread_layout() {
        log::warn_once(
            "thread-layout",
            "sampling: a thread's state and last Java frame are not found in this JVM's structures; walks of threads in the VM are not retried",
        );
    }
    diag::configure();
    // A fault inside a walk ends the walk, not the JVM (not under
    // -Xcheck:jni, which would warn on stdout that the handler moved).
    let _ = async_trace::guard_walks();
    handler::install(SIGNAL.0, SIGNAL.1)?;
    let ring = ring_for(depth as usize + 1)?;
    handler::set_ring(ring);
    Ok(Setup {
        signo: SIGNAL.0,
        ring,
    })
}

/// The ring in use, or a new one if stacks must be deeper than it holds.
fn ring_for(stride: usize) -> Result<&'static Ring, AgentError> {
    static CURRENT: parking_lot::Mutex<Option<&'static Ring>> = parking_lot::Mutex::new(None);
    let mut current = CURRENT.lock();
    if let Some(r) = *current {
        if r.stride() >= stride {
            return Ok(r);
        }
    }
    let frame = std::mem::size_of::<async_trace::CallFrame>();
    let slots = (RING_BYTES / (stride * frame)).clamp(MIN_SLOTS, MAX_SLOTS);
    let r = Ring::leak(slots, stride)?;
    *current = Some(r);
    Ok(r)
}

/// Who asked for a sample: the thread and the request's number, so a late
/// answer to an older request is recognised. 0 is never a token.
pub fn token(id: ThreadId, seq: u32) -> u64 {
    ((id.0 as u64 + 1) << 32) | seq as u64
}

/// Set in the token of a request to a thread of the JVM itself (a GC
/// worker, a compiler thread): its handler walks no Java stack. Thread ids
/// are the thread table's indexes, far below 2^31, so the bit is free.
const JVM_THREAD: u64 = 1 << 63;

/// [`token`] for a thread of the JVM itself.
pub fn jvm_token(id: ThreadId, seq: u32) -> u64 {
    token(id, seq) | JVM_THREAD
}

/// Was `token` made by [`jvm_token`]?
pub fn is_jvm_token(token: u64) -> bool {
    token & JVM_THREAD != 0
}

pub fn from_token(token: u64) -> Option<(ThreadId, u32)> {
    let hi = ((token & !JVM_THREAD) >> 32) as u32;
    (hi != 0).then(|| (ThreadId(hi - 1), token as u32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_are_never_zero() {
        for (id, seq) in [(0, 0), (0, 7), (41, u32::MAX), (i32::MAX as u32 - 1, 3)] {
            let t = token(ThreadId(id), seq);
            assert_ne!(t, 0);
            assert_eq!(from_token(t), Some((ThreadId(id), seq)));
        }
        assert_eq!(from_token(0), None);
        assert_eq!(from_token(5), None);
        let t = jvm_token(ThreadId(41), u32::MAX);
        assert!(is_jvm_token(t) && !is_jvm_token(token(ThreadId(41), u32::MAX)));
        assert_eq!(from_token(t), Some((ThreadId(41), u32::MAX)));
        assert_eq!(from_token(JVM_THREAD | 5), None);
    }
}
