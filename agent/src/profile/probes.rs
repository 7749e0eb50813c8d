//! The probe natives `Probe.enter`, `exit` and `unwind` call, in two
//! copies (every call timed, and `timing=sampled`), and how a call closes:
//! its times, less the estimated probe cost, added to its node and to its
//! caller's frame.

use super::cost::next_countdown;
use super::thread_state::{on_thread, Frame, Own, Stats};
use super::tree::{self, bump, Tree};
use super::{clock, ThreadProfile};
use crate::vm::Native;
use jni_sys::{jclass, jint, JNIEnv};

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

extern "system" fn enter(env: *mut JNIEnv, _class: jclass, method: jint) {
    enter_with::<false>(env, method)
}

/// `enter` of `timing=sampled`: a second copy of the probe, so that timing
/// every call tests nothing of `timing=sampled` but this.
extern "system" fn enter_sampled(env: *mut JNIEnv, _class: jclass, method: jint) {
    enter_with::<true>(env, method)
}

#[inline(always)]
fn enter_with<const SAMPLED_TIMING: bool>(env: *mut JNIEnv, method: jint) {
    let sampled_timing = SAMPLED_TIMING;
    let mut t1 = if sampled_timing { 0 } else { clock::ticks() };
    crate::vm::guard_hot("profile probe", (), || {
        on_thread(
            env,
            #[inline(always)]
            |tp, own, stats| enter_on(tp, (own, stats), method, sampled_timing, &mut t1),
        )
    })
}

#[inline(always)]
fn enter_on(
    tp: &ThreadProfile,
    (own, stats): (&mut Own, &mut Stats),
    method: jint,
    sampled_timing: bool,
    t1: &mut u64,
) {
    let parent = match own.stack.last() {
        // SAFETY: a frame's node lives as long as the tree (`Frame::node`).
        Some(f) => unsafe { &*f.node },
        None => tp.tree.node(Tree::ROOT),
    };
    let nodes = tp.tree.nodes();
    let Some((_, node)) = tp.tree.child_of(parent, method as u32) else {
        return; // tree full: the call goes unrecorded (its exit finds no frame)
    };
    bump(&node.count, 1);
    stats.countdown -= 1;
    if sampled_timing {
        own.calls += 1;
    }
    let sampled = stats.countdown == 0;
    let timed = !sampled_timing || sampled;
    if sampled_timing && sampled {
        *t1 = clock::ticks();
    }
    let t1 = *t1;
    let cpu = match timed {
        true => stats.cpu.now(t1).wrapping_add(own.cpu_offset),
        false => 0,
    };
    own.stack.push(Frame {
        node: node as *const tree::Node,
        method: method as u32,
        start: t1,
        start_cpu: cpu,
        sampled,
        child_ticks: if sampled_timing { own.calls } else { 0 },
        child_cpu: 0,
        child_overhead: 0,
    });
    if sampled {
        stats.countdown = next_countdown(&mut stats.rng);
        let t = clock::ticks();
        if tp.tree.nodes() == nodes {
            stats.cost[0].add(t.saturating_sub(t1));
        }
    }
}

extern "system" fn exit(env: *mut JNIEnv, _class: jclass, method: jint) {
    leave::<false>(env, method as u32, false)
}

extern "system" fn unwind(env: *mut JNIEnv, _class: jclass, method: jint) {
    leave::<false>(env, method as u32, true)
}

extern "system" fn exit_sampled(env: *mut JNIEnv, _class: jclass, method: jint) {
    leave::<true>(env, method as u32, false)
}

extern "system" fn unwind_sampled(env: *mut JNIEnv, _class: jclass, method: jint) {
    leave::<true>(env, method as u32, true)
}

#[inline(always)]
fn leave<const SAMPLED_TIMING: bool>(env: *mut JNIEnv, method: u32, exceptional: bool) {
    let sampled_timing = SAMPLED_TIMING;
    let mut t2 = if sampled_timing { 0 } else { clock::ticks() };
    crate::vm::guard_hot("profile probe", (), || {
        on_thread(
            env,
            #[inline(always)]
            |_, own, stats| leave_on::<SAMPLED_TIMING>(own, stats, method, exceptional, &mut t2),
        )
    })
}

#[inline(always)]
fn leave_on<const SAMPLED_TIMING: bool>(
    own: &mut Own,
    stats: &mut Stats,
    method: u32,
    exceptional: bool,
    t2: &mut u64,
) {
    let sampled_timing = SAMPLED_TIMING;
    // Frames above the one being left missed their exit: an exception from
    // a super() call (no handler may cover it) or a call entered before a
    // `resume`. They close here, as exceptional exits. An exit with no
    // frame of its own (entered while stopped) is ignored.
    let Some(depth) = own.stack.iter().rposition(|f| f.method == method) else {
        return;
    };
    if sampled_timing && own.stack[depth..].iter().any(|f| f.sampled) {
        *t2 = clock::ticks();
    }
    let t2 = *t2;
    while own.stack.len() > depth + 1 {
        close::<SAMPLED_TIMING>(own, stats, t2, true);
    }
    if close::<SAMPLED_TIMING>(own, stats, t2, exceptional) {
        stats.cost[1].add(clock::ticks().saturating_sub(t2));
    }
}

/// Pops the top frame at `t2` (ticks when the exit probe began) and adds the
/// call to its node and to its caller's frame. CPU figures are in ticks too.
/// True if the call's probes are measured (the caller then measures the
/// exit probe's cost).
fn close<const SAMPLED_TIMING: bool>(
    own: &mut Own,
    stats: &mut Stats,
    t2: u64,
    exceptional: bool,
) -> bool {
    let Some(f) = own.stack.pop() else {
        return false;
    };
    if SAMPLED_TIMING {
        return close_sampled(own, stats, f, t2, exceptional);
    }
    let cpu = stats.cpu.now(t2).wrapping_add(own.cpu_offset);
    // The entry probe after its clock read lies inside the call's interval;
    // the exit probe reads the clock first. Never below the callees' sum.
    let [enter_cost, exit_cost] = [stats.cost[0].mean, stats.cost[1].mean];
    let inside = enter_cost + f.child_overhead;
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
    let own_overhead = enter_cost + exit_cost;
    bump(&n.overhead_self, own_overhead);
    bump(&n.overhead_cum, own_overhead + f.child_overhead);
    if let Some(parent) = own.stack.last_mut() {
        parent.child_ticks += cum;
        parent.child_cpu += cum_cpu;
        parent.child_overhead += own_overhead + f.child_overhead;
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
    let own_overhead = enter_cost + exit_cost;
    bump(&n.overhead_self, own_overhead);
    bump(&n.overhead_cum, own_overhead + f.child_overhead);
    if let Some(parent) = own.stack.last_mut() {
        parent.child_overhead += own_overhead + f.child_overhead;
    }
    if f.sampled {
        let cpu = stats.cpu.now(t2).wrapping_add(own.cpu_offset);
        let callees = own.calls - f.child_ticks;
        let inside = enter_cost + callees * own_overhead;
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
