//! Objects made out of sight of the allocation probes: by the VM for Java
//! code (the VMObjectAlloc event) or by native code with JNI (the agent's
//! interception of the JNI allocation functions). Counted when the method on
//! top of the stack is in scope: a native method of the application making
//! objects with JNI. Reflection and `clone`, which compiled code does without
//! the event, are counted at their call sites; their events here have a JDK
//! method on top and are left out.

use super::Lifetime;
use crate::host::Host;
use crate::vm::sys::JvmtiFrameInfo;
use crate::vm::{jthread, Jni};
use jni_sys::{jclass, jobject};

/// VMObjectAlloc (and JNI's, through [`jni_allocated`]).
pub fn vm_allocated(
    host: &Host,
    life: &Lifetime,
    jni: &Jni,
    thread: jthread,
    object: jobject,
    class: jclass,
) {
    if !life.is_active() {
        return;
    }
    if host.thread_id(jni, thread).is_none() {
        return; // the agent's own allocations
    }
    let mut buf = [JvmtiFrameInfo {
        method: std::ptr::null_mut(),
        location: 0,
    }];
    let Ok([top]) = host.jvmti.stack_trace(thread, &mut buf) else {
        return;
    };
    let Ok(c) = host.jvmti.method_declaring_class(top.method) else {
        return;
    };
    let entry_point = host
        .jvmti
        .class_signature(c)
        .is_ok_and(|sig| crate::instrument::makers::is_entry_point(&sig));
    let in_scope = !entry_point && host.instrumenter.class_in_scope(host.jvmti, jni, c);
    jni.delete_local_ref(c);
    if in_scope {
        if let Ok(sig) = host.jvmti.class_signature(class) {
            super::track_vm_object(jni, object, &sig);
        }
    }
}

/// An object native code made with JNI.
pub fn jni_allocated(host: &Host, life: &Lifetime, jni: &Jni, object: jobject) {
    if !life.is_active() {
        return;
    }
    let Ok(thread) = host.jvmti.current_thread() else {
        return;
    };
    let class = jni.object_class(object);
    vm_allocated(host, life, jni, thread, object, class);
    jni.delete_local_ref(class);
    jni.delete_local_ref(thread);
}
