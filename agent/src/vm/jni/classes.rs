//! Classes: found by name or defined from bytes, their natives bound, their
//! superclass, an object's class and instance check, and the ids of their
//! methods and fields.

use super::{JavaException, Jni, Native};
use jni_sys::{jclass, jint, jmethodID, jobject};
use std::ffi::{c_char, CString};

impl Jni {
    pub fn find_class(&self, name: &str) -> Result<jclass, JavaException> {
        let c = CString::new(name).map_err(|_| JavaException(format!("bad class name {name}")))?;
        // SAFETY: this thread's env; `c` is a NUL-terminated name, alive
        // for the call.
        let class = unsafe { (jni_fn!(self, FindClass))(self.env, c.as_ptr()) };
        self.check_exception(&format!("loading {name}"))?;
        if class.is_null() {
            return Err(JavaException(format!("class {name} not found")));
        }
        Ok(class)
    }

    /// Defines a class in the boot class loader from its class-file bytes.
    pub fn define_boot_class(&self, name: &str, bytes: &[u8]) -> Result<jclass, JavaException> {
        let n = CString::new(name).map_err(|_| JavaException(name.into()))?;
        // SAFETY: this thread's env; a NUL-terminated name; a null loader means
        // the boot loader; `bytes` (pointer and length) is read during the
        // call only. Malformed bytes are a ClassFormatError, handled below.
        let class = unsafe {
            (jni_fn!(self, DefineClass))(
                self.env,
                n.as_ptr(),
                std::ptr::null_mut(),
                bytes.as_ptr().cast(),
                bytes.len() as jni_sys::jsize,
            )
        };
        self.check_exception(&format!("defining {name}"))?;
        if class.is_null() {
            return Err(JavaException(format!("defining {name} returned null")));
        }
        Ok(class)
    }

    /// Binds native methods of `class`.
    ///
    /// # Safety
    /// Each function must be an `extern "system"` function whose parameters
    /// are the JNIEnv, the class (the natives are static) and then the
    /// descriptor's arguments, and whose result is the descriptor's: Java
    /// code calls it so from then on, on any thread.
    pub unsafe fn register_natives(
        &self,
        class: jclass,
        methods: &[Native],
    ) -> Result<(), JavaException> {
        let strings: Vec<(CString, CString)> = methods
            .iter()
            .map(|(n, d, _)| {
                (
                    CString::new(*n).unwrap_or_default(),
                    CString::new(*d).unwrap_or_default(),
                )
            })
            .collect();
        let table: Vec<jni_sys::JNINativeMethod> = strings
            .iter()
            .zip(methods)
            .map(|((n, d), m)| jni_sys::JNINativeMethod {
                name: n.as_ptr() as *mut _,
                signature: d.as_ptr() as *mut _,
                fnPtr: m.2,
            })
            .collect();
        // SAFETY: this thread's env, a live class; each entry points at
        // NUL-terminated strings alive for the call (`strings`) and at a
        // function of the signature its descriptor declares (the caller's
        // promise). An unknown method is a NoSuchMethodError, handled below.
        let rc = unsafe {
            (jni_fn!(self, RegisterNatives))(self.env, class, table.as_ptr(), table.len() as jint)
        };
        self.check_exception("registering natives")?;
        if rc != 0 {
            return Err(JavaException(format!("RegisterNatives returned {rc}")));
        }
        Ok(())
    }

    /// The superclass of `class` as a local reference; null for
    /// `java.lang.Object`, an interface or a primitive type.
    pub fn superclass(&self, class: jclass) -> jclass {
        // SAFETY: this thread's env; `class` is a live class reference (the
        // `vm` convention).
        unsafe { (jni_fn!(self, GetSuperclass))(self.env, class) }
    }

    /// The class of `obj`, as a local reference.
    pub fn object_class(&self, obj: jobject) -> jclass {
        // SAFETY: this thread's env; `obj` is a live, non-null reference
        // (the `vm` convention and the callers: allocation events' objects).
        unsafe { (jni_fn!(self, GetObjectClass))(self.env, obj) }
    }

    /// Is `obj` (not null) an instance of `class`?
    pub(super) fn is_instance_of(&self, obj: jobject, class: jclass) -> bool {
        // SAFETY: this thread's env; live references to an object and a class.
        unsafe { (jni_fn!(self, IsInstanceOf))(self.env, obj, class) != 0 }
    }

    /// The id of instance method `name` `sig` of `class`.
    pub fn method_id(
        &self,
        class: jclass,
        name: &str,
        sig: &str,
    ) -> Result<jmethodID, JavaException> {
        self.member_id("method", name, sig, |n, s| {
            // SAFETY: this thread's env; `class` a live class reference (the
            // `vm` convention); NUL-terminated strings alive for the call. An
            // unknown method is a NoSuchMethodError, which `member_id` handles.
            unsafe { (jni_fn!(self, GetMethodID))(self.env, class, n, s) }
        })
    }

    /// The id of static method `name` `sig` of `class`.
    pub fn static_method_id(
        &self,
        class: jclass,
        name: &str,
        sig: &str,
    ) -> Result<jmethodID, JavaException> {
        self.member_id("static method", name, sig, |n, s| {
            // SAFETY: as in `method_id`.
            unsafe { (jni_fn!(self, GetStaticMethodID))(self.env, class, n, s) }
        })
    }

    /// The id of instance field `name` of type `sig` in `class`.
    pub fn field_id(
        &self,
        class: jclass,
        name: &str,
        sig: &str,
    ) -> Result<jni_sys::jfieldID, JavaException> {
        self.member_id("field", name, sig, |n, s| {
            // SAFETY: as in `method_id` (an unknown field: NoSuchFieldError).
            unsafe { (jni_fn!(self, GetFieldID))(self.env, class, n, s) }
        })
    }

    /// What the three look-ups share: the strings made C strings, the
    /// exception cleared into an error, a null id refused.
    fn member_id<T>(
        &self,
        kind: &str,
        name: &str,
        sig: &str,
        get: impl FnOnce(*const c_char, *const c_char) -> *mut T,
    ) -> Result<*mut T, JavaException> {
        let n = CString::new(name).map_err(|_| JavaException(name.into()))?;
        let s = CString::new(sig).map_err(|_| JavaException(sig.into()))?;
        let id = get(n.as_ptr(), s.as_ptr());
        self.check_exception(&format!("looking up {kind} {name}{sig}"))?;
        if id.is_null() {
            return Err(JavaException(format!("{kind} {name}{sig} not found")));
        }
        Ok(id)
    }
}
