//! Objects the agent makes or reads: strings, `long[]` and object arrays,
//! fields, and native memory shown to Java as a direct buffer.

use super::{JavaException, Jni};
use jni_sys::{jclass, jobject};
use std::ffi::CString;

impl Jni {
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

    /// A direct `java.nio.ByteBuffer` over `len` bytes at `at`, as a local
    /// reference (null when the VM cannot make one).
    ///
    /// # Safety
    /// The memory must stay allocated and writable for as long as the VM
    /// lives (Java code may read and write it through the buffer at any
    /// time), and whatever else reads or writes it must expect Java's plain
    /// loads and stores.
    pub unsafe fn direct_buffer(&self, at: *mut u8, len: usize) -> jobject {
        let Ok(len) = jni_sys::jlong::try_from(len) else {
            return std::ptr::null_mut();
        };
        // SAFETY: this thread's env; the memory outlives the buffer (the
        // caller's promise).
        let buffer = unsafe { (jni_fn!(self, NewDirectByteBuffer))(self.env, at.cast(), len) };
        if self.check_exception("making a direct buffer").is_err() {
            return std::ptr::null_mut();
        }
        buffer
    }
}
