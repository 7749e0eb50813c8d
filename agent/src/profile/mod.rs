//! `profile` mode: exact call counts and times per call path, per thread.
//! Injected code calls `Probe.enter(id)` at method entry, `Probe.exit(id)`
//! before every return and `Probe.unwind(id)` when an exception leaves the
//! method. Each thread keeps a shadow stack of open calls (TPTP's
//! CTicketStack) and its own call tree (`tree`), so the probes take no lock
//! and, after warm-up, allocate nothing.
//!
//! Times exclude the agent's own probe time (measured per call with the TSC
//! and reported as overhead), so they approximate the uninstrumented program.

mod clock;
pub mod mode;
mod section;
mod tree;

pub use section::write_section;

use crate::threads::ThreadId;
use crate::vm::Jni;
use jni_sys::{jclass, jint, JNIEnv};
use parking_lot::Mutex;
use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
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

impl Lifetime {
    pub fn start(&self) {
        self.started.get_or_init(clock::init);
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

thread_local! {
    static CURRENT: Cell<*const ThreadProfile> = const { Cell::new(std::ptr::null()) };
}

pub struct ThreadProfile {
    pub thread: Option<ThreadId>,
    pub tree: Tree,
    /// Touched only by the thread itself.
    own: UnsafeCell<Own>,
}

// SAFETY: `own` is only ever accessed by the thread the profile belongs to
// (through the CURRENT thread-local); other threads read only `tree`, which
// is built for concurrent reading.
unsafe impl Sync for ThreadProfile {}
// SAFETY: as above; the profile is created on its thread and only shared.
unsafe impl Send for ThreadProfile {}

struct Own {
    stack: Vec<Frame>,
    cpu: clock::CpuClock,
}

/// An open call.
struct Frame {
    node: u32,
    method: u32,
    /// Ticks at the end of the entry probe, and the CPU clock then.
    start: u64,
    start_cpu: u64,
    /// Ticks the entry probe took.
    enter_overhead: u64,
    /// Sums over completed callees: wall and CPU ticks (without probe
    /// time), and probe ticks (theirs and their callees').
    child_ticks: u64,
    child_cpu: u64,
    child_overhead: u64,
}

/// The calling thread's profile, created on its first probe.
fn current(life: &Lifetime, env: *mut JNIEnv) -> &'static ThreadProfile {
    let p = CURRENT.with(Cell::get);
    if !p.is_null() {
        // SAFETY: set below from an Arc kept alive in the agent's
        // `threads` (the agent is never dropped) forever.
        return unsafe { &*p };
    }
    let thread = crate::agent::host().and_then(|a| {
        // SAFETY: `env` is what the VM passed to the probe native that called
        // this (enter, exit, unwind), on this thread: its JNIEnv.
        let jni = unsafe { Jni::from_raw(env) };
        let t = a.jvmti.current_thread().ok()?;
        let id = a.threads.identify(a.jvmti, &jni, t, 0);
        jni.delete_local_ref(t);
        match id? {
            crate::threads::Identity::Java(id) => Some(id),
            crate::threads::Identity::Agent => None,
        }
    });
    let profile = Arc::new(ThreadProfile {
        thread,
        tree: Tree::new(),
        own: UnsafeCell::new(Own {
            stack: Vec::with_capacity(64),
            cpu: clock::CpuClock::new(clock::ticks()),
        }),
    });
    let p = Arc::as_ptr(&profile);
    life.threads.lock().push(profile);
    CURRENT.with(|c| c.set(p));
    // SAFETY: the Arc now lives in `threads`, which never drops entries,
    // in the agent, which is never dropped.
    unsafe { &*p }
}

extern "system" fn enter(env: *mut JNIEnv, _class: jclass, method: jint) {
    let t0 = clock::ticks();
    let Some(life) = crate::agent::host().map(|h| h.profile) else {
        return;
    };
    if !life.active.load(Relaxed) {
        return;
    }
    crate::vm::guard("profile probe", (), || {
        let tp = current(life, env);
        // SAFETY: only this thread touches its `own` (see ThreadProfile).
        let own = unsafe { &mut *tp.own.get() };
        let parent = own.stack.last().map_or(Tree::ROOT, |f| f.node);
        let Some(node) = tp.tree.child(parent, method as u32) else {
            return; // tree full: the call goes unrecorded (its exit finds no frame)
        };
        bump(&tp.tree.node(node).count, 1);
        let t1 = clock::ticks();
        let cpu = own.cpu.now(t1);
        own.stack.push(Frame {
            node,
            method: method as u32,
            start: t1,
            start_cpu: cpu,
            enter_overhead: t1 - t0,
            child_ticks: 0,
            child_cpu: 0,
            child_overhead: 0,
        });
    })
}

extern "system" fn exit(env: *mut JNIEnv, _class: jclass, method: jint) {
    leave(env, method as u32, false)
}

extern "system" fn unwind(env: *mut JNIEnv, _class: jclass, method: jint) {
    leave(env, method as u32, true)
}

#[inline(always)]
fn leave(env: *mut JNIEnv, method: u32, exceptional: bool) {
    let t2 = clock::ticks();
    let Some(life) = crate::agent::host().map(|h| h.profile) else {
        return;
    };
    if !life.active.load(Relaxed) {
        return;
    }
    crate::vm::guard("profile probe", (), || {
        let tp = current(life, env);
        // SAFETY: only this thread touches its `own`.
        let own = unsafe { &mut *tp.own.get() };
        // Frames above the one being left missed their exit: an exception from
        // a super() call (no handler may cover it) or a call entered before a
        // `resume`. They close here, as exceptional exits. An exit with no
        // frame of its own (entered while stopped) is ignored.
        let Some(depth) = own.stack.iter().rposition(|f| f.method == method) else {
            return;
        };
        while own.stack.len() > depth + 1 {
            close(tp, own, t2, true);
        }
        close(tp, own, t2, exceptional);
    })
}

/// Pops the top frame at `t2` (ticks when the exit probe began) and adds the
/// call to its node and to its caller's frame. CPU figures are in ticks too.
fn close(tp: &ThreadProfile, own: &mut Own, t2: u64, exceptional: bool) {
    let Some(f) = own.stack.pop() else { return };
    let cpu = own.cpu.now(t2);
    let cum = t2.saturating_sub(f.start).saturating_sub(f.child_overhead);
    let cum_cpu = cpu
        .saturating_sub(f.start_cpu)
        .saturating_sub(f.child_overhead);
    let n = tp.tree.node(f.node);
    bump(&n.cum_ticks, cum);
    bump(&n.self_ticks, cum.saturating_sub(f.child_ticks));
    bump(&n.cum_cpu, cum_cpu);
    bump(&n.self_cpu, cum_cpu.saturating_sub(f.child_cpu));
    if exceptional {
        bump(&n.exceptions, 1);
    }
    // Measured, not estimated: taking the exit probe's cost to be the entry
    // probe's saved a clock read (~10 ns) but overstated it often enough that
    // callers' times came out below the sum of their callees' (3,000 deep).
    let own_overhead = f.enter_overhead + clock::ticks().saturating_sub(t2);
    bump(&n.overhead_self, own_overhead);
    bump(&n.overhead_cum, own_overhead + f.child_overhead);
    if let Some(parent) = own.stack.last_mut() {
        parent.child_ticks += cum;
        parent.child_cpu += cum_cpu;
        parent.child_overhead += own_overhead + f.child_overhead;
    }
}
