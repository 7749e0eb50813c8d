//! Method ids: the integer an injected probe passes to the agent, standing for
//! one (class, method, descriptor). Assigned as classes are rewritten (from
//! any thread), read when a snapshot is written.

pub use crate::methods::{java_type, java_type_name};
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
