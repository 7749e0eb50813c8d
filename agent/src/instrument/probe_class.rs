//! The class injected code calls: `profrj.runtime.Probe`, generated here as
//! class-file bytes, defined in the boot loader so every class can see it,
//! and bound to the agent's functions with RegisterNatives. It is never
//! instrumented itself (the scope excludes `profrj.runtime.*`).
//!
//! It holds `public static native` methods (the profile probes, the slow
//! paths) and one method in bytecode, the coverage counters' fast path:
//!
//! ```java
//! private static long[][] COV;            // set by the agent as it grows
//! public static long[] cov(int id) {
//!     long[][] c = COV;
//!     if (c != null && id < c.length) { long[] a = c[id]; if (a != null) return a; }
//!     return covSlow(id);                 // native: allocates and publishes
//! }
//! ```
//!
//! Version 49, so that method needs no StackMapTable (the JVM verifies it by
//! type inference): nothing else in the class needs a later version.

/// Internal name of the probe class.
pub const CLASS: &str = "profrj/runtime/Probe";
/// The static field holding the coverage counter arrays, by id.
pub const COUNTERS_FIELD: (&str, &str) = ("COV", "[[J");
/// The method instrumented code calls at entry for its counter array.
pub const COUNTERS_METHOD: (&str, &str) = ("cov", "(I)[J");
/// The native behind it when the array is not published yet.
pub const COUNTERS_SLOW: &str = "covSlow";

/// A constant pool being written.
struct Pool {
    bytes: Vec<u8>,
    count: u16,
}

impl Pool {
    fn entry(&mut self, tag: u8, body: &[u8]) -> u16 {
        self.bytes.push(tag);
        self.bytes.extend_from_slice(body);
        self.count += 1;
        self.count - 1
    }
    fn utf8(&mut self, s: &str) -> u16 {
        let mut body = (s.len() as u16).to_be_bytes().to_vec();
        body.extend_from_slice(s.as_bytes());
        self.entry(1, &body)
    }
    fn class(&mut self, name: &str) -> u16 {
        let n = self.utf8(name);
        self.entry(7, &n.to_be_bytes())
    }
    /// A Fieldref (tag 9) or Methodref (tag 10) of this class.
    fn member(&mut self, tag: u8, class: u16, name: &str, desc: &str) -> u16 {
        let (n, d) = (self.utf8(name), self.utf8(desc));
        let nat = self.entry(12, &[n.to_be_bytes(), d.to_be_bytes()].concat());
        self.entry(tag, &[class.to_be_bytes(), nat.to_be_bytes()].concat())
    }
}

/// Class-file bytes of the probe class with a `public static native` method
/// per (name, descriptor), which must include `covSlow(I)[J`.
pub fn class_bytes(natives: &[(&str, &str)]) -> Vec<u8> {
    let mut pool = Pool {
        bytes: Vec::new(),
        count: 1,
    };
    let this_class = pool.class(CLASS);
    let super_class = pool.class("java/lang/Object");
    let field = pool.member(9, this_class, COUNTERS_FIELD.0, COUNTERS_FIELD.1);
    let slow = pool.member(10, this_class, COUNTERS_SLOW, COUNTERS_METHOD.1);
    let code_name = pool.utf8("Code");
    let (field_name, field_desc) = (pool.utf8(COUNTERS_FIELD.0), pool.utf8(COUNTERS_FIELD.1));
    let (cov_name, cov_desc) = (pool.utf8(COUNTERS_METHOD.0), pool.utf8(COUNTERS_METHOD.1));
    let members: Vec<(u16, u16)> = natives
        .iter()
        .map(|(n, d)| (pool.utf8(n), pool.utf8(d)))
        .collect();

    let mut out = Vec::new();
    out.extend_from_slice(&0xCAFE_BABEu32.to_be_bytes());
    out.extend_from_slice(&0u16.to_be_bytes()); // minor
    out.extend_from_slice(&49u16.to_be_bytes()); // major: Java 5, no frames needed
    out.extend_from_slice(&pool.count.to_be_bytes());
    out.extend_from_slice(&pool.bytes);
    out.extend_from_slice(&(0x0001u16 | 0x0010 | 0x0020).to_be_bytes()); // public final super
    out.extend_from_slice(&this_class.to_be_bytes());
    out.extend_from_slice(&super_class.to_be_bytes());
    out.extend_from_slice(&0u16.to_be_bytes()); // interfaces
    out.extend_from_slice(&1u16.to_be_bytes()); // fields
    out.extend_from_slice(&(0x0002u16 | 0x0008 | 0x0040).to_be_bytes()); // private static volatile
    out.extend_from_slice(&field_name.to_be_bytes());
    out.extend_from_slice(&field_desc.to_be_bytes());
    out.extend_from_slice(&0u16.to_be_bytes());
    out.extend_from_slice(&(members.len() as u16 + 1).to_be_bytes());
    for (name, desc) in members {
        out.extend_from_slice(&(0x0001u16 | 0x0008 | 0x0100).to_be_bytes()); // public static native
        out.extend_from_slice(&name.to_be_bytes());
        out.extend_from_slice(&desc.to_be_bytes());
        out.extend_from_slice(&0u16.to_be_bytes()); // attributes
    }
    out.extend_from_slice(&(0x0001u16 | 0x0008).to_be_bytes()); // public static
    out.extend_from_slice(&cov_name.to_be_bytes());
    out.extend_from_slice(&cov_desc.to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes());
    let code = counters_code(field, slow);
    out.extend_from_slice(&code_name.to_be_bytes());
    out.extend_from_slice(&(12 + code.len() as u32).to_be_bytes());
    out.extend_from_slice(&2u16.to_be_bytes()); // max_stack
    out.extend_from_slice(&2u16.to_be_bytes()); // max_locals
    out.extend_from_slice(&(code.len() as u32).to_be_bytes());
    out.extend_from_slice(&code);
    out.extend_from_slice(&0u16.to_be_bytes()); // exception table
    out.extend_from_slice(&0u16.to_be_bytes()); // attributes
    out.extend_from_slice(&0u16.to_be_bytes()); // class attributes
    out
}

/// The body of `cov(int)` (see the module comment), offsets in comments.
fn counters_code(field: u16, slow: u16) -> Vec<u8> {
    let [f1, f2] = field.to_be_bytes();
    let [s1, s2] = slow.to_be_bytes();
    vec![
        0xb2, f1, f2,   // 0: getstatic COV
        0x4c, // 3: astore_1
        0x2b, // 4: aload_1
        0xc6, 0, 18,   // 5: ifnull 23
        0x1a, // 8: iload_0
        0x2b, // 9: aload_1
        0xbe, // 10: arraylength
        0xa2, 0, 12,   // 11: if_icmpge 23
        0x2b, // 14: aload_1
        0x1a, // 15: iload_0
        0x32, // 16: aaload
        0x59, // 17: dup
        0xc6, 0, 4,    // 18: ifnull 22
        0xb0, // 21: areturn
        0x57, // 22: pop
        0x1a, // 23: iload_0
        0xb8, s1, s2,   // 24: invokestatic covSlow
        0xb0, // 27: areturn
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use profrj_bytecode::code::decode_code;

    #[test]
    fn reads_back_with_the_bytecode_crate() {
        let bytes = class_bytes(&[("enter", "(I)V"), ("covSlow", "(I)[J")]);
        let class = profrj_bytecode::parse_class(&bytes).unwrap();
        let cp = &class.constant_pool;
        assert_eq!(cp.class_name(class.this_class).as_deref(), Some(CLASS));
        assert_eq!(class.methods.len(), 3);
        assert_eq!(
            cp.text(class.methods[1].name_index).as_deref(),
            Some("covSlow")
        );
        assert_eq!(class.methods[0].access_flags, 0x0109);
        assert_eq!(cp.text(class.fields[0].name_index).as_deref(), Some("COV"));
        let cov = &class.methods[2];
        assert_eq!(cp.text(cov.name_index).as_deref(), Some("cov"));
        let code = decode_code(&cov.attributes[0].data).unwrap();
        assert_eq!(code.insns.len(), 16);
        assert_eq!(profrj_bytecode::write_class(&class), bytes);
    }
}
