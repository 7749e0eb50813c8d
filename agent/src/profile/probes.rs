//! The probe natives `Probe.enter`, `exit` and `unwind` call, in two
//! copies (every call timed, and `timing=sampled`), and how a call closes:
//! its times, less the estimated probe cost, added to its node and to its
//! caller's frame.

use super::cost::next_countdown;
use super::thread_state::{on_thread, Frame, Own, Stats};
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
    if SAMPLED_TIMING {
        own.calls = own.calls.wrapping_add(1);
    }
    stats.countdown = stats.countdown.wrapping_sub(1);
    if stats.countdown == 0 {
        return enter_measured::<SAMPLED_TIMING>(own, stats, node, method, t1, made);
    }
    let (start, start_cpu) = match SAMPLED_TIMING {
        true => (0, 0),
        false => (t1, stats.cpu.now(t1).wrapping_add(own.cpu_offset)),
    };
    let child_ticks = if SAMPLED_TIMING { own.calls } else { 0 };
    push(
        &mut own.stack,
        node,
        method,
        start,
        start_cpu,
        false,
        child_ticks,
    );
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
    start: u64,
    start_cpu: u64,
    sampled: bool,
    child_ticks: u64,
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
            addr_of_mut!((*f).start).write(start);
            addr_of_mut!((*f).start_cpu).write(start_cpu);
            addr_of_mut!((*f).sampled).write(sampled);
            addr_of_mut!((*f).child_ticks).write(child_ticks);
            addr_of_mut!((*f).child_cpu).write(0);
            addr_of_mut!((*f).child_overhead).write(0);
            stack.set_len(len + 1);
        }
    } else {
        let frame = Frame {
            node: node as *const tree::Node,
            method,
            start,
            start_cpu,
            sampled,
            child_ticks,
            child_cpu: 0,
            child_overhead: 0,
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
    own: &mut Own,
    stats: &mut Stats,
    node: &tree::Node,
    method: u32,
    t1: u64,
    made: bool,
) {
    crate::vm::guard_hot("profile probe", (), || {
        let t1 = if SAMPLED_TIMING { clock::ticks() } else { t1 };
        let cpu = stats.cpu.now(t1).wrapping_add(own.cpu_offset);
        let child_ticks = if SAMPLED_TIMING { own.calls } else { 0 };
        push(&mut own.stack, node, method, t1, cpu, true, child_ticks);
        let every = match SAMPLED_TIMING {
            true => super::SAMPLE_EVERY,
            false => super::MEASURE_EVERY,
        };
        stats.countdown = next_countdown(&mut stats.rng, every);
        let t = clock::ticks();
        if !made {
            stats.cost[0].add(t.saturating_sub(t1));
        }
    })
}

extern "system" fn exit(env: *mut JNIEnv, _class: jclass, method: jint) {
    let t2 = clock::ticks();
    on_thread(
        env,
        #[inline(always)]
        |_, own, stats| leave::<false>(own, stats, method as u32, false, t2),
    )
}

extern "system" fn unwind(env: *mut JNIEnv, _class: jclass, method: jint) {
    let t2 = clock::ticks();
    on_thread(
        env,
        #[inline(always)]
        |_, own, stats| leave::<false>(own, stats, method as u32, true, t2),
    )
}

extern "system" fn exit_sampled(env: *mut JNIEnv, _class: jclass, method: jint) {
    on_thread(
        env,
        #[inline(always)]
        |_, own, stats| leave::<true>(own, stats, method as u32, false, 0),
    )
}

extern "system" fn unwind_sampled(env: *mut JNIEnv, _class: jclass, method: jint) {
    on_thread(
        env,
        #[inline(always)]
        |_, own, stats| leave::<true>(own, stats, method as u32, true, 0),
    )
}

/// The exit probe at `t2` (ticks at its start; unread with
/// `timing=sampled`). The usual case, the top frame's own exit of a call
/// whose probes are not measured, closes here; any other goes to
/// [`leave_slow`].
#[inline(always)]
fn leave<const SAMPLED_TIMING: bool>(
    own: &mut Own,
    stats: &mut Stats,
    method: u32,
    exceptional: bool,
    t2: u64,
) {
    if !matches!(own.stack.last(), Some(f) if f.method == method && !f.sampled) {
        return leave_slow::<SAMPLED_TIMING>(own, stats, method, exceptional, t2);
    }
    if let Some(f) = own.stack.pop() {
        close::<SAMPLED_TIMING>(own, stats, f, t2, exceptional);
    }
}

/// [`leave`] of a measured call, or of a frame below the top.
#[cold]
#[inline(never)]
fn leave_slow<const SAMPLED_TIMING: bool>(
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
        while own.stack.len() > depth + 1 {
            if let Some(f) = own.stack.pop() {
                close::<SAMPLED_TIMING>(own, stats, f, t2, true);
            }
        }
        if let Some(f) = own.stack.pop() {
            if close::<SAMPLED_TIMING>(own, stats, f, t2, exceptional) {
                stats.cost[1].add(clock::ticks().saturating_sub(t2));
            }
        }
    })
}

/// Closes the frame `f`, just popped, at `t2` (ticks when the exit probe
/// began): adds the call to its node and to its caller's frame. CPU figures
/// are in ticks too. True if the call's probes are measured (the caller
/// then measures the exit probe's cost). Never panics (the exit probe's
/// unguarded path): sums wrap, differences saturate.
#[inline(always)]
fn close<const SAMPLED_TIMING: bool>(
    own: &mut Own,
    stats: &mut Stats,
    f: Frame,
    t2: u64,
    exceptional: bool,
) -> bool {
    if SAMPLED_TIMING {
        return close_sampled(own, stats, f, t2, exceptional);
    }
    let cpu = stats.cpu.now(t2).wrapping_add(own.cpu_offset);
    // The entry probe after its clock read lies inside the call's interval;
    // the exit probe reads the clock first. Never below the callees' sum.
    let [enter_cost, exit_cost] = [stats.cost[0].mean, stats.cost[1].mean];
    let inside = enter_cost.wrapping_add(f.child_overhead);
    let cum = t2
        .saturating_sub(f.start)
        .saturating_sub(inside)
        .max(f.child_ticks);
    let cum_cpu = cpu
        .saturating_sub(f.start_cpu)
        .saturating_sub(inside)
        .max(f.child_cpu);
    // SAFETY: a frame's node lives as long as the tree (`Frame::node`).
    let n = unsafe { &*f.node };
    bump(&n.cum_ticks, cum);
    bump(&n.self_ticks, cum.saturating_sub(f.child_ticks));
    bump(&n.cum_cpu, cum_cpu);
    bump(&n.self_cpu, cum_cpu.saturating_sub(f.child_cpu));
    if exceptional {
        bump(&n.exceptions, 1);
    }
    // Estimated from sampled calls (the mean); consistent thanks to the
    // `max` above (before: measured on every call with two more reads).
    let own_overhead = enter_cost.wrapping_add(exit_cost);
    let overhead_cum = own_overhead.wrapping_add(f.child_overhead);
    bump(&n.overhead_self, own_overhead);
    bump(&n.overhead_cum, overhead_cum);
    if let Some(parent) = own.stack.last_mut() {
        parent.child_ticks = parent.child_ticks.wrapping_add(cum);
        parent.child_cpu = parent.child_cpu.wrapping_add(cum_cpu);
        parent.child_overhead = parent.child_overhead.wrapping_add(overhead_cum);
    }
    f.sampled
}

/// [`close`] with `timing=sampled`: every call counts its exceptions and
/// its estimated probe cost; a timed one adds its wall and CPU totals, less
/// the estimated cost of its own probe and of its callees' (each callee
/// charged the mean cost of a probe pair), to the node's timed calls. Self
/// times are made at the dump (`section`).
fn close_sampled(own: &mut Own, stats: &mut Stats, f: Frame, t2: u64, exceptional: bool) -> bool {
    // SAFETY: a frame's node lives as long as the tree (`Frame::node`).
    let n = unsafe { &*f.node };
    if exceptional {
        bump(&n.exceptions, 1);
    }
    let [enter_cost, exit_cost] = [stats.cost[0].mean, stats.cost[1].mean];
    let own_overhead = enter_cost.wrapping_add(exit_cost);
    let overhead_cum = own_overhead.wrapping_add(f.child_overhead);
    bump(&n.overhead_self, own_overhead);
    bump(&n.overhead_cum, overhead_cum);
    if let Some(parent) = own.stack.last_mut() {
        parent.child_overhead = parent.child_overhead.wrapping_add(overhead_cum);
    }
    if f.sampled {
        let cpu = stats.cpu.now(t2).wrapping_add(own.cpu_offset);
        let callees = own.calls.wrapping_sub(f.child_ticks);
        let inside = enter_cost.wrapping_add(callees.wrapping_mul(own_overhead));
        bump(&n.timed, 1);
        bump(
            &n.cum_ticks,
            t2.saturating_sub(f.start).saturating_sub(inside),
        );
        bump(
            &n.cum_cpu,
            cpu.saturating_sub(f.start_cpu).saturating_sub(inside),
        );
    }
    f.sampled
}
