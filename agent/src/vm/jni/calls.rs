//! Java code the agent runs: static and instance methods without arguments
//! that return an object, and `System.getProperty`/`setProperty`. Apart
//! because each runs Java code, where a wrong descriptor is undefined
//! behaviour, not an exception: the one a caller names is checked first.

use super::{JavaException, Jni};
use jni_sys::{jclass, jmethodID, jobject, jvalue};

impl Jni {
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
