//! The probe natives `Probe.enter`, `exit` and `unwind` call, in two
//! copies (every call timed, and `timing=sampled`), and how a call closes:
//! its time, less the estimated probe cost, added to its node and to its
//! caller's frame (CPU time differs from it only where a read of the CPU
//! clock says so).

use super::cost::next_countdown;
use super::thread_state::{cpu_clock_at, on_thread, Frame, Own, Stats};
use super::tree::{self, bump};
use super::{clock, ThreadProfile};
use crate::vm::Native;
use jni_sys::{jclass, jint, JNIEnv};
use std::ptr::addr_of_mut;

/// The probe natives: (name, descriptor, function) for RegisterNatives,
/// timing every call. `timing=sampled` binds [`natives_sampled`] instead
/// (the JVM then calls those: no flag on the probes' path).
pub fn natives() -> [Native; 3] {
    [
        ("enter", "(I)V", enter as *mut _),
        ("exit", "(I)V", exit as *mut _),
        ("unwind", "(I)V", unwind as *mut _),
    ]
}

/// The probe natives of `timing=sampled`.
pub fn natives_sampled() -> [Native; 3] {
    [
        ("enter", "(I)V", enter_sampled as *mut _),
        ("exit", "(I)V", exit_sampled as *mut _),
        ("unwind", "(I)V", unwind_sampled as *mut _),
    ]
}

// The probes' path runs without an unwinding guard (`catch_unwind`, which
// kept the whole probe out of line): everything on it is written not to
// panic — no indexing, no `assert`, no allocation, arithmetic that wraps or
// saturates — and every step that could (making the thread's caller, a new
// node, a longer stack, the sampled calls' cost measurement, an exit that
// is not the top frame's) is a cold function that runs behind the guard.

extern "system" fn enter(env: *mut JNIEnv, _class: jclass, method: jint) {
    let t1 = clock::ticks();
    on_thread(
        env,
        #[inline(always)]
        |tp, own, stats| enter_on::<false>(tp, own, stats, method as u32, t1),
    )
}

/// `enter` of `timing=sampled`: a second copy of the probe, so that timing
/// every call tests nothing of `timing=sampled` but this.
extern "system" fn enter_sampled(env: *mut JNIEnv, _class: jclass, method: jint) {
    on_thread(
        env,
        #[inline(always)]
        |tp, own, stats| enter_on::<true>(tp, own, stats, method as u32, 0),
    )
}

/// The entry probe at `t1` (ticks at its start; unread with
/// `timing=sampled`): the call counted on its node, its frame pushed.
#[inline(always)]
fn enter_on<const SAMPLED_TIMING: bool>(
    tp: &ThreadProfile,
    own: &mut Own,
    stats: &mut Stats,
    method: u32,
    t1: u64,
) {
    let parent = match own.stack.last() {
        // SAFETY: a frame's node lives as long as the tree (`Frame::node`).
        Some(f) => unsafe { &*f.node },
        None => match tp.tree.root() {
            Some(r) => r,
            None => return,
        },
    };
    let (node, made) = match tp.tree.find_child(parent, method) {
        Some(n) => (n, false),
        None => match new_child(tp, parent, method) {
            Some(n) => (n, true),
            None => return, // tree full: the call goes unrecorded (its exit finds no frame)
        },
    };
    bump(&node.count, 1);
    own.calls = own.calls.wrapping_add(1);
    stats.countdown = stats.countdown.wrapping_sub(1);
    if stats.countdown == 0 {
        return enter_measured::<SAMPLED_TIMING>(tp, own, stats, node, method, t1, made);
    }
    if !SAMPLED_TIMING {
        cpu_clock_at(stats, &mut own.stack, t1);
    }
    let start = if SAMPLED_TIMING { 0 } else { t1 };
    let calls = own.calls;
    push(&mut own.stack, node, method, false, start, calls);
}

/// A new child of `parent` (allocates: behind the guard).
#[cold]
#[inline(never)]
fn new_child<'t>(
    tp: &'t ThreadProfile,
    parent: &tree::Node,
    method: u32,
) -> Option<&'t tree::Node> {
    crate::vm::guard_hot("profile probe", None, || {
        tp.tree.child_of(parent, method).map(|(_, n)| n)
    })
}

/// Pushes a frame, written in place field by field. A frame built aside
/// and copied in whole (what `Vec::push` of a `Frame` compiles to here)
/// made the copy's wide loads wait on the narrow stores that built it:
/// 42% of the entry probe's samples (`perf annotate`). A full stack grows
/// behind the guard (a frame it could not push leaves the call
/// unrecorded: its exit finds no frame).
#[inline(always)]
fn push(
    stack: &mut Vec<Frame>,
    node: &tree::Node,
    method: u32,
    sampled: bool,
    start: u64,
    calls: u64,
) {
    let len = stack.len();
    if len < stack.capacity() {
        let f = stack.as_mut_ptr();
        // SAFETY: the slot at `len` is within capacity and unused; every
        // field is written through its own place before the slot counts.
        unsafe {
            let f = f.add(len);
            addr_of_mut!((*f).node).write(node as *const tree::Node);
            addr_of_mut!((*f).method).write(method);
            addr_of_mut!((*f).sampled).write(sampled);
            addr_of_mut!((*f).start).write(start);
            addr_of_mut!((*f).off_cpu).write(0);
            addr_of_mut!((*f).calls).write(calls);
            addr_of_mut!((*f).child_ticks).write(0);
            addr_of_mut!((*f).child_short).write(0);
            stack.set_len(len + 1);
        }
    } else {
        let frame = Frame {
            node: node as *const tree::Node,
            method,
            sampled,
            start,
            off_cpu: 0,
            calls,
            child_ticks: 0,
            child_short: 0,
        };
        push_growing(stack, frame);
    }
}

#[cold]
#[inline(never)]
fn push_growing(stack: &mut Vec<Frame>, f: Frame) {
    crate::vm::guard_hot("profile probe", (), || stack.push(f))
}

/// The entry of a call whose probes are measured (one in
/// [`MEASURE_EVERY`](super::MEASURE_EVERY)); with `timing=sampled`, the
/// only calls timed (one in [`SAMPLE_EVERY`](super::SAMPLE_EVERY)). `made`: the probe made the call's node (not a sample of
/// the probe's usual cost).
#[cold]
#[inline(never)]
fn enter_measured<const SAMPLED_TIMING: bool>(
    tp: &ThreadProfile,
    own: &mut Own,
    stats: &mut Stats,
    node: &tree::Node,
    method: u32,
    t1: u64,
    made: bool,
) {
    crate::vm::guard_hot("profile probe", (), || {
        let t1 = if SAMPLED_TIMING { clock::ticks() } else { t1 };
        cpu_clock_at(stats, &mut own.stack, t1);
        let calls = own.calls;
        push(&mut own.stack, node, method, true, t1, calls);
        let every = match SAMPLED_TIMING {
            true => super::SAMPLE_EVERY,
            false => super::MEASURE_EVERY,
        };
        stats.countdown = next_countdown(&mut stats.rng, every);
        let t = clock::ticks();
        if !made {
            stats.cost[0].add(t.saturating_sub(t1));
            tp.publish_costs(stats);
        }
    })
}

extern "system" fn exit(env: *mut JNIEnv, _class: jclass, method: jint) {
    let t2 = clock::ticks();
    on_thread(
        env,
        #[inline(always)]
        |tp, own, stats| leave::<false>(tp, own, stats, method as u32, false, t2),
    )
}

extern "system" fn unwind(env: *mut JNIEnv, _class: jclass, method: jint) {
    let t2 = clock::ticks();
    on_thread(
        env,
        #[inline(always)]
        |tp, own, stats| leave::<false>(tp, own, stats, method as u32, true, t2),
    )
}

extern "system" fn exit_sampled(env: *mut JNIEnv, _class: jclass, method: jint) {
    on_thread(
        env,
        #[inline(always)]
        |tp, own, stats| leave::<true>(tp, own, stats, method as u32, false, 0),
    )
}

extern "system" fn unwind_sampled(env: *mut JNIEnv, _class: jclass, method: jint) {
    on_thread(
        env,
        #[inline(always)]
        |tp, own, stats| leave::<true>(tp, own, stats, method as u32, true, 0),
    )
}

/// The exit probe at `t2` (ticks at its start; unread with
/// `timing=sampled`). The usual case, the top frame's own exit of a call
/// whose probes are not measured, closes here; any other goes to
/// [`leave_slow`].
#[inline(always)]
fn leave<const SAMPLED_TIMING: bool>(
    tp: &ThreadProfile,
    own: &mut Own,
    stats: &mut Stats,
    method: u32,
    exceptional: bool,
    t2: u64,
) {
    if !matches!(own.stack.last(), Some(f) if f.method == method && !f.sampled) {
        return leave_slow::<SAMPLED_TIMING>(tp, own, stats, method, exceptional, t2);
    }
    if !SAMPLED_TIMING {
        cpu_clock_at(stats, &mut own.stack, t2);
    }
    close_top::<SAMPLED_TIMING>(own, stats, t2, exceptional);
}

/// [`leave`] of a measured call, or of a frame below the top.
#[cold]
#[inline(never)]
fn leave_slow<const SAMPLED_TIMING: bool>(
    tp: &ThreadProfile,
    own: &mut Own,
    stats: &mut Stats,
    method: u32,
    exceptional: bool,
    t2: u64,
) {
    crate::vm::guard_hot("profile probe", (), || {
        // Frames above the one being left missed their exit: an exception
        // from a super() call (no handler may cover it) or a call entered
        // before a `resume`. They close here, as exceptional exits. An exit
        // with no frame of its own (entered while stopped) is ignored.
        let Some(depth) = own.stack.iter().rposition(|f| f.method == method) else {
            return;
        };
        let mut t2 = t2;
        if SAMPLED_TIMING && own.stack[depth..].iter().any(|f| f.sampled) {
            t2 = clock::ticks();
        }
        cpu_clock_at(stats, &mut own.stack, t2);
        while own.stack.len() > depth + 1 {
            close_top::<SAMPLED_TIMING>(own, stats, t2, true);
        }
        if close_top::<SAMPLED_TIMING>(own, stats, t2, exceptional) {
            stats.cost[1].add(clock::ticks().saturating_sub(t2));
            tp.publish_costs(stats);
        }
    })
}

/// Closes the top frame at `t2` and pops it; true if the call's probes are
/// measured (the caller then measures the exit probe's cost). The frame is
/// read where it is (popping it first copied it aside, through the stack).
#[inline(always)]
fn close_top<const SAMPLED_TIMING: bool>(
    own: &mut Own,
    stats: &mut Stats,
    t2: u64,
    exceptional: bool,
) -> bool {
    let calls = own.calls;
    let Some((f, rest)) = own.stack.split_last_mut() else {
        return false;
    };
    let measured = match SAMPLED_TIMING {
        true => close_sampled(stats, calls, f, t2, exceptional),
        false => close(stats, calls, f, rest.last_mut(), t2, exceptional),
    };
    let depth = own.stack.len() - 1;
    own.stack.truncate(depth);
    measured
}

/// Closes the frame `f` at `t2` (ticks when the exit probe began): adds the
/// call's time to its node and to its caller's frame. Never panics (the exit
/// probe's unguarded path): sums wrap, differences saturate.
///
/// What lies inside the call's interval and is not its own: the rest of its
/// entry probe after the clock read, and a probe pair for each call entered
/// since (its callees, however deep: `calls` less the frame's), each
/// charged the thread's mean costs. The thread's CPU time is the time
/// unless a read of the CPU clock found time off a CPU during the call or a
/// callee ([`cpu_short`]), so the usual exit does three sums.
#[inline(always)]
fn close(
    stats: &Stats,
    calls: u64,
    f: &Frame,
    mut parent: Option<&mut Frame>,
    t2: u64,
    exceptional: bool,
) -> bool {
    let inside = stats.probes_inside(calls.wrapping_sub(f.calls));
    let raw = t2.saturating_sub(f.start);
    // Never below the callees' sum.
    let cum = raw.saturating_sub(inside).max(f.child_ticks);
    // SAFETY: a frame's node lives as long as the tree (`Frame::node`).
    let n = unsafe { &*f.node };
    bump(&n.cum_ticks, cum);
    bump(&n.self_ticks, cum.saturating_sub(f.child_ticks));
    if exceptional {
        bump(&n.exceptions, 1);
    }
    if f.off_cpu != 0 || f.child_short != 0 {
        cpu_short(n, f, raw.saturating_sub(inside), cum, parent.as_deref_mut());
    }
    if let Some(parent) = parent {
        parent.child_ticks = parent.child_ticks.wrapping_add(cum);
    }
    f.sampled
}

/// The ticks of a closing call's total `cum` that were not CPU time, added
/// to its node and its caller's frame: the call's CPU time is its time
/// (`own`: its wall time less the probes' inside it) less its time off a
/// CPU, never below its callees' CPU time nor above `cum`. Its own part
/// (the callees' shortfall taken off) is a signed sum
/// (`Node::cpu_short_self`).
#[cold]
#[inline(never)]
fn cpu_short(n: &tree::Node, f: &Frame, own: u64, cum: u64, parent: Option<&mut Frame>) {
    let cpu = own.saturating_sub(f.off_cpu);
    let child_cpu = f.child_ticks.saturating_sub(f.child_short);
    let short = cum - cpu.max(child_cpu).min(cum);
    bump(&n.cpu_short_cum, short);
    bump(&n.cpu_short_self, short.wrapping_sub(f.child_short));
    if let Some(p) = parent {
        p.child_short = p.child_short.wrapping_add(short);
    }
}

/// [`close`] with `timing=sampled`: every call counts its exceptions; a
/// timed one adds its wall time, less the estimated cost of its own probe
/// and of its callees' (each callee charged the mean cost of a probe pair),
/// and of that the ticks that were not CPU time, to the node's timed calls.
/// Self times and the probes' own time are made at the dump (`reported.rs`).
fn close_sampled(stats: &Stats, calls: u64, f: &Frame, t2: u64, exceptional: bool) -> bool {
    // SAFETY: a frame's node lives as long as the tree (`Frame::node`).
    let n = unsafe { &*f.node };
    if exceptional {
        bump(&n.exceptions, 1);
    }
    if f.sampled {
        let inside = stats.probes_inside(calls.wrapping_sub(f.calls));
        let raw = t2.saturating_sub(f.start);
        let raw_cpu = raw.saturating_sub(f.off_cpu);
        let wall = raw.saturating_sub(inside);
        let cpu = raw_cpu.saturating_sub(inside);
        bump(&n.timed, 1);
        bump(&n.cum_ticks, wall);
        bump(&n.cpu_short_cum, wall - cpu);
    }
    f.sampled
}
