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
mod section;
mod tree;

pub use section::write_section;

use crate::threads::ThreadId;
use crate::vm::Jni;
use crate::vthreads::record::{self, Slot};
use jni_sys::{jclass, jint, JNIEnv};
use parking_lot::Mutex;
use std::cell::{Cell, RefCell, UnsafeCell};
use std::sync::atomic::{AtomicBool, AtomicPtr, Ordering::Relaxed};
use std::sync::{Arc, OnceLock};
use tree::{bump, Tree};

/// The probe natives: (name, descriptor, function) for RegisterNatives.
pub fn natives() -> [(&'static str, &'static str, *mut std::ffi::c_void); 3] {
    [
        ("enter", "(I)V", enter as *mut _),
        ("exit", "(I)V", exit as *mut _),
        ("unwind", "(I)V", unwind as *mut _),
    ]
}

/// What `profile` keeps for the JVM's lifetime (its probes stay in the
/// code when a session stops; a resume goes on with the same trees). Owned
/// by the agent; the probes reach it through `agent::host()`.
#[derive(Default)]
pub struct Lifetime {
    /// Recording on/off (a stopped session leaves its data as it was).
    active: AtomicBool,
    /// Every thread that ran a probe, ended ones included.
    threads: Mutex<Vec<Arc<ThreadProfile>>>,
    started: OnceLock<()>,
}

/// The agent's profile lifetime, for the probes (set at the first start):
/// reaching it through `agent::host()` cost a little more per probe.
static LIFE: AtomicPtr<Lifetime> = AtomicPtr::new(std::ptr::null_mut());

/// One call in this many (per thread, on average: see `next_countdown`)
/// measures its probes' cost; with `timing=sampled`, the only calls timed.
pub const SAMPLE_EVERY: u32 = 32;

/// `timing=sampled`, fixed by the first start.
static SAMPLED: OnceLock<bool> = OnceLock::new();

/// Are times taken on one call in [`SAMPLE_EVERY`] only?
pub fn timing_sampled() -> bool {
    SAMPLED.get().copied().unwrap_or(false)
}

/// The same as a plain static for the probes.
static SAMPLED_FAST: AtomicBool = AtomicBool::new(false);

impl Lifetime {
    pub fn start(&'static self, sampled: bool) {
        let fixed = *SAMPLED.get_or_init(|| sampled);
        if fixed != sampled {
            crate::log::error_once(
                "profile timing",
                "profile: timing= kept as the first profile session set it",
            );
        }
        SAMPLED_FAST.store(fixed, Relaxed);
        self.started.get_or_init(clock::init);
        LIFE.store(self as *const Lifetime as *mut Lifetime, Relaxed);
        self.active.store(true, Relaxed);
    }

    pub fn stop(&self) {
        self.active.store(false, Relaxed);
    }

    /// A copy of the list of thread profiles, for a dump.
    pub fn threads(&self) -> Vec<Arc<ThreadProfile>> {
        self.threads.lock().clone()
    }
}

/// One tree of calls: a platform thread's, or one carrier's share of a
/// group of virtual threads (the calls that ran there; a snapshot adds up a
/// group's shares). Written only by the OS thread that made it; dumps read
/// `tree`.
pub struct ThreadProfile {
    pub thread: Option<ThreadId>,
    pub tree: Tree,
    /// Touched only by the OS thread that made it.
    stats: UnsafeCell<Stats>,
}

// SAFETY: `stats` is only ever accessed by the OS thread that made the
// profile (through its callers); other threads read only `tree`, which is
// built for concurrent reading.
unsafe impl Sync for ThreadProfile {}
// SAFETY: as above; the profile is created on its thread and only shared.
unsafe impl Send for ThreadProfile {}

/// What the probes of one OS thread keep per tree: its CPU clock and the
/// sampling of the probes' own cost.
struct Stats {
    /// The OS thread's CPU clock.
    cpu: clock::CpuClock,
    /// Calls until the next one whose probes are measured.
    countdown: u32,
    /// xorshift32 state for the next countdown.
    rng: u32,
    /// The probes' cost after their clock read, in ticks: entry, exit.
    cost: [Mean; 2],
}

/// One Java thread's open calls (the `profile` slot of its record): a
/// platform thread's, or a virtual thread's, which go with it from carrier
/// to carrier.
struct Caller {
    /// The tree its calls count in: its own thread's, or for a virtual
    /// thread the carrier's tree for its group, moved at each mount.
    home: Cell<*const ThreadProfile>,
    /// The thread (a virtual thread's group) the calls count for.
    thread: Option<ThreadId>,
    own: UnsafeCell<Own>,
}

struct Own {
    stack: Vec<Frame>,
    /// Calls entered so far.
    calls: u64,
    /// Added to the home's CPU clock to make this thread's: 0 for a platform
    /// thread; for a virtual thread, its CPU time so far less the carrier's
    /// clock at the mount, so that time unmounted never counts.
    cpu_offset: u64,
    /// A virtual thread's CPU clock when it last unmounted.
    cpu_unmounted: u64,
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

/// The calling thread's caller state and home, the first made on its first
/// probe.
#[inline(always)]
fn current(life: &Lifetime, env: *mut JNIEnv) -> Option<&'static Caller> {
    let record = record::current()?;
    let p = record.get(Slot::Profile).cast::<Caller>();
    if !p.is_null() {
        // SAFETY: set by `first_probe` from a Box the record owns until
        // its thread ends (`end_caller`), after which no probe of that
        // thread runs.
        return Some(unsafe { &*p });
    }
    first_probe(life, env, record)
}

impl Caller {
    /// The tree its calls count in now.
    #[inline(always)]
    fn home(&self) -> &'static ThreadProfile {
        // SAFETY: a profile kept alive in the lifetime's `threads` (never
        // emptied) by the agent, which is never dropped.
        unsafe { &*self.home.get() }
    }
}

/// [`current`] on the thread's first probe: makes its caller state, and a
/// platform thread's profile.
#[cold]
#[inline(never)]
fn first_probe(
    life: &Lifetime,
    env: *mut JNIEnv,
    record: &'static record::Record,
) -> Option<&'static Caller> {
    // SAFETY: `env` is what the VM passed to the probe native that called
    // this (enter, exit, unwind), on this thread: its JNIEnv.
    let jni = unsafe { Jni::from_raw(env) };
    let thread = record.identity(&jni);
    let home = match record.is_virtual() {
        true => carrier_profile(life, thread),
        false => new_profile(life, thread),
    };
    // A virtual thread's CPU clock starts at 0 now.
    let cpu_offset = 0u64.wrapping_sub(stats_of(home).cpu.now(clock::ticks()));
    let caller = Box::new(Caller {
        home: Cell::new(home),
        thread,
        own: UnsafeCell::new(Own {
            stack: Vec::with_capacity(64),
            calls: 0,
            cpu_offset: if record.is_virtual() { cpu_offset } else { 0 },
            cpu_unmounted: 0,
        }),
    });
    let p = Box::into_raw(caller);
    record.set(Slot::Profile, p.cast_const().cast());
    // SAFETY: the record owns it from now on, freed only at its thread's end.
    Some(unsafe { &*p })
}

/// A new profile of the calling OS thread, for `thread`'s calls, kept in
/// the lifetime's list for dumps.
fn new_profile(life: &Lifetime, thread: Option<ThreadId>) -> *const ThreadProfile {
    let profile = Arc::new(ThreadProfile {
        thread,
        tree: Tree::new(),
        stats: UnsafeCell::new(Stats {
            cpu: clock::CpuClock::new(clock::ticks()),
            countdown: SAMPLE_EVERY,
            rng: (clock::ticks() as u32) | 1,
            cost: [Mean::new(), Mean::new()],
        }),
    });
    let p = Arc::as_ptr(&profile);
    life.threads.lock().push(profile);
    p
}

/// The stats of a profile made by the calling OS thread.
#[allow(clippy::mut_from_ref)]
fn stats_of(p: *const ThreadProfile) -> &'static mut Stats {
    // SAFETY: `p` lives in the lifetime's list for good; its stats are
    // touched only by the OS thread that made it, which the callers of this
    // function are (a profile from `new_profile` or `carrier_profile` on
    // this thread), one use at a time.
    unsafe { &mut *(*p).stats.get() }
}

thread_local! {
    /// This carrier's trees for the groups of virtual threads it has run.
    static CARRIER_TREES: RefCell<Vec<(Option<ThreadId>, *const ThreadProfile)>> =
        const { RefCell::new(Vec::new()) };
}

/// The calling carrier's tree for `group`, made the first time.
fn carrier_profile(life: &Lifetime, group: Option<ThreadId>) -> *const ThreadProfile {
    CARRIER_TREES.with(|trees| {
        let mut trees = trees.borrow_mut();
        match trees.iter().find(|t| t.0 == group) {
            Some(&(_, p)) => p,
            None => {
                let p = new_profile(life, group);
                trees.push((group, p));
                p
            }
        }
    })
}

/// What the thread records do with a caller ([`record::Hooks`]).
pub const RECORD_HOOKS: record::Hooks = record::Hooks {
    mounted: Some(mounted),
    unmounting: Some(unmounting),
    ended: end_caller,
};

/// A virtual thread with calls of its own was mounted on this carrier: its
/// open calls move onto this carrier's tree for its group (the same paths,
/// made there if new: a call counts where it began, its times where it
/// ends, and a snapshot adds the group's trees up), and its CPU clock
/// goes on from where it stopped.
fn mounted(p: *const ()) {
    // SAFETY: the record's profile slot holds a Caller of `first_probe`'s;
    // this is the virtual thread's record, current on this carrier now.
    let caller = unsafe { &*p.cast::<Caller>() };
    let Some(life) = life() else { return };
    let home = carrier_profile(life, caller.thread);
    // SAFETY: only the thread the record is current on touches `own`.
    let own = unsafe { &mut *caller.own.get() };
    if home != caller.home.get() {
        // SAFETY: a profile of the lifetime's list (never dropped).
        let tree = unsafe { &(*home).tree };
        let mut parent = tree.node(Tree::ROOT);
        for (i, f) in own.stack.iter_mut().enumerate() {
            match tree.child_of(parent, f.method) {
                Some((_, n)) => {
                    f.node = n as *const tree::Node;
                    parent = n;
                }
                None => {
                    // Tree full: the calls from here up go unrecorded.
                    own.stack.truncate(i);
                    break;
                }
            }
        }
        caller.home.set(home);
    }
    let now = stats_of(home).cpu.now(clock::ticks());
    own.cpu_offset = own.cpu_unmounted.wrapping_sub(now);
}

/// A virtual thread with calls of its own unmounts: its CPU clock stops.
fn unmounting(p: *const ()) {
    // SAFETY: as in `mounted`.
    let caller = unsafe { &*p.cast::<Caller>() };
    // SAFETY: only the thread the record is current on touches `own`.
    let own = unsafe { &mut *caller.own.get() };
    let now = stats_of(caller.home.get()).cpu.now(clock::ticks());
    own.cpu_unmounted = now.wrapping_add(own.cpu_offset);
}

/// The thread ended: its caller state goes (calls still open are never
/// closed: a dump leaves out calls that are running).
///
/// # Safety
/// `p` is a profile slot's value (a Box of `first_probe`'s), ended once.
unsafe fn end_caller(p: *const ()) {
    // SAFETY: the caller's promise.
    drop(unsafe { Box::from_raw(p.cast::<Caller>().cast_mut()) });
}

/// The profile lifetime, whether or not it records.
#[inline(always)]
fn life() -> Option<&'static Lifetime> {
    // SAFETY: set from the agent's `&'static Lifetime` (never dropped).
    unsafe { LIFE.load(Relaxed).as_ref() }
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

/// The profile lifetime while recording.
#[inline(always)]
fn recording() -> Option<&'static Lifetime> {
    let life = LIFE.load(Relaxed);
    // SAFETY: set from the agent's `&'static Lifetime` (never dropped).
    let life = unsafe { life.as_ref() }?;
    life.active.load(Relaxed).then_some(life)
}

extern "system" fn enter(env: *mut JNIEnv, _class: jclass, method: jint) {
    // Two copies of the probe, so that timing every call tests nothing of
    // `timing=sampled` but this.
    match SAMPLED_FAST.load(Relaxed) {
        false => enter_with::<false>(env, method),
        true => enter_with::<true>(env, method),
    }
}

#[inline(always)]
fn enter_with<const SAMPLED_TIMING: bool>(env: *mut JNIEnv, method: jint) {
    let sampled_timing = SAMPLED_TIMING;
    let mut t1 = if sampled_timing { 0 } else { clock::ticks() };
    let Some(life) = recording() else {
        return;
    };
    crate::vm::guard_hot("profile probe", (), || {
        let Some(caller) = current(life, env) else {
            return;
        };
        let tp = caller.home();
        // SAFETY: only the thread whose record holds the caller touches its
        // `own`; the home's stats only the OS thread that made the home,
        // which runs this probe (a virtual thread's home follows it).
        let (own, stats) = unsafe { (&mut *caller.own.get(), &mut *tp.stats.get()) };
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
            t1 = clock::ticks();
        }
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
    })
}

extern "system" fn exit(env: *mut JNIEnv, _class: jclass, method: jint) {
    match SAMPLED_FAST.load(Relaxed) {
        false => leave::<false>(env, method as u32, false),
        true => leave::<true>(env, method as u32, false),
    }
}

extern "system" fn unwind(env: *mut JNIEnv, _class: jclass, method: jint) {
    match SAMPLED_FAST.load(Relaxed) {
        false => leave::<false>(env, method as u32, true),
        true => leave::<true>(env, method as u32, true),
    }
}

#[inline(always)]
fn leave<const SAMPLED_TIMING: bool>(env: *mut JNIEnv, method: u32, exceptional: bool) {
    let sampled_timing = SAMPLED_TIMING;
    let mut t2 = if sampled_timing { 0 } else { clock::ticks() };
    let Some(life) = recording() else {
        return;
    };
    crate::vm::guard_hot("profile probe", (), || {
        let Some(caller) = current(life, env) else {
            return;
        };
        // SAFETY: as in `enter_with`.
        let (own, stats) = unsafe { (&mut *caller.own.get(), &mut *caller.home().stats.get()) };
        // Frames above the one being left missed their exit: an exception from
        // a super() call (no handler may cover it) or a call entered before a
        // `resume`. They close here, as exceptional exits. An exit with no
        // frame of its own (entered while stopped) is ignored.
        let Some(depth) = own.stack.iter().rposition(|f| f.method == method) else {
            return;
        };
        if sampled_timing && own.stack[depth..].iter().any(|f| f.sampled) {
            t2 = clock::ticks();
        }
        while own.stack.len() > depth + 1 {
            close::<SAMPLED_TIMING>(own, stats, t2, true);
        }
        if close::<SAMPLED_TIMING>(own, stats, t2, exceptional) {
            stats.cost[1].add(clock::ticks().saturating_sub(t2));
        }
    })
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
