//! Methods: their ids made ahead of the signal handler's need, their names,
//! modifiers, declaring classes and line number tables.

use super::{check, Jvmti, JvmtiBuf, Result};
use jni_sys::{jclass, jint, jmethodID};

impl Jvmti {
    /// Makes the VM create a jmethodID for every method of `class` (what
    /// AsyncGetCallTrace reports; it cannot create them in a signal handler).
    pub fn prepare_method_ids(&self, class: jclass) -> Result<()> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        // SAFETY: a class reference (the `vm` convention); out-pointers to two live locals.
        check(unsafe { jvmti_call!(self, GetClassMethods, class, &mut count, &mut ptr) })?;
        drop(JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        });
        Ok(())
    }

    /// `(name, descriptor)` of a method.
    pub fn method_name(&self, method: jmethodID) -> Result<(String, String)> {
        let mut name = std::ptr::null_mut();
        let mut sig = std::ptr::null_mut();
        // SAFETY: a jmethodID the VM gave (the `vm` convention); out-pointers to
        // two live locals, and null for the generic signature (allowed).
        check(unsafe {
            jvmti_call!(
                self,
                GetMethodName,
                method,
                &mut name,
                &mut sig,
                std::ptr::null_mut()
            )
        })?;
        // SAFETY: GetMethodName allocated both strings for us.
        Ok(unsafe { (self.take_string(name), self.take_string(sig)) })
    }

    /// A method's access flags (`ACC_STATIC`, …).
    pub fn method_modifiers(&self, method: jmethodID) -> Result<jint> {
        let mut m = 0;
        // SAFETY: a jmethodID the VM gave (the `vm` convention); a live out-pointer.
        check(unsafe { jvmti_call!(self, GetMethodModifiers, method, &mut m) })?;
        Ok(m)
    }

    /// The declaring class, as a JNI local reference.
    pub fn method_declaring_class(&self, method: jmethodID) -> Result<jclass> {
        let mut class = std::ptr::null_mut();
        // SAFETY: a jmethodID the VM gave (the `vm` convention); a live out-pointer.
        check(unsafe { jvmti_call!(self, GetMethodDeclaringClass, method, &mut class) })?;
        Ok(class)
    }

    /// A method's line number table as (first bytecode index, line), in the
    /// class file's order; an error for a native method or a class compiled
    /// without line numbers (or without the GetLineNumbers capability).
    pub fn line_number_table(&self, method: jmethodID) -> Result<Vec<(i64, i32)>> {
        let mut ptr = std::ptr::null_mut();
        let mut count = 0;
        // SAFETY: a jmethodID the VM gave (the `vm` convention); out-pointers
        // to two live locals.
        check(unsafe { jvmti_call!(self, GetLineNumberTable, method, &mut count, &mut ptr) })?;
        let buf = JvmtiBuf {
            jvmti: *self,
            ptr,
            len: count.max(0) as usize,
        };
        Ok(buf
            .as_slice()
            .iter()
            .map(|e| (e.start_location, e.line_number))
            .collect())
    }
}
