//! The metadata event: a table of strings, then a tree of elements (`root`
//! holding `metadata`, whose `class` elements declare every type with its
//! `field`s and `annotation`s, and `region`). Each element is its name,
//! its attributes as (key, value) pairs and its children, every string an
//! index into the table. Written here from a type list, read back into a
//! type table that trusts no count.

use crate::decode::{Cursor, Error, Result};
use crate::encode::Buf;
use std::collections::HashMap;

/// The metadata event's type id (the checkpoint's is 1).
pub const METADATA_TYPE: u64 = 0;
/// The constant pool (checkpoint) event's type id.
pub const CHECKPOINT_TYPE: u64 = 1;
/// The super type of every event type.
pub const EVENT_SUPER_TYPE: &str = "jdk.jfr.Event";
pub const ANNOTATION_SUPER_TYPE: &str = "java.lang.annotation.Annotation";

/// An annotation on a type or field: its type and its values (an array
/// value is written `name-0`, `name-1`, …).
#[derive(Clone, Debug)]
pub struct Annotation {
    pub ty: u64,
    pub values: Vec<(String, String)>,
}

#[derive(Clone, Debug)]
pub struct FieldDesc {
    pub name: &'static str,
    pub ty: u64,
    /// Written as a constant pool key.
    pub cpool: bool,
    /// An array of `ty`.
    pub array: bool,
    pub annotations: Vec<Annotation>,
}

#[derive(Clone, Debug)]
pub struct ClassDesc {
    pub id: u64,
    pub name: &'static str,
    pub super_type: Option<&'static str>,
    /// A type whose value is its one field's.
    pub simple: bool,
    pub fields: Vec<FieldDesc>,
    pub annotations: Vec<Annotation>,
}

/// An element of the metadata tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Element {
    pub name: String,
    pub attributes: Vec<(String, String)>,
    pub children: Vec<Element>,
}

impl Element {
    fn new(name: &str) -> Self {
        Element {
            name: name.into(),
            ..Default::default()
        }
    }

    fn attr(mut self, k: &str, v: impl Into<String>) -> Self {
        self.attributes.push((k.into(), v.into()));
        self
    }

    pub fn attribute(&self, key: &str) -> Option<&str> {
        self.attributes
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> {
        self.children.iter().filter(move |c| c.name == name)
    }
}

fn annotation_elements(list: &[Annotation]) -> Vec<Element> {
    list.iter()
        .map(|a| {
            let mut e = Element::new("annotation").attr("class", a.ty.to_string());
            for (k, v) in &a.values {
                e = e.attr(k, v.clone());
            }
            e
        })
        .collect()
}

/// The element tree of `classes`.
pub fn root_element(classes: &[ClassDesc]) -> Element {
    let mut metadata = Element::new("metadata");
    for c in classes {
        let mut e = Element::new("class")
            .attr("name", c.name)
            .attr("id", c.id.to_string());
        if let Some(s) = c.super_type {
            e = e.attr("superType", s);
        }
        if c.simple {
            e = e.attr("simpleType", "true");
        }
        e.children.extend(annotation_elements(&c.annotations));
        for f in &c.fields {
            let mut fe = Element::new("field")
                .attr("name", f.name)
                .attr("class", f.ty.to_string());
            if f.cpool {
                fe = fe.attr("constantPool", "true");
            }
            if f.array {
                fe = fe.attr("dimension", "1");
            }
            fe.children.extend(annotation_elements(&f.annotations));
            e.children.push(fe);
        }
        metadata.children.push(e);
    }
    let region = Element::new("region")
        .attr("locale", "en_US")
        .attr("gmtOffset", "0");
    let mut root = Element::new("root");
    root.children = vec![metadata, region];
    root
}

/// The metadata event (size included) describing `classes`.
pub fn metadata_event(classes: &[ClassDesc], start_ticks: u64, id: u64) -> Vec<u8> {
    let root = root_element(classes);
    let mut strings: Vec<String> = Vec::new();
    let mut index: HashMap<String, u64> = HashMap::new();
    let mut body = Buf::new();
    body.varint(METADATA_TYPE)
        .varint(start_ticks)
        .varint(0)
        .varint(id);
    let mut tree = Buf::new();
    write_element(&root, &mut tree, &mut strings, &mut index);
    body.varint(strings.len() as u64);
    for s in &strings {
        body.string(s);
    }
    body.raw(&tree.bytes);
    crate::encode::sized(&body.bytes)
}

fn write_element(
    e: &Element,
    out: &mut Buf,
    strings: &mut Vec<String>,
    index: &mut HashMap<String, u64>,
) {
    let mut id = |s: &str| -> u64 {
        if let Some(&i) = index.get(s) {
            return i;
        }
        let i = strings.len() as u64;
        strings.push(s.to_owned());
        index.insert(s.to_owned(), i);
        i
    };
    out.varint(id(&e.name));
    out.varint(e.attributes.len() as u64);
    for (k, v) in &e.attributes {
        out.varint(id(k));
        out.varint(id(v));
    }
    out.varint(e.children.len() as u64);
    for c in &e.children {
        write_element(c, out, strings, index);
    }
}

/// Deepest element nesting read (a real tree is five deep).
const MAX_NESTING: usize = 16;

/// Reads the metadata event's body after its type id: start, duration,
/// metadata id, the string table and the element tree.
pub fn read_root(c: &mut Cursor) -> Result<Element> {
    c.varint()?; // start time
    c.varint()?; // duration
    c.varint()?; // metadata id
    let n = c.count()?;
    let mut strings = Vec::new();
    for _ in 0..n {
        strings.push(c.string()?.unwrap_or_default());
    }
    read_element(c, &strings, 0)
}

fn read_element(c: &mut Cursor, strings: &[String], depth: usize) -> Result<Element> {
    if depth > MAX_NESTING {
        return Err(c.error(Error::over_limit, "metadata elements nested too deep"));
    }
    let s = |c: &mut Cursor| -> Result<String> {
        let i = c.varint()?;
        strings.get(i as usize).cloned().ok_or_else(|| {
            c.error(
                Error::malformed,
                format!("string index {i} of {}", strings.len()),
            )
        })
    };
    let mut e = Element::new(&s(c)?);
    for _ in 0..c.count()? {
        let k = s(c)?;
        let v = s(c)?;
        e.attributes.push((k, v));
    }
    for _ in 0..c.count()? {
        e.children.push(read_element(c, strings, depth + 1)?);
    }
    Ok(e)
}

/// A field as the reader knows it.
#[derive(Clone, Debug)]
pub struct Field {
    pub name: String,
    pub ty: u64,
    pub cpool: bool,
    pub array: bool,
    /// `jdk.jfr.Timespan`'s or `jdk.jfr.Timestamp`'s unit, if annotated.
    pub unit: Option<String>,
}

/// A type as the reader knows it.
#[derive(Clone, Debug)]
pub struct Type {
    pub name: String,
    pub fields: Vec<Field>,
}

impl Type {
    pub fn field(&self, name: &str) -> Option<usize> {
        self.fields.iter().position(|f| f.name == name)
    }
}

/// Every type of a chunk by id.
pub type Types = HashMap<u64, Type>;

/// The type table of a metadata tree.
pub fn types(root: &Element, at: u64) -> Result<Types> {
    let err = |m: String| Error::Malformed {
        offset: at,
        message: m,
    };
    let metadata = root
        .children_named("metadata")
        .next()
        .ok_or_else(|| err("metadata without a <metadata> element".into()))?;
    let mut types = Types::new();
    let mut names: HashMap<u64, &str> = HashMap::new();
    for c in metadata.children_named("class") {
        let id = number(c, "id").ok_or_else(|| err("a class without an id".into()))?;
        names.insert(id, c.attribute("name").unwrap_or(""));
    }
    for c in metadata.children_named("class") {
        let id = number(c, "id").unwrap_or(0);
        let mut fields = Vec::new();
        for f in c.children_named("field") {
            let ty = number(f, "class").ok_or_else(|| err("a field without a class".into()))?;
            if !names.contains_key(&ty) {
                return Err(err(format!("a field of undeclared type {ty}")));
            }
            let unit = f
                .children_named("annotation")
                .filter(|a| {
                    number(a, "class")
                        .and_then(|t| names.get(&t))
                        .is_some_and(|n| *n == "jdk.jfr.Timespan" || *n == "jdk.jfr.Timestamp")
                })
                .find_map(|a| a.attribute("value").map(str::to_owned));
            fields.push(Field {
                name: f.attribute("name").unwrap_or("").to_owned(),
                ty,
                cpool: f.attribute("constantPool") == Some("true"),
                array: number(f, "dimension").unwrap_or(0) > 0,
                unit,
            });
        }
        types.insert(
            id,
            Type {
                name: c.attribute("name").unwrap_or("").to_owned(),
                fields,
            },
        );
    }
    Ok(types)
}

fn number(e: &Element, key: &str) -> Option<u64> {
    e.attribute(key)?.parse().ok()
}
