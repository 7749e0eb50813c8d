//! HotSpot's diagnostic commands (what `jcmd PID COMMAND` runs), called in
//! the JVM through its DiagnosticCommand MBean. The agent uses one: a
//! `VM.log` setting (see `heap_dump`'s at an OutOfMemoryError).

use super::{JavaException, Jni};
use jni_sys::jvalue;

impl Jni {
    /// Runs diagnostic command `operation` (the MBean's name for it:
    /// `vmLog` for `VM.log`) with `args` (as jcmd takes them, one each).
    pub fn diagnostic_command(&self, operation: &str, args: &[&str]) -> Result<(), JavaException> {
        self.with_local_frame(32, || {
            let server = self.call_static_object(
                "java/lang/management/ManagementFactory",
                "getPlatformMBeanServer",
                "()Ljavax/management/MBeanServer;",
            )?;
            let name_class = self.find_class("javax/management/ObjectName")?;
            let ctor = self.method_id(name_class, "<init>", "(Ljava/lang/String;)V")?;
            let text = self.new_string("com.sun.management:type=DiagnosticCommand")?;
            let ctor_args = [jvalue { l: text }];
            // SAFETY: `ctor` is ObjectName(String) of `name_class`; one
            // String argument, as its descriptor says.
            let name = unsafe {
                (jni_fn!(self, NewObjectA))(self.env, name_class, ctor, ctor_args.as_ptr())
            };
            self.check_exception("making the DiagnosticCommand MBean's name")?;
            let string = self.find_class("java/lang/String")?;
            let strings: Vec<_> = args
                .iter()
                .map(|a| self.new_string(a))
                .collect::<Result<_, _>>()?;
            let arg_array =
                self.new_object_array(string, strings.len(), strings.into_iter().enumerate())?;
            let object = self.find_class("java/lang/Object")?;
            let params = self.new_object_array(object, 1, [(0, arg_array)].into_iter())?;
            let sig = self.new_string("[Ljava.lang.String;")?;
            let signature = self.new_object_array(string, 1, [(0, sig)].into_iter())?;
            let server_class = self.find_class("javax/management/MBeanServerConnection")?;
            let invoke = self.method_id(
                server_class,
                "invoke",
                "(Ljavax/management/ObjectName;Ljava/lang/String;[Ljava/lang/Object;[Ljava/lang/String;)Ljava/lang/Object;",
            )?;
            let op = self.new_string(operation)?;
            let call = [
                jvalue { l: name },
                jvalue { l: op },
                jvalue { l: params },
                jvalue { l: signature },
            ];
            // SAFETY: `server` is the platform MBeanServer (an
            // MBeanServerConnection), `invoke` that interface's
            // invoke(ObjectName, String, Object[], String[]) returning an
            // object; `call` holds those four, as its descriptor says.
            unsafe { (jni_fn!(self, CallObjectMethodA))(self.env, server, invoke, call.as_ptr()) };
            self.check_exception(&format!("running diagnostic command {operation}"))
        })
    }
}
