//! HotSpot's own heap dumper, called as Java code calls it:
//! `HotSpotDiagnosticMXBean.dumpHeap(path, live)` (module jdk.management).
//! The agent writes its heap dumps through it (`heap_dump`): the VM
//! operation, its pause and its file are HotSpot's, byte for byte.
//!
//! The bean and its method are found once and kept ([`HeapDumper`]): a dump
//! at an OutOfMemoryError cannot load classes or make much garbage, so
//! what it needs is ready before the heap runs out.

use super::{JavaException, Jni};
use crate::vm::handles::GlobalRef;
use jni_sys::{jmethodID, jobject, jvalue};

const MXBEAN: &str = "com/sun/management/HotSpotDiagnosticMXBean";

/// The HotSpotDiagnosticMXBean and its `dumpHeap(String, boolean)`, kept
/// for the VM's life.
#[derive(Clone, Copy)]
pub struct HeapDumper {
    bean: GlobalRef,
    dump: jmethodID,
}

// SAFETY: a method id is valid on every thread while its class is loaded
// (a JDK class, never unloaded); the bean is a global reference (Send, Sync).
unsafe impl Send for HeapDumper {}
// SAFETY: as above; neither is ever written.
unsafe impl Sync for HeapDumper {}

impl Jni {
    /// Finds the bean and its method (loads jdk.management's classes).
    pub fn heap_dumper(&self) -> Result<HeapDumper, JavaException> {
        self.with_local_frame(16, || {
            let bean = self.diagnostic_mxbean()?;
            let class = self.find_class(MXBEAN)?;
            let dump = self.method_id(class, "dumpHeap", "(Ljava/lang/String;Z)V")?;
            let bean = self.new_global_ref(bean).ok_or_else(|| {
                JavaException("no room for a global reference to the MXBean".into())
            })?;
            Ok(HeapDumper { bean, dump })
        })
    }

    /// Writes the heap to `path` (which must end in `.hprof` and must not
    /// exist: HotSpot creates it exclusively) with HotSpot's dumper; `live`:
    /// a full GC first, only reachable objects. The error carries the Java
    /// exception's text (an I/O error, say).
    pub fn hotspot_dump_heap(
        &self,
        dumper: HeapDumper,
        path: &str,
        live: bool,
    ) -> Result<(), JavaException> {
        self.with_local_frame(8, || {
            let args = [
                jvalue {
                    l: self.new_string(path)?,
                },
                jvalue { z: live as u8 },
            ];
            // SAFETY: `dumper.bean` is a HotSpotDiagnosticMXBean (returned
            // for that interface by getPlatformMXBean), `dumper.dump` its
            // method dumpHeap(String, boolean) returning void; `args` are a
            // String and a boolean, as the descriptor says.
            unsafe {
                (jni_fn!(self, CallVoidMethodA))(
                    self.env,
                    dumper.bean.as_raw(),
                    dumper.dump,
                    args.as_ptr(),
                )
            };
            self.exception_text("HotSpotDiagnosticMXBean.dumpHeap")
        })
    }

    /// `ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)`.
    fn diagnostic_mxbean(&self) -> Result<jobject, JavaException> {
        let interface = self.find_class(MXBEAN)?;
        let factory = self.find_class("java/lang/management/ManagementFactory")?;
        let get = self.static_method_id(
            factory,
            "getPlatformMXBean",
            "(Ljava/lang/Class;)Ljava/lang/management/PlatformManagedObject;",
        )?;
        let args = [jvalue { l: interface }];
        // SAFETY: `get` is the static method getPlatformMXBean(Class) of
        // `factory`, returning an object; `args` is one Class, as its
        // descriptor says.
        let bean = unsafe {
            (jni_fn!(self, CallStaticObjectMethodA))(self.env, factory, get, args.as_ptr())
        };
        self.exception_text("ManagementFactory.getPlatformMXBean")?;
        if bean.is_null() {
            return Err(JavaException(
                "this JVM has no HotSpotDiagnosticMXBean (not HotSpot?)".into(),
            ));
        }
        Ok(bean)
    }

    /// A pending exception, cleared, as an error with its `toString()`.
    fn exception_text(&self, what: &str) -> Result<(), JavaException> {
        // SAFETY: this thread's env; no other argument.
        let thrown = unsafe { (jni_fn!(self, ExceptionOccurred))(self.env) };
        if thrown.is_null() {
            return Ok(());
        }
        // SAFETY: this thread's env; clearing is allowed with an exception pending.
        unsafe { (jni_fn!(self, ExceptionClear))(self.env) };
        let text = self
            .call_object(
                thrown,
                "java/lang/Object",
                "toString",
                "()Ljava/lang/String;",
            )
            .ok()
            .and_then(|s| self.string_utf(s).ok().flatten())
            .unwrap_or_else(|| "an exception".into());
        Err(JavaException(format!("{what}: {text}")))
    }
}

/// Java heap held back for the dump at an OutOfMemoryError: a `long[]`
/// kept alive by a global reference, let go just before that dump so the
/// few objects the Java side of `dumpHeap` makes (its path string, a
/// property read) find room.
pub struct HeapReserve(jobject);

// SAFETY: a global reference is valid on every thread until deleted, which
// only `release` does, taking the value.
unsafe impl Send for HeapReserve {}

impl Jni {
    /// Holds `bytes` of the Java heap back (`None` if the heap has not that
    /// much room now).
    pub fn heap_reserve(&self, bytes: usize) -> Option<HeapReserve> {
        let local = self.new_long_array(bytes / 8).ok()?;
        // SAFETY: this thread's env; `local` a live reference.
        let global = unsafe { (jni_fn!(self, NewGlobalRef))(self.env, local) };
        self.delete_local_ref(local);
        (!global.is_null()).then_some(HeapReserve(global))
    }
}

impl HeapReserve {
    /// Lets the reserve go (the next GC reclaims it).
    pub fn release(self, jni: &Jni) {
        // SAFETY: `jni` is this thread's env; `self.0` a global reference
        // `heap_reserve` made and nothing deleted (this consumes it).
        unsafe { (jni_fn!(jni, DeleteGlobalRef))(jni.env, self.0) };
    }
}
