//! The second pass: the object graph as arrays indexed by a dense node
//! number. Node `i` is the object whose id is the `i`-th smallest (the
//! ids are sorted on disk, never put in a hash map: a lookup is a binary
//! search); node `n` is the super root, whose edges go to every GC root.
//! Per node: its type, NetBeans' shallow size, its trace serial and the
//! offset of its data in the dump (to read it again for a path's field
//! names and a thread's name). The references are spooled as (from, to)
//! pairs, then laid out as a compressed adjacency array of out edges.

use super::load::{walk, Dump};
use super::scratch::{Mapped, Scratch};
use crate::error::CliError;
use profrj_hprof::{BasicType, Item, RootKind};
use std::collections::HashMap;
use std::path::Path;

/// A class object's type: its class's index with this bit set.
pub const CLASS_OBJECT: u32 = 1 << 31;
/// The super root's type.
pub const ROOT_TYPE: u32 = u32::MAX;
/// The most references read (an offset into the adjacency arrays is 32
/// bits; a dump with more would be tens of gigabytes of references alone).
pub const MAX_EDGES: u64 = u32::MAX as u64 - 1;

pub struct Graph {
    /// Objects and class objects; node `n` is the super root.
    pub n: usize,
    /// Sorted object ids (node `i` is `ids[i]`).
    pub ids: Mapped<u64>,
    /// Where each bucket of ids starts in `ids`: bucket `b` holds the ids
    /// whose `(id - min) >> shift` is `b`, so a lookup is a binary search
    /// of a few ids, not of all of them.
    buckets: Mapped<u32>,
    min: u64,
    shift: u32,
    /// The type (see [`Graph::type_name`]).
    pub ty: Mapped<u32>,
    pub shallow: Mapped<u64>,
    pub trace: Mapped<u32>,
    /// Where the object's data starts in the dump (field data, elements).
    pub offset: Mapped<u64>,
    /// Out edges of node `i`: `out[out_at[i]..out_at[i + 1]]`. Offsets
    /// are 32 bits (at most [`MAX_EDGES`] references): the arrays a walk
    /// reads at random are the graph's working set when memory is short.
    pub out_at: Mapped<u32>,
    pub out: Mapped<u32>,
    /// The first root kind that holds a node.
    pub root_kind: HashMap<u32, RootKind>,
    /// References to ids no object has (ignored).
    pub dangling: u64,
    /// Number of class indexes (types below are classes, then the
    /// primitive arrays, then "unknown").
    pub classes: u32,
}

/// The primitive array types, in the order of their type numbers.
pub const PRIMS: [BasicType; 8] = [
    BasicType::Boolean,
    BasicType::Char,
    BasicType::Float,
    BasicType::Double,
    BasicType::Byte,
    BasicType::Short,
    BasicType::Int,
    BasicType::Long,
];

impl Graph {
    /// Releases the per-node arrays ([`super::scratch::Mapped::release`]).
    pub fn release_nodes(&self) {
        self.ids.release();
        self.buckets.release();
        self.ty.release();
        self.shallow.release();
        self.trace.release();
        self.offset.release();
    }

    /// The node of object `id`, if the dump has it.
    pub fn node(&self, id: u64) -> Option<u32> {
        let b = (id.checked_sub(self.min)? >> self.shift) as usize;
        let (lo, hi) = (*self.buckets.get(b)?, *self.buckets.get(b + 1)?);
        let found = self.ids[lo as usize..hi as usize].binary_search(&id).ok()?;
        Some(lo + found as u32)
    }

    /// Fills the buckets of [`Graph::node`]: about two ids per bucket.
    fn index(&mut self, scratch: &mut Scratch) -> Result<(), CliError> {
        let (Some(&min), Some(&max)) = (self.ids.first(), self.ids.last()) else {
            return Ok(());
        };
        let want = (self.n as u64 / 2).max(1);
        let mut shift = 0;
        while (max - min) >> shift >= want {
            shift += 1;
        }
        let count = ((max - min) >> shift) as usize + 1;
        let mut buckets = scratch.array::<u32>("buckets", count + 1)?;
        let mut i = 0usize;
        for (b, slot) in buckets.iter_mut().enumerate() {
            while i < self.n && (((self.ids[i] - min) >> shift) as usize) < b {
                i += 1;
            }
            *slot = i as u32;
        }
        self.buckets = buckets;
        self.min = min;
        self.shift = shift;
        Ok(())
    }

    pub fn out_of(&self, v: u32) -> &[u32] {
        let v = v as usize;
        &self.out[self.out_at[v] as usize..self.out_at[v + 1] as usize]
    }

    /// The type counted in histograms (`None`: a class object, the root).
    pub fn histogram_type(&self, v: u32) -> Option<u32> {
        let t = self.ty[v as usize];
        (t & CLASS_OBJECT == 0).then_some(t)
    }

    /// The number of histogram types.
    pub fn types(&self) -> u32 {
        self.classes + PRIMS.len() as u32 + 1
    }

    /// A histogram type's name.
    pub fn type_name(&self, d: &Dump, t: u32) -> String {
        if t < self.classes {
            d.class_name(t)
        } else if let Some(p) = PRIMS.get((t - self.classes) as usize) {
            format!("{}[]", p.java_name())
        } else {
            "<unknown class>".into()
        }
    }

    /// A node as the report names it: `java.util.HashMap@0x7f…`, `class
    /// java.lang.String`, `<root>`.
    pub fn node_name(&self, d: &Dump, v: u32) -> String {
        let t = self.ty[v as usize];
        if t == ROOT_TYPE || t & CLASS_OBJECT != 0 {
            self.ty_name(d, t)
        } else {
            format!("{}@0x{:x}", self.type_name(d, t), self.ids[v as usize])
        }
    }

    /// A node's type as a name, from its `ty` (a class object's is `class
    /// X`; the super root's `<GC roots>`).
    pub fn ty_name(&self, d: &Dump, t: u32) -> String {
        if t == ROOT_TYPE {
            "<GC roots>".into()
        } else if t & CLASS_OBJECT != 0 {
            format!("class {}", d.class_name(t & !CLASS_OBJECT))
        } else {
            self.type_name(d, t)
        }
    }
}

fn prim_type(classes: u32, b: BasicType) -> u32 {
    classes + PRIMS.iter().position(|&p| p == b).unwrap_or(PRIMS.len()) as u32
}

/// Byte offsets of each class's reference fields in its instances' data
/// (its own, then its superclasses'). A `java.lang.ref.Reference`'s
/// `referent` is left out: a weak, soft or phantom reference keeps
/// nothing alive (NetBeans' heap library and MAT leave it out too).
fn ref_offsets(d: &Dump) -> Vec<Box<[u32]>> {
    let reference = d
        .classes
        .iter()
        .position(|c| d.symbol(c.name) == b"java/lang/ref/Reference")
        .map(|c| d.classes[c].id);
    (0..d.classes.len() as u32)
        .map(|c| {
            let is_reference = reference.is_some_and(|r| d.superclasses(c).any(|s| s == r));
            let mut at = 0u32;
            let mut refs = Vec::new();
            for (name, ty) in d.instance_fields(c) {
                let weak = is_reference && d.symbol(name) == b"referent";
                if ty == BasicType::Object && !weak {
                    refs.push(at);
                }
                at = at.saturating_add(ty.size(d.id) as u32);
            }
            refs.into_boxed_slice()
        })
        .collect()
}

/// The second pass: sorts `ids`, reads every object again, builds the graph.
pub fn build(
    d: &Dump,
    mut ids: Mapped<u64>,
    scratch: &mut Scratch,
    path: &Path,
) -> Result<Graph, CliError> {
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        return Err(CliError::Input(format!(
            "{}: two objects have the id 0x{:x}",
            path.display(),
            w[0]
        )));
    }
    let n = ids.len();
    if n >= (CLASS_OBJECT - 1) as usize {
        return Err(CliError::Input(format!(
            "{}: {n} objects: more than the {} read",
            path.display(),
            CLASS_OBJECT - 2
        )));
    }
    let classes = d.classes.len() as u32;
    let unknown = classes + PRIMS.len() as u32;
    let mut g = Graph {
        n,
        ids,
        buckets: scratch.array("buckets", 0)?,
        min: 0,
        shift: 0,
        ty: scratch.array("type", n + 1)?,
        shallow: scratch.array("shallow", n + 1)?,
        trace: scratch.array("trace", n + 1)?,
        offset: scratch.array("offset", n + 1)?,
        out_at: scratch.array("out-at", n + 2)?,
        out: scratch.array("out", 0)?,
        root_kind: HashMap::new(),
        dangling: 0,
        classes,
    };
    g.ty[n] = ROOT_TYPE;
    g.index(scratch)?;
    let refs = ref_offsets(d);
    let mut edges = scratch.spool::<u64>("edges")?;
    let idn = d.id.bytes();
    walk(d.map.bytes(), d.start, d.id, path, |item, body| {
        let (id, ty, size, trace, offset) = match item {
            Item::Instance(i) => {
                let c = d.class_index.get(&i.class_id).copied();
                let size = match c {
                    Some(c) => d.instance_size(c),
                    None => u64::from(i.data_len) + 2 * idn as u64,
                };
                (i.id, c.unwrap_or(unknown), size, i.trace, i.data_offset)
            }
            Item::ObjArray(a) => {
                let c = d.class_index.get(&a.class_id).copied();
                let size = d.array_size(a.length, idn);
                (a.id, c.unwrap_or(unknown), size, a.trace, a.elements_offset)
            }
            Item::PrimArray(a) => {
                let size = d.array_size(a.length, a.elem.size(d.id));
                (
                    a.id,
                    prim_type(classes, a.elem),
                    size,
                    a.trace,
                    a.data_offset,
                )
            }
            Item::Class(c) => {
                let ci = d.class_index[&c.id];
                (c.id, CLASS_OBJECT | ci, 0, c.trace, c.offset)
            }
            _ => return Ok(()),
        };
        let v = g.node(id).expect("every id was spooled") as usize;
        g.ty[v] = ty;
        g.shallow[v] = size;
        g.trace[v] = trace;
        g.offset[v] = offset;
        let mut edge = |to: u64, g: &mut Graph| -> Result<(), CliError> {
            if to == 0 {
                return Ok(());
            }
            match g.node(to) {
                Some(w) => edges.push(((v as u64) << 32) | u64::from(w)),
                None => {
                    g.dangling += 1;
                    Ok(())
                }
            }
        };
        match item {
            Item::Instance(i) => {
                edge(i.class_id, &mut g)?;
                if ty != unknown {
                    for &at in refs[ty as usize].iter() {
                        let at = at as usize;
                        if let Some(to) = body.get(at..at + idn).and_then(|b| d.id.read(b)) {
                            edge(to, &mut g)?;
                        }
                    }
                }
            }
            Item::ObjArray(a) => {
                edge(a.class_id, &mut g)?;
                for to in profrj_hprof::ids(body, d.id) {
                    edge(to, &mut g)?;
                }
            }
            Item::Class(_) => {
                let c = &d.classes[(ty & !CLASS_OBJECT) as usize];
                for &to in c.refs.iter().chain(c.statics.iter().map(|s| &s.1)) {
                    edge(to, &mut g)?;
                }
            }
            _ => {}
        }
        Ok(())
    })?;
    for &(id, kind) in &d.roots {
        match g.node(id) {
            Some(w) => {
                g.root_kind.entry(w).or_insert(kind);
                edges.push(((n as u64) << 32) | u64::from(w))?;
            }
            None => g.dangling += 1,
        }
    }
    // The per-node arrays are done with until the dominators' last step.
    g.release_nodes();
    let edges = edges.finish()?;
    if edges.len() as u64 > MAX_EDGES {
        return Err(CliError::Input(format!(
            "{}: {} references: more than the {MAX_EDGES} read",
            path.display(),
            edges.len()
        )));
    }
    g.out = adjacency(&edges, &mut g.out_at, scratch)?;
    g.out.release();
    g.out_at.release();
    Ok(g)
}

/// The out edges as a compressed adjacency array ([`lay_out`] in one
/// pass). The edges come in the dump's order, whose objects are mostly in
/// the order of their ids, so the lists are written nearly in order; the
/// walks read them at random. (The predecessors are laid out later, by
/// depth-first number: `dominators.rs`.)
fn adjacency(
    edges: &[u64],
    at: &mut Mapped<u32>,
    scratch: &mut Scratch,
) -> Result<Mapped<u32>, CliError> {
    let mut list = scratch.array::<u32>("out", edges.len())?;
    lay_out(edges, at, &mut list, u32::MAX);
    Ok(list)
}

/// Lays `pairs` (`key << 32 | value`) out as compressed lists: `at` (of
/// one entry per key and one more, zeros) becomes where each key's list
/// starts in `list` (`at[k]..at[k + 1]`), the values in `pairs`' order.
/// A pass over `pairs` places the keys of one range, at most `per_pass`
/// values, so the part of `list` written at random stays that small (the
/// pages of each pass are given back after it).
pub fn lay_out(pairs: &[u64], at: &mut [u32], list: &mut Mapped<u32>, per_pass: u32) {
    for &e in pairs {
        at[(e >> 32) as usize + 1] += 1;
    }
    for i in 1..at.len() {
        at[i] += at[i - 1];
    }
    // at[k] serves as key k's cursor while its range is placed (so it ends
    // where k + 1 starts); shifted back after.
    let keys = at.len() - 1;
    let mut lo = 0usize;
    while lo < keys {
        let mut hi = lo + 1;
        while hi < keys && at[hi + 1] - at[lo] <= per_pass {
            hi += 1;
        }
        for &e in pairs {
            let k = (e >> 32) as usize;
            if (lo..hi).contains(&k) {
                list[at[k] as usize] = e as u32;
                at[k] += 1;
            }
        }
        list.release();
        lo = hi;
    }
    for i in (1..at.len()).rev() {
        at[i] = at[i - 1];
    }
    at[0] = 0;
}
