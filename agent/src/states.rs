//! What each mode keeps for the JVM's lifetime, found by its type: one value
//! per type, made (`Default`) on first use and never dropped, as the agent
//! is never dropped. A mode's probes stay in the code, and its objects stay
//! tracked, whatever sessions come and go: that lasting state is a value
//! here, and a session's mode value holds a `&'static` to it.
//!
//! A look-up compares the type's id with each value's, in the order they
//! were made (a handful): no lock, no hashing. Adding a mode adds no field
//! anywhere: its state type is its key.

use parking_lot::Mutex;
use std::any::TypeId;
use std::sync::OnceLock;

/// The most mode states one agent holds (a unit test holds the registry
/// under it).
pub const MAX_STATES: usize = 16;

/// One state: its type's id and the leaked `Box` of its value.
struct Entry {
    ty: TypeId,
    value: *const (),
}

// SAFETY: `value` points to a `T: Send + Sync` (see `States::get`), never
// freed; the entry itself is immutable once set.
unsafe impl Send for Entry {}
// SAFETY: as above.
unsafe impl Sync for Entry {}

/// The typed registry of the modes' lasting states.
pub struct States {
    /// Filled in order; a look-up stops at the first empty one.
    entries: [OnceLock<Entry>; MAX_STATES],
    /// Serialises the making of new entries.
    making: Mutex<()>,
}

impl Default for States {
    fn default() -> Self {
        Self {
            entries: std::array::from_fn(|_| OnceLock::new()),
            making: Mutex::new(()),
        }
    }
}

impl States {
    /// The state of type `T`, made on first use.
    #[inline]
    pub fn get<T: Default + Send + Sync + 'static>(&self) -> &'static T {
        match self.find::<T>() {
            Some(t) => t,
            None => self.make::<T>(),
        }
    }

    /// The state of type `T` if it was made.
    #[inline]
    pub fn find<T: Send + Sync + 'static>(&self) -> Option<&'static T> {
        let ty = TypeId::of::<T>();
        for e in &self.entries {
            let e = e.get()?;
            if e.ty == ty {
                // SAFETY: `make::<T>` stored a leaked `Box<T>` under T's id,
                // never freed: a `&'static T`.
                return Some(unsafe { &*e.value.cast::<T>() });
            }
        }
        None
    }

    #[cold]
    fn make<T: Default + Send + Sync + 'static>(&self) -> &'static T {
        let _making = self.making.lock();
        if let Some(t) = self.find::<T>() {
            return t;
        }
        let value: &'static T = Box::leak(Box::default());
        let slot = self
            .entries
            .iter()
            .find(|e| e.get().is_none())
            .expect("more mode states than MAX_STATES");
        let entry = Entry {
            ty: TypeId::of::<T>(),
            value: (value as *const T).cast(),
        };
        if slot.set(entry).is_err() {
            unreachable!("entries are set under `making` only");
        }
        value
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

    #[derive(Default)]
    struct A(AtomicU32);
    #[derive(Default)]
    struct B(AtomicU32);

    #[test]
    fn one_value_per_type_made_once() {
        let s = States::default();
        assert!(s.find::<A>().is_none());
        s.get::<A>().0.store(7, Relaxed);
        s.get::<B>().0.store(9, Relaxed);
        assert_eq!(s.get::<A>().0.load(Relaxed), 7);
        assert_eq!(s.find::<B>().unwrap().0.load(Relaxed), 9);
        assert!(std::ptr::eq(s.get::<A>(), s.find::<A>().unwrap()));
    }
}
