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
//!
//! Virtual threads (JDK 21+): a Java thread's open calls ([`Caller`]) are a
//! slot of its record, which follows a virtual thread from carrier to
//! carrier (`per_thread`); the trees stay per OS thread, a carrier keeping
//! one per group of virtual threads it ran ([`CarrierTrees`], in its own
//! record), so the probes never share a tree between threads. At a mount
//! the virtual thread's open calls move onto this carrier's tree (the same
//! paths: a call counts where it began, its times where it ends) and its
//! CPU clock goes on from where it stopped; a dump adds a group's trees up.

use crate::tsc as clock;
pub mod mode;
mod model;
mod tree;

use crate::per_thread::{self, Held, ThreadValue};
use crate::threads::ThreadId;
use crate::vm::{Jni, Native};
use jni_sys::{jclass, jint, JNIEnv};
use parking_lot::Mutex;
use std::cell::{Cell, RefCell, UnsafeCell};
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

/// One tree of calls, read by dumps: a platform thread's, or one carrier's
/// share of a group of virtual threads (a dump adds a group's shares up).
/// Written only by the OS thread that made it.
pub struct ThreadProfile {
    pub thread: Option<ThreadId>,
    pub tree: Tree,
    /// Touched only by the OS thread that made it.
    stats: UnsafeCell<Stats>,
}

// SAFETY: `stats` is only ever accessed by the OS thread that made the
// profile (through the callers whose home it is); other threads read only
// `tree`, which is built for concurrent reading.
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

/// One Java thread's open calls, in its record: a platform thread's, or a
/// virtual thread's, which go with it from carrier to carrier.
struct Caller {
    /// The tree its calls count in: its own thread's, or for a virtual
    /// thread the carrier's tree for its group, moved at each mount.
    home: Cell<*const ThreadProfile>,
    /// The thread (a virtual thread's group) the calls count for.
    thread: Option<ThreadId>,
    life: &'static Lifetime,
    /// Touched only by the thread whose record holds the caller.
    own: UnsafeCell<Own>,
}

/// The caller's state goes with its thread (calls still open are never
/// closed: a dump leaves out calls that are running); its home tree stays
/// in the lifetime's list.
impl ThreadValue for Caller {
    /// The virtual thread was mounted on this carrier: its open calls move
    /// onto this carrier's tree for its group (the same paths, made there
    /// if new), and its CPU clock goes on from where it stopped.
    fn mounted(&self) {
        let home = carrier_profile(self.life, self.thread);
        // SAFETY: only the thread whose record holds the caller touches
        // `own`, and it runs this (its mount, on its new carrier).
        let own = unsafe { &mut *self.own.get() };
        if home != self.home.get() {
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
            self.home.set(home);
        }
        let now = stats_of(home).cpu.now(clock::ticks());
        own.cpu_offset = own.cpu_unmounted.wrapping_sub(now);
    }

    /// The virtual thread unmounts: its CPU clock stops.
    fn unmounting(&self) {
        // SAFETY: as in `mounted`.
        let own = unsafe { &mut *self.own.get() };
        let now = stats_of(self.home.get()).cpu.now(clock::ticks());
        own.cpu_unmounted = now.wrapping_add(own.cpu_offset);
    }
}

impl Caller {
    /// The tree its calls count in now.
    #[inline(always)]
    fn home(&self) -> &'static ThreadProfile {
        // SAFETY: a profile kept alive in the lifetime's `threads` (never
        // emptied), in the host's state, which is never dropped.
        unsafe { &*self.home.get() }
    }
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

/// A carrier's trees for the groups of virtual threads it ran, in its own
/// record (not the mounted virtual thread's).
#[derive(Default)]
struct CarrierTrees(RefCell<Vec<(Option<ThreadId>, *const ThreadProfile)>>);

/// The trees stay in the lifetime's list when the carrier ends.
impl ThreadValue for CarrierTrees {}

/// The calling carrier's tree for `group`, made the first time.
fn carrier_profile(life: &'static Lifetime, group: Option<ThreadId>) -> *const ThreadProfile {
    per_thread::with_carrier(
        || Some(Held::Own(Box::default())),
        |trees: &CarrierTrees| {
            let mut trees = trees.0.borrow_mut();
            match trees.iter().find(|t| t.0 == group) {
                Some(&(_, p)) => p,
                None => {
                    let p = new_profile(life, group);
                    trees.push((group, p));
                    p
                }
            }
        },
    )
    .unwrap_or_else(|| new_profile(life, group))
}

/// A new tree of the calling OS thread, for `thread`'s calls, kept in the
/// lifetime's list for dumps (for good: the returned pointer stays valid).
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
    // function are (a caller's home is always its current OS thread's),
    // one use at a time.
    unsafe { &mut *(*p).stats.get() }
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

/// Runs `f` with the calling thread's tree, open calls and its OS thread's
/// stats while profile records; the caller is made on the thread's first
/// probe.
#[inline(always)]
fn on_thread(env: *mut JNIEnv, f: impl FnOnce(&ThreadProfile, &mut Own, &mut Stats)) {
    per_thread::with(
        || first_probe(env),
        // Inlined into the probe, as all of its work is: a call here cost
        // ~3 ns per probe (thread CPU time, scripts/profile-bench).
        #[inline(always)]
        |caller: &Caller| {
            if caller.life.active.load(Relaxed) {
                let tp = caller.home();
                // SAFETY: only the thread whose record holds the caller
                // touches its `own`; the home's stats only the OS thread
                // that made the home, which runs this probe (a virtual
                // thread's home follows it).
                let (own, stats) = unsafe { (&mut *caller.own.get(), &mut *tp.stats.get()) };
                f(tp, own, stats)
            }
        },
    );
}

/// The thread's caller state, made on its first probe while profile
/// records, with a platform thread's tree.
fn first_probe(env: *mut JNIEnv) -> Option<Held<Caller>> {
    let host = crate::host::get()?;
    let life = host.state::<Lifetime>();
    if !life.active.load(Relaxed) {
        return None;
    }
    // SAFETY: `env` is what the VM passed to the probe native that called
    // this (enter, exit, unwind), on this thread: its JNIEnv.
    let jni = unsafe { Jni::from_raw(env) };
    let thread = host.current_thread(&jni);
    let is_virtual = per_thread::on_virtual_thread();
    let home = match is_virtual {
        true => carrier_profile(life, thread),
        false => new_profile(life, thread),
    };
    // A virtual thread's CPU clock starts at 0 now.
    let cpu_offset = match is_virtual {
        true => 0u64.wrapping_sub(stats_of(home).cpu.now(clock::ticks())),
        false => 0,
    };
    Some(Held::Own(Box::new(Caller {
        home: Cell::new(home),
        thread,
        life,
        own: UnsafeCell::new(Own {
            stack: Vec::with_capacity(64),
            calls: 0,
            cpu_offset,
            cpu_unmounted: 0,
        }),
    })))
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
