//! Objects made out of sight of the allocation probes: by the VM for Java
//! code (the VMObjectAlloc event) or by native code with JNI (the agent's
//! interception of the JNI allocation functions). Counted when the method on
//! top of the stack is in scope: a native method of the application making
//! objects with JNI. Reflection and `clone`, which compiled code does without
//! the event, are counted at their call sites; their events here have a JDK
//! method on top and are left out.

use crate::modes::Host;
use crate::threads::Identity;
use crate::vm::sys::JvmtiFrameInfo;
use crate::vm::{jthread, Jni};
use jni_sys::{jclass, jobject};

pub fn vm_allocated(a: &Host<'static>, jni: &Jni, thread: jthread, object: jobject, class: jclass) {
    if !a.memory.is_active() {
        return;
    }
    match a.threads.identify(a.jvmti, jni, thread, 0) {
        Some(Identity::Java(_)) => {}
        _ => return, // the agent's own allocations
    }
    let mut buf = [JvmtiFrameInfo {
        method: std::ptr::null_mut(),
        location: 0,
    }];
    let Ok([top]) = a.jvmti.stack_trace(thread, &mut buf) else {
        return;
    };
    let Ok(c) = a.jvmti.method_declaring_class(top.method) else {
        return;
    };
    let entry_point = a
        .jvmti
        .class_signature(c)
        .is_ok_and(|sig| crate::instrument::makers::is_entry_point(&sig));
    let in_scope = !entry_point && a.instrumenter.class_in_scope(a.jvmti, jni, c);
    jni.delete_local_ref(c);
    if in_scope {
        if let Ok(sig) = a.jvmti.class_signature(class) {
            super::track_vm_object(a, jni, object, &sig);
        }
    }
}

pub fn jni_allocated(a: &Host<'static>, jni: &Jni, object: jobject) {
    if !a.memory.is_active() {
        return;
    }
    let Ok(thread) = a.jvmti.current_thread() else {
        return;
    };
    let class = jni.object_class(object);
    vm_allocated(a, jni, thread, object, class);
    jni.delete_local_ref(class);
    jni.delete_local_ref(thread);
}
