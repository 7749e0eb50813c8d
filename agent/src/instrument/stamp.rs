//! The `memory` mode's stamp field: `private transient synthetic int
//! $profrj$stamp`, added when a class is first defined (fields cannot be
//! added by retransforming) to the classes the application loads once the
//! mode has started. An allocation probe stores the number of its thread's counter
//! for the site in it (a plain store, `profrj.runtime.Stamps`), and a heap
//! census counts the living objects by that number (`memory::stamps`): no
//! per-object handle, so nothing on the allocating path is shared between
//! threads.
//!
//! Private, transient and synthetic: default serialization skips it (and
//! computes the same serialVersionUID, which leaves out private transient
//! fields), frameworks that skip synthetic members skip it, and no code
//! outside the agent's runtime can name it. The cost is the field itself, 4
//! bytes per object, often taken from the padding an object already has.
//!
//! One field per hierarchy: a class gets one unless its superclass already
//! has one (then it inherits it). When a class is defined its superclass is
//! often not loaded yet; a superclass the hook has not seen and that is not
//! the JDK's is taken to be stamped when it loads. A wrong guess (it was
//! loaded before the mode started, or could not be rewritten) costs speed,
//! not correctness: the runtime looks for the field on the object's own class
//! and its superclasses, and sends objects of a class without one to the weak
//! references, as it does arrays and the JDK's objects.

use parking_lot::Mutex;
use profrj_bytecode::ClassFile;
use profrj_format::names::decode_modified_utf8;
use std::collections::HashMap;

/// The field's name and descriptor (`profrj.runtime.Stamps.FIELD`).
pub const FIELD: &str = "$profrj$stamp";
pub const DESCRIPTOR: &str = "I";

const ACC_PRIVATE: u16 = 0x0002;
const ACC_TRANSIENT: u16 = 0x0080;
const ACC_SYNTHETIC: u16 = 0x1000;
const ACC_INTERFACE: u16 = 0x0200;
const ACC_MODULE: u16 = 0x8000;

/// Classes that never get the field: the JDK's (the boot and platform
/// loaders' classes are never given one, and the VM knows the layout of
/// some) and the agent's own runtime.
pub fn never_stamped(internal_name: &str) -> bool {
    const PREFIXES: [&str; 6] = [
        "java/",
        "javax/",
        "jdk/",
        "sun/",
        "com/sun/",
        "profrj/runtime/",
    ];
    PREFIXES.iter().any(|p| internal_name.starts_with(p))
}

/// Do objects of this type (an internal name, `[I` for an array) go through
/// the Java probe, which stamps what it can? Arrays and the JDK's classes
/// never have the field: their sites call the weak references directly.
pub fn may_be_stamped(type_name: &str) -> bool {
    !type_name.starts_with('[') && !never_stamped(type_name)
}

/// What the class-file hook does about the field of one class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Plan {
    /// A class being defined: add the field unless its superclass has one.
    Decide,
    /// A class being redefined or retransformed that has the field: add it
    /// again (the hook sees the bytes without it, and a redefinition may
    /// not drop a field).
    Keep,
    No,
}

/// The classes the hook saw defined since stamping began (and those loaded
/// before), by name: do their objects have the field? What a subclass
/// defined later needs to know.
#[derive(Default)]
pub struct Seen(Mutex<HashMap<Box<str>, bool>>);

impl Seen {
    pub fn record(&self, internal_name: &str, stamped: bool) {
        self.0.lock().insert(internal_name.into(), stamped);
    }

    /// Must a class whose superclass is `super_name` declare the field?
    fn needs_own(&self, super_name: &str) -> bool {
        match self.0.lock().get(super_name) {
            Some(&stamped) => !stamped,
            None => never_stamped(super_name),
        }
    }
}

/// Adds the field to `class` (named `name`) as `plan` says; true if it did.
pub fn apply(class: &mut ClassFile<'_>, name: &str, plan: Plan, seen: &Seen) -> bool {
    match plan {
        Plan::No => false,
        Plan::Keep => add(class),
        Plan::Decide => {
            if class.access_flags & (ACC_INTERFACE | ACC_MODULE) != 0 || class.super_class == 0 {
                seen.record(name, false);
                return false;
            }
            let cp = &class.constant_pool;
            // Decoded as the hook's names are, so the two spell it alike.
            let Some(super_name) = cp.class_utf8(class.super_class).map(decode_modified_utf8)
            else {
                seen.record(name, false);
                return false;
            };
            if !seen.needs_own(&super_name) {
                seen.record(name, true); // inherits its superclass's
                return false;
            }
            let added = add(class);
            seen.record(name, added);
            added
        }
    }
}

/// The field, last among the class's fields (where the census looks for it).
pub fn add(class: &mut ClassFile<'_>) -> bool {
    let access = ACC_PRIVATE | ACC_TRANSIENT | ACC_SYNTHETIC;
    class.add_field(access, FIELD, DESCRIPTOR).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_jdk_and_arrays_go_to_weak_references() {
        for name in [
            "java/util/HashMap",
            "[Lpkg/A;",
            "[I",
            "sun/misc/X",
            "jdk/internal/Y",
        ] {
            assert!(!may_be_stamped(name), "{name}");
        }
        assert!(may_be_stamped("pkg/A"));
        assert!(may_be_stamped("org/javax/Thing"));
    }

    /// A superclass not seen yet is taken to be stamped when it loads,
    /// unless it is the JDK's; one seen decides by what it got.
    #[test]
    fn a_class_declares_the_field_only_below_unstamped_superclasses() {
        let seen = Seen::default();
        assert!(seen.needs_own("java/lang/Object"));
        assert!(seen.needs_own("java/util/AbstractList"));
        assert!(!seen.needs_own("pkg/NotYetLoaded"));
        seen.record("pkg/Early", false);
        seen.record("pkg/Stamped", true);
        assert!(seen.needs_own("pkg/Early"));
        assert!(!seen.needs_own("pkg/Stamped"));
    }
}
