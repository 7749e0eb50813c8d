//! Class rewriting for the instrumenting modes: the ClassFileLoadHook decides
//! whether a class is in scope and rewrites its methods with the probes of
//! each mode; RetransformClasses brings in classes loaded before profiling
//! started. A class or method the rewriter cannot handle is left as it was,
//! and said so once.

mod ids;
pub mod makers;
pub mod probe_class;
pub mod registry;
mod rewrite;
pub mod stamp;

pub use crate::sites::AllocPlace;
pub use ids::{stride, CoverageLayouts, JacocoFilters, MethodLines};
pub use rewrite::{Probes, LOCK_SUPPORT};

use crate::error::AgentError;
use crate::log;
use crate::options::scope::Scope;
use crate::sites::Sites;
use crate::vm::sys::Capability;
use crate::vm::{GlobalRef, Jni, Jvmti, Native, MAX_LOCAL_FRAME};
use jni_sys::{jclass, jobject};
use parking_lot::Mutex;
use registry::Registry;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use std::sync::OnceLock;

/// What rewriting classes needs, for every instrumenting mode: the class-file
/// hook for every class, and retransforming the ones loaded before
/// profiling started.
pub fn capabilities(caps: &mut crate::vm::Capabilities) -> Result<(), crate::vm::VmError> {
    caps.need(Capability::GenerateAllClassHookEvents, "instrumenting")?;
    caps.need(Capability::RetransformClasses, "instrumenting")
}

#[derive(Default)]
pub struct Instrumenter {
    scope: Mutex<Scope>,
    modes: Mutex<Probes>,
    pub registry: Registry,
    /// Set once the probe class is defined: only then may code call it.
    ready: AtomicBool,
    /// The platform class loader (JDK classes).
    platform_loader: OnceLock<GlobalRef>,
    prepared: OnceLock<Result<(), AgentError>>,
    /// Allocation sites' ids (the host's table).
    sites: OnceLock<&'static Sites>,
    /// Counter layouts' ids, once the coverage mode gave them.
    coverage: OnceLock<&'static dyn CoverageLayouts>,
    pub classes: AtomicUsize,
    pub methods: AtomicUsize,
    pub refused: AtomicUsize,
    /// Do classes defined from now on get the memory mode's stamp field?
    stamping: AtomicBool,
    /// Classes defined while stamping (and loaded before it began): with
    /// the field or without.
    seen: stamp::Seen,
    /// Classes given the field.
    pub stamped: AtomicUsize,
}

impl Instrumenter {
    /// Defines the probe class (once, binding `natives`: every mode's), then
    /// starts rewriting classes in `scope`, including those already loaded.
    pub fn start(
        &self,
        jvmti: Jvmti,
        jni: &Jni,
        scope: Scope,
        modes: Probes,
        natives: &[Native],
        sites: &'static Sites,
    ) -> Result<(), AgentError> {
        let _ = self.sites.set(sites);
        *self.scope.lock() = scope;
        *self.modes.lock() = modes;
        self.define_runtime(jvmti, jni, natives)?;
        self.ready.store(true, Release);
        jni.with_local_frame(MAX_LOCAL_FRAME, || self.retransform_loaded(jvmti, jni));
        Ok(())
    }

    /// Where counter layouts' ids come from (the coverage mode, when it opens).
    pub fn set_coverage_layouts(&self, layouts: &'static dyn CoverageLayouts) {
        let _ = self.coverage.set(layouts);
    }

    /// Defines the runtime classes (once per JVM) and binds every mode's
    /// `natives`; rewriting starts only with [`Instrumenter::start`].
    pub fn define_runtime(
        &self,
        jvmti: Jvmti,
        jni: &Jni,
        natives: &[Native],
    ) -> Result<(), AgentError> {
        self.prepared
            .get_or_init(|| {
                jni.with_local_frame(MAX_LOCAL_FRAME, || self.prepare(jvmti, jni, natives))
            })
            .clone()
    }

    /// Binds `natives` to the probe class again, in place of the functions
    /// of the same names (the probe class must be defined).
    ///
    /// # Safety
    /// Each of `natives` pairs a native method of the probe class with an
    /// `extern "system"` function of the parameters its descriptor gives
    /// (JNIEnv, the class, the arguments), callable on any thread.
    pub unsafe fn rebind_natives(&self, jni: &Jni, natives: &[Native]) -> Result<(), AgentError> {
        let class = jni.find_class(probe_class::CLASS)?;
        // SAFETY: the caller's promise.
        let bound = unsafe { jni.register_natives(class, natives) };
        jni.delete_local_ref(class);
        Ok(bound?)
    }

    fn prepare(&self, jvmti: Jvmti, jni: &Jni, natives: &[Native]) -> Result<(), AgentError> {
        let mut class = std::ptr::null_mut();
        for (name, bytes) in probe_class::CLASSES {
            // The census check's class gets the field as an application's would.
            let stamped = (*name == probe_class::STAMP_CHECK_BASE)
                .then(|| stamped_copy(bytes))
                .transpose()?;
            let c = jni
                .define_boot_class(name, stamped.as_deref().unwrap_or(bytes))
                .map_err(|e| {
                    AgentError::Unsupported(format!(
                        "cannot define the runtime class {name}: {}",
                        e.0
                    ))
                })?;
            if *name == probe_class::CLASS {
                class = c;
            }
        }
        // SAFETY: the registry's natives() pair each probe method of the
        // probe class with an extern "system" function of the parameters its
        // descriptor gives (JNIEnv, the class, the arguments).
        unsafe { jni.register_natives(class, natives) }.map_err(|e| {
            AgentError::Unsupported(format!("cannot bind the probe natives: {}", e.0))
        })?;
        // Classes of named modules (the JDK's, with include=) must read the
        // boot loader's unnamed module, where the probe class lives.
        if let Ok(module) = jni.call_object(
            class,
            "java/lang/Class",
            "getModule",
            "()Ljava/lang/Module;",
        ) {
            for m in jvmti.all_modules().unwrap_or_default() {
                let _ = jvmti.add_module_reads(m, module);
                jni.delete_local_ref(m);
            }
        }
        if let Ok(loader) = jni.call_static_object(
            "java/lang/ClassLoader",
            "getPlatformClassLoader",
            "()Ljava/lang/ClassLoader;",
        ) {
            if let Some(global) = jni.new_global_ref(loader) {
                let _ = self.platform_loader.set(global);
            }
        }
        Ok(())
    }

    /// From now on, classes being defined get the memory mode's stamp field
    /// (`stamp`). Those loaded before never will (none has one: stamping
    /// starts once per JVM): their names are noted, so that a subclass
    /// defined later declares the field itself.
    pub fn start_stamping(&self, jvmti: Jvmti, jni: &Jni) {
        if self.stamping.load(Acquire) {
            return;
        }
        jni.with_local_frame(MAX_LOCAL_FRAME, || {
            let Ok(classes) = jvmti.loaded_classes() else {
                return;
            };
            for c in classes {
                if let Ok(sig) = jvmti.class_signature(c) {
                    if let Some(name) = sig.strip_prefix('L').and_then(|s| s.strip_suffix(';')) {
                        self.seen.record(name, false);
                    }
                }
                jni.delete_local_ref(c);
            }
        });
        self.stamping.store(true, Release);
    }

    fn is_jdk_loader(&self, jni: &Jni, loader: jobject) -> bool {
        loader.is_null()
            || self
                .platform_loader
                .get()
                .is_some_and(|p| jni.is_same_object(loader, p.as_raw()))
    }

    /// Is `class` (a local reference) one the scope selects? Never the
    /// agent's runtime classes.
    pub fn class_in_scope(&self, jvmti: Jvmti, jni: &Jni, class: jclass) -> bool {
        let Ok(sig) = jvmti.class_signature(class) else {
            return false;
        };
        let Some(name) = sig.strip_prefix('L').and_then(|s| s.strip_suffix(';')) else {
            return false;
        };
        let loader = jvmti.class_loader(class).unwrap_or(std::ptr::null_mut());
        let boot = loader.is_null();
        let jdk = self.is_jdk_loader(jni, loader);
        jni.delete_local_ref(loader);
        let modes = *self.modes.lock();
        (modes.park && boot && name == LOCK_SUPPORT)
            || (modes.any_scoped() && self.scope.lock().contains(&name.replace('/', "."), jdk))
    }

    /// The ClassFileLoadHook: new class-file bytes, or `None` to leave the
    /// class as it is. `redefined`: the class being retransformed or
    /// redefined (null while it is first defined). `name` is `None` for a
    /// class defined without one (`defineClass(null, …)`): its name is then
    /// read from its bytes.
    pub fn transform(
        &self,
        jvmti: Jvmti,
        jni: &Jni,
        (loader, redefined): (jobject, jclass),
        name: Option<&str>,
        bytes: &[u8],
    ) -> Option<Vec<u8>> {
        if !self.ready.load(Acquire) {
            return None;
        }
        let named;
        let name = match name {
            Some(name) => name,
            None => {
                named = name_in(bytes)?;
                &named
            }
        };
        let first_load = redefined.is_null();
        let java_name = name.replace('/', ".");
        let jdk = self.is_jdk_loader(jni, loader);
        let stamp = self.stamp_plan(jvmti, name, jdk, redefined);
        let mut modes = *self.modes.lock();
        let in_scope = modes.any_scoped() && self.scope.lock().contains(&java_name, jdk);
        // `lock` probes the boot loader's LockSupport, in scope or not.
        modes.park &= loader.is_null() && name == LOCK_SUPPORT;
        if !in_scope && !modes.park && stamp == stamp::Plan::No {
            return None;
        }
        if !in_scope {
            modes = Probes {
                park: modes.park,
                ..Probes::NONE
            };
        }
        // Dynamic constants bootstrap through java.lang.invoke: never in the
        // JDK's own classes (which that machinery uses), nor on retransform.
        match self.rewrite(name, bytes, modes, first_load && !jdk, stamp) {
            Ok(out) => out,
            Err(why) => {
                if stamp == stamp::Plan::Decide {
                    self.seen.record(name, false);
                }
                log::error_once(
                    &format!("class {name}"),
                    &format!("cannot instrument {java_name}: {why}; it runs uninstrumented"),
                );
                None
            }
        }
    }

    /// What becomes of the stamp field of class `name` (of a JDK loader:
    /// `jdk`): a class that has one keeps it through every redefinition,
    /// whether or not the memory mode still runs; while it runs, a class
    /// being defined may get one.
    fn stamp_plan(&self, jvmti: Jvmti, name: &str, jdk: bool, redefined: jclass) -> stamp::Plan {
        // Before stamping starts no class has the field, and the JDK's never do.
        if !self.stamping.load(Acquire) || (!redefined.is_null() && jdk) {
            return stamp::Plan::No;
        }
        if !redefined.is_null() {
            return if has_stamp_field(jvmti, redefined) {
                stamp::Plan::Keep
            } else {
                stamp::Plan::No
            };
        }
        if jdk || stamp::never_stamped(name) {
            self.seen.record(name, false);
            return stamp::Plan::No;
        }
        stamp::Plan::Decide
    }

    /// Rewrites a class for the modes on; a method the editor refuses stays
    /// as it was (reported once per class). `Ok(None)`: nothing to change.
    fn rewrite(
        &self,
        name: &str,
        bytes: &[u8],
        modes: Probes,
        dynamic_constants: bool,
        stamp: stamp::Plan,
    ) -> Result<Option<Vec<u8>>, AgentError> {
        let sites = self.sites.get();
        let sites = sites.ok_or(AgentError::Internal("no allocation sites yet".into()))?;
        let ids = rewrite::Ids {
            sites,
            coverage: self.coverage.get().copied(),
        };
        let how = rewrite::How {
            modes,
            dynamic_constants,
            stamp: (stamp, &self.seen),
        };
        let out = rewrite::rewrite(name, bytes, how, &self.registry, ids)?;
        self.methods.fetch_add(out.edited, Relaxed);
        if out.stamped {
            self.stamped.fetch_add(1, Relaxed);
        }
        if !out.refused.is_empty() {
            self.refused.fetch_add(out.refused.len(), Relaxed);
            log::warn(&format!(
                "{}: {} method(s) left uninstrumented: {}",
                name.replace('/', "."),
                out.refused.len(),
                out.refused.join("; ")
            ));
        }
        if out.edited > 0 {
            self.classes.fetch_add(1, Relaxed);
        }
        Ok(out.bytes)
    }

    /// Retransforms the loaded classes in scope (profiling that starts after
    /// they loaded: VMInit with include=java.*, or a late attach).
    fn retransform_loaded(&self, jvmti: Jvmti, jni: &Jni) {
        let Ok(classes) = jvmti.loaded_classes() else {
            return;
        };
        jni.ensure_local_capacity(classes.len() + 64);
        let mut chosen: Vec<jclass> = Vec::new();
        for &c in &classes {
            let keep = jvmti.is_modifiable_class(c) && self.class_in_scope(jvmti, jni, c);
            if keep {
                chosen.push(c);
            } else {
                jni.delete_local_ref(c);
            }
        }
        for batch in chosen.chunks(64) {
            if jvmti.retransform_classes(batch).is_ok() {
                continue;
            }
            for &c in batch {
                if let Err(e) = jvmti.retransform_classes(&[c]) {
                    let name = jvmti.class_signature(c).unwrap_or_default();
                    log::error_once(
                        &format!("retransform {name}"),
                        &format!(
                            "cannot retransform {name}: {}; it runs uninstrumented",
                            jvmti.error_name(e)
                        ),
                    );
                }
            }
        }
        for c in chosen {
            jni.delete_local_ref(c);
        }
    }
}

/// Does `class` declare the memory mode's stamp field?
fn has_stamp_field(jvmti: Jvmti, class: jclass) -> bool {
    jvmti.class_fields(class).is_ok_and(|fields| {
        fields.iter().any(|&f| {
            jvmti
                .field_name(class, f)
                .is_ok_and(|(n, d)| n == stamp::FIELD && d == stamp::DESCRIPTOR)
        })
    })
}

/// A runtime class's bytes with the stamp field added.
fn stamped_copy(bytes: &[u8]) -> Result<Vec<u8>, AgentError> {
    let mut class =
        profrj_bytecode::parse_class(bytes).map_err(|e| AgentError::Class(e.to_string()))?;
    if !stamp::add(&mut class) {
        return Err(AgentError::Internal(
            "the census check's class has a stamp field already".into(),
        ));
    }
    Ok(profrj_bytecode::write_class(&class))
}

/// The internal name a class file gives itself (`this_class`); `None` if
/// the bytes do not parse (the VM will refuse them too).
fn name_in(bytes: &[u8]) -> Option<String> {
    let class = profrj_bytecode::parse_class(bytes).ok()?;
    let name = class.constant_pool.class_utf8(class.this_class)?;
    Some(profrj_format::names::decode_modified_utf8(name))
}
