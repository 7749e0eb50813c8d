//! The natives of `profrj.runtime.Probe` the memory mode binds: the probes
//! that hand objects to the tracker (weak references or tags), and the
//! stamps' slow paths (`profrj.runtime.Stamps`, `StampSetter`,
//! `StampCheck`). Each is a thin shell: the agent, the JNIEnv, the guard.

use super::counters::{self, Kind};
use crate::host::Host;
use crate::instrument::probe_class;
use crate::vm::{Jni, Native};
use jni_sys::{jclass, jint, jobject, JNIEnv};

/// The natives of `profrj.runtime.Probe` this mode binds.
pub fn natives() -> Vec<Native> {
    vec![
        (
            probe_class::ALLOC_WEAK_METHOD.0,
            probe_class::ALLOC_WEAK_METHOD.1,
            alloc_weak as *mut _,
        ),
        (
            probe_class::ALLOC_AT_METHOD.0,
            probe_class::ALLOC_AT_METHOD.1,
            alloc_at as *mut _,
        ),
        ("typeId", "(Ljava/lang/Class;)I", type_of as *mut _),
        ("stampCounter", "(I)I", stamp_counter as *mut _),
        (
            "stampChunk",
            "(I)Ljava/nio/ByteBuffer;",
            stamp_chunk as *mut _,
        ),
        (
            "stampHolder",
            "(Ljava/lang/Class;)Ljava/lang/Class;",
            stamp_holder as *mut _,
        ),
        (
            "stampCensus",
            "(Ljava/lang/Class;Ljava/lang/Class;)V",
            stamp_census as *mut _,
        ),
        ("stampSite", "(II)I", stamp_site as *mut _),
        (
            "stampCheck",
            "(Ljava/lang/Object;Ljava/lang/Object;II)Ljava/lang/String;",
            stamp_check as *mut _,
        ),
    ]
}

/// Runs `f` with the agent, in the guard.
fn with<R>(what: &'static str, fallback: R, f: impl FnOnce(&'static Host) -> R) -> R {
    let Some(host) = crate::host::get() else {
        return fallback;
    };
    crate::vm::guard(what, fallback, || f(host))
}

/// The memory mode's lasting state.
fn life(host: &'static Host) -> &'static super::Lifetime {
    host.state::<super::Lifetime>()
}

/// The calling thread's JNIEnv, as the VM passed it to a native.
///
/// # Safety
/// `env` is the JNIEnv the VM passed to a native of the probe class (only
/// RegisterNatives knows them), on this thread.
unsafe fn jni(env: *mut JNIEnv) -> Jni {
    // SAFETY: the caller's promise.
    unsafe { Jni::from_raw(env) }
}

/// `Probe.allocWeak(Object, int)`.
extern "system" fn alloc_weak(env: *mut JNIEnv, _class: jclass, object: jobject, site: jint) {
    // SAFETY: the VM calls this native with the calling thread's JNIEnv.
    let jni = &unsafe { jni(env) };
    if object.is_null() {
        return;
    }
    crate::vm::guard("memory probe", (), || {
        super::on_thread(|mine| super::track(mine, jni, object, site as u32))
    })
}

/// `Probe.allocAt(Object, int, int)`: an object whose type its place learnt
/// only when it ran (reflection, clone).
extern "system" fn alloc_at(
    env: *mut JNIEnv,
    _class: jclass,
    object: jobject,
    place: jint,
    ty: jint,
) {
    // SAFETY: the VM calls this native with the calling thread's JNIEnv.
    let jni = &unsafe { jni(env) };
    if object.is_null() {
        return;
    }
    crate::vm::guard("memory probe", (), || {
        super::on_thread(|mine| super::track_at(mine, jni, object, place as u32, ty as u32))
    })
}

/// `Probe.typeId(Class)`: the type id of a class (asked once per class).
extern "system" fn type_of(_env: *mut JNIEnv, _class: jclass, of: jclass) -> jint {
    with("memory type id", 0, |a| {
        let sig = a.jvmti.class_signature(of).unwrap_or_default();
        a.sites.type_of_signature(&sig) as jint
    })
}

/// `Probe.stampCounter(int)`: a new stamp counter of the calling thread for
/// `site` (once per thread and site: the Java side keeps it), -1 if none.
extern "system" fn stamp_counter(env: *mut JNIEnv, _class: jclass, site: jint) -> jint {
    // SAFETY: the VM calls this native with the calling thread's JNIEnv.
    let jni = &unsafe { jni(env) };
    with("memory stamp counter", -1, |a| {
        // A virtual thread never stamps (`Stamps` gives it none; its objects
        // go to the tracker): a counter here would be its carrier's record's
        // or its group's, written by several carriers at once.
        if crate::per_thread::on_virtual_thread() {
            return -1;
        }
        let Some(thread) = a.current_thread(jni) else {
            return -1;
        };
        let counters = &life(a).counters;
        counters::site_counter(
            &a.sites,
            counters,
            thread.0 as i64,
            site as u32,
            Kind::Stamp,
        )
        .map_or(-1, |c| c.site.index() as jint)
    })
}

/// `Probe.stampChunk(int)`: a direct buffer over the counters of chunk
/// `chunk` (null if it does not exist).
extern "system" fn stamp_chunk(env: *mut JNIEnv, _class: jclass, chunk: jint) -> jobject {
    // SAFETY: the VM calls this native with the calling thread's JNIEnv.
    let jni = &unsafe { jni(env) };
    with("memory stamp counters", std::ptr::null_mut(), |a| {
        match life(a).counters.chunk_bytes(chunk as usize) {
            // SAFETY: counter chunks are never freed or moved, and Java
            // writes only `made` of the counters its thread owns, with
            // plain 8-byte stores the agent reads atomically.
            Some((at, len)) => unsafe { jni.direct_buffer(at, len) },
            None => std::ptr::null_mut(),
        }
    })
}

/// `Probe.stampHolder(Class)`: the class declaring the stamp field objects
/// of `type` carry, or null.
extern "system" fn stamp_holder(env: *mut JNIEnv, _class: jclass, of: jclass) -> jclass {
    // SAFETY: the VM calls this native with the calling thread's JNIEnv.
    let jni = &unsafe { jni(env) };
    with("memory stamp holder", std::ptr::null_mut(), |a| {
        life(a)
            .stamps
            .holder(a.jvmti, jni, of)
            .unwrap_or(std::ptr::null_mut())
    })
}

/// `Probe.stampCensus(Class, Class)`: the census counts `of`'s objects.
extern "system" fn stamp_census(env: *mut JNIEnv, _class: jclass, of: jclass, holder: jclass) {
    // SAFETY: the VM calls this native with the calling thread's JNIEnv.
    let jni = &unsafe { jni(env) };
    with("memory stamp census", (), |a| {
        life(a).stamps.count_class(a.jvmti, jni, of, holder)
    })
}

/// `Probe.stampSite(int, int)`: the site of (place, type).
extern "system" fn stamp_site(_env: *mut JNIEnv, _class: jclass, place: jint, ty: jint) -> jint {
    with("memory stamp site", 0, |a| {
        super::site_at(a, place as u32, ty as u32) as jint
    })
}

/// `Probe.stampCheck(Object, Object, int, int)`: null if the census finds
/// the check's stamps, else why not.
extern "system" fn stamp_check(
    env: *mut JNIEnv,
    _class: jclass,
    base: jobject,
    sub: jobject,
    base_stamp: jint,
    sub_stamp: jint,
) -> jobject {
    // SAFETY: the VM calls this native with the calling thread's JNIEnv.
    let jni = &unsafe { jni(env) };
    with(
        "memory stamp check",
        std::ptr::null_mut(),
        |a| match life(a)
            .stamps
            .check_objects(jni, (base, sub), (base_stamp, sub_stamp))
        {
            None => std::ptr::null_mut(),
            Some(why) => jni.new_string(&why).unwrap_or(std::ptr::null_mut()),
        },
    )
}
