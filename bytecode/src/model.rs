//! The class-file model. Everything borrows the bytes it was read from.

use crate::tags::*;

/// A constant pool: the entries as read (kept as one slice, written back
/// verbatim) plus entries appended since.
#[derive(Debug, Clone)]
pub struct ConstantPool<'a> {
    /// The pool's bytes exactly as read (after the count).
    pub(crate) raw: &'a [u8],
    /// Offset within `raw` of each entry, by index (index 0 and the slot after
    /// a long/double are `None`).
    pub(crate) entries: Vec<Option<u32>>,
    /// Encoded entries appended by an edit, and how many slots they take.
    pub(crate) appended: Vec<u8>,
    pub(crate) appended_slots: u16,
    /// CONSTANT_Class entries by name (those read, then those appended), built
    /// on first use: editing looks classes up once per reference parameter.
    /// Keys borrow the pool's bytes (appended names are leaked into
    /// `appended_classes` instead), hashed with FNV: building this once per
    /// edited class showed in profiles with owned keys and SipHash.
    pub(crate) classes: std::cell::OnceCell<std::collections::HashMap<&'a [u8], u16, Fnv>>,
    pub(crate) appended_classes: Vec<(Box<[u8]>, u16)>,
    /// Answers of `add_utf8` so far: an editor asks for the same few names
    /// (`StackMapTable`, probe names) once per method, and each search of
    /// the pool is linear.
    pub(crate) utf8_memo: Vec<(Box<[u8]>, u16)>,
}

impl<'a> ConstantPool<'a> {
    /// `constant_pool_count` as written: one more than the highest index.
    pub fn count(&self) -> u16 {
        self.entries.len() as u16 + self.appended_slots
    }

    /// Tag of entry `index` among those read.
    pub fn tag(&self, index: u16) -> Option<u8> {
        let off = (*self.entries.get(index as usize)?)? as usize;
        self.raw.get(off).copied()
    }

    /// The bytes of a CONSTANT_Utf8 entry (modified UTF-8).
    pub fn utf8(&self, index: u16) -> Option<&'a [u8]> {
        let off = (*self.entries.get(index as usize)?)? as usize;
        if self.raw.get(off) != Some(&CONSTANT_UTF8) {
            return None;
        }
        let len = u16::from_be_bytes([*self.raw.get(off + 1)?, *self.raw.get(off + 2)?]) as usize;
        self.raw.get(off + 3..off + 3 + len)
    }

    /// A CONSTANT_Utf8 entry as text, lossy for what modified UTF-8 holds and
    /// UTF-8 does not (U+0000, characters beyond the Basic Multilingual
    /// Plane, lone surrogates): for messages. A name to keep: decode
    /// [`Self::utf8`] exactly (profrj's agent: `profrj_format::names`).
    pub fn text(&self, index: u16) -> Option<String> {
        self.utf8(index)
            .map(|b| String::from_utf8_lossy(b).into_owned())
    }

    /// The internal name of CONSTANT_Class entry `index`, as bytes (modified UTF-8).
    pub fn class_utf8(&self, index: u16) -> Option<&'a [u8]> {
        if self.tag(index)? != CONSTANT_CLASS {
            return None;
        }
        self.class_name_bytes(index)
    }

    /// The internal name of CONSTANT_Class entry `index`, lossy as
    /// [`Self::text`] is.
    pub fn class_name(&self, index: u16) -> Option<String> {
        if self.tag(index)? != CONSTANT_CLASS {
            return None;
        }
        let off = (*self.entries.get(index as usize)?)? as usize;
        self.text(u16::from_be_bytes([
            *self.raw.get(off + 1)?,
            *self.raw.get(off + 2)?,
        ]))
    }

    /// The CONSTANT_Class entry for internal name `name` (e.g. `java/lang/String`,
    /// `[I`), appended if the pool has none. `name` is the class file's bytes
    /// (modified UTF-8; an ASCII `&str` is the same bytes).
    pub fn class_index(&mut self, name: impl AsRef<[u8]>) -> u16 {
        let name = name.as_ref();
        let classes = self.classes.get_or_init(|| {
            (1..self.entries.len() as u16)
                .filter(|&i| self.tag(i) == Some(CONSTANT_CLASS))
                .filter_map(|i| Some((self.class_name_bytes(i)?, i)))
                .collect()
        });
        if let Some(&i) = classes.get(name) {
            return i;
        }
        if let Some(&(_, i)) = self.appended_classes.iter().find(|c| &*c.0 == name) {
            return i;
        }
        let utf8 = self.add_utf8_bytes(name);
        let index = self.count();
        self.appended.push(CONSTANT_CLASS);
        self.appended.extend_from_slice(&utf8.to_be_bytes());
        self.appended_slots += 1;
        self.appended_classes.push((name.into(), index));
        index
    }

    /// The descriptor of the Fieldref, Methodref, InterfaceMethodref or
    /// InvokeDynamic entry `index` (through its NameAndType), and its name.
    pub fn member_name_and_descriptor(&self, index: u16) -> Option<(&'a [u8], &'a [u8])> {
        let tag = self.tag(index)?;
        if !matches!(
            tag,
            CONSTANT_FIELDREF
                ..=CONSTANT_INTERFACE_METHODREF | CONSTANT_DYNAMIC | CONSTANT_INVOKE_DYNAMIC
        ) {
            return None;
        }
        let off = (*self.entries.get(index as usize)?)? as usize;
        let nat = u16::from_be_bytes([*self.raw.get(off + 3)?, *self.raw.get(off + 4)?]);
        if self.tag(nat)? != CONSTANT_NAME_AND_TYPE {
            return None;
        }
        let off = (*self.entries.get(nat as usize)?)? as usize;
        let name = u16::from_be_bytes([*self.raw.get(off + 1)?, *self.raw.get(off + 2)?]);
        let desc = u16::from_be_bytes([*self.raw.get(off + 3)?, *self.raw.get(off + 4)?]);
        Some((self.utf8(name)?, self.utf8(desc)?))
    }

    /// The CONSTANT_Class index of the Fieldref, Methodref or
    /// InterfaceMethodref entry `index`.
    pub fn member_class(&self, index: u16) -> Option<u16> {
        if !matches!(
            self.tag(index)?,
            CONSTANT_FIELDREF..=CONSTANT_INTERFACE_METHODREF
        ) {
            return None;
        }
        let off = (*self.entries.get(index as usize)?)? as usize;
        Some(u16::from_be_bytes([
            *self.raw.get(off + 1)?,
            *self.raw.get(off + 2)?,
        ]))
    }

    /// Entry `index` from its tag on, whether read or appended by an edit
    /// (appended entries are found by walking them: there are few).
    pub(crate) fn entry_any(&self, index: u16) -> Option<&[u8]> {
        if (index as usize) < self.entries.len() {
            let off = (*self.entries.get(index as usize)?)? as usize;
            return self.raw.get(off..);
        }
        let (mut i, mut off) = (self.entries.len() as u16, 0usize);
        while off < self.appended.len() {
            let e = &self.appended[off..];
            let len = match e[0] {
                CONSTANT_UTF8 => 3 + u16::from_be_bytes([*e.get(1)?, *e.get(2)?]) as usize,
                tag => 1 + body_len(tag)?,
            };
            if i == index {
                return e.get(..len);
            }
            i += slots(e[0]) as u16;
            off += len;
        }
        None
    }

    fn u16_at(e: &[u8], at: usize) -> Option<u16> {
        Some(u16::from_be_bytes([*e.get(at)?, *e.get(at + 1)?]))
    }

    /// Like [`Self::tag`], for appended entries too.
    pub(crate) fn tag_any(&self, index: u16) -> Option<u8> {
        self.entry_any(index)?.first().copied()
    }

    /// Like [`Self::utf8`], for appended entries too.
    pub(crate) fn utf8_any(&self, index: u16) -> Option<&[u8]> {
        let e = self.entry_any(index)?;
        if *e.first()? != CONSTANT_UTF8 {
            return None;
        }
        e.get(3..3 + Self::u16_at(e, 1)? as usize)
    }

    /// The internal name of CONSTANT_Class `index`, read or appended.
    pub(crate) fn class_name_any(&self, index: u16) -> Option<&[u8]> {
        let e = self.entry_any(index)?;
        if *e.first()? != CONSTANT_CLASS {
            return None;
        }
        self.utf8_any(Self::u16_at(e, 1)?)
    }

    /// Like [`Self::member_name_and_descriptor`], for appended entries too
    /// (also CONSTANT_Dynamic).
    pub(crate) fn member_any(&self, index: u16) -> Option<(&[u8], &[u8])> {
        let e = self.entry_any(index)?;
        if !matches!(
            *e.first()?,
            CONSTANT_FIELDREF
                ..=CONSTANT_INTERFACE_METHODREF | CONSTANT_DYNAMIC | CONSTANT_INVOKE_DYNAMIC
        ) {
            return None;
        }
        let nat = self.entry_any(Self::u16_at(e, 3)?)?;
        if *nat.first()? != CONSTANT_NAME_AND_TYPE {
            return None;
        }
        Some((
            self.utf8_any(Self::u16_at(nat, 1)?)?,
            self.utf8_any(Self::u16_at(nat, 3)?)?,
        ))
    }

    fn class_name_bytes(&self, index: u16) -> Option<&'a [u8]> {
        let off = (*self.entries.get(index as usize)?)? as usize;
        self.utf8(u16::from_be_bytes([
            *self.raw.get(off + 1)?,
            *self.raw.get(off + 2)?,
        ]))
    }

    /// Appends a CONSTANT_Methodref (with its NameAndType) for a method of
    /// class `class` (internal name) and returns its index.
    pub fn add_method_ref(&mut self, class: &str, name: &str, descriptor: &str) -> u16 {
        let class = self.class_index(class);
        let name = self.add_utf8(name);
        let descriptor = self.add_utf8(descriptor);
        let nat = self.append(
            CONSTANT_NAME_AND_TYPE,
            &[name.to_be_bytes(), descriptor.to_be_bytes()].concat(),
        );
        self.append(
            CONSTANT_METHODREF,
            &[class.to_be_bytes(), nat.to_be_bytes()].concat(),
        )
    }

    /// Appends a CONSTANT_MethodHandle of kind REF_invokeStatic (6) for a
    /// static method of class `class`, and returns its index.
    pub fn add_static_method_handle(&mut self, class: &str, name: &str, descriptor: &str) -> u16 {
        let method = self.add_method_ref(class, name, descriptor);
        let [hi, lo] = method.to_be_bytes();
        self.append(CONSTANT_METHOD_HANDLE, &[REF_INVOKE_STATIC, hi, lo])
    }

    /// Appends a CONSTANT_Dynamic (class files 55+) made by bootstrap method
    /// `bootstrap` (an index into BootstrapMethods), and returns its index.
    pub fn add_dynamic(&mut self, bootstrap: u16, name: &str, descriptor: &str) -> u16 {
        self.add_bootstrapped(CONSTANT_DYNAMIC, bootstrap, name, descriptor)
    }

    /// Appends a CONSTANT_InvokeDynamic (class files 51+) bound by
    /// bootstrap method `bootstrap` (an index into BootstrapMethods), and
    /// returns its index.
    pub fn add_invoke_dynamic(&mut self, bootstrap: u16, name: &str, descriptor: &str) -> u16 {
        self.add_bootstrapped(CONSTANT_INVOKE_DYNAMIC, bootstrap, name, descriptor)
    }

    /// A `tag` entry (Dynamic, InvokeDynamic) of a bootstrap method and a
    /// NameAndType.
    fn add_bootstrapped(&mut self, tag: u8, bootstrap: u16, name: &str, descriptor: &str) -> u16 {
        let name = self.add_utf8(name);
        let descriptor = self.add_utf8(descriptor);
        let nat = self.append(
            CONSTANT_NAME_AND_TYPE,
            &[name.to_be_bytes(), descriptor.to_be_bytes()].concat(),
        );
        self.append(tag, &[bootstrap.to_be_bytes(), nat.to_be_bytes()].concat())
    }

    /// Appends a CONSTANT_Integer and returns its index.
    pub fn add_integer(&mut self, value: i32) -> u16 {
        self.append(CONSTANT_INTEGER, &value.to_be_bytes())
    }

    fn append(&mut self, tag: u8, body: &[u8]) -> u16 {
        let index = self.count();
        self.appended.push(tag);
        self.appended.extend_from_slice(body);
        self.appended_slots += 1;
        index
    }

    /// Appends a CONSTANT_Utf8 entry (or finds an identical one) and returns
    /// its index. `s` is written as its UTF-8 bytes: the same as modified
    /// UTF-8 for the names this is for (ASCII, without U+0000).
    pub fn add_utf8(&mut self, s: &str) -> u16 {
        self.add_utf8_bytes(s.as_bytes())
    }

    /// [`Self::add_utf8`] for an entry's bytes (modified UTF-8) as they are.
    pub fn add_utf8_bytes(&mut self, s: &[u8]) -> u16 {
        if let Some(&(_, i)) = self.utf8_memo.iter().find(|m| &*m.0 == s) {
            return i;
        }
        let found = (1..self.entries.len() as u16).find(|&i| self.utf8(i) == Some(s));
        if let Some(i) = found {
            self.utf8_memo.push((s.into(), i));
            return i;
        }
        let index = self.count();
        self.appended.push(CONSTANT_UTF8);
        self.appended
            .extend_from_slice(&(s.len() as u16).to_be_bytes());
        self.appended.extend_from_slice(s);
        self.appended_slots += 1;
        self.utf8_memo.push((s.into(), index));
        index
    }
}

/// An attribute kept as read: its name index and its body bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attribute<'a> {
    /// CONSTANT_Utf8 index of the attribute's name.
    pub name_index: u16,
    /// The body after the length; borrowed until an edit replaces it.
    pub data: std::borrow::Cow<'a, [u8]>,
}

/// A field or a method.
#[derive(Debug, Clone)]
pub struct Member<'a> {
    /// `ACC_*` flags (JVMS tables 4.5-A and 4.6-A).
    pub access_flags: u16,
    /// CONSTANT_Utf8 index of the name (`<init>` for a constructor).
    pub name_index: u16,
    /// CONSTANT_Utf8 index of the descriptor (`(I)V`, `Ljava/lang/String;`).
    pub descriptor_index: u16,
    /// Its attributes (a method's `Code` among them).
    pub attributes: Vec<Attribute<'a>>,
}

/// A class file, in the order of its parts (JVMS §4.1).
#[derive(Debug, Clone)]
pub struct ClassFile<'a> {
    /// Minor version; 65535 with a major version marks preview features.
    pub minor_version: u16,
    /// 45 (Java 1.1) to 69 (Java 25): which verifier and features apply
    /// (StackMapTable from 50, dynamic constants from 55).
    pub major_version: u16,
    /// The constant pool, appended to by edits.
    pub constant_pool: ConstantPool<'a>,
    /// `ACC_*` flags of the class.
    pub access_flags: u16,
    /// CONSTANT_Class index of this class.
    pub this_class: u16,
    /// CONSTANT_Class index of the superclass; 0 for `java.lang.Object`.
    pub super_class: u16,
    /// CONSTANT_Class indices of the direct interfaces.
    pub interfaces: Vec<u16>,
    /// Fields, in declaration order.
    pub fields: Vec<Member<'a>>,
    /// Methods, in declaration order; edits address them by index.
    pub methods: Vec<Member<'a>>,
    /// The class's own attributes (SourceFile, BootstrapMethods…).
    pub attributes: Vec<Attribute<'a>>,
}

impl<'a> ClassFile<'a> {
    /// Adds a bootstrap method without static arguments (method handle
    /// `handle`) to the BootstrapMethods attribute, made if absent, and
    /// returns its index there. `None` if the attribute is malformed or full.
    pub fn add_bootstrap_method(&mut self, handle: u16) -> Option<u16> {
        let cp = &mut self.constant_pool;
        // (`utf8_any`: the attribute this made for an earlier call is named
        // by an appended entry.)
        let at = self
            .attributes
            .iter()
            .position(|a| cp.utf8_any(a.name_index) == Some(b"BootstrapMethods"));
        let at = match at {
            Some(i) => i,
            None => {
                let name_index = cp.add_utf8("BootstrapMethods");
                self.attributes.push(Attribute {
                    name_index,
                    data: std::borrow::Cow::Owned(vec![0, 0]),
                });
                self.attributes.len() - 1
            }
        };
        let data = self.attributes[at].data.to_mut();
        let count = u16::from_be_bytes([*data.first()?, *data.get(1)?]);
        let next = count.checked_add(1)?;
        data[..2].copy_from_slice(&next.to_be_bytes());
        data.extend_from_slice(&handle.to_be_bytes());
        data.extend_from_slice(&0u16.to_be_bytes());
        Some(count)
    }

    /// Appends a field without attributes (`access`: its `ACC_*` flags;
    /// `descriptor` as `I`, `Ljava/lang/String;`) after the fields declared,
    /// and returns its index among them. `None` if the class already has a
    /// field of that name, or no room for one more (65,535).
    pub fn add_field(&mut self, access: u16, name: &str, descriptor: &str) -> Option<usize> {
        let cp = &self.constant_pool;
        if self.fields.len() >= u16::MAX as usize
            || self
                .fields
                .iter()
                .any(|f| cp.utf8_any(f.name_index) == Some(name.as_bytes()))
        {
            return None;
        }
        let name_index = self.constant_pool.add_utf8(name);
        let descriptor_index = self.constant_pool.add_utf8(descriptor);
        self.fields.push(Member {
            access_flags: access,
            name_index,
            descriptor_index,
            attributes: Vec::new(),
        });
        Some(self.fields.len() - 1)
    }

    /// The `Code` attribute of method `index` (`None`: no such method, or
    /// abstract or native).
    pub fn method_code(&self, index: usize) -> Option<&Attribute<'a>> {
        let cp = &self.constant_pool;
        self.methods
            .get(index)?
            .attributes
            .iter()
            .find(|a| cp.utf8(a.name_index) == Some(b"Code"))
    }
}

/// FNV-1a, for the pool's name map: short keys, no adversary (the names
/// come from the class being edited, and a collision only costs time).
#[derive(Default, Clone, Copy)]
pub(crate) struct FnvHasher(u64);

impl std::hash::Hasher for FnvHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
        self.0 = h;
    }
}

pub(crate) type Fnv = std::hash::BuildHasherDefault<FnvHasher>;
