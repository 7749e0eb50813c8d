//! `profile` mode: exact call counts and times per call path, per thread.
//! Injected code calls `Probe.enter(id)` at method entry, `Probe.exit(id)`
//! before every return and `Probe.unwind(id)` when an exception leaves the
//! method. Each thread keeps a shadow stack of open calls (TPTP's
//! CTicketStack) and its own call tree (`tree`), so the probes take no lock
//! and, after warm-up, allocate nothing.
//!
//! Each probe reads the clock once, at its start. Times exclude the agent's
//! own probe time, reported as overhead: the part of each probe after its
//! clock read is measured on one call in [`SAMPLE_EVERY`] (a second read at
//! the probe's end), and every call is charged the thread's running mean
//! (before: two more reads on every call, ~10 ns each). A call's total is
//! never below the sum of its callees' totals (a mean that overstates a
//! call's probe cost shrinks it to that sum, its self time to 0), so the
//! tree stays consistent however the estimate errs.

use crate::tsc as clock;
pub mod mode;
mod model;
mod tree;

use crate::per_thread::{self, Held, ThreadValue};
use crate::threads::ThreadId;
use crate::vm::{Jni, Native};
use jni_sys::{jclass, jint, JNIEnv};
use parking_lot::Mutex;
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use tree::{bump, Tree};

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

/// What `profile` keeps for the JVM's lifetime (its probes stay in the
/// code when a session stops; a resume goes on with the same trees): the
/// host's state of this type. The probes reach it through their thread's
/// [`ThreadProfile`].
#[derive(Default)]
pub struct Lifetime {
    /// Recording on/off (a stopped session leaves its data as it was).
    active: AtomicBool,
    /// Every thread that ran a probe, ended ones included.
    threads: Mutex<Vec<Arc<ThreadProfile>>>,
    /// `timing=sampled`, fixed by the first start.
    sampled: OnceLock<bool>,
}

/// One call in this many (per thread, on average: see `next_countdown`)
/// measures its probes' cost; with `timing=sampled`, the only calls timed.
pub const SAMPLE_EVERY: u32 = 32;

impl Lifetime {
    /// Starts recording; the first start fixes `timing` (`sampled`) for
    /// the JVM. `rebind` binds the sampled probes when that one is chosen.
    pub fn start(&'static self, sampled: bool, rebind: impl FnOnce()) {
        let mut chosen = false;
        let fixed = *self.sampled.get_or_init(|| {
            chosen = true;
            clock::init();
            sampled
        });
        if chosen && fixed {
            rebind();
        }
        if fixed != sampled {
            crate::log::error_once(
                "profile timing",
                "profile: timing= kept as the first profile session set it",
            );
        }
        self.active.store(true, Relaxed);
    }

    pub fn stop(&self) {
        self.active.store(false, Relaxed);
    }

    /// Are times taken on one call in [`SAMPLE_EVERY`] only?
    pub fn timing_sampled(&self) -> bool {
        self.sampled.get().copied().unwrap_or(false)
    }

    /// A copy of the list of thread profiles, for a dump.
    pub fn threads(&self) -> Vec<Arc<ThreadProfile>> {
        self.threads.lock().clone()
    }
}

/// One thread's profile: its tree, read by dumps, and what only the thread
/// touches. Its thread's record ([`per_thread`]) holds it for the probes.
pub struct ThreadProfile {
    pub thread: Option<ThreadId>,
    pub tree: Tree,
    life: &'static Lifetime,
    /// Touched only by the thread itself.
    own: UnsafeCell<Own>,
}

// SAFETY: `own` is only ever accessed by the thread the profile belongs to
// (through its per-thread record); other threads read only `tree`, which
// is built for concurrent reading.
unsafe impl Sync for ThreadProfile {}
// SAFETY: as above; the profile is created on its thread and only shared.
unsafe impl Send for ThreadProfile {}

/// The profile stays in the lifetime's list when its thread ends.
impl ThreadValue for ThreadProfile {}

struct Own {
    stack: Vec<Frame>,
    cpu: clock::CpuClock,
    /// Calls until the next one whose probes are measured.
    countdown: u32,
    /// xorshift32 state for the next countdown.
    rng: u32,
    /// Calls entered so far.
    calls: u64,
    /// The probes' cost after their clock read, in ticks: entry, exit.
    cost: [Mean; 2],
}

/// A running mean of probe costs in ticks. A sample is at most four times
/// the mean once there are 8 (an interrupt, a page fault), and never more
/// than `cap` ([`MAX_PROBE_NS`]); a probe that did more than its usual
/// work (a new node, the thread's first probe) is not a sample.
struct Mean {
    sum: u64,
    n: u64,
    mean: u64,
    cap: u64,
}

/// The most one probe's cost sample may count for.
const MAX_PROBE_NS: u64 = 1_000;

impl Mean {
    fn new() -> Self {
        Self {
            sum: 0,
            n: 0,
            mean: 0,
            cap: clock::ns_to_ticks(MAX_PROBE_NS),
        }
    }

    fn add(&mut self, sample: u64) {
        let sample = match self.n {
            0..=7 => sample.min(self.cap),
            _ => sample.min(4 * self.mean + 1).min(self.cap),
        };
        self.sum += sample;
        self.n += 1;
        self.mean = self.sum / self.n;
    }
}

/// An open call.
struct Frame {
    /// Its node in the thread's tree (nodes never move).
    node: *const tree::Node,
    method: u32,
    /// Ticks at the entry probe's clock read, and the CPU clock then.
    start: u64,
    start_cpu: u64,
    /// Its probes are measured (a second clock read at each one's end);
    /// with `timing=sampled`, the call is timed (`start` read).
    sampled: bool,
    /// Sums over completed callees: wall and CPU ticks (without probe
    /// time), and probe ticks (theirs and their callees'). With
    /// `timing=sampled`, `child_ticks` holds the calls entered on this
    /// thread before this one instead (its callees are the difference at
    /// exit), and `child_cpu` is unused.
    child_ticks: u64,
    child_cpu: u64,
    child_overhead: u64,
}

/// Runs `f` with the calling thread's profile while profile records; the
/// profile is made on the thread's first probe.
#[inline(always)]
fn on_thread(env: *mut JNIEnv, f: impl FnOnce(&ThreadProfile, &mut Own)) {
    per_thread::with(
        || first_probe(env),
        // Inlined into the probe, as all of its work is: a call here cost
        // ~3 ns per probe (thread CPU time, scripts/profile-bench).
        #[inline(always)]
        |tp: &ThreadProfile| {
            if tp.life.active.load(Relaxed) {
                // SAFETY: only this thread touches its `own` (see ThreadProfile).
                f(tp, unsafe { &mut *tp.own.get() })
            }
        },
    );
}

/// The thread's profile, made on its first probe while profile records.
fn first_probe(env: *mut JNIEnv) -> Option<Held<ThreadProfile>> {
    let host = crate::host::get()?;
    let life = host.state::<Lifetime>();
    if !life.active.load(Relaxed) {
        return None;
    }
    // SAFETY: `env` is what the VM passed to the probe native that called
    // this (enter, exit, unwind), on this thread: its JNIEnv.
    let jni = unsafe { Jni::from_raw(env) };
    let profile = Arc::new(ThreadProfile {
        thread: host.current_thread(&jni),
        tree: Tree::new(),
        life,
        own: UnsafeCell::new(Own {
            stack: Vec::with_capacity(64),
            cpu: clock::CpuClock::new(clock::ticks()),
            countdown: SAMPLE_EVERY,
            rng: (clock::ticks() as u32) | 1,
            calls: 0,
            cost: [Mean::new(), Mean::new()],
        }),
    });
    life.threads.lock().push(profile.clone());
    Some(Held::Shared(profile))
}

/// Calls until the next sampled one: 1 to 2 × [`SAMPLE_EVERY`] - 1, mean
/// [`SAMPLE_EVERY`], drawn at random so that code repeating a cycle of
/// calls (a chain of 22 calls against a period of 32) cannot keep one of
/// them from ever being sampled.
fn next_countdown(rng: &mut u32) -> u32 {
    let mut x = *rng;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    *rng = x;
    1 + x % (2 * SAMPLE_EVERY - 1)
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
            |tp, own| enter_on(tp, own, method, sampled_timing, &mut t1),
        )
    })
}

#[inline(always)]
fn enter_on(tp: &ThreadProfile, own: &mut Own, method: jint, sampled_timing: bool, t1: &mut u64) {
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
    own.countdown -= 1;
    if sampled_timing {
        own.calls += 1;
    }
    let sampled = own.countdown == 0;
    let timed = !sampled_timing || sampled;
    if sampled_timing && sampled {
        *t1 = clock::ticks();
    }
    let t1 = *t1;
    let cpu = if timed { own.cpu.now(t1) } else { 0 };
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
        own.countdown = next_countdown(&mut own.rng);
        let t = clock::ticks();
        if tp.tree.nodes() == nodes {
            own.cost[0].add(t.saturating_sub(t1));
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
            |_, own| leave_on::<SAMPLED_TIMING>(own, method, exceptional, &mut t2),
        )
    })
}

#[inline(always)]
fn leave_on<const SAMPLED_TIMING: bool>(
    own: &mut Own,
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
        close::<SAMPLED_TIMING>(own, t2, true);
    }
    if close::<SAMPLED_TIMING>(own, t2, exceptional) {
        own.cost[1].add(clock::ticks().saturating_sub(t2));
    }
}

/// Pops the top frame at `t2` (ticks when the exit probe began) and adds the
/// call to its node and to its caller's frame. CPU figures are in ticks too.
/// True if the call's probes are measured (the caller then measures the
/// exit probe's cost).
fn close<const SAMPLED_TIMING: bool>(own: &mut Own, t2: u64, exceptional: bool) -> bool {
    let Some(f) = own.stack.pop() else {
        return false;
    };
    if SAMPLED_TIMING {
        return close_sampled(own, f, t2, exceptional);
    }
    let cpu = own.cpu.now(t2);
    // The entry probe after its clock read lies inside the call's interval;
    // the exit probe reads the clock first. Never below the callees' sum.
    let [enter_cost, exit_cost] = [own.cost[0].mean, own.cost[1].mean];
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
fn close_sampled(own: &mut Own, f: Frame, t2: u64, exceptional: bool) -> bool {
    // SAFETY: a frame's node lives as long as the tree (`Frame::node`).
    let n = unsafe { &*f.node };
    if exceptional {
        bump(&n.exceptions, 1);
    }
    let [enter_cost, exit_cost] = [own.cost[0].mean, own.cost[1].mean];
    let own_overhead = enter_cost + exit_cost;
    bump(&n.overhead_self, own_overhead);
    bump(&n.overhead_cum, own_overhead + f.child_overhead);
    if let Some(parent) = own.stack.last_mut() {
        parent.child_overhead += own_overhead + f.child_overhead;
    }
    if f.sampled {
        let cpu = own.cpu.now(t2);
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
