//! Every Java thread the agent has seen, told apart by identity: each thread
//! object carries a JVMTI tag holding its registry index + 1, so two threads
//! with the same name stay two entries, and a thread that already ended can
//! still be recognised from a stack trace taken while it was alive.
//!
//! Virtual threads (JDK 21+) are grouped instead, since there can be
//! millions: a virtual thread's object carries its group's tag, and the
//! group is one record named by [`group_name`] (unnamed ones together as
//! `[virtual threads]`), counting the virtual threads that joined it. Every
//! mode writes a group as the one `<thread>` it is (docs/VIRTUAL_THREADS.md).

use crate::clock;
use crate::vm::{jthread, Jni, Jvmti};
use parking_lot::Mutex;
use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

pub mod jvm_kind;
pub use jvm_kind::JvmKind;

/// Tag of the agent's own threads: never registered, never sampled.
pub use crate::vm::AGENT_THREAD_TAG;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct ThreadId(pub u32);

#[derive(Clone, Debug)]
pub struct ThreadRecord {
    pub name: String,
    /// CLOCK_MONOTONIC ns of the thread's start; 0 if it predates the agent
    /// (then a snapshot counts it from the session's start).
    pub start_ns: u64,
    /// Set at ThreadEnd.
    pub end_ns: Option<u64>,
    /// CPU time in ns, as last read (final once the thread ended).
    pub cpu_ns: u64,
    /// The OS thread id, when the thread told it (ThreadStart, VMInit); 0 if not.
    pub tid: i32,
    /// The Java thread id (`Thread.getId()`), read by `refresh_live` (a heap
    /// dump finds the thread's object by it).
    pub java_id: Option<i64>,
    /// A group of virtual threads: how many joined it (0: a platform thread).
    pub virtual_threads: u64,
    /// Of those, how many were seen to end (while virtual threads are followed).
    pub virtual_ended: u64,
    /// A group of ended threads folded by name (`ended=N`): how many (0: a
    /// thread).
    pub ended_threads: u64,
    /// Such a group's threads' lifetimes, summed.
    pub lived_ns: u64,
    /// An ended thread folded into a group: the group (its data goes there).
    pub folded_into: Option<ThreadId>,
    /// A thread of the JVM itself (no Java thread), sampled with
    /// `jvmthreads`: what it does. `None` on a Java thread.
    pub jvm: Option<JvmKind>,
}

impl ThreadRecord {
    /// A platform thread's record, as the registry makes it.
    pub fn platform(name: String, start_ns: u64) -> Self {
        ThreadRecord {
            name,
            start_ns,
            end_ns: None,
            cpu_ns: 0,
            tid: 0,
            java_id: None,
            virtual_threads: 0,
            virtual_ended: 0,
            ended_threads: 0,
            lived_ns: 0,
            folded_into: None,
            jvm: None,
        }
    }

    /// An empty group of ended threads named `name` (filled as threads
    /// fold into it).
    pub fn ended_group(name: String, start_ns: u64) -> Self {
        ThreadRecord::platform(name, start_ns)
    }

    /// Is this a group of ended threads?
    pub fn is_ended_group(&self) -> bool {
        self.ended_threads > 0
    }

    /// Is this a group of virtual threads?
    pub fn is_group(&self) -> bool {
        self.virtual_threads > 0
    }

    /// A thread named `name`, alive, seen from the start, 7 ns of CPU (the
    /// writers' tests).
    #[cfg(test)]
    pub fn named(name: &str) -> Self {
        ThreadRecord {
            name: name.into(),
            start_ns: 0,
            end_ns: None,
            cpu_ns: 7,
            tid: 0,
            java_id: None,
            virtual_threads: 0,
            virtual_ended: 0,
            ended_threads: 0,
            lived_ns: 0,
            folded_into: None,
            jvm: None,
        }
    }

    pub fn is_alive(&self) -> bool {
        self.end_ns.is_none()
    }
    /// Did the thread live during `window` (start, end ns)?
    pub fn lived_in(&self, window: (u64, u64)) -> bool {
        self.start_ns < window.1 && self.end_ns.is_none_or(|e| e > window.0)
    }

    /// Nanoseconds the thread lived within `window` (a group of ended
    /// threads: their whole lives, summed).
    pub fn elapsed_ns(&self, window: (u64, u64)) -> u64 {
        if self.ended_threads > 0 {
            return self.lived_ns;
        }
        let end = self.end_ns.unwrap_or(window.1).min(window.1);
        end.saturating_sub(self.start_ns.max(window.0))
    }
}

pub enum Identity {
    Agent,
    Java(ThreadId),
}

#[derive(Default)]
pub struct Threads {
    /// By id. A folded thread's is its group's placeholder, shared by all
    /// the group's threads (`Ended::placeholder`): the table keeps a pointer
    /// per ended thread, not a record.
    records: Mutex<Vec<Arc<ThreadRecord>>>,
    /// Groups of virtual threads by name ([`group_name`]).
    groups: Mutex<HashMap<String, ThreadId>>,
    /// Ended threads by name pattern: which are kept, and the groups the
    /// others fold into (docs/THREADS.md).
    ended: Mutex<Ended>,
    /// Bumped each time a thread is folded: a mode that keeps data per
    /// thread moves the folded threads' into their groups when it changed.
    folds: AtomicU64,
}

/// The group of ended threads whose patterns come past [`MAX_GROUPS`].
pub const ENDED_GROUP: &str = "[ended threads]";

/// The most groups of named virtual threads; the names of more join
/// [`VIRTUAL_GROUP`].
pub const MAX_GROUPS: usize = 256;

/// The group of unnamed virtual threads (and of names past [`MAX_GROUPS`]).
pub const VIRTUAL_GROUP: &str = "[virtual threads]";

/// The group a virtual thread named `name` joins: its name with each run of
/// ASCII digits written `#` (`handler-17` and `handler-4` are `handler-#`,
/// as a thread factory numbers them), or [`VIRTUAL_GROUP`] when unnamed.
pub fn group_name(name: &str) -> String {
    if name.is_empty() {
        return VIRTUAL_GROUP.to_owned();
    }
    let mut out = String::with_capacity(name.len());
    let mut in_digits = false;
    for c in name.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

impl Threads {
    /// The identity of `thread`, registering it (start = `start_ns`, 0 when
    /// unknown) if it has none yet. Errors (e.g. the VM is shutting down) come
    /// back as `None`.
    pub fn identify(
        &self,
        jvmti: Jvmti,
        jni: &Jni,
        thread: jthread,
        start_ns: u64,
    ) -> Option<Identity> {
        let tag = jvmti.tag(thread).ok()?;
        if tag != 0 {
            return Some(Self::from_tag(tag));
        }
        // Slow path, once per thread: check again under the lock so that the
        // thread's own ThreadStart and the sampler cannot both register it.
        let name = jvmti
            .thread_info(jni, thread)
            .map(|i| i.name)
            .unwrap_or_default();
        if jni.is_virtual_thread(thread) {
            return self.join_group(jvmti, thread, &name);
        }
        let mut records = self.records.lock();
        let tag = jvmti.tag(thread).ok()?;
        if tag != 0 {
            return Some(Self::from_tag(tag));
        }
        let id = ThreadId(records.len() as u32);
        jvmti.set_tag(thread, id.0 as i64 + 1).ok()?;
        records.push(Arc::new(ThreadRecord::platform(name, start_ns)));
        Some(Identity::Java(id))
    }

    /// A virtual thread named `name`, not tagged yet: it joins its group
    /// (made now if new) and carries the group's tag from then on.
    fn join_group(&self, jvmti: Jvmti, thread: jthread, name: &str) -> Option<Identity> {
        let mut groups = self.groups.lock();
        let mut records = self.records.lock();
        let tag = jvmti.tag(thread).ok()?;
        if tag != 0 {
            return Some(Self::from_tag(tag));
        }
        let mut key = group_name(name);
        if !groups.contains_key(&key) && groups.len() >= MAX_GROUPS {
            key = VIRTUAL_GROUP.to_owned();
        }
        let id = match groups.get(&key) {
            Some(&id) => id,
            None => {
                let id = ThreadId(records.len() as u32);
                records.push(Arc::new(ThreadRecord::platform(
                    key.clone(),
                    clock::now_ns(),
                )));
                groups.insert(key, id);
                id
            }
        };
        jvmti.set_tag(thread, id.0 as i64 + 1).ok()?;
        let r = Arc::make_mut(&mut records[id.0 as usize]);
        r.virtual_threads += 1;
        r.end_ns = None;
        Some(Identity::Java(id))
    }

    /// A virtual thread ended (VirtualThreadEnd, while virtual threads are
    /// followed): its group counts one fewer alive, and ends with its last.
    pub fn virtual_ended(&self, jvmti: Jvmti, thread: jthread) {
        let tag = jvmti.tag(thread).unwrap_or(0);
        if tag == 0 {
            return; // never seen by a mode
        }
        let Identity::Java(id) = Self::from_tag(tag) else {
            return;
        };
        let mut records = self.records.lock();
        if let Some(r) = records.get_mut(id.0 as usize).filter(|r| r.is_group()) {
            let r = Arc::make_mut(r);
            r.virtual_ended += 1;
            if r.virtual_ended >= r.virtual_threads {
                r.end_ns = Some(clock::now_ns());
            }
        }
    }

    fn from_tag(tag: i64) -> Identity {
        if tag == AGENT_THREAD_TAG {
            Identity::Agent
        } else {
            Identity::Java(ThreadId((tag - 1) as u32))
        }
    }

    /// Records the end of the current thread (called from its ThreadEnd event).
    pub fn thread_ended(&self, jvmti: Jvmti, jni: &Jni, thread: jthread) {
        let Some(Identity::Java(id)) = self.identify(jvmti, jni, thread, 0) else {
            return;
        };
        let cpu = jvmti.thread_cpu_time(thread).ok();
        let name = jvmti.thread_info(jni, thread).ok().map(|i| i.name);
        let now = clock::now_ns();
        let mut ended = self.ended.lock();
        let mut records = self.records.lock();
        if let Some(r) = own(&mut records, id) {
            if let Some(cpu) = cpu {
                r.cpu_ns = cpu as u64;
            }
            if let Some(name) = name {
                r.name = name;
            }
        }
        self.end(&mut ended, &mut records, id, now);
    }

    /// The calling thread's id, registered if new (a probe's first call on
    /// a thread); `None` for the agent's own threads or when the VM refuses.
    pub fn current(&self, jvmti: Jvmti, jni: &Jni) -> Option<ThreadId> {
        let t = jvmti.current_thread().ok()?;
        let id = self.identify(jvmti, jni, t, 0);
        jni.delete_local_ref(t);
        match id? {
            Identity::Java(id) => Some(id),
            Identity::Agent => None,
        }
    }

    /// Refreshes CPU time and name of every live thread (for a dump), and marks
    /// threads that vanished without a ThreadEnd as ended now.
    pub fn refresh_live(&self, jvmti: Jvmti, jni: &Jni) {
        let Ok(live) = jvmti.all_threads() else {
            return;
        };
        let mut seen = Vec::new();
        for &thread in &live {
            if let Some(Identity::Java(id)) = self.identify(jvmti, jni, thread, 0) {
                let cpu = jvmti.thread_cpu_time(thread).ok();
                let name = jvmti.thread_info(jni, thread).ok().map(|i| i.name);
                // Read once per thread, here rather than at every thread's
                // start (only a heap dump asks for it); before the lock: JNI
                // may wait for a safepoint.
                let known = self.records.lock()[id.0 as usize].java_id.is_some();
                let java_id = (!known).then(|| jni.java_thread_id(thread)).flatten();
                let mut records = self.records.lock();
                // A live thread is never folded: always its own record.
                if let Some(r) = own(&mut records, id) {
                    if java_id.is_some() {
                        r.java_id = java_id;
                    }
                    if let Some(cpu) = cpu {
                        r.cpu_ns = cpu as u64;
                    }
                    if let Some(name) = name {
                        r.name = name;
                    }
                }
                seen.push(id);
            }
            jni.delete_local_ref(thread);
        }
        let now = clock::now_ns();
        let mut ended = self.ended.lock();
        let mut records = self.records.lock();
        for i in 0..records.len() {
            let r = &records[i];
            // The JVM's own threads are not among them either: the sampler
            // ends them when they leave /proc; their CPU is read here by tid.
            if r.jvm.is_some() {
                if r.end_ns.is_none() {
                    match clock::thread_cpu_ns(r.tid) {
                        Some(cpu) => Arc::make_mut(&mut records[i]).cpu_ns = cpu,
                        // Gone while no sampler looked (between sessions).
                        None => self.end(&mut ended, &mut records, ThreadId(i as u32), now),
                    }
                }
                continue;
            }
            // Virtual threads are not among the live threads JVMTI lists.
            if r.end_ns.is_none() && !r.is_group() && !seen.contains(&ThreadId(i as u32)) {
                self.end(&mut ended, &mut records, ThreadId(i as u32), now);
            }
        }
    }

    /// Registers a thread of the JVM itself (the sampler found it in
    /// /proc/self/task): `name` is its OS name, `tid` its id.
    /// A live one already registered (by an earlier session's sampler)
    /// keeps its record.
    pub fn register_jvm(&self, name: String, kind: JvmKind, tid: i32) -> ThreadId {
        let mut records = self.records.lock();
        let known = records
            .iter()
            .rposition(|r| r.jvm.is_some() && r.tid == tid && r.is_alive());
        if let Some(i) = known {
            return ThreadId(i as u32);
        }
        let mut r = ThreadRecord::platform(name, clock::now_ns());
        r.jvm = Some(kind);
        r.tid = tid;
        records.push(Arc::new(r));
        ThreadId(records.len() as u32 - 1)
    }

    /// A JVM thread's CPU time, as the sampler last read it.
    pub fn set_cpu(&self, id: ThreadId, cpu_ns: u64) {
        if let Some(r) = own(&mut self.records.lock(), id) {
            r.cpu_ns = cpu_ns;
        }
    }

    /// A JVM thread left /proc/self/task: it ended now, folded by the
    /// rule of ended threads (`ended=`) as a Java thread is.
    pub fn jvm_ended(&self, id: ThreadId) {
        let now = clock::now_ns();
        let mut ended = self.ended.lock();
        let mut records = self.records.lock();
        if records.get(id.0 as usize).is_none_or(|r| r.jvm.is_none()) {
            return;
        }
        self.end(&mut ended, &mut records, id, now);
    }

    /// The VM is dying: every group of virtual threads has ended, whether or
    /// not its threads' ends were seen.
    pub fn end_groups(&self) {
        let now = clock::now_ns();
        for r in self.records.lock().iter_mut().filter(|r| r.is_group()) {
            Arc::make_mut(r).end_ns.get_or_insert(now);
        }
    }

    /// Records that `thread`, the calling thread, has OS id `tid`.
    pub fn set_tid(&self, jvmti: Jvmti, jni: &Jni, thread: jthread, tid: i32) {
        if let Some(Identity::Java(id)) = self.identify(jvmti, jni, thread, 0) {
            if let Some(r) = own(&mut self.records.lock(), id) {
                r.tid = tid;
            }
        }
    }

    /// The CPU time `id` had used when it ended (ns; `None` while it lives).
    pub fn cpu_at_end(&self, id: ThreadId) -> Option<u64> {
        let ended = self.ended.lock();
        let records = self.records.lock();
        let r = records.get(id.0 as usize)?;
        match r.folded_into {
            // Its record is its group's now: its own CPU, if folded lately.
            Some(_) => ended.cpu_at_end(id),
            None => r.end_ns.map(|_| r.cpu_ns),
        }
    }

    /// The OS id `id` told at its start, if it did.
    pub fn tid(&self, id: ThreadId) -> Option<i32> {
        let t = self.records.lock().get(id.0 as usize)?.tid;
        (t > 0).then_some(t)
    }

    /// When `id` started (CLOCK_MONOTONIC ns; 0 if before the agent saw it).
    pub fn start_ns(&self, id: ThreadId) -> u64 {
        self.records
            .lock()
            .get(id.0 as usize)
            .map_or(0, |r| r.start_ns)
    }

    /// The name of thread `id`, as last read.
    pub fn name(&self, id: ThreadId) -> Option<String> {
        Some(self.records.lock().get(id.0 as usize)?.name.clone())
    }

    pub fn count(&self) -> usize {
        self.records.lock().len()
    }

    /// Every record, indexed by `ThreadId`: shared, not copied (a folded
    /// thread's is its group's placeholder, one for all of them).
    pub fn records(&self) -> Vec<Arc<ThreadRecord>> {
        self.records.lock().clone()
    }
}

/// Records as the table hands them out, for tests that make their own.
#[cfg(test)]
pub fn shared(records: &[ThreadRecord]) -> Vec<Arc<ThreadRecord>> {
    records.iter().cloned().map(Arc::new).collect()
}

#[cfg(test)]
impl Threads {
    /// A platform thread named `name` registered, started at `start` and
    /// ended at `end` (the rule applied as at ThreadEnd).
    fn run_and_end(&self, name: &str, start: u64, end: u64) -> ThreadId {
        let mut ended = self.ended.lock();
        let mut records = self.records.lock();
        records.push(Arc::new(ThreadRecord::platform(name.into(), start)));
        let id = ThreadId(records.len() as u32 - 1);
        self.end(&mut ended, &mut records, id, end);
        id
    }
}

/// `id`'s own record, to change; `None` for a folded thread, whose slot
/// holds its group's shared placeholder (which must not be changed, nor
/// copied back into a record of its own).
fn own(records: &mut [Arc<ThreadRecord>], id: ThreadId) -> Option<&mut ThreadRecord> {
    let r = records.get_mut(id.0 as usize)?;
    r.folded_into.is_none().then(|| Arc::make_mut(r))
}

mod ended;
#[cfg(test)]
mod tests;

use ended::Ended;
#[cfg(test)]
use ended::MAX_PATTERNS;
