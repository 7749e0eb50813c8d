//! `profrj convert SNAPSHOT --to prof [--dump HEAP.hprof]`: the JDK 1.1
//! `-prof` file (`java.prof`; hprof's `cpu=old`), as
//! ../shared/spec/java-profiling-methodology-hprof.txt describes its four
//! sections, for the viewers written for it (HyperProf, ProfileViewer):
//!
//! 1. `count callee caller time`: per (callee, caller) pair, the calls and
//!    their elapsed time in ms, callee's callees included, summed over the
//!    `<profile>` section's threads (the format has none), most calls first;
//!    methods in the VM's syntax (`java/lang/String.length()I`); a thread's
//!    first method's caller is `<root>`;
//! 2. the high-water line: `handles_used`, the most objects alive at once
//!    (`<memory>`'s `max`, summed over its rows: a bound from above, since
//!    the rows' peaks need not have come together), and `heap-used`, the
//!    bytes of the heap dump's objects; `handles_free` and `heap-free` are
//!    0 (profrj sees no handle table or free list);
//! 3. `sig count bytes indx`: the primitive arrays in the heap dump (`indx`
//!    the VM's type code), bytes as `report --histogram` gives them;
//! 4. the per-object memory dump: per class with objects in the dump, its
//!    instances and their bytes and the arrays of it (`cnt`, `ac`, `al` the
//!    elements of those arrays), most bytes first; `p` and `cb` are the
//!    class object's id.
//!
//! Sections 3 and 4 need a heap dump (`--dump`, a profrj or HotSpot HPROF
//! file, taken at the end as the JDK 1.1's were); without one they are
//! left out.

use crate::error::CliError;
use crate::heapread::histogram::{self, Tally};
use crate::snapshot::{CallKind, Snapshot, NONE};
use profrj_format::{calls, profile};
use std::collections::HashMap;
use std::io::{self, Write};
use std::path::Path;

/// A heap dump's figures for sections 2 to 4.
pub struct DumpFigures {
    /// `sig count bytes indx` rows.
    prims: Vec<(String, u64, u64, u8)>,
    /// Per element type: (its instances, their bytes, arrays of it, their
    /// elements, their bytes, the class object's id).
    classes: Vec<(String, [u64; 6])>,
    bytes: u64,
}

/// The VM's letter and type code of each primitive array type, in
/// `histogram::PRIMS`' order (boolean, char, float, double, byte, short,
/// int, long).
const PRIM_SIGS: [(&str, u8); 8] = [
    ("Z", 4),
    ("C", 5),
    ("F", 6),
    ("D", 7),
    ("B", 8),
    ("S", 9),
    ("I", 10),
    ("J", 11),
];

/// Reads the heap dump at `path` for sections 2 to 4.
pub fn dump_figures(path: &Path) -> Result<DumpFigures, CliError> {
    let gzip = crate::heap::sniff(path).ok_or_else(|| {
        CliError::Usage(format!(
            "--dump {}: not a binary HPROF heap dump",
            path.display()
        ))
    })?;
    let (d, t): (_, Tally) = histogram::tally(path, gzip)?;
    let id = d.id.bytes() as u64;
    let mut figures = DumpFigures {
        prims: Vec::new(),
        classes: Vec::new(),
        bytes: 0,
    };
    for (k, &(count, len)) in t.prims.iter().enumerate() {
        if count == 0 {
            continue;
        }
        let size = histogram::PRIMS[k].size(d.id) as u64;
        let bytes = count * (2 * id + 8) + len * size;
        let (sig, code) = PRIM_SIGS[k];
        figures.prims.push((format!("[{sig}"), count, bytes, code));
        figures.bytes += bytes;
    }
    let mut by_element: HashMap<String, [u64; 6]> = HashMap::new();
    for (&class_id, &(count, units, array)) in &t.classes {
        let Some(&c) = d.class_index.get(&class_id) else {
            continue;
        };
        let raw = d.raw_class_name(c);
        let e = if array {
            let bytes = count * (2 * id + 8) + units * id;
            let element = raw.strip_prefix('[').unwrap_or(&raw).to_owned();
            let e = by_element.entry(element).or_default();
            (e[2], e[3], e[4]) = (e[2] + count, e[3] + units, e[4] + bytes);
            figures.bytes += bytes;
            e
        } else {
            let bytes = count * d.instance_size(c);
            let e = by_element.entry(format!("L{raw};")).or_default();
            (e[0], e[1]) = (e[0] + count, e[1] + bytes);
            figures.bytes += bytes;
            e
        };
        if e[5] == 0 {
            e[5] = class_id;
        }
    }
    figures.classes = by_element.into_iter().collect();
    figures.classes.sort_by(|a, b| {
        (b.1[1] + b.1[4])
            .cmp(&(a.1[1] + a.1[4]))
            .then(a.0.cmp(&b.0))
    });
    Ok(figures)
}

/// `pkg.Cls.m(args)` with descriptor `(..)V` as `pkg/Cls.m(..)V`. The
/// agent names a constructor `pkg.Cls(args)`: a last part that starts with
/// a capital, with a `void` descriptor, is taken for one (`pkg/Cls.<init>`;
/// a method named with a capital and returning nothing reads as one too).
fn vm_method(name: &str, signature: &str) -> String {
    let bare = name.split_once('(').map_or(name, |(n, _)| n);
    let (class, method) = match bare.rsplit_once('.') {
        Some((_, last))
            if last.starts_with(|c: char| c.is_ascii_uppercase()) && signature.ends_with('V') =>
        {
            (bare, "<init>")
        }
        Some(split) => split,
        None => ("", bare),
    };
    format!("{}.{method}{signature}", class.replace('.', "/"))
}

/// The file's figures: the calls by (callee, caller), the high-water
/// line's objects, and the heap dump's.
pub struct Prof<'a> {
    /// ((callee, caller), (calls, µs)), most calls first.
    rows: Vec<((String, String), (u64, u64))>,
    handles: u64,
    dump: Option<&'a DumpFigures>,
}

impl<'a> Prof<'a> {
    /// From `snap`'s `<profile>` (required) and `<memory>`, and the heap
    /// dump's figures when given.
    pub fn new(snap: &Snapshot, dump: Option<&'a DumpFigures>) -> Result<Prof<'a>, CliError> {
        let sec = snap.calls(CallKind::Profile).ok_or_else(|| {
            CliError::Usage("--to prof needs a <profile> section (the profile mode's)".into())
        })?;
        let desc = sec.desc();
        let (Some(count_at), Some(time_at)) = (
            desc.slot(profile::node::COUNT),
            desc.slot(calls::CUMULATED_ELAPSED),
        ) else {
            return Err(CliError::Input("<profile> without counts or times".into()));
        };
        let method = |n: u32, sig: u32| -> String {
            let sig = if sig == NONE { "" } else { snap.names.get(sig) };
            vm_method(snap.names.get(n), sig)
        };
        let mut pairs: HashMap<(String, String), (u64, u64)> = HashMap::new();
        // Each node's caller from the walk's path (document order: a node
        // follows its caller), never the whole tree in memory.
        let mut path: Vec<(u32, u32)> = Vec::new();
        for t in &sec.threads {
            path.clear();
            for n in t.tree.walk() {
                path.truncate((n.depth as usize).saturating_sub(1));
                let caller = match path.last() {
                    Some(&(name, sig)) => method(name, sig),
                    None => "<root>".to_owned(),
                };
                let e = pairs
                    .entry((method(n.name, n.signature), caller))
                    .or_default();
                e.0 += n.v.0[count_at];
                e.1 += n.v.0[time_at];
                path.push((n.name, n.signature));
            }
        }
        let mut rows: Vec<_> = pairs.into_iter().collect();
        rows.sort_by(|a, b| (b.1 .0, b.1 .1, &a.0).cmp(&(a.1 .0, a.1 .1, &b.0)));
        let handles = snap.memory.as_ref().map_or(0, |m| {
            m.threads.iter().flat_map(|t| &t.rows).map(|r| r.max).sum()
        });
        Ok(Prof {
            rows,
            handles,
            dump,
        })
    }

    /// Writes the four sections (two without a heap dump).
    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        writeln!(out, "count callee caller time")?;
        for ((callee, caller), (count, us)) in &self.rows {
            writeln!(out, "{count} {callee} {caller} {}", (us + 500) / 1000)?;
        }
        let heap = self.dump.map_or(0, |d| d.bytes);
        writeln!(
            out,
            "handles_used: {}, handles_free: 0, heap-used: {heap}, heap-free: 0",
            self.handles
        )?;
        let Some(d) = self.dump else { return Ok(()) };
        writeln!(out, "sig count bytes indx")?;
        for (sig, count, bytes, code) in &d.prims {
            writeln!(out, "{sig} {count} {bytes} {code}")?;
        }
        for (i, (element, f)) in d.classes.iter().enumerate() {
            let [cnt, bytes, ac, al, abytes, class_id] = *f;
            writeln!(
                out,
                "*** tab[{i}] p={class_id:x} cb={class_id:x} cnt={cnt} ac={ac} al={al}"
            )?;
            if cnt > 0 {
                writeln!(out, "{element} {cnt} {bytes}")?;
            }
            if ac > 0 {
                writeln!(out, "[{element} {ac} {abytes}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn methods_in_the_vms_syntax() {
        use super::vm_method;
        let m = vm_method("java.lang.String.length()", "()I");
        assert_eq!(m, "java/lang/String.length()I");
        let c = vm_method("p.Outer$Inner(int)", "(I)V");
        assert_eq!(c, "p/Outer$Inner.<init>(I)V");
        let s = vm_method("p.A.<clinit>()", "()V");
        assert_eq!(s, "p/A.<clinit>()V");
    }
}
