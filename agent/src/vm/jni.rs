//! Safe wrapper over the few JNI functions the agent uses. A `Jni` is bound to
//! the thread the VM handed it to and is deliberately neither `Send` nor `Sync`.
//! References passed in follow the convention of `vm` (live, of the class
//! their type names); a method that needs more is an `unsafe fn`.

use super::handles::{GlobalRef, VmHandle};
use jni_sys::{jclass, jint, jmethodID, jobject, jvalue, JNIEnv};
use std::ffi::CString;
use std::marker::PhantomData;

/// A native method to bind: (name, descriptor, function).
pub type Native = (&'static str, &'static str, *mut std::ffi::c_void);

/// Local references a frame can promise (HotSpot's MaxJNILocalCapacity):
/// for frames around JVMTI calls that return one reference per class or
/// module, whose count is unknown beforehand. Promising less makes
/// `-Xcheck:jni` print a warning on the application's stdout.
pub const MAX_LOCAL_FRAME: jint = 65_536;

/// The calling thread's JNIEnv. Invariant (from [`Jni::from_raw`]): `env` is
/// the JNIEnv of the thread this value lives on, valid while it is used.
pub struct Jni {
    pub(super) env: *mut JNIEnv,
    _not_send: PhantomData<*mut ()>,
}

/// A pending Java exception, already cleared; the text says what failed.
#[derive(Debug, Clone)]
pub struct JavaException(pub String);

impl std::fmt::Display for JavaException {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for JavaException {}

impl Jni {
    /// The JNIEnv of the current thread, which must be a Java thread (the
    /// attach listener is one); GetEnv's error code otherwise.
    pub fn from_vm(vm: VmHandle) -> Result<Self, jint> {
        let env = vm.get_env(jni_sys::JNI_VERSION_1_6)?;
        // SAFETY: GetEnv answered the calling thread's own JNIEnv, valid while
        // the thread stays attached, and a `Jni` cannot leave the thread.
        Ok(unsafe { Self::from_raw(env.as_ptr().cast()) })
    }

    /// Wraps the JNIEnv the VM passed to a callback or native method.
    ///
    /// # Safety
    /// `env` must be the calling thread's JNIEnv (the one the VM passed to
    /// the function running now, on this thread), and the result must not be
    /// used after the thread detaches from the VM.
    pub unsafe fn from_raw(env: *mut JNIEnv) -> Self {
        Self {
            env,
            _not_send: PhantomData,
        }
    }

    /// The JNIEnv itself, for code that keeps it only as long as this `Jni`.
    pub fn as_raw(&self) -> *mut JNIEnv {
        self.env
    }

    fn table(&self) -> &jni_sys::JNINativeInterface_ {
        // SAFETY: `env` is this thread's JNIEnv (the invariant of `Jni`): it
        // points to the VM's function table, which lives as long as the VM.
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
        // SAFETY: this thread's env (the invariant of `Jni`); no other argument.
        let pending = unsafe { (jni_fn!(self, ExceptionCheck))(self.env) } != 0;
        if pending {
            // SAFETY: this thread's env; clearing is allowed with an exception pending.
            unsafe { (jni_fn!(self, ExceptionClear))(self.env) };
            return Err(JavaException(format!("Java exception while {what}")));
        }
        Ok(())
    }

    pub fn delete_local_ref(&self, obj: jobject) {
        if !obj.is_null() {
            // SAFETY: this thread's env; `obj` is a live local reference of
            // this thread (the `vm` convention), not used after this.
            unsafe { (jni_fn!(self, DeleteLocalRef))(self.env, obj) }
        }
    }

    /// Runs `f` inside a fresh JNI local frame, so the local references it
    /// creates (stack traces, classes, threads) are released when it returns.
    /// Long-running agent threads never return to Java, so without this every
    /// local reference would leak.
    pub fn with_local_frame<R>(&self, capacity: jint, f: impl FnOnce() -> R) -> R {
        // SAFETY: this thread's env; any capacity is allowed (the VM fails
        // the call, with an exception, when it cannot reserve it).
        let pushed = unsafe { (jni_fn!(self, PushLocalFrame))(self.env, capacity) } == 0;
        let r = f();
        if pushed {
            // SAFETY: pops the frame pushed above, on the same thread; a null
            // result reference is allowed.
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
        // SAFETY: this thread's env; any capacity is allowed (the VM fails
        // the call, with an exception, when it cannot reserve it).
        if unsafe { (jni_fn!(self, EnsureLocalCapacity))(self.env, n) } != 0 {
            let _ = self.check_exception("reserving JNI local references");
        }
    }

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

    pub fn method_id(
        &self,
        class: jclass,
        name: &str,
        sig: &str,
    ) -> Result<jmethodID, JavaException> {
        let n = CString::new(name).map_err(|_| JavaException(name.into()))?;
        let s = CString::new(sig).map_err(|_| JavaException(sig.into()))?;
        // SAFETY: this thread's env; `class` a live class reference (the `vm`
        // convention); NUL-terminated strings alive for the call. An unknown
        // method is an error (NoSuchMethodError), handled below.
        let id = unsafe { (jni_fn!(self, GetMethodID))(self.env, class, n.as_ptr(), s.as_ptr()) };
        self.check_exception(&format!("looking up {name}{sig}"))?;
        if id.is_null() {
            return Err(JavaException(format!("method {name}{sig} not found")));
        }
        Ok(id)
    }

    pub fn new_string(&self, s: &str) -> Result<jobject, JavaException> {
        let c = CString::new(s).map_err(|_| JavaException(s.into()))?;
        // SAFETY: this thread's env; `c` is NUL-terminated and alive for the
        // call. (UTF-8 is modified UTF-8 but for characters beyond the BMP,
        // which HotSpot decodes to wrong characters, without reading past
        // the terminator.)
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
        // SAFETY: `get` is the static method System.getProperty(String) of
        // `class`, returning an object; `args` is one String, as its
        // descriptor says.
        let value = unsafe {
            (jni_fn!(self, CallStaticObjectMethodA))(self.env, class, get, args.as_ptr())
        };
        self.check_exception("reading a system property")?;
        let text = self.string_utf(value);
        self.delete_local_ref(value);
        text
    }

    /// The text of a `java.lang.String` reference, `None` for null. An
    /// object of another class is an error.
    pub fn string_utf(&self, value: jobject) -> Result<Option<String>, JavaException> {
        if value.is_null() {
            return Ok(None);
        }
        let string = self.find_class("java/lang/String")?;
        let is_string = self.is_instance_of(value, string);
        self.delete_local_ref(string);
        if !is_string {
            return Err(JavaException("reading a string: not a String".into()));
        }
        // SAFETY: this thread's env; `value` a live java.lang.String (checked
        // above); a null isCopy is allowed. The chars are released below.
        let chars =
            unsafe { (jni_fn!(self, GetStringUTFChars))(self.env, value, std::ptr::null_mut()) };
        if chars.is_null() {
            self.check_exception("reading a string")?;
            return Ok(None);
        }
        // SAFETY: GetStringUTFChars returned a NUL-terminated string
        // (modified UTF-8), valid until the release below.
        let utf = unsafe { std::ffi::CStr::from_ptr(chars) };
        let text = profrj_format::names::decode_modified_utf8(utf.to_bytes());
        // SAFETY: releases the chars got above from the same string, once.
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
        // SAFETY: `set` is the static method System.setProperty(String,
        // String) of `class`, returning an object; `args` are two Strings, as
        // its descriptor says.
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
        // SAFETY: `ctor` is the constructor Thread(String) of `class`, a
        // concrete class; `args` is one String, as its descriptor says.
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

    /// Calls a static no-argument method returning an object.
    pub fn call_static_object(
        &self,
        class: &str,
        name: &str,
        sig: &str,
    ) -> Result<jobject, JavaException> {
        check_no_args_object_result(name, sig)?;
        let c = self.find_class(class)?;
        let id = self.static_method_id(c, name, sig)?;
        // SAFETY: `id` is a static method of `c` that takes no arguments and
        // returns an object (its descriptor, checked above): a null argument
        // array is enough.
        let r =
            unsafe { (jni_fn!(self, CallStaticObjectMethodA))(self.env, c, id, std::ptr::null()) };
        self.check_exception(&format!("calling {class}.{name}"))?;
        Ok(r)
    }

    /// Calls an instance no-argument method returning an object. `obj` not
    /// an instance of `class` (or null) is an error.
    pub fn call_object(
        &self,
        obj: jobject,
        class: &str,
        name: &str,
        sig: &str,
    ) -> Result<jobject, JavaException> {
        check_no_args_object_result(name, sig)?;
        let c = self.find_class(class)?;
        if obj.is_null() || !self.is_instance_of(obj, c) {
            return Err(JavaException(format!(
                "calling {class}.{name} on an object of another class"
            )));
        }
        let id = self.method_id(c, name, sig)?;
        // SAFETY: `obj` is an instance of `c` (checked above) and `id` a
        // method of `c` that takes no arguments and returns an object (its
        // descriptor, checked above): a null argument array is enough.
        let r = unsafe { (jni_fn!(self, CallObjectMethodA))(self.env, obj, id, std::ptr::null()) };
        self.check_exception(&format!("calling {class}.{name}"))?;
        Ok(r)
    }

    /// A global reference to `obj`, kept for the VM's life; `None` for a
    /// null `obj` or when the VM is out of memory.
    pub fn new_global_ref(&self, obj: jobject) -> Option<GlobalRef> {
        // SAFETY: this thread's env; `obj` a live reference or null.
        let global = unsafe { (jni_fn!(self, NewGlobalRef))(self.env, obj) };
        // SAFETY: a global reference NewGlobalRef just made, which nothing
        // deletes (the agent keeps them all for the VM's life).
        std::ptr::NonNull::new(global).map(|g| unsafe { GlobalRef::new(g) })
    }

    pub fn is_same_object(&self, a: jobject, b: jobject) -> bool {
        // SAFETY: this thread's env; both are live references or null.
        unsafe { (jni_fn!(self, IsSameObject))(self.env, a, b) != 0 }
    }

    /// `Thread.threadId()` of `thread` (a live `Thread` reference), read
    /// from its `tid` field without running Java code.
    pub fn java_thread_id(&self, thread: jobject) -> Option<i64> {
        let class = self.find_class("java/lang/Thread").ok()?;
        let field = self.field_id(class, "tid", "J");
        let ok = !thread.is_null() && self.is_instance_of(thread, class);
        self.delete_local_ref(class);
        let field = field.ok()?;
        // SAFETY: `thread` is a live, non-null Thread (checked above) and
        // `field` a `long` field of Thread.
        ok.then(|| unsafe { self.long_field(thread, field) })
    }

    /// The VM's JNI version (`JNI_VERSION_*`).
    pub fn version(&self) -> jint {
        // SAFETY: this thread's env; no other argument.
        unsafe { (jni_fn!(self, GetVersion))(self.env) }
    }

    /// Is `thread` (a live `Thread` reference) a virtual thread? Always
    /// false before JNI 21 (JDK 21), which has none.
    pub fn is_virtual_thread(&self, thread: jobject) -> bool {
        const JNI_VERSION_21: jint = 0x0015_0000;
        /// `IsVirtualThread`'s slot in the JNI 21 function table (jni.h:
        /// after `GetModule`, 233).
        const IS_VIRTUAL_THREAD: usize = 234;
        if self.version() < JNI_VERSION_21 {
            return false;
        }
        type IsVirtual = unsafe extern "system" fn(*mut JNIEnv, jobject) -> jni_sys::jboolean;
        // SAFETY: `env` points to the VM's function table (the invariant of
        // `Jni`), an array of pointers; a JNI 21 VM (checked above) has
        // `IsVirtualThread` at slot 234, a function of that signature.
        let f = unsafe {
            let table = *self.env as *const Option<IsVirtual>;
            *table.add(IS_VIRTUAL_THREAD)
        };
        // SAFETY: this thread's env and a live thread reference.
        f.is_some_and(|f| unsafe { f(self.env, thread) } != 0)
    }

    /// Is `obj` (not null) an instance of `class`?
    fn is_instance_of(&self, obj: jobject, class: jclass) -> bool {
        // SAFETY: this thread's env; live references to an object and a class.
        unsafe { (jni_fn!(self, IsInstanceOf))(self.env, obj, class) != 0 }
    }

    /// A new `long[len]`, zeroed.
    pub fn new_long_array(&self, len: usize) -> Result<jobject, JavaException> {
        let len = jni_sys::jsize::try_from(len)
            .map_err(|_| JavaException(format!("long[{len}] is too large")))?;
        // SAFETY: this thread's env; a non-negative length (`try_from` above
        // leaves no other).
        let a = unsafe { (jni_fn!(self, NewLongArray))(self.env, len) };
        self.check_exception("allocating a long[]")?;
        if a.is_null() {
            return Err(JavaException("allocating a long[] returned null".into()));
        }
        Ok(a)
    }

    /// Copies the start of a `long[]` into `out`; an array shorter than
    /// `out` is an error (ArrayIndexOutOfBoundsException, cleared).
    ///
    /// # Safety
    /// `array` must be a live reference to a `long[]`: the VM does not check
    /// the array's type.
    pub unsafe fn long_array_region(
        &self,
        array: jobject,
        out: &mut [i64],
    ) -> Result<(), JavaException> {
        // SAFETY: this thread's env; `array` a live long[] (the caller's
        // promise); `out` is writable for `out.len()` elements. The VM checks
        // the bounds, raising an exception that is handled below.
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
        // SAFETY: this thread's env; a live class; a non-negative length;
        // a null initial element.
        let a = unsafe {
            (jni_fn!(self, NewObjectArray))(self.env, len, element_class, std::ptr::null_mut())
        };
        self.check_exception("allocating an array")?;
        if a.is_null() {
            return Err(JavaException("allocating an array returned null".into()));
        }
        for (i, item) in items {
            // SAFETY: `a` is the object array just made.
            unsafe { self.set_object_array_element(a, i, item) }?;
        }
        Ok(a)
    }

    /// `array[index] = item`; an index out of bounds or an item of the
    /// wrong class is an error (the exception is cleared).
    ///
    /// # Safety
    /// `array` must be a live reference to an array of objects (`Object[]`,
    /// `long[][]`...): the VM does not check that it is one.
    pub unsafe fn set_object_array_element(
        &self,
        array: jobject,
        index: usize,
        item: jobject,
    ) -> Result<(), JavaException> {
        let index = jni_sys::jsize::try_from(index)
            .map_err(|_| JavaException(format!("array index {index} is too large")))?;
        // SAFETY: this thread's env; `array` a live object array (the
        // caller's promise), `item` a live reference or null. The VM checks
        // the index and the item's class, raising an exception handled below.
        unsafe { (jni_fn!(self, SetObjectArrayElement))(self.env, array, index, item) };
        self.check_exception("storing into an array")
    }

    /// A new local reference to `obj` (e.g. a global one, to return to Java).
    pub fn new_local_ref(&self, obj: jobject) -> jobject {
        // SAFETY: this thread's env; `obj` is a live reference or null.
        unsafe { (jni_fn!(self, NewLocalRef))(self.env, obj) }
    }

    /// Sets static field `name` of type `sig` of `class` to `value`.
    ///
    /// # Safety
    /// `value` must be null or an instance of the type `sig` names: the VM
    /// stores it without checking.
    pub unsafe fn set_static_object_field(
        &self,
        class: jclass,
        name: &str,
        sig: &str,
        value: jobject,
    ) -> Result<(), JavaException> {
        let n = CString::new(name).map_err(|_| JavaException(name.into()))?;
        let s = CString::new(sig).map_err(|_| JavaException(sig.into()))?;
        // SAFETY: this thread's env; a live class; NUL-terminated strings
        // alive for the call. An unknown field is a NoSuchFieldError, handled
        // below.
        let id =
            unsafe { (jni_fn!(self, GetStaticFieldID))(self.env, class, n.as_ptr(), s.as_ptr()) };
        self.check_exception(&format!("looking up field {name}"))?;
        if id.is_null() {
            return Err(JavaException(format!("field {name} not found")));
        }
        // SAFETY: `id` is a static field of `class` of type `sig`, and
        // `value` null or of that type (the caller's promise).
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
        // SAFETY: this thread's env; a live class; NUL-terminated strings
        // alive for the call. An unknown method is a NoSuchMethodError,
        // handled below.
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
        // SAFETY: this thread's env; `obj` is a live reference or null.
        unsafe { (jni_fn!(self, NewWeakGlobalRef))(self.env, obj) }
    }

    /// Frees a weak global reference made by `new_weak_global_ref`.
    pub fn delete_weak_global_ref(&self, weak: jobject) {
        // SAFETY: this thread's env; `weak` is a weak global reference not
        // deleted yet (the `vm` convention: a live reference), not used after.
        unsafe { (jni_fn!(self, DeleteWeakGlobalRef))(self.env, weak) }
    }

    /// The class of `obj`, as a local reference.
    pub fn object_class(&self, obj: jobject) -> jclass {
        // SAFETY: this thread's env; `obj` is a live, non-null reference
        // (the `vm` convention and the callers: allocation events' objects).
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
        // SAFETY: this thread's env; a live class; NUL-terminated strings
        // alive for the call. An unknown field is a NoSuchFieldError, handled
        // below.
        let id = unsafe { (jni_fn!(self, GetFieldID))(self.env, class, n.as_ptr(), s.as_ptr()) };
        self.check_exception(&format!("looking up field {name}"))?;
        if id.is_null() {
            return Err(JavaException(format!("field {name} not found")));
        }
        Ok(id)
    }

    /// The value of the object (or array) field `name` of type `sig` of
    /// `obj`, an instance of `class`, as a local reference (null for a null
    /// field); `obj` null or of another class is an error.
    pub fn object_field(
        &self,
        obj: jobject,
        class: &str,
        name: &str,
        sig: &str,
    ) -> Result<jobject, JavaException> {
        if !(sig.starts_with('L') || sig.starts_with('[')) {
            return Err(JavaException(format!(
                "{name}: {sig} is not an object type"
            )));
        }
        let c = self.find_class(class)?;
        if obj.is_null() || !self.is_instance_of(obj, c) {
            return Err(JavaException(format!(
                "reading {class}.{name} of an object of another class"
            )));
        }
        let id = self.field_id(c, name, sig)?;
        // SAFETY: this thread's env; `obj` is an instance of `c` (checked
        // above) and `id` an object field of `c` (its type, checked above).
        Ok(unsafe { (jni_fn!(self, GetObjectField))(self.env, obj, id) })
    }

    /// The value of `long` field `field` of `obj`.
    ///
    /// # Safety
    /// `obj` must be a live, non-null reference and `field` a `long` instance
    /// field of its class (from [`Jni::field_id`]): the VM checks neither.
    pub unsafe fn long_field(&self, obj: jobject, field: jni_sys::jfieldID) -> i64 {
        // SAFETY: this thread's env; the caller vouches for `obj` and `field`.
        unsafe { (jni_fn!(self, GetLongField))(self.env, obj, field) }
    }
}

/// The methods `call_object` and `call_static_object` may call: no
/// arguments, an object (class or array) as the result. JNI's
/// `Call*ObjectMethodA` on another kind is undefined behaviour.
fn check_no_args_object_result(name: &str, sig: &str) -> Result<(), JavaException> {
    match sig.strip_prefix("()") {
        Some(result) if result.starts_with('L') || result.starts_with('[') => Ok(()),
        _ => Err(JavaException(format!(
            "{name}{sig} is not a method without arguments that returns an object"
        ))),
    }
}

mod stamps;
