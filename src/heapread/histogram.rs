//! `profrj report HEAP --histogram`: objects and shallow bytes per class
//! in one pass over the dump, no graph: what hprof-slurp and `jmap
//! -histo` give, at the speed of reading the file. Sizes as the full
//! report states them (NetBeans'): an instance is its class's instance
//! size plus two ids, whatever order classes and objects come in (the
//! objects are tallied by class id and sized after the pass).

pub use super::graph::PRIMS;
use super::load::{self, Dump};
use super::scratch::Scratch;
use crate::error::CliError;
use profrj_hprof::Item;
use std::collections::HashMap;
use std::path::Path;

/// (objects, bytes of their data or elements, array?) per class id, and
/// (arrays, elements) per primitive array type in [`PRIMS`]' order.
#[derive(Default)]
pub struct Tally {
    pub classes: HashMap<u64, (u64, u64, bool)>,
    pub prims: [(u64, u64); PRIMS.len()],
}

/// A row: class, objects, shallow bytes.
pub type ClassRow = (String, u64, u64);

/// The rows, in no order.
pub fn histogram(path: &Path, gzip: bool) -> Result<(Dump, Vec<ClassRow>), CliError> {
    let (d, t) = tally(path, gzip)?;
    let id = d.id.bytes() as u64;
    let mut rows = Vec::new();
    let mut unknown = (0u64, 0u64);
    for (class_id, (count, bytes, array)) in t.classes {
        match d.class_index.get(&class_id) {
            Some(&c) if array => {
                rows.push((d.class_name(c), count, count * (2 * id + 8) + bytes * id));
            }
            Some(&c) => rows.push((d.class_name(c), count, count * d.instance_size(c))),
            None => {
                unknown.0 += count;
                unknown.1 += count * 2 * id + if array { count * 8 + bytes * id } else { bytes };
            }
        }
    }
    if unknown.0 > 0 {
        rows.push(("<unknown class>".into(), unknown.0, unknown.1));
    }
    for (k, (count, len)) in t.prims.iter().enumerate() {
        if *count > 0 {
            let size = PRIMS[k].size(d.id) as u64;
            let name = format!("{}[]", PRIMS[k].java_name());
            rows.push((name, *count, count * (2 * id + 8) + len * size));
        }
    }
    Ok((d, rows))
}

/// One pass over the dump at `path`: its tables and the objects counted by
/// class and primitive array type.
pub fn tally(path: &Path, gzip: bool) -> Result<(Dump, Tally), CliError> {
    let mut scratch = Scratch::new()?;
    let mut t = Tally::default();
    let d = load::open(path, gzip, &mut scratch, &mut |item| {
        match item {
            Item::Instance(i) => {
                let e = t.classes.entry(i.class_id).or_default();
                e.0 += 1;
                e.1 += u64::from(i.data_len);
            }
            Item::ObjArray(a) => {
                let e = t.classes.entry(a.class_id).or_default();
                e.0 += 1;
                e.1 += u64::from(a.length);
                e.2 = true;
            }
            Item::PrimArray(a) => {
                let k = PRIMS.iter().position(|&p| p == a.elem).unwrap_or(0);
                t.prims[k].0 += 1;
                t.prims[k].1 += u64::from(a.length);
            }
            _ => {}
        }
        Ok(())
    })?;
    Ok((d, t))
}
