//! Method names as snapshots print them, resolved once per method (JVMTI name
//! look-ups are far too slow to repeat per sample) and interned as small ids.

use crate::vm::{Jni, Jvmti};
use jni_sys::jmethodID;
use std::collections::HashMap;

/// Id of an interned frame name.
pub type NameId = u32;

#[derive(Default)]
pub struct MethodNames {
    /// jmethodID -> (Java-frame name, native-frame name); HotSpot never reuses a jmethodID.
    cache: HashMap<usize, (Option<NameId>, Option<NameId>)>,
    strings: Vec<Box<str>>,
    ids: HashMap<Box<str>, NameId>,
}

impl MethodNames {
    pub fn intern(&mut self, s: &str) -> NameId {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.strings.len() as NameId;
        self.strings.push(s.into());
        self.ids.insert(s.into(), id);
        id
    }

    pub fn get(&self, id: NameId) -> &str {
        &self.strings[id as usize]
    }

    /// Every name by id, for a snapshot written after the lock is let go.
    pub fn snapshot(&self) -> Vec<Box<str>> {
        self.strings.clone()
    }

    /// Sampler-style name of a frame: `pkg.Cls.m()`, `pkg.Cls.m(native)` for a
    /// native frame, `pkg.Cls()` for a constructor (the spec's constructor style).
    pub fn frame_name(
        &mut self,
        jvmti: Jvmti,
        jni: &Jni,
        method: jmethodID,
        native: bool,
    ) -> NameId {
        let entry = self.cache.entry(method as usize).or_default();
        let slot = if native { entry.1 } else { entry.0 };
        if let Some(id) = slot {
            return id;
        }
        let base = resolve(jvmti, jni, method);
        let (class, name) = base
            .as_ref()
            .map(|(c, m)| (c.as_str(), m.as_str()))
            .unwrap_or(("<unknown>", "<unknown>"));
        let args = if native { "native" } else { "" };
        let text = if name == "<init>" {
            format!("{class}({args})")
        } else {
            format!("{class}.{name}({args})")
        };
        let id = self.intern(&text);
        let entry = self.cache.entry(method as usize).or_default();
        if native {
            entry.1 = Some(id);
        } else {
            entry.0 = Some(id);
        }
        id
    }
}

/// (Java class name, method name) of a method.
fn resolve(jvmti: Jvmti, jni: &Jni, method: jmethodID) -> Option<(String, String)> {
    let (name, _sig) = jvmti.method_name(method).ok()?;
    let class = jvmti.method_declaring_class(method).ok()?;
    let sig = jvmti.class_signature(class);
    jni.delete_local_ref(class);
    Some((java_class_name(&sig.ok()?), name))
}

/// `Ljava/util/HashMap$Node;` -> `java.util.HashMap$Node`.
pub fn java_class_name(signature: &str) -> String {
    let s = signature
        .strip_prefix('L')
        .and_then(|s| s.strip_suffix(';'))
        .unwrap_or(signature);
    s.replace('/', ".")
}

/// A type as Java writes it, from an internal name (`java/lang/String`) or
/// an array descriptor (`[I`, `[Ljava/lang/String;`).
pub fn java_type_name(internal: &str) -> String {
    if internal.starts_with('[') {
        java_type(internal).0
    } else {
        internal.replace('/', ".")
    }
}

/// One field type from the start of `d`: its Java form and its length.
pub fn java_type(d: &str) -> (String, usize) {
    let dims = d.bytes().take_while(|&b| b == b'[').count();
    let (base, len) = match d.as_bytes().get(dims) {
        Some(b'L') => match d[dims..].find(';') {
            Some(end) => (d[dims + 1..dims + end].replace('/', "."), end + 1),
            None => return (d.to_owned(), d.len()),
        },
        Some(&c) => (
            match c {
                b'Z' => "boolean",
                b'B' => "byte",
                b'C' => "char",
                b'S' => "short",
                b'I' => "int",
                b'J' => "long",
                b'F' => "float",
                b'D' => "double",
                b'V' => "void",
                _ => "?",
            }
            .to_owned(),
            1,
        ),
        None => return (String::new(), 0),
    };
    (format!("{base}{}", "[]".repeat(dims)), dims + len)
}

/// A class as Java writes it, from its signature: `java.lang.String`,
/// `byte[]`, `int[][]`.
pub fn class_name(signature: &str) -> String {
    if signature.starts_with('[') {
        java_type_name(signature)
    } else {
        java_class_name(signature)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn class_names() {
        assert_eq!(java_class_name("Ljava/lang/Object;"), "java.lang.Object");
        assert_eq!(
            java_class_name("Ljava/util/HashMap$Node;"),
            "java.util.HashMap$Node"
        );
        assert_eq!(
            java_class_name("LFoo$$Lambda$14.0x0000000800c01234;"),
            "Foo$$Lambda$14.0x0000000800c01234"
        );
    }

    #[test]
    fn interning_is_stable() {
        let mut n = MethodNames::default();
        let a = n.intern("a.B.c()");
        assert_eq!(n.intern("x.Y.z()"), a + 1);
        assert_eq!(n.intern("a.B.c()"), a);
        assert_eq!(n.get(a), "a.B.c()");
    }
}
