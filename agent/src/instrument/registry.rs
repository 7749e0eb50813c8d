//! Method ids: the integer an injected probe passes to the agent, standing for
//! one (class, method, descriptor). Assigned as classes are rewritten (from
//! any thread), read when a snapshot is written.

use parking_lot::Mutex;
use std::collections::HashMap;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct MethodInfo {
    /// Internal class name, `java/util/HashMap$Node`.
    pub class: String,
    pub name: String,
    pub descriptor: String,
}

#[derive(Default)]
pub struct Registry {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    methods: Vec<MethodInfo>,
    ids: HashMap<MethodInfo, u32>,
}

impl Registry {
    /// The id of a method, the same for a class transformed again (retransform)
    /// or a same-named class of another loader.
    pub fn id(&self, info: MethodInfo) -> u32 {
        let mut inner = self.inner.lock();
        if let Some(&id) = inner.ids.get(&info) {
            return id;
        }
        let id = inner.methods.len() as u32;
        inner.methods.push(info.clone());
        inner.ids.insert(info, id);
        id
    }

    /// Method `id`, if there is one.
    pub fn get(&self, id: u32) -> Option<MethodInfo> {
        self.inner.lock().methods.get(id as usize).cloned()
    }

    /// How many methods have ids (0 to this, less 1).
    pub fn len(&self) -> usize {
        self.inner.lock().methods.len()
    }

    /// A copy of every method, indexed by id.
    pub fn snapshot(&self) -> Vec<MethodInfo> {
        self.inner.lock().methods.clone()
    }
}

impl MethodInfo {
    /// The name ProfilerJ shows: `pkg.Cls.m(int,java.lang.String)`, and for
    /// a constructor `pkg.Cls(int)`.
    pub fn java_name(&self) -> String {
        let class = self.class.replace('/', ".");
        let params = java_params(&self.descriptor);
        if self.name == "<init>" {
            format!("{class}({params})")
        } else {
            format!("{class}.{}({params})", self.name)
        }
    }
}

/// The parameter types of a method descriptor as Java writes them.
pub fn java_params(descriptor: &str) -> String {
    let inner = descriptor
        .strip_prefix('(')
        .and_then(|d| d.split(')').next())
        .unwrap_or("");
    let mut out = Vec::new();
    let mut rest = inner;
    while !rest.is_empty() {
        let (ty, len) = java_type(rest);
        if len == 0 {
            break;
        }
        out.push(ty);
        rest = &rest[len..];
    }
    out.join(",")
}

/// One field type from the start of `d`: its Java form and its length.
/// A type as Java writes it, from an internal name (`java/lang/String`) or
/// an array descriptor (`[I`, `[Ljava/lang/String;`).
pub fn java_type_name(internal: &str) -> String {
    if internal.starts_with('[') {
        java_type(internal).0
    } else {
        internal.replace('/', ".")
    }
}

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

#[cfg(test)]
mod tests {
    use super::*;

    fn m(class: &str, name: &str, d: &str) -> MethodInfo {
        MethodInfo {
            class: class.into(),
            name: name.into(),
            descriptor: d.into(),
        }
    }

    #[test]
    fn names_as_profilerj_writes_them() {
        assert_eq!(
            m(
                "java/awt/event/PaintEvent",
                "<init>",
                "(Ljava/awt/Component;ILjava/awt/Rectangle;)V"
            )
            .java_name(),
            "java.awt.event.PaintEvent(java.awt.Component,int,java.awt.Rectangle)"
        );
        assert_eq!(
            m("a/B$C", "m", "([[I[Ljava/lang/String;JZ)V").java_name(),
            "a.B$C.m(int[][],java.lang.String[],long,boolean)"
        );
        assert_eq!(m("X", "<clinit>", "()V").java_name(), "X.<clinit>()");
    }

    #[test]
    fn ids_are_stable() {
        let r = Registry::default();
        let a = r.id(m("A", "f", "()V"));
        let b = r.id(m("A", "g", "()V"));
        assert_ne!(a, b);
        assert_eq!(r.id(m("A", "f", "()V")), a);
        assert_eq!(r.snapshot().len(), 2);
    }
}
