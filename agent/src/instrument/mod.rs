//! Class rewriting for the instrumenting modes: the ClassFileLoadHook decides
//! whether a class is in scope and rewrites its methods with the probes of
//! each mode; RetransformClasses brings in classes loaded before profiling
//! started. A class or method the rewriter cannot handle is left as it was,
//! and said so once.

pub mod probe_class;
pub mod registry;
pub mod scope;

use crate::vm::{Jni, Jvmti};
use crate::{log, profile};
use jni_sys::{jclass, jobject};
use parking_lot::Mutex;
use profrj_bytecode::code::Insn;
use profrj_bytecode::edit::{edit_method, Edit};
use profrj_bytecode::{parse_class, write_class};
use registry::{MethodInfo, Registry};
use scope::Scope;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::*};
use std::sync::OnceLock;

#[derive(Default)]
pub struct Instrumenter {
    scope: Mutex<Scope>,
    pub registry: Registry,
    /// Set once the probe class is defined: only then may code call it.
    ready: AtomicBool,
    /// Global reference to the platform class loader (JDK classes), as usize.
    platform_loader: OnceLock<usize>,
    prepared: OnceLock<Result<(), String>>,
    pub classes: AtomicUsize,
    pub methods: AtomicUsize,
    pub refused: AtomicUsize,
}

impl Instrumenter {
    /// Defines the probe class (once), then starts rewriting classes in
    /// `scope`, including those already loaded.
    pub fn start(&self, jvmti: Jvmti, jni: &Jni, scope: Scope) -> Result<(), String> {
        *self.scope.lock() = scope;
        self.prepared
            .get_or_init(|| self.prepare(jvmti, jni))
            .clone()?;
        self.ready.store(true, Release);
        jni.with_local_frame(64, || self.retransform_loaded(jvmti, jni));
        Ok(())
    }

    fn prepare(&self, jvmti: Jvmti, jni: &Jni) -> Result<(), String> {
        let natives = profile::natives();
        let sigs: Vec<(&str, &str)> = natives.iter().map(|n| (n.0, n.1)).collect();
        let bytes = probe_class::class_bytes(&sigs);
        let class = jni
            .define_boot_class(probe_class::CLASS, &bytes)
            .map_err(|e| format!("cannot define the probe class: {}", e.0))?;
        jni.register_natives(class, &natives)
            .map_err(|e| format!("cannot bind the probe natives: {}", e.0))?;
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
            let _ = self
                .platform_loader
                .set(jni.new_global_ref(loader) as usize);
        }
        Ok(())
    }

    fn is_jdk_loader(&self, jni: &Jni, loader: jobject) -> bool {
        loader.is_null()
            || self
                .platform_loader
                .get()
                .is_some_and(|&p| jni.is_same_object(loader, p as jobject))
    }

    /// The ClassFileLoadHook: new class-file bytes, or `None` to leave the
    /// class as it is.
    pub fn transform(
        &self,
        jni: &Jni,
        loader: jobject,
        name: Option<&str>,
        bytes: &[u8],
    ) -> Option<Vec<u8>> {
        if !self.ready.load(Acquire) {
            return None;
        }
        let name = name?;
        let java_name = name.replace('/', ".");
        if !self
            .scope
            .lock()
            .contains(&java_name, self.is_jdk_loader(jni, loader))
        {
            return None;
        }
        match self.rewrite(name, bytes) {
            Ok(out) => out,
            Err(why) => {
                log::error_once(
                    &format!("class {name}"),
                    &format!("cannot instrument {java_name}: {why}; it runs unprofiled"),
                );
                None
            }
        }
    }

    /// Rewrites every method with code; a method the editor refuses stays as
    /// it was (reported once per class). `Ok(None)`: nothing to change.
    fn rewrite(&self, name: &str, bytes: &[u8]) -> Result<Option<Vec<u8>>, String> {
        let mut class = parse_class(bytes).map_err(|e| e.to_string())?;
        // Each probe needs a few constants; stay clear of the 65,535 limit.
        if class.constant_pool.count() > 65_000 {
            return Err("its constant pool is nearly full".into());
        }
        let cp = &mut class.constant_pool;
        let refs = [
            cp.add_method_ref(probe_class::CLASS, "enter", "(I)V"),
            cp.add_method_ref(probe_class::CLASS, "exit", "(I)V"),
            cp.add_method_ref(probe_class::CLASS, "unwind", "(I)V"),
        ];
        let mut edited = 0;
        let mut refusals = Vec::new();
        for i in 0..class.methods.len() {
            let m = &class.methods[i];
            let cp = &class.constant_pool;
            let has_code = m
                .attributes
                .iter()
                .any(|a| cp.utf8(a.name_index) == Some(b"Code"));
            if !has_code {
                continue;
            }
            let info = MethodInfo {
                class: name.to_owned(),
                name: cp.text(m.name_index).unwrap_or_default(),
                descriptor: cp.text(m.descriptor_index).unwrap_or_default(),
            };
            let label = format!("{}{}", info.name, info.descriptor);
            let id = self.registry.id(info);
            let push = push_int(&mut class.constant_pool, id);
            let call = |r: u16| {
                let mut seq = push.clone();
                seq.push(Insn::plain(0xb8, &r.to_be_bytes())); // invokestatic
                seq
            };
            let edit = Edit {
                entry: call(refs[0]),
                before_returns: call(refs[1]),
                catch_all: Some(call(refs[2])),
                extra_stack: 1,
                ..Default::default()
            };
            match edit_method(&mut class, i, &edit) {
                Ok(()) => edited += 1,
                Err(e) => refusals.push(format!("{label}: {e}")),
            }
        }
        self.methods.fetch_add(edited, Relaxed);
        if !refusals.is_empty() {
            self.refused.fetch_add(refusals.len(), Relaxed);
            log::warn(&format!(
                "{}: {} method(s) left unprofiled: {}",
                name.replace('/', "."),
                refusals.len(),
                refusals.join("; ")
            ));
        }
        if edited == 0 {
            return Ok(None);
        }
        self.classes.fetch_add(1, Relaxed);
        Ok(Some(write_class(&class)))
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
            let keep = jvmti.is_modifiable_class(c)
                && jvmti.class_signature(c).ok().is_some_and(|sig| {
                    let Some(name) = sig.strip_prefix('L').and_then(|s| s.strip_suffix(';')) else {
                        return false;
                    };
                    let loader = jvmti.class_loader(c).unwrap_or(std::ptr::null_mut());
                    let jdk = self.is_jdk_loader(jni, loader);
                    jni.delete_local_ref(loader);
                    self.scope.lock().contains(&name.replace('/', "."), jdk)
                });
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
                            "cannot retransform {name}: {}; it runs unprofiled",
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

/// Pushes `value`: `sipush` when it fits, else `ldc_w` of a new constant.
fn push_int(cp: &mut profrj_bytecode::ConstantPool<'_>, value: u32) -> Vec<Insn> {
    match i16::try_from(value) {
        Ok(v) => vec![Insn::plain(0x11, &v.to_be_bytes())],
        Err(_) => vec![Insn::plain(
            0x13,
            &cp.add_integer(value as i32).to_be_bytes(),
        )],
    }
}
