//! Where the memory mode's objects come from besides `new` and the array
//! instructions: the JDK methods that always return a new object, counted at
//! their call sites (`is_maker`), and so never again where the JDK makes them
//! — in its reflection classes (`is_reflection_machinery`, given no
//! allocation probes) or through the VM (`is_entry_point`, whose VMObjectAlloc
//! events are left out). One list, so the three cannot drift apart.

/// (owner, name, descriptor) of each maker. Counted at the call site:
/// compiled code makes these objects without VMObjectAlloc (C2's
/// intrinsics), and on JDK 18+ reflection constructs through method handles.
const MAKERS: [(&[u8], &[u8], &[u8]); 6] = [
    (
        b"java/lang/reflect/Constructor",
        b"newInstance",
        b"([Ljava/lang/Object;)Ljava/lang/Object;",
    ),
    (b"java/lang/Class", b"newInstance", b"()Ljava/lang/Object;"),
    (
        b"java/lang/reflect/Array",
        b"newInstance",
        b"(Ljava/lang/Class;I)Ljava/lang/Object;",
    ),
    (
        b"java/lang/reflect/Array",
        b"newInstance",
        b"(Ljava/lang/Class;[I)Ljava/lang/Object;",
    ),
    (
        b"jdk/internal/misc/Unsafe",
        b"allocateInstance",
        b"(Ljava/lang/Class;)Ljava/lang/Object;",
    ),
    (
        b"sun/misc/Unsafe",
        b"allocateInstance",
        b"(Ljava/lang/Class;)Ljava/lang/Object;",
    ),
];

/// Packages whose code makes objects for a maker: the reflection classes
/// (generated accessors included, which are defined outside the boot loader
/// and so in the default scope) and the method-handle plumbing reflection
/// runs through since JDK 18.
const MACHINERY: [&str; 3] = ["jdk/internal/reflect/", "sun/reflect/", "java/lang/invoke/"];

/// Is this call (owner's internal name, method name, descriptor) a maker?
pub fn is_maker(owner: &[u8], name: &[u8], descriptor: &[u8]) -> bool {
    MAKERS
        .iter()
        .any(|m| m.0 == owner && m.1 == name && m.2 == descriptor)
}

/// Does class `internal_name` make objects on a maker's behalf? It gets no
/// allocation probes.
pub fn is_reflection_machinery(internal_name: &str) -> bool {
    MACHINERY.iter().any(|p| internal_name.starts_with(p))
}

/// Is a native method of the class with JVM signature `sig` on top of the
/// stack the VM's way into a maker (so its VMObjectAlloc is already counted
/// at the call)? `Object.clone` never is in scope, and is counted at its
/// call sites too.
pub fn is_entry_point(sig: &str) -> bool {
    let Some(name) = sig.strip_prefix('L').and_then(|s| s.strip_suffix(';')) else {
        return false;
    };
    is_reflection_machinery(name) || MAKERS.iter().any(|m| m.0 == name.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_list_for_call_sites_classes_and_vm_allocations() {
        assert!(is_maker(
            b"java/lang/reflect/Array",
            b"newInstance",
            b"(Ljava/lang/Class;I)Ljava/lang/Object;"
        ));
        assert!(!is_maker(
            b"java/lang/reflect/Array",
            b"getLength",
            b"(Ljava/lang/Object;)I"
        ));
        assert!(is_reflection_machinery(
            "jdk/internal/reflect/GeneratedConstructorAccessor1"
        ));
        assert!(!is_reflection_machinery("java/lang/reflect/Array"));
        for sig in [
            "Ljava/lang/reflect/Array;",
            "Ljava/lang/Class;",
            "Ljdk/internal/misc/Unsafe;",
            "Ljdk/internal/reflect/NativeConstructorAccessorImpl;",
        ] {
            assert!(is_entry_point(sig), "{sig}");
        }
        assert!(!is_entry_point("Lprofrj/harness/JniAlloc;"));
    }
}
