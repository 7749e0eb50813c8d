//! Stamps: how `memory` follows most objects without a handle per object.
//!
//! A JNI weak reference or a JVMTI tag per object comes from one store in
//! the VM behind one allocation lock: with many threads allocating, every
//! allocation waits for that lock, and the cost per allocation grows with
//! the threads (docs/BENCHMARKS.md, "Memory mode"). So the classes the
//! application defines once the mode has started get a field (`instrument::stamp`),
//! and an allocation stores its thread's counter for the site in it and
//! counts one more made on that counter: plain stores on the allocating
//! thread, in Java (`profrj.runtime.Stamps`), nothing shared.
//!
//! What is alive comes from a census (`census`): a pass over the heap that
//! counts the stamped objects by counter. A snapshot takes one after its
//! forced GC, so `count` is exact; after a full GC (under ZGC and
//! Shenandoah, any GC) the agent thread takes one while they cost at most a
//! set share of the time, so that `max` can count the stamps at that
//! instant (`counters::peaks`).
//!
//! Arrays, the JDK's objects and objects of classes loaded before the mode
//! started cannot carry the field: they keep a weak reference or a tag each.
//! Before the first stamp, a check (`profrj.runtime.StampCheck`) confirms
//! that the census reads this JVM's stamps where it expects them; if not,
//! every object keeps the tracker, as with `stamps=off`.

pub mod census;
mod classes;

use super::counters::Counters;
use crate::error::AgentError;
use crate::host::Host;
use crate::instrument::probe_class;
use crate::vm::sys::{Capability, JvmtiCapabilities};
use crate::vm::{GlobalRef, Jni, Jvmti};
use jni_sys::{jclass, jobject};
use std::sync::atomic::{AtomicU64, AtomicU8, Ordering::*};
use std::sync::OnceLock;

/// What the Java probes do (`profrj.runtime.Stamps`' mode byte): count
/// nothing; stamp where the class has the field; the tracker only.
pub const OFF: u8 = 0;
pub const STAMP: u8 = 1;
pub const WEAK: u8 = 2;

/// The stamps' state for the JVM's lifetime (part of the memory mode's).
#[derive(Default)]
pub struct Stamps {
    /// The mode byte, seen by Java as a direct buffer (`Stamps.control`).
    control: [AtomicU8; 8],
    published: OnceLock<Result<(), AgentError>>,
    /// The census's JVMTI environment: its tags are the stamped classes'.
    env: OnceLock<Jvmti>,
    /// The module of the agent's runtime (the boot loader's unnamed one),
    /// which the packages of stamped classes are opened to.
    runtime_module: OnceLock<GlobalRef>,
    /// Did the census check pass (and stamping begin)?
    on: OnceLock<Result<(), AgentError>>,
    /// Classes the census counts.
    classes: AtomicU64,
    /// The GC (by number) the agent thread last decided a census for.
    decided: AtomicU64,
    /// Set while a heap dump is made: no census after its GC (it would walk
    /// the heap, all threads stopped, while the dump's pass runs); the next
    /// GC's decides again.
    held: std::sync::atomic::AtomicBool,
    census: census::Census,
}

impl Stamps {
    /// Shows the mode byte to the Java probes (once per JVM).
    pub fn publish(&'static self, jni: &Jni) -> Result<(), AgentError> {
        self.published
            .get_or_init(|| {
                let at = self.control.as_ptr() as *mut u8;
                // SAFETY: `control` lives as long as the agent (the JVM's
                // lifetime); Java reads its first byte, the agent stores it
                // atomically.
                let buffer = unsafe { jni.direct_buffer(at, self.control.len()) };
                if buffer.is_null() {
                    return Err(AgentError::Unsupported(
                        "memory: no direct buffer for the probes".into(),
                    ));
                }
                let stamps = jni
                    .find_class(probe_class::STAMPS)
                    .map_err(|e| AgentError::Unsupported(e.0));
                let set = stamps.and_then(|c| {
                    // SAFETY: a java.nio.ByteBuffer into a field of that type.
                    let r = unsafe {
                        jni.set_static_object_field(c, "control", "Ljava/nio/ByteBuffer;", buffer)
                    };
                    jni.delete_local_ref(c);
                    r.map_err(|e| AgentError::Unsupported(e.0))
                });
                jni.delete_local_ref(buffer);
                set.map_err(|e| {
                    AgentError::Unsupported(format!("memory: cannot reach the probes ({e})"))
                })
            })
            .clone()
    }

    pub fn set_mode(&self, mode: u8) {
        self.control[0].store(mode, Release);
    }

    /// The share of the time censuses after GCs may take, in % (`census=`).
    pub fn set_budget(&self, percent: u8) {
        self.census.set_budget(percent);
    }

    /// Does stamping run in this JVM?
    pub fn on(&self) -> bool {
        matches!(self.on.get(), Some(Ok(())))
    }

    /// Starts stamping (once per JVM): the census's environment, the check,
    /// then classes defined from now on get the field.
    pub fn start(&self, host: &Host, jni: &Jni) -> Result<(), AgentError> {
        self.on
            .get_or_init(|| {
                let caps = JvmtiCapabilities::default().with(Capability::TagObjects);
                let env = host.new_environment(&caps, &[]).map_err(|e| {
                    AgentError::Unsupported(format!(
                        "the census needs a JVMTI environment with tags: {e}"
                    ))
                })?;
                let _ = self.env.set(env);
                if let Some(m) = runtime_module(jni) {
                    let _ = self.runtime_module.set(m);
                }
                check(jni)?;
                host.instrumenter.start_stamping(host.jvmti, jni);
                Ok(())
            })
            .clone()
    }

    /// After a full GC (ZGC, Shenandoah: any GC), on the agent thread: a
    /// census by `walk` if the budget allows, once per GC.
    pub fn after_gc(&self, counters: &Counters, walk: census::Walk) {
        let Some(&env) = self.env.get() else { return };
        if !self.on() || self.classes.load(Relaxed) == 0 {
            return;
        }
        if self.held.load(Relaxed) {
            return;
        }
        let gc = counters.gcs_started();
        if self.decided.swap(gc, Relaxed) == gc || !self.census.due(census::Walker::Stamps) {
            return;
        }
        if let Err(e) = self.census.take(env, counters, true, walk) {
            crate::log::error_once("memory census", &format!("memory: {e}"));
        }
    }

    /// May a census of the tags run after this GC (the `census=` budget,
    /// whose credit it shares with the stamps' census)? Not while a heap
    /// dump holds the censuses.
    pub fn tag_census_due(&self) -> bool {
        !self.held.load(Relaxed) && self.census.due(census::Walker::Tags)
    }

    /// What a census of the tags after a GC took, spent from the budget.
    pub fn tag_census_spent(&self, took_ns: u64) {
        self.census.spent(census::Walker::Tags, took_ns, true)
    }

    /// Holds (or lets go) the censuses after GCs, for a heap dump.
    pub fn hold(&self, on: bool) {
        self.held.store(on, Relaxed);
    }

    /// A snapshot's census, after its GC (none while no class is counted:
    /// no object can carry a stamp yet), by `walk` (from the roots at an
    /// exit that no GC can precede).
    pub fn census_now(&self, counters: &Counters, walk: census::Walk) -> Result<(), AgentError> {
        match self.env.get() {
            Some(&env) if self.on() && self.classes.load(Relaxed) > 0 => {
                self.census.take(env, counters, false, walk)
            }
            _ => Ok(()),
        }
    }

    /// The class declaring the stamp field of `class`'s objects (a local
    /// reference), if stamping runs and there is one; its package opened to
    /// the runtime.
    pub fn holder(&self, jvmti: Jvmti, jni: &Jni, class: jclass) -> Option<jclass> {
        self.env.get()?;
        let holder = classes::holder(jvmti, jni, class)?;
        if let Some(m) = self.runtime_module.get() {
            classes::open_package(jvmti, jni, holder, m.as_raw());
        }
        Some(holder)
    }

    /// From now on the census counts `class`'s objects, whose stamp field
    /// `holder` declares.
    pub fn count_class(&self, jvmti: Jvmti, jni: &Jni, class: jclass, holder: jclass) {
        let (Some(env), Some(index)) = (
            self.env.get(),
            classes::field_index(jvmti, jni, class, holder),
        ) else {
            return;
        };
        if env.set_tag(class, classes::class_tag(index)).is_ok() {
            self.classes.fetch_add(1, Relaxed);
        }
    }

    /// `StampCheck`'s objects: does the census find `base_stamp` and
    /// `sub_stamp` in them? `None` if so, else what it found.
    pub fn check_objects(
        &self,
        jni: &Jni,
        (base, sub): (jobject, jobject),
        (base_stamp, sub_stamp): (i32, i32),
    ) -> Option<String> {
        let Some(&env) = self.env.get() else {
            return Some("no census environment".into());
        };
        let mut wrong = None;
        for (object, stamp) in [(base, base_stamp), (sub, sub_stamp)] {
            let class = jni.object_class(object);
            let found = census::stamps_of(env, class);
            let _ = env.set_tag(class, 0); // never counted again
            jni.delete_local_ref(class);
            if found.as_deref().ok() != Some(&[stamp][..]) && wrong.is_none() {
                wrong = Some(format!(
                    "expected stamp {stamp}, the census found {found:?}"
                ));
            }
        }
        // The check runs before any other class is counted.
        self.classes.store(0, Relaxed);
        wrong
    }

    /// What the censuses cost so far (`<sites>`' attributes).
    pub fn cost(&self) -> &census::Cost {
        &self.census.cost
    }

    /// One line on what the censuses cost, for the end of a session.
    pub fn cost_summary(&self, stamped_classes: usize) -> Option<String> {
        let c = &self.census.cost;
        match self.on.get() {
            Some(Err(e)) => {
                return Some(format!(
                    "memory: no stamps ({e}); every object has a tracker"
                ))
            }
            None => return None,
            Some(Ok(())) => {}
        }
        let ms = |ns: u64| ns as f64 / 1e6;
        let odd = c.odd.load(Relaxed);
        Some(format!(
            "memory: {stamped_classes} classes given a stamp field, {} of them stamping objects; \
             {} censuses ({} after GCs, {} GCs without one: budget) counted {} stamped objects \
             in {:.1} ms (longest {:.1} ms){}",
            self.classes.load(Relaxed),
            c.censuses.load(Relaxed),
            c.after_gcs.load(Relaxed),
            c.skipped.load(Relaxed),
            c.stamped.load(Relaxed),
            ms(c.ns.load(Relaxed)),
            ms(c.longest_ns.load(Relaxed)),
            if odd > 0 {
                format!("; {odd} stamps named no counter")
            } else {
                String::new()
            }
        ))
    }
}

/// The module of the runtime classes (JDK 9+), kept for the VM's life.
fn runtime_module(jni: &Jni) -> Option<GlobalRef> {
    let probe = jni.find_class(probe_class::CLASS).ok()?;
    let module = jni.call_object(
        probe,
        "java/lang/Class",
        "getModule",
        "()Ljava/lang/Module;",
    );
    jni.delete_local_ref(probe);
    let module = module.ok()?;
    let global = jni.new_global_ref(module);
    jni.delete_local_ref(module);
    global
}

/// Runs `StampCheck.run()`: `Ok` if the census found its stamps.
fn check(jni: &Jni) -> Result<(), AgentError> {
    let answer = jni
        .call_static_object(probe_class::STAMP_CHECK, "run", "()Ljava/lang/String;")
        .map_err(|e| AgentError::Unsupported(format!("the census check failed: {}", e.0)))?;
    if answer.is_null() {
        return Ok(());
    }
    let why = jni.string_utf(answer).ok().flatten().unwrap_or_default();
    jni.delete_local_ref(answer);
    Err(AgentError::Unsupported(format!(
        "the census check failed: {why}"
    )))
}
