//! What the probes keep per thread: a Java thread's open calls ([`Caller`],
//! in its record, following a virtual thread from carrier to carrier), the
//! tree they count in, a carrier's trees per group of virtual threads, and
//! the per-tree [`Stats`] only the OS thread that made the tree touches.
//! Kept apart from the probes (`probes.rs`), which only run on this state.

use super::cost::Mean;
use super::tree::{self, Tree};
use super::{clock, Lifetime, ThreadProfile, SAMPLE_EVERY};
use crate::per_thread::{self, Held, ThreadValue};
use crate::threads::ThreadId;
use crate::vm::Jni;
use jni_sys::JNIEnv;
use std::cell::{Cell, RefCell, UnsafeCell};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

/// What the probes of one OS thread keep per tree: its CPU clock and the
/// sampling of the probes' own cost.
pub(super) struct Stats {
    /// The OS thread's CPU clock.
    pub(super) cpu: clock::CpuDrift,
    /// Calls until the next one whose probes are measured.
    pub(super) countdown: u32,
    /// xorshift32 state for the next countdown.
    pub(super) rng: u32,
    /// The probes' cost after their clock read, in ticks: entry, exit.
    pub(super) cost: [Mean; 2],
}

impl Stats {
    /// The probes' estimated time inside a call that entered `callees` calls
    /// under it: the rest of its own entry probe after the clock read, and
    /// a probe pair for each callee, at the thread's mean costs.
    #[inline(always)]
    pub(super) fn probes_inside(&self, callees: u64) -> u64 {
        let [enter, exit] = [self.cost[0].mean, self.cost[1].mean];
        enter.wrapping_add(callees.wrapping_mul(enter.wrapping_add(exit)))
    }
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

// SAFETY: slot 0 is profile's alone.
unsafe impl per_thread::Cached for Caller {
    const SLOT: usize = 0;
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
        // Its open calls were not on a CPU while it was unmounted.
        let away = clock::ticks().saturating_sub(own.unmounted_at);
        off_cpu(&mut own.stack, away);
    }

    /// The virtual thread unmounts: its CPU clock stops.
    fn unmounting(&self) {
        // SAFETY: as in `mounted`.
        let own = unsafe { &mut *self.own.get() };
        own.unmounted_at = clock::ticks();
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

pub(super) struct Own {
    pub(super) stack: Vec<Frame>,
    /// Calls entered so far (a call's callees are the calls entered
    /// between its entry and its exit).
    pub(super) calls: u64,
    /// When a virtual thread last unmounted (ticks): the time until its
    /// next mount is not CPU time of its open calls.
    unmounted_at: u64,
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
            cpu: clock::CpuDrift::new(clock::ticks()),
            countdown: SAMPLE_EVERY,
            rng: (clock::ticks() as u32) | 1,
            cost: [Mean::new(), Mean::new()],
        }),
        costs: Default::default(),
    });
    let p = Arc::as_ptr(&profile);
    life.threads.lock().push(profile);
    p
}

/// An open call.
pub(super) struct Frame {
    /// Its node in the thread's tree (nodes never move).
    pub(super) node: *const tree::Node,
    pub(super) method: u32,
    /// Its probes are measured (a second clock read at each one's end);
    /// with `timing=sampled`, the call is timed (`start` read).
    pub(super) sampled: bool,
    /// Ticks at the entry probe's clock read.
    pub(super) start: u64,
    /// Ticks since then that were not the thread's CPU time, as the CPU
    /// clock's reads found them (`off_cpu`): mostly 0.
    pub(super) off_cpu: u64,
    /// [`Own::calls`] once this call was counted.
    pub(super) calls: u64,
    /// Sums over completed callees: wall ticks (without probe time), and of
    /// those the ticks that were not CPU time. Unused with `timing=sampled`.
    pub(super) child_ticks: u64,
    pub(super) child_short: u64,
}

/// At `ticks` (a probe's clock read): the thread's CPU clock read again
/// where it is due, and the time it finds off a CPU added to each open call.
#[inline(always)]
pub(super) fn cpu_clock_at(stats: &mut Stats, stack: &mut [Frame], ticks: u64) {
    let fell = stats.cpu.fell(ticks);
    if fell != 0 {
        off_cpu(stack, fell);
    }
}

/// `ticks` that were not CPU time, added to each open call (the CPU clock
/// was read again, or a virtual thread mounted): rare, at most once per
/// `SYNC_NS` or mount, and as long as the stack is deep.
#[cold]
#[inline(never)]
fn off_cpu(stack: &mut [Frame], ticks: u64) {
    for f in stack {
        f.off_cpu = f.off_cpu.wrapping_add(ticks);
    }
}

/// Runs `f` with the calling thread's tree, open calls and its OS thread's
/// stats while profile records; the caller is made on the thread's first
/// probe. Unguarded (no unwinding frame on the probes' path): the look-up
/// cannot panic, `f` must not either; the first probe's making, which
/// allocates and calls the VM, runs behind the guard ([`first_caller`]).
#[inline(always)]
pub(super) fn on_thread(env: *mut JNIEnv, f: impl FnOnce(&ThreadProfile, &mut Own, &mut Stats)) {
    let caller = match per_thread::find_cached::<Caller>(env) {
        Some(c) => c,
        None => match first_caller(env) {
            Some(c) => c,
            None => return,
        },
    };
    if caller.life.active.load(Relaxed) {
        let tp = caller.home();
        // SAFETY: only the thread whose record holds the caller touches
        // its `own`; the home's stats only the OS thread that made the
        // home, which runs this probe (a virtual thread's home follows it).
        let (own, stats) = unsafe { (&mut *caller.own.get(), &mut *tp.stats.get()) };
        f(tp, own, stats)
    }
}

/// The thread's caller, made now if profile records (behind the guard).
#[cold]
#[inline(never)]
fn first_caller(env: *mut JNIEnv) -> Option<&'static Caller> {
    let made = crate::vm::guard_hot("profile probe", None, || {
        per_thread::env_entry(env);
        per_thread::with(|| first_probe(env), |c: &Caller| c as *const Caller)
    });
    // SAFETY: a value of the thread's record, which lives until the
    // thread's end, after its last probe.
    made.map(|p| unsafe { &*p })
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
    Some(Held::Own(Box::new(Caller {
        home: Cell::new(home),
        thread,
        life,
        own: UnsafeCell::new(Own {
            stack: Vec::with_capacity(64),
            calls: 0,
            unmounted_at: clock::ticks(),
        }),
    })))
}
