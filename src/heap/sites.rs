//! The `SITES` block of a heap dump: live bytes and objects per (trace,
//! class), counted as the second pass meets each object, ordered by live
//! bytes. A dump knows only the objects alive at its time, so the
//! `alloc'ed` columns repeat the live ones. A trace serial that no TRACE
//! record has, or a class no LOAD_CLASS or CLASS_DUMP names, is counted
//! under 0 (`<unknown>`), so the table is bounded by the dump's traces and
//! classes whatever its objects say.

use super::tables::{java_name, Tables};
use profrj_hprof::{BasicType, Item};
use std::collections::HashMap;
use std::io::{self, Write};

/// What a row counts objects of: a class, or a primitive array type.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Of {
    Class(u64),
    Prim(BasicType),
}

/// (live bytes, live objects) per (trace, class).
pub struct Sites<'t> {
    t: &'t Tables,
    rows: HashMap<(u32, Of), (u64, u64)>,
    total: u64,
}

impl<'t> Sites<'t> {
    pub fn new(t: &'t Tables) -> Sites<'t> {
        Sites {
            t,
            rows: HashMap::new(),
            total: 0,
        }
    }

    /// Counts an object.
    pub fn see(&mut self, item: &Item) {
        let t = self.t;
        let class = |id| Of::Class(if t.classes.contains_key(&id) { id } else { 0 });
        let (trace, of, bytes) = match item {
            Item::Instance(i) => (i.trace, class(i.class_id), u64::from(i.data_len)),
            Item::ObjArray(a) => (
                a.trace,
                class(a.class_id),
                u64::from(a.length) * t.id.bytes() as u64,
            ),
            Item::PrimArray(a) => (
                a.trace,
                Of::Prim(a.elem),
                u64::from(a.length) * a.elem.size(t.id) as u64,
            ),
            _ => return,
        };
        let trace = if t.trace_index.contains_key(&trace) {
            trace
        } else {
            0
        };
        let row = self.rows.entry((trace, of)).or_default();
        row.0 = row.0.saturating_add(bytes);
        row.1 += 1;
        self.total = self.total.saturating_add(bytes);
    }

    fn name(&self, of: Of) -> String {
        match of {
            Of::Class(0) => "<unknown>".to_owned(),
            Of::Class(id) => java_name(self.t.class_name(id)),
            Of::Prim(ty) => format!("{}[]", ty.java_name()),
        }
    }

    /// The block, largest first (then by objects, trace and name).
    pub fn write(&self, date: &str, out: &mut dyn Write) -> io::Result<()> {
        let mut rows: Vec<(u32, String, u64, u64)> = self
            .rows
            .iter()
            .map(|(&(trace, of), &(bytes, objs))| (trace, self.name(of), bytes, objs))
            .collect();
        rows.sort_by(|a, b| {
            (b.2.cmp(&a.2))
                .then(b.3.cmp(&a.3))
                .then(a.0.cmp(&b.0))
                .then(a.1.cmp(&b.1))
        });
        crate::hprof_text::sites_head(out, "live bytes", date)?;
        let mut accum = 0u64;
        for (rank, (trace, name, bytes, objs)) in rows.iter().enumerate() {
            accum = accum.saturating_add(*bytes);
            writeln!(
                out,
                "{:>5} {:>5.2}% {:>5.2}% {:>9} {:>4} {:>9} {:>5} {} {}",
                rank + 1,
                percent(*bytes, self.total),
                percent(accum, self.total),
                bytes,
                objs,
                bytes,
                objs,
                trace,
                crate::hprof_text::column(name)
            )?;
        }
        writeln!(out, "SITES END")
    }
}

fn percent(part: u64, total: u64) -> f64 {
    if total == 0 {
        0.0
    } else {
        part as f64 * 100.0 / total as f64
    }
}
