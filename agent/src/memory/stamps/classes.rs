//! Which classes the census counts, and where their stamp is.
//!
//! The census visits the objects of the classes tagged in its JVMTI
//! environment, and reads their primitive fields, each reported with its
//! JVMTI field index. By the JVMTI specification (and HotSpot 11 to 25,
//! whose index the census check confirms once per JVM), the fields of an
//! object of class C are numbered: first the fields of every interface C
//! implements (directly, through a superclass or a superinterface), then
//! those of each class from `java.lang.Object` down to C, each class's in
//! the order of its class file, statics included. So the stamp field, at
//! position p of class H (C or a superclass), is field
//! `interfaces(C) + fields(classes above H) + p`. That number is C's tag.

use crate::instrument::stamp;
use crate::vm::{Jni, Jvmti};
use jni_sys::jclass;

/// The high byte of a stamped class's tag; the low 32 bits are the field
/// index of its stamp.
const MARK: i64 = 0x5A;

pub fn class_tag(field_index: u32) -> i64 {
    (MARK << 56) | field_index as i64
}

/// The field index a census callback must see for class tag `tag` (`None`:
/// not a stamped class's tag).
pub fn stamp_index(tag: i64) -> Option<i32> {
    (tag >> 56 == MARK).then_some((tag & 0xFFFF_FFFF) as i32)
}

/// The class that declares the stamp field objects of `class` carry: its
/// own or the nearest superclass's, as a local reference.
pub fn holder(jvmti: Jvmti, jni: &Jni, class: jclass) -> Option<jclass> {
    let mut k = jni.new_local_ref(class);
    while !k.is_null() {
        if stamp_position(jvmti, k).is_some() {
            return Some(k);
        }
        let up = jni.superclass(k);
        jni.delete_local_ref(k);
        k = up;
    }
    None
}

/// Opens the package of `holder` (a class with the stamp field) to `to`, the
/// agent's runtime's module, so the runtime can write the field: a named
/// module opens nothing by default (an unnamed one, everything: then this
/// does nothing; before JDK 9 there are no modules).
pub fn open_package(jvmti: Jvmti, jni: &Jni, holder: jclass, to: jni_sys::jobject) {
    let Ok(sig) = jvmti.class_signature(holder) else {
        return;
    };
    let Some((package, _)) = sig.strip_prefix('L').and_then(|s| s.rsplit_once('/')) else {
        return; // the unnamed package, which no named module has
    };
    let Ok(module) = jni.call_object(
        holder,
        "java/lang/Class",
        "getModule",
        "()Ljava/lang/Module;",
    ) else {
        return;
    };
    let _ = jvmti.add_module_opens(module, &package.replace('/', "."), to);
    jni.delete_local_ref(module);
}

/// Where `class` declares the stamp field among its fields, if it does.
fn stamp_position(jvmti: Jvmti, class: jclass) -> Option<u32> {
    let fields = jvmti.class_fields(class).ok()?;
    fields
        .iter()
        .position(|&f| {
            jvmti
                .field_name(class, f)
                .is_ok_and(|(n, d)| n == stamp::FIELD && d == stamp::DESCRIPTOR)
        })
        .map(|p| p as u32)
}

/// The JVMTI field index of `holder`'s stamp field in objects of `class`
/// (`holder` is `class` or a superclass of it).
pub fn field_index(jvmti: Jvmti, jni: &Jni, class: jclass, holder: jclass) -> Option<u32> {
    let count = |k: jclass| jvmti.class_fields(k).ok().map(|f| f.len() as u32);
    let position = stamp_position(jvmti, holder)?;
    let mut index = position;
    // The classes above the holder, and every interface of the way up.
    let mut interfaces: Vec<jclass> = Vec::new();
    let mut k = jni.new_local_ref(class);
    let mut above = false;
    while !k.is_null() {
        if above {
            index += count(k)?;
        } else if jni.is_same_object(k, holder) {
            above = true;
        }
        for i in jvmti.implemented_interfaces(k).ok()? {
            add_interface(jvmti, jni, i, &mut interfaces);
        }
        let up = jni.superclass(k);
        jni.delete_local_ref(k);
        k = up;
    }
    let mut total = 0;
    for i in interfaces {
        total += count(i).unwrap_or(0);
        jni.delete_local_ref(i);
    }
    above.then_some(index + total)
}

/// `i` and its superinterfaces into `seen`, each once (local references
/// the caller deletes; duplicates deleted here).
fn add_interface(jvmti: Jvmti, jni: &Jni, i: jclass, seen: &mut Vec<jclass>) {
    if seen.iter().any(|&s| jni.is_same_object(s, i)) {
        jni.delete_local_ref(i);
        return;
    }
    seen.push(i);
    for s in jvmti.implemented_interfaces(i).unwrap_or_default() {
        add_interface(jvmti, jni, s, seen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_carry_the_field_index() {
        let t = class_tag(12);
        assert_eq!(stamp_index(t), Some(12));
        assert_eq!(stamp_index(12), None);
        assert_eq!(stamp_index(-1), None, "the agent's thread tag");
    }
}
