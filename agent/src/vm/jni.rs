//! Safe wrapper over the few JNI functions the agent uses. A `Jni` is bound to
//! the thread the VM handed it to and is deliberately neither `Send` nor `Sync`.

use super::handles::{GlobalRef, VmHandle};
use jni_sys::{jclass, jint, jmethodID, jobject, jvalue, JNIEnv};
use std::ffi::CString;
use std::marker::PhantomData;

/// Local references a frame can promise (HotSpot's MaxJNILocalCapacity):
/// for frames around JVMTI calls that return one reference per class or
/// module, whose count is unknown beforehand. Promising less makes
/// `-Xcheck:jni` print a warning on the application's stdout.
pub const MAX_LOCAL_FRAME: jint = 65_536;

pub struct Jni {
    pub(super) env: *mut JNIEnv,
    _not_send: PhantomData<*mut ()>,
}

/// A pending Java exception, already cleared; the text says what failed.
#[derive(Debug)]
pub struct JavaException(pub String);

impl Jni {
    /// The JNIEnv of the current thread, which must be a Java thread (the
    /// attach listener is one); GetEnv's error code otherwise.
    pub fn from_vm(vm: VmHandle) -> Result<Self, jint> {
        let env = vm.get_env(jni_sys::JNI_VERSION_1_6)?;
        Ok(Self::from_raw(env.as_ptr().cast()))
    }

    /// Wraps the JNIEnv the VM passed to a callback on this thread.
    pub fn from_raw(env: *mut JNIEnv) -> Self {
        Self {
            env,
            _not_send: PhantomData,
        }
    }

    fn table(&self) -> &jni_sys::JNINativeInterface_ {
        // SAFETY: `env` is the JNIEnv of the current thread, valid while the VM
        // runs this thread; the table it points to is the VM's own.
        unsafe { &**self.env }
    }
}

/// Looks up a JNI function; every JVM fills every slot of JNI 1.2+, so a null
/// one is a broken VM (the panic is caught by the callback guard).
macro_rules! jni_fn {
    ($self:expr, $name:ident) => {
        $self
            .table()
            .$name
            .expect(concat!("JNI function ", stringify!($name), " missing"))
    };
}

impl Jni {
    /// Clears a pending exception; `Err` names what was being done.
    fn check_exception(&self, what: &str) -> Result<(), JavaException> {
        // SAFETY: valid env on its own thread.
        let pending = unsafe { (jni_fn!(self, ExceptionCheck))(self.env) } != 0;
        if pending {
            // SAFETY: as above.
            unsafe { (jni_fn!(self, ExceptionClear))(self.env) };
            return Err(JavaException(format!("Java exception while {what}")));
        }
        Ok(())
    }

    pub fn delete_local_ref(&self, obj: jobject) {
        if !obj.is_null() {
            // SAFETY: `obj` is a local reference owned by this thread's frame.
            unsafe { (jni_fn!(self, DeleteLocalRef))(self.env, obj) }
        }
    }

    /// Runs `f` inside a fresh JNI local frame, so the local references it
    /// creates (stack traces, classes, threads) are released when it returns.
    /// Long-running agent threads never return to Java, so without this every
    /// local reference would leak.
    pub fn with_local_frame<R>(&self, capacity: jint, f: impl FnOnce() -> R) -> R {
        // SAFETY: valid env on its own thread.
        let pushed = unsafe { (jni_fn!(self, PushLocalFrame))(self.env, capacity) } == 0;
        let r = f();
        if pushed {
            // SAFETY: pairs the successful PushLocalFrame above.
            unsafe { (jni_fn!(self, PopLocalFrame))(self.env, std::ptr::null_mut()) };
        } else {
            let _ = self.check_exception("reserving JNI local references");
        }
        r
    }

    /// Tells the VM this frame will hold `n` more local references (JVMTI calls
    /// such as GetAllThreads create one per thread).
    pub fn ensure_local_capacity(&self, n: usize) {
        let n = n.min(i32::MAX as usize) as jint;
        // SAFETY: valid env on its own thread.
        if unsafe { (jni_fn!(self, EnsureLocalCapacity))(self.env, n) } != 0 {
            let _ = self.check_exception("reserving JNI local references");
        }
    }

    pub fn find_class(&self, name: &str) -> Result<jclass, JavaException> {
        let c = CString::new(name).map_err(|_| JavaException(format!("bad class name {name}")))?;
        // SAFETY: valid env; `c` is NUL-terminated.
        let class = unsafe { (jni_fn!(self, FindClass))(self.env, c.as_ptr()) };
        self.check_exception(&format!("loading {name}"))?;
        if class.is_null() {
            return Err(JavaException(format!("class {name} not found")));
        }
        Ok(class)
    }

    pub fn method_id(
        &self,
        class: jclass,
        name: &str,
        sig: &str,
    ) -> Result<jmethodID, JavaException> {
        let n = CString::new(name).map_err(|_| JavaException(name.into()))?;
        let s = CString::new(sig).map_err(|_| JavaException(sig.into()))?;
        // SAFETY: valid env and class; strings are NUL-terminated.
        let id = unsafe { (jni_fn!(self, GetMethodID))(self.env, class, n.as_ptr(), s.as_ptr()) };
        self.check_exception(&format!("looking up {name}{sig}"))?;
        if id.is_null() {
            return Err(JavaException(format!("method {name}{sig} not found")));
        }
        Ok(id)
    }

    pub fn new_string(&self, s: &str) -> Result<jobject, JavaException> {
        let c = CString::new(s).map_err(|_| JavaException(s.into()))?;
        // SAFETY: valid env; `c` is NUL-terminated (ASCII here, so valid modified UTF-8).
        let obj = unsafe { (jni_fn!(self, NewStringUTF))(self.env, c.as_ptr()) };
        self.check_exception("creating a string")?;
        Ok(obj)
    }

    /// `System.getProperty(key)`, `None` when unset.
    pub fn system_property(&self, key: &str) -> Result<Option<String>, JavaException> {
        let (class, get) =
            self.system_method("getProperty", "(Ljava/lang/String;)Ljava/lang/String;")?;
        let jkey = self.new_string(key)?;
        let args = [jvalue { l: jkey }];
        // SAFETY: `get` is System.getProperty(String); `args` matches its descriptor.
        let value = unsafe {
            (jni_fn!(self, CallStaticObjectMethodA))(self.env, class, get, args.as_ptr())
        };
        self.check_exception("reading a system property")?;
        let text = self.string_utf(value);
        self.delete_local_ref(value);
        text
    }

    /// The text of a `java.lang.String` reference, `None` for null.
    pub fn string_utf(&self, value: jobject) -> Result<Option<String>, JavaException> {
        if value.is_null() {
            return Ok(None);
        }
        // SAFETY: `value` is a live java.lang.String; the chars are released below.
        let chars =
            unsafe { (jni_fn!(self, GetStringUTFChars))(self.env, value, std::ptr::null_mut()) };
        if chars.is_null() {
            self.check_exception("reading a string")?;
            return Ok(None);
        }
        // SAFETY: GetStringUTFChars returns a NUL-terminated modified UTF-8 string.
        let text = unsafe { std::ffi::CStr::from_ptr(chars) }
            .to_string_lossy()
            .into_owned();
        // SAFETY: pairs the GetStringUTFChars above.
        unsafe { (jni_fn!(self, ReleaseStringUTFChars))(self.env, value, chars) };
        Ok(Some(text))
    }

    /// `System.setProperty(key, value)`.
    pub fn set_system_property(&self, key: &str, value: &str) -> Result<(), JavaException> {
        let (class, set) = self.system_method(
            "setProperty",
            "(Ljava/lang/String;Ljava/lang/String;)Ljava/lang/String;",
        )?;
        let args = [
            jvalue {
                l: self.new_string(key)?,
            },
            jvalue {
                l: self.new_string(value)?,
            },
        ];
        // SAFETY: `set` is System.setProperty(String, String); `args` matches its descriptor.
        unsafe { (jni_fn!(self, CallStaticObjectMethodA))(self.env, class, set, args.as_ptr()) };
        self.check_exception("setting a system property")
    }

    fn system_method(&self, name: &str, sig: &str) -> Result<(jclass, jmethodID), JavaException> {
        let class = self.find_class("java/lang/System")?;
        Ok((class, self.static_method_id(class, name, sig)?))
    }

    /// `new java.lang.Thread(name)`, not started: the object RunAgentThread needs.
    pub fn new_thread_object(&self, name: &str) -> Result<jobject, JavaException> {
        let class = self.find_class("java/lang/Thread")?;
        let ctor = self.method_id(class, "<init>", "(Ljava/lang/String;)V")?;
        let jname = self.new_string(name)?;
        let args = [jvalue { l: jname }];
        // SAFETY: `ctor` is Thread(String) of `class`; `args` matches its descriptor.
        let obj = unsafe { (jni_fn!(self, NewObjectA))(self.env, class, ctor, args.as_ptr()) };
        self.check_exception("creating the profrj thread")?;
        if obj.is_null() {
            return Err(JavaException(
                "creating the profrj thread returned null".into(),
            ));
        }
        Ok(obj)
    }

    /// Defines a class in the boot class loader from its class-file bytes.
    pub fn define_boot_class(&self, name: &str, bytes: &[u8]) -> Result<jclass, JavaException> {
        let n = CString::new(name).map_err(|_| JavaException(name.into()))?;
        // SAFETY: valid env; a null loader means the bootstrap loader; the
        // bytes are read during the call only.
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

    /// Binds native methods of `class`: (name, descriptor, function).
    pub fn register_natives(
        &self,
        class: jclass,
        methods: &[(&str, &str, *mut std::ffi::c_void)],
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
        // SAFETY: valid env and class; every entry points at NUL-terminated
        // strings alive for the call and a function of the declared signature.
        let rc = unsafe {
            (jni_fn!(self, RegisterNatives))(self.env, class, table.as_ptr(), table.len() as jint)
        };
        self.check_exception("registering natives")?;
        if rc != 0 {
            return Err(JavaException(format!("RegisterNatives returned {rc}")));
        }
        Ok(())
    }

    /// Calls a static no-argument method returning an object.
    pub fn call_static_object(
        &self,
        class: &str,
        name: &str,
        sig: &str,
    ) -> Result<jobject, JavaException> {
        let c = self.find_class(class)?;
        let id = self.static_method_id(c, name, sig)?;
        // SAFETY: `id` is a static method of `c` taking no arguments.
        let r =
            unsafe { (jni_fn!(self, CallStaticObjectMethodA))(self.env, c, id, std::ptr::null()) };
        self.check_exception(&format!("calling {class}.{name}"))?;
        Ok(r)
    }

    /// Calls an instance no-argument method returning an object.
    pub fn call_object(
        &self,
        obj: jobject,
        class: &str,
        name: &str,
        sig: &str,
    ) -> Result<jobject, JavaException> {
        let c = self.find_class(class)?;
        let id = self.method_id(c, name, sig)?;
        // SAFETY: `obj` is an instance of `class`, `id` one of its methods taking no arguments.
        let r = unsafe { (jni_fn!(self, CallObjectMethodA))(self.env, obj, id, std::ptr::null()) };
        self.check_exception(&format!("calling {class}.{name}"))?;
        Ok(r)
    }

    /// A global reference to `obj`, kept for the VM's life; `None` for a
    /// null `obj` or when the VM is out of memory.
    pub fn new_global_ref(&self, obj: jobject) -> Option<GlobalRef> {
        // SAFETY: valid env; `obj` is a live reference or null.
        let global = unsafe { (jni_fn!(self, NewGlobalRef))(self.env, obj) };
        // SAFETY: a global reference NewGlobalRef just made, which nothing
        // deletes (the agent keeps them all for the VM's life).
        std::ptr::NonNull::new(global).map(|g| unsafe { GlobalRef::new(g) })
    }

    pub fn is_same_object(&self, a: jobject, b: jobject) -> bool {
        // SAFETY: valid env; both are live references or null.
        unsafe { (jni_fn!(self, IsSameObject))(self.env, a, b) != 0 }
    }

    /// A new `long[len]`, zeroed.
    pub fn new_long_array(&self, len: usize) -> Result<jobject, JavaException> {
        let len = jni_sys::jsize::try_from(len)
            .map_err(|_| JavaException(format!("long[{len}] is too large")))?;
        // SAFETY: valid env; a non-negative length.
        let a = unsafe { (jni_fn!(self, NewLongArray))(self.env, len) };
        self.check_exception("allocating a long[]")?;
        if a.is_null() {
            return Err(JavaException("allocating a long[] returned null".into()));
        }
        Ok(a)
    }

    /// Copies a `long[]` into `out` (which must not be longer than the array).
    pub fn long_array_region(&self, array: jobject, out: &mut [i64]) -> Result<(), JavaException> {
        // SAFETY: valid env; `array` is a live long[] reference of at least
        // `out.len()` elements (checked by the VM, which raises otherwise).
        unsafe {
            (jni_fn!(self, GetLongArrayRegion))(
                self.env,
                array,
                0,
                out.len() as jni_sys::jsize,
                out.as_mut_ptr(),
            )
        };
        self.check_exception("reading a long[]")
    }

    /// A new `Object[len]`-like array of `element_class`, filled from `items`
    /// (null where `None`).
    pub fn new_object_array(
        &self,
        element_class: jclass,
        len: usize,
        items: impl Iterator<Item = (usize, jobject)>,
    ) -> Result<jobject, JavaException> {
        let len = jni_sys::jsize::try_from(len)
            .map_err(|_| JavaException(format!("array of {len} is too large")))?;
        // SAFETY: valid env and class; a non-negative length.
        let a = unsafe {
            (jni_fn!(self, NewObjectArray))(self.env, len, element_class, std::ptr::null_mut())
        };
        self.check_exception("allocating an array")?;
        if a.is_null() {
            return Err(JavaException("allocating an array returned null".into()));
        }
        for (i, item) in items {
            self.set_object_array_element(a, i, item)?;
        }
        Ok(a)
    }

    /// `array[index] = item`.
    pub fn set_object_array_element(
        &self,
        array: jobject,
        index: usize,
        item: jobject,
    ) -> Result<(), JavaException> {
        // SAFETY: valid env; `array` a live object array, `item` a live
        // reference or null (the VM checks index and type, raising otherwise).
        unsafe {
            (jni_fn!(self, SetObjectArrayElement))(self.env, array, index as jni_sys::jsize, item)
        };
        self.check_exception("storing into an array")
    }

    /// A new local reference to `obj` (e.g. a global one, to return to Java).
    pub fn new_local_ref(&self, obj: jobject) -> jobject {
        // SAFETY: valid env; `obj` is a live reference or null.
        unsafe { (jni_fn!(self, NewLocalRef))(self.env, obj) }
    }

    /// Sets static field `name` of type `sig` of `class` to `value`.
    pub fn set_static_object_field(
        &self,
        class: jclass,
        name: &str,
        sig: &str,
        value: jobject,
    ) -> Result<(), JavaException> {
        let n = CString::new(name).map_err(|_| JavaException(name.into()))?;
        let s = CString::new(sig).map_err(|_| JavaException(sig.into()))?;
        // SAFETY: valid env and class; strings are NUL-terminated.
        let id =
            unsafe { (jni_fn!(self, GetStaticFieldID))(self.env, class, n.as_ptr(), s.as_ptr()) };
        self.check_exception(&format!("looking up field {name}"))?;
        if id.is_null() {
            return Err(JavaException(format!("field {name} not found")));
        }
        // SAFETY: `id` is a static field of `class` whose type `value` has.
        unsafe { (jni_fn!(self, SetStaticObjectField))(self.env, class, id, value) };
        self.check_exception(&format!("setting field {name}"))
    }

    /// The id of static method `name` `sig` of `class`.
    pub fn static_method_id(
        &self,
        class: jclass,
        name: &str,
        sig: &str,
    ) -> Result<jmethodID, JavaException> {
        let n = CString::new(name).map_err(|_| JavaException(name.into()))?;
        let s = CString::new(sig).map_err(|_| JavaException(sig.into()))?;
        // SAFETY: valid env and class; strings are NUL-terminated.
        let id =
            unsafe { (jni_fn!(self, GetStaticMethodID))(self.env, class, n.as_ptr(), s.as_ptr()) };
        self.check_exception(&format!("looking up {name}{sig}"))?;
        if id.is_null() {
            return Err(JavaException(format!(
                "static method {name}{sig} not found"
            )));
        }
        Ok(id)
    }

    /// A weak global reference to `obj` (null when the VM has no room).
    pub fn new_weak_global_ref(&self, obj: jobject) -> jobject {
        // SAFETY: valid env; `obj` is a live reference.
        unsafe { (jni_fn!(self, NewWeakGlobalRef))(self.env, obj) }
    }

    /// Frees a weak global reference made by `new_weak_global_ref`.
    pub fn delete_weak_global_ref(&self, weak: jobject) {
        // SAFETY: valid env; `weak` is a weak global reference not deleted yet.
        unsafe { (jni_fn!(self, DeleteWeakGlobalRef))(self.env, weak) }
    }

    /// The class of `obj`, as a local reference.
    pub fn object_class(&self, obj: jobject) -> jclass {
        // SAFETY: valid env; `obj` is a live, non-null reference.
        unsafe { (jni_fn!(self, GetObjectClass))(self.env, obj) }
    }

    /// The id of instance field `name` of type `sig` in `class`.
    pub fn field_id(
        &self,
        class: jclass,
        name: &str,
        sig: &str,
    ) -> Result<jni_sys::jfieldID, JavaException> {
        let n = CString::new(name).map_err(|_| JavaException(name.into()))?;
        let s = CString::new(sig).map_err(|_| JavaException(sig.into()))?;
        // SAFETY: valid env and class; strings are NUL-terminated.
        let id = unsafe { (jni_fn!(self, GetFieldID))(self.env, class, n.as_ptr(), s.as_ptr()) };
        self.check_exception(&format!("looking up field {name}"))?;
        if id.is_null() {
            return Err(JavaException(format!("field {name} not found")));
        }
        Ok(id)
    }

    /// The value of `long` field `field` of `obj`.
    ///
    /// # Safety
    /// `field` must be a `long` instance field of `obj`'s class (from [`Jni::field_id`]).
    pub unsafe fn long_field(&self, obj: jobject, field: jni_sys::jfieldID) -> i64 {
        // SAFETY: valid env; the caller vouches for the field.
        unsafe { (jni_fn!(self, GetLongField))(self.env, obj, field) }
    }
}
