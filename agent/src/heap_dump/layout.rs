//! Where two fields lie in an instance's data, from the CLASS_DUMPs: the
//! stamp (`$profrj$stamp`: which allocation counter made the object) and a
//! `java.lang.Thread`'s `tid` (its Java thread id: which of the dump's
//! thread roots is which profrj thread). An instance's field data is its
//! class's own fields, then its superclass's, and so on up (HotSpot writes
//! each class before any instance: `hprof/src/lib.rs`).

use crate::instrument::stamp;
use crate::stack::WordHasher;
use profrj_hprof::{BasicType, ClassDump, IdSize};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// A map keyed by ids (addresses): a cheap hash, no defence against chosen
/// keys needed.
pub type Words<V> = HashMap<u64, V, BuildHasherDefault<WordHasher>>;

/// Where the two fields are in an instance of a class, if it has them.
#[derive(Clone, Copy, Default, PartialEq, Eq, Debug)]
pub struct Offsets {
    pub stamp: Option<u32>,
    pub tid: Option<u32>,
}

/// A class as far as the offsets need it.
struct ClassInfo {
    super_id: u64,
    /// Bytes of its own instance fields.
    own_size: u32,
    /// The fields' places among its own, if it has them.
    own: Offsets,
}

#[derive(Default)]
pub struct Layouts {
    /// UTF8 ids of the names looked for, once met.
    stamp_name: Option<u64>,
    tid_name: Option<u64>,
    thread_name: Option<u64>,
    /// The class object of `java.lang.Thread` (its `tid` is the one wanted).
    thread_class: Option<u64>,
    classes: Words<ClassInfo>,
    /// Each class's offsets (found once), and the last class asked about
    /// (instances of one class come in runs).
    memo: Words<Offsets>,
    last: Option<(u64, Offsets)>,
}

impl Layouts {
    /// A UTF8 record: one of the names looked for?
    pub fn utf8(&mut self, id: u64, text: &[u8]) {
        if text == stamp::FIELD.as_bytes() {
            self.stamp_name = Some(id);
        } else if text == b"tid" {
            self.tid_name = Some(id);
        } else if text == b"java/lang/Thread" {
            self.thread_name = Some(id);
        }
    }

    /// A LOAD_CLASS record.
    pub fn load_class(&mut self, class: u64, name: u64) {
        if Some(name) == self.thread_name {
            self.thread_class = Some(class);
        }
    }

    /// A CLASS_DUMP.
    pub fn class(&mut self, c: &ClassDump, id: IdSize) {
        let mut own_size = 0u32;
        let mut own = Offsets::default();
        let is_thread = Some(c.id) == self.thread_class;
        for f in c.fields() {
            if Some(f.name) == self.stamp_name && f.ty == BasicType::Int {
                own.stamp = Some(own_size);
            }
            if is_thread && Some(f.name) == self.tid_name && f.ty == BasicType::Long {
                own.tid = Some(own_size);
            }
            own_size = own_size.saturating_add(f.ty.size(id) as u32);
        }
        let super_id = c.super_id;
        self.classes.insert(
            c.id,
            ClassInfo {
                super_id,
                own_size,
                own,
            },
        );
    }

    /// Where the fields are in an instance of `class`.
    pub fn offsets(&mut self, class: u64) -> Offsets {
        if let Some((c, o)) = self.last {
            if c == class {
                return o;
            }
        }
        let o = match self.memo.get(&class) {
            Some(&o) => o,
            None => {
                let o = self.walk(class);
                self.memo.insert(class, o);
                o
            }
        };
        self.last = Some((class, o));
        o
    }

    /// Every class's offsets, found now, for the workers to share.
    pub fn freeze(&mut self) -> Words<Offsets> {
        let ids: Vec<u64> = self.classes.keys().copied().collect();
        ids.into_iter().map(|c| (c, self.offsets(c))).collect()
    }

    /// Up the class chain, adding each class's own size.
    fn walk(&self, class: u64) -> Offsets {
        let mut found = Offsets::default();
        let mut offset = 0u32;
        let mut at = class;
        // A chain longer than the classes is a cycle: stop.
        for _ in 0..=self.classes.len() {
            let Some(c) = self.classes.get(&at) else {
                break;
            };
            found.stamp = found.stamp.or(c.own.stamp.map(|s| offset + s));
            found.tid = found.tid.or(c.own.tid.map(|s| offset + s));
            offset = offset.saturating_add(c.own_size);
            if c.super_id == 0 {
                break;
            }
            at = c.super_id;
        }
        found
    }
}
