//! Classes and modules: the loaded classes, a class's name, loader, fields
//! and interfaces, classes retransformed, and modules made to read or open
//! to the agent's runtime.

use super::{check, Jvmti, JvmtiBuf, Result};
use crate::vm::sys::{jboolean, JvmtiError};
use jni_sys::{jclass, jfieldID, jint, jobject};

impl Jvmti {
    /// Every loaded class, as local references.
    pub fn loaded_classes(&self) -> Result<Vec<jclass>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        // SAFETY: out-pointers to two live locals.
        check(unsafe { jvmti_call!(self, GetLoadedClasses, &mut count, &mut ptr) })?;
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        };
        Ok(buf.as_slice().to_vec())
    }

    /// The JVM type signature of a class, e.g. `Ljava/lang/String;`.
    pub fn class_signature(&self, class: jclass) -> Result<String> {
        let mut sig = std::ptr::null_mut();
        // SAFETY: a class reference (the `vm` convention); a live out-pointer,
        // and null for the generic signature (allowed).
        check(unsafe {
            jvmti_call!(
                self,
                GetClassSignature,
                class,
                &mut sig,
                std::ptr::null_mut()
            )
        })?;
        // SAFETY: GetClassSignature allocated the signature for us.
        Ok(unsafe { self.take_string(sig) })
    }

    /// The defining loader of `class` as a local reference; null for the boot loader.
    pub fn class_loader(&self, class: jclass) -> Result<jobject> {
        let mut loader = std::ptr::null_mut();
        // SAFETY: a class reference (the `vm` convention); a live out-pointer.
        check(unsafe { jvmti_call!(self, GetClassLoader, class, &mut loader) })?;
        Ok(loader)
    }

    /// Can `class` be retransformed (not a primitive, array or hidden class)?
    pub fn is_modifiable_class(&self, class: jclass) -> bool {
        let mut yes: jboolean = 0;
        // SAFETY: a class reference (the `vm` convention); a live out-pointer.
        let err = unsafe { jvmti_call!(self, IsModifiableClass, class, &mut yes) };
        err == JvmtiError::NONE && yes != 0
    }

    /// The fields `class` declares (static ones too, not inherited ones),
    /// in the order of its class file.
    pub fn class_fields(&self, class: jclass) -> Result<Vec<jfieldID>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        // SAFETY: a class reference (the `vm` convention); out-pointers to two live locals.
        check(unsafe { jvmti_call!(self, GetClassFields, class, &mut count, &mut ptr) })?;
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        };
        Ok(buf.as_slice().to_vec())
    }

    /// `(name, descriptor)` of a field of `class`.
    pub fn field_name(&self, class: jclass, field: jfieldID) -> Result<(String, String)> {
        let mut name = std::ptr::null_mut();
        let mut sig = std::ptr::null_mut();
        // SAFETY: a class reference and one of its fields (`class_fields`);
        // out-pointers to two live locals, null for the generic signature (allowed).
        check(unsafe {
            jvmti_call!(
                self,
                GetFieldName,
                class,
                field,
                &mut name,
                &mut sig,
                std::ptr::null_mut()
            )
        })?;
        // SAFETY: GetFieldName allocated both strings for us.
        Ok(unsafe { (self.take_string(name), self.take_string(sig)) })
    }

    /// The interfaces `class` names in its declaration (an interface: those
    /// it extends), as local references.
    pub fn implemented_interfaces(&self, class: jclass) -> Result<Vec<jclass>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        // SAFETY: a class reference (the `vm` convention); out-pointers to two live locals.
        check(unsafe { jvmti_call!(self, GetImplementedInterfaces, class, &mut count, &mut ptr) })?;
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        };
        Ok(buf.as_slice().to_vec())
    }

    /// Runs the ClassFileLoadHook again over `classes` (their original bytes).
    pub fn retransform_classes(&self, classes: &[jclass]) -> Result<()> {
        let n = jint::try_from(classes.len()).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)?;
        // SAFETY: `classes` holds `n` class references (the `vm` convention),
        // read during the call.
        check(unsafe { jvmti_call!(self, RetransformClasses, n, classes.as_ptr()) })
    }

    /// Every module, as local references (JVMTI 9+).
    pub fn all_modules(&self) -> Result<Vec<jobject>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        // SAFETY: out-pointers to two live locals.
        check(unsafe { jvmti_call!(self, GetAllModules, &mut count, &mut ptr) })?;
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        };
        Ok(buf.as_slice().to_vec())
    }

    /// Lets `module` read `to` (JVMTI 9+).
    pub fn add_module_reads(&self, module: jobject, to: jobject) -> Result<()> {
        // SAFETY: two module references (the `vm` convention; the VM checks
        // that they are modules).
        check(unsafe { jvmti_call!(self, AddModuleReads, module, to) })
    }

    /// Opens package `package` (dotted, `com.acme.model`) of `module` to
    /// module `to` (deep reflection, `setAccessible`), as `--add-opens`
    /// would. No effect on an unnamed or open module.
    pub fn add_module_opens(&self, module: jobject, package: &str, to: jobject) -> Result<()> {
        let package = std::ffi::CString::new(package).map_err(|_| JvmtiError::ILLEGAL_ARGUMENT)?;
        // SAFETY: two module references (the `vm` convention; the VM checks
        // that they are modules) and a NUL-terminated name alive for the call.
        check(unsafe { jvmti_call!(self, AddModuleOpens, module, package.as_ptr(), to) })
    }
}
