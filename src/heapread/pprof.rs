//! `profrj convert HEAP.hprof[.gz] --to pprof`: a heap dump as pprof's heap
//! profile, for `go tool pprof`, its web page and the services that read
//! pprof. One sample per allocated class, allocation site and allocating
//! thread, with the objects the dump holds and their shallow bytes
//! (`inuse_objects` and `inuse_space`, the names Go's heap profiles give
//! what is alive), leaf first: the class, then the site's frame; the thread
//! as a label. A dump that names no site (HotSpot's own) gives one sample
//! per class. Every object of the dump counts, reachable or not, as in
//! `report --histogram`; retained bytes are `report`'s.
//!
//! The graph is built as for `report` (its types, sizes and traces, in the
//! private directory's files), but no dominator tree: one pass over the
//! objects, and memory by class, site and thread.

use super::load::{self, Dump};
use super::scratch::Scratch;
use super::{graph, views};
use crate::error::CliError;
use flate2::write::GzEncoder;
use flate2::Compression;
use profrj_otlp::wire::Msg;
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;

/// No site or thread (HotSpot's dumps, objects no trace names).
const NONE: u32 = u32::MAX;

/// pprof's tables as they are made: strings, and a function and a
/// location (same id) per class and per site frame.
struct Tables {
    strings: Vec<String>,
    string_at: HashMap<String, i64>,
    functions: Vec<Msg>,
    locations: Vec<Msg>,
}

impl Tables {
    fn new() -> Tables {
        let mut t = Tables {
            strings: Vec::new(),
            string_at: HashMap::new(),
            functions: Vec::new(),
            locations: Vec::new(),
        };
        t.string("");
        t
    }

    fn string(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.string_at.get(s) {
            return i;
        }
        let i = self.strings.len() as i64;
        self.strings.push(s.to_owned());
        self.string_at.insert(s.to_owned(), i);
        i
    }

    /// A function named `name` (in `file`) and its location at `line`:
    /// their id.
    fn frame(&mut self, name: &str, file: &str, line: i64) -> u64 {
        let id = self.functions.len() as u64 + 1;
        let (name, file) = (self.string(name), self.string(file));
        let mut f = Msg::default();
        f.int(1, id);
        f.int(2, name as u64);
        f.int(3, name as u64);
        f.int(4, file as u64);
        self.functions.push(f);
        let mut l = Msg::default();
        l.int(1, id);
        let mut at = Msg::default();
        at.int(1, id);
        at.int(2, line.max(0) as u64);
        l.msg(4, &at);
        self.locations.push(l);
        id
    }
}

/// A site's frame: (`pkg.Cls.method`, source file, line).
fn site_frame(d: &Dump, frame: u64) -> (String, String, i64) {
    match views::frame_parts(d, frame) {
        Some(f) => (
            format!("{}.{}", f.class, f.method),
            f.file,
            i64::from(f.line),
        ),
        None => (format!("<frame 0x{frame:x}>"), String::new(), 0),
    }
}

/// Writes the heap profile of the dump at `path` to `out` (stdout when
/// `None`), gzipped as pprof files are.
pub fn convert(path: &Path, gzip: bool, out: Option<&Path>) -> Result<(), CliError> {
    let mut scratch = Scratch::new()?;
    let (d, ids) = load::open_with_ids(path, gzip, &mut scratch)?;
    let g = graph::build(&d, ids, &mut scratch, path)?;
    let keys = views::Keys::new(&d, &g);
    // (type, site, thread) → (objects, shallow bytes).
    let mut groups: HashMap<(u32, u32, u32), (u64, u64)> = HashMap::new();
    let mut frame_of_site: HashMap<u32, u64> = HashMap::new();
    for v in 0..g.n as u32 {
        let Some(ty) = g.histogram_type(v) else {
            continue;
        };
        let (site, thread) = keys.of(&g, v).unwrap_or((NONE, NONE));
        if site != NONE {
            frame_of_site
                .entry(site)
                .or_insert_with(|| d.traces[&g.trace[v as usize]].frame);
        }
        let e = groups.entry((ty, site, thread)).or_default();
        e.0 += 1;
        e.1 += g.shallow[v as usize];
    }
    let mut t = Tables::new();
    let mut p = Msg::default();
    for (ty, unit) in [("inuse_objects", "count"), ("inuse_space", "bytes")] {
        let mut vt = Msg::default();
        vt.int(1, t.string(ty) as u64);
        vt.int(2, t.string(unit) as u64);
        p.msg(1, &vt);
    }
    let mut class_loc: HashMap<u32, u64> = HashMap::new();
    let mut site_loc: HashMap<u32, u64> = HashMap::new();
    let mut rows: Vec<_> = groups.into_iter().collect();
    // Largest first, then by keys: the same dump gives the same bytes.
    rows.sort_by(|a, b| b.1 .1.cmp(&a.1 .1).then(a.0.cmp(&b.0)));
    let thread_key = t.string("thread");
    for ((ty, site, thread), (objects, bytes)) in rows {
        let class = *class_loc
            .entry(ty)
            .or_insert_with(|| t.frame(&g.type_name(&d, ty), "", 0));
        let mut locations = vec![class];
        if site != NONE {
            let loc = *site_loc.entry(site).or_insert_with(|| {
                let (name, file, line) = site_frame(&d, frame_of_site[&site]);
                t.frame(&name, &file, line)
            });
            locations.push(loc);
        }
        let mut s = Msg::default();
        s.packed(1, &locations);
        s.packed(2, &[objects, bytes]);
        if thread != NONE {
            let mut label = Msg::default();
            label.int(1, thread_key as u64);
            label.int(2, t.string(&keys.threads[thread as usize]) as u64);
            s.msg(3, &label);
        }
        p.msg(2, &s);
    }
    for l in &t.locations {
        p.msg(4, l);
    }
    for f in &t.functions {
        p.msg(5, f);
    }
    for s in &t.strings {
        p.bytes(6, s.as_bytes());
    }
    p.int(14, t.string_at["inuse_space"] as u64);
    crate::output::stream(out, |w| {
        let mut gz = GzEncoder::new(w, Compression::default());
        gz.write_all(&p.buf)?;
        gz.finish().map(drop)
    })
}
