//! The class injected code calls: `profrj.runtime.Probe`, a final class of
//! static native methods, generated here as class-file bytes (version 52, so
//! any JDK 8+ loads it), defined in the boot loader so every class can see
//! it, and bound to the agent's functions with RegisterNatives. It is never
//! instrumented itself (the scope excludes `profrj.runtime.*`).

/// Internal name of the probe class.
pub const CLASS: &str = "profrj/runtime/Probe";

/// Class-file bytes of a public final class `CLASS` extending Object with a
/// `public static native` method per (name, descriptor).
pub fn class_bytes(methods: &[(&str, &str)]) -> Vec<u8> {
    let mut pool: Vec<u8> = Vec::new();
    let mut count: u16 = 1;
    let mut utf8 = |pool: &mut Vec<u8>, s: &str| {
        pool.push(1);
        pool.extend_from_slice(&(s.len() as u16).to_be_bytes());
        pool.extend_from_slice(s.as_bytes());
        count += 1;
        count - 1
    };
    let this_name = utf8(&mut pool, CLASS);
    let super_name = utf8(&mut pool, "java/lang/Object");
    let mut members = Vec::new();
    for (name, desc) in methods {
        members.push((utf8(&mut pool, name), utf8(&mut pool, desc)));
    }
    let this_class = count;
    pool.push(7);
    pool.extend_from_slice(&this_name.to_be_bytes());
    let super_class = count + 1;
    pool.push(7);
    pool.extend_from_slice(&super_name.to_be_bytes());
    let count = count + 2;

    let mut out = Vec::new();
    out.extend_from_slice(&0xCAFE_BABEu32.to_be_bytes());
    out.extend_from_slice(&0u16.to_be_bytes()); // minor
    out.extend_from_slice(&52u16.to_be_bytes()); // major: Java 8
    out.extend_from_slice(&count.to_be_bytes());
    out.extend_from_slice(&pool);
    out.extend_from_slice(&(0x0001u16 | 0x0010 | 0x0020).to_be_bytes()); // public final super
    out.extend_from_slice(&this_class.to_be_bytes());
    out.extend_from_slice(&super_class.to_be_bytes());
    out.extend_from_slice(&0u16.to_be_bytes()); // interfaces
    out.extend_from_slice(&0u16.to_be_bytes()); // fields
    out.extend_from_slice(&(members.len() as u16).to_be_bytes());
    for (name, desc) in members {
        out.extend_from_slice(&(0x0001u16 | 0x0008 | 0x0100).to_be_bytes()); // public static native
        out.extend_from_slice(&name.to_be_bytes());
        out.extend_from_slice(&desc.to_be_bytes());
        out.extend_from_slice(&0u16.to_be_bytes()); // attributes
    }
    out.extend_from_slice(&0u16.to_be_bytes()); // class attributes
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_back_with_the_bytecode_crate() {
        let bytes = class_bytes(&[("enter", "(I)V"), ("exit", "(I)V")]);
        let class = profrj_bytecode::parse_class(&bytes).unwrap();
        let cp = &class.constant_pool;
        assert_eq!(cp.class_name(class.this_class).as_deref(), Some(CLASS));
        assert_eq!(class.methods.len(), 2);
        assert_eq!(
            cp.text(class.methods[1].name_index).as_deref(),
            Some("exit")
        );
        assert_eq!(class.methods[0].access_flags, 0x0109);
        assert_eq!(profrj_bytecode::write_class(&class), bytes);
    }
}
