//! Java types (as Java writes them), places (a method and a source line)
//! and allocation sites (a place and a type), numbered once per JVM: the
//! numbers allocation probes pass, and that events name objects by (an
//! object tracked at a site, an exception's or a monitor's type). The
//! rewriter numbers a `new`'s site when it instruments the class; calls
//! whose objects' types are known only when they run (reflection, clone)
//! pass their place, and the site is found then; objects the VM or native
//! code makes have no place ([`NO_PLACE`]).

use parking_lot::Mutex;
use std::collections::HashMap;

/// Where code allocates: a method and the source line of the instruction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AllocPlace {
    /// Internal class name.
    pub class: String,
    pub method: String,
    pub descriptor: String,
    /// `None`: the class has no line numbers.
    pub line: Option<u16>,
    /// The class's source file (its SourceFile attribute), when it has one.
    pub source: Option<String>,
}

/// The place of objects the VM or native code made (VMObjectAlloc, JNI).
pub const NO_PLACE: u32 = 0;

/// Every type, place and site numbered so far (ids are never reused).
pub struct Sites(Mutex<Tables>);

#[derive(Default, Clone)]
pub struct Tables {
    pub types: Vec<String>,
    type_ids: HashMap<String, u32>,
    /// By place id; `None` at [`NO_PLACE`].
    pub places: Vec<Option<AllocPlace>>,
    place_ids: HashMap<AllocPlace, u32>,
    /// (place, type) by site id.
    pub sites: Vec<(u32, u32)>,
    site_ids: HashMap<(u32, u32), u32>,
}

impl Default for Sites {
    fn default() -> Self {
        Sites(Mutex::new(Tables {
            places: vec![None],
            ..Tables::default()
        }))
    }
}

/// The id of `key` in `ids`, numbered next (`push`) when new.
fn number<K: std::hash::Hash + Eq + Clone>(
    ids: &mut HashMap<K, u32>,
    key: &K,
    push: impl FnOnce() -> usize,
) -> u32 {
    if let Some(&id) = ids.get(key) {
        return id;
    }
    let id = push() as u32;
    ids.insert(key.clone(), id);
    id
}

impl Sites {
    /// The id of a type named as Java writes it (`java.util.HashMap$Node`,
    /// `int[]`, `java.lang.String[][]`).
    pub fn type_id(&self, java_name: &str) -> u32 {
        let t = &mut *self.0.lock();
        number(&mut t.type_ids, &java_name.to_owned(), || {
            t.types.push(java_name.to_owned());
            t.types.len() - 1
        })
    }

    pub fn place_id(&self, place: AllocPlace) -> u32 {
        let t = &mut *self.0.lock();
        number(&mut t.place_ids, &place, || {
            t.places.push(Some(place.clone()));
            t.places.len() - 1
        })
    }

    pub fn site_id(&self, place: u32, ty: u32) -> u32 {
        let t = &mut *self.0.lock();
        number(&mut t.site_ids, &(place, ty), || {
            t.sites.push((place, ty));
            t.sites.len() - 1
        })
    }

    /// The id of the type of class signature `signature` (`Ljava/lang/String;`, `[I`).
    pub fn type_of_signature(&self, signature: &str) -> u32 {
        self.type_id(&crate::methods::java_type(signature).0)
    }

    /// The id of an allocation site, a place and the type it allocates
    /// (named as Java writes it): what its probe passes.
    pub fn alloc_site(&self, place: AllocPlace, java_type: &str) -> u32 {
        let place = self.place_id(place);
        self.site_id(place, self.type_id(java_type))
    }

    /// The type id of site `site`.
    pub fn type_of(&self, site: u32) -> Option<u32> {
        self.0.lock().sites.get(site as usize).map(|&(_, ty)| ty)
    }

    /// Site `site`: its type's name and its place (`None`: the VM or JNI).
    pub fn site(&self, site: u32) -> Option<(String, Option<AllocPlace>)> {
        let t = self.0.lock();
        let &(place, ty) = t.sites.get(site as usize)?;
        Some((
            t.type_name(ty),
            t.places.get(place as usize).cloned().flatten(),
        ))
    }

    /// The name of type `ty`, as Java writes it.
    pub fn type_name(&self, ty: u32) -> String {
        self.0.lock().type_name(ty)
    }

    /// Every table as it is now, for a snapshot.
    pub fn tables(&self) -> Tables {
        self.0.lock().clone()
    }
}

impl Tables {
    pub fn type_name(&self, ty: u32) -> String {
        self.types
            .get(ty as usize)
            .cloned()
            .unwrap_or_else(|| format!("(type {ty})"))
    }

    /// A site's place as a frame, in the sampler's style with the line:
    /// `pkg.Cls.m():12`, `pkg.Cls():7` for a constructor, `pkg.Cls.m()`
    /// without line numbers; `[VM or JNI]` for objects without a place.
    pub fn place_frame(&self, place: u32) -> String {
        let Some(Some(p)) = self.places.get(place as usize) else {
            return "[VM or JNI]".to_owned();
        };
        let class = p.class.replace('/', ".");
        let mut s = if p.method == "<init>" {
            format!("{class}()")
        } else {
            format!("{class}.{}()", p.method)
        };
        if let Some(line) = p.line {
            s.push_str(&format!(":{line}"));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn place(method: &str, line: Option<u16>) -> AllocPlace {
        AllocPlace {
            class: "p/Outer$In".into(),
            method: method.into(),
            descriptor: "()V".into(),
            line,
            source: None,
        }
    }

    #[test]
    fn ids_are_stable_and_places_read_as_frames() {
        let s = Sites::default();
        let (a, b) = (s.type_id("int[]"), s.type_id("p.X"));
        assert_eq!((a, b, s.type_id("int[]")), (0, 1, 0));
        let run = s.place_id(place("run", Some(12)));
        let init = s.place_id(place("<init>", Some(7)));
        assert_eq!(run, 1, "0 is no place");
        assert_eq!(s.place_id(place("run", Some(12))), run);
        let site = s.site_id(run, b);
        assert_eq!(s.site_id(run, b), site);
        assert_ne!(s.site_id(run, a), site);
        assert_eq!(s.type_of(site), Some(b));
        let t = s.tables();
        assert_eq!(t.place_frame(run), "p.Outer$In.run():12");
        assert_eq!(t.place_frame(init), "p.Outer$In():7");
        assert_eq!(t.place_frame(NO_PLACE), "[VM or JNI]");
        let bare = s.place_id(place("m", None));
        assert_eq!(s.tables().place_frame(bare), "p.Outer$In.m()");
        assert_eq!(t.type_name(b), "p.X");
    }
}
