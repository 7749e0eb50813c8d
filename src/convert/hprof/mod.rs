//! A snapshot as HPROF's `java.hprof.txt` (the text report of
//! `-agentlib:hprof`, as JDK 5–8 wrote it with `thread=n`): a header,
//! `THREAD START`/`THREAD END`, the `TRACE`s the blocks refer to, then one
//! block per section the snapshot has — SITES from memory's `<sites>` (or
//! `<memory>`) and from `<alloc>`, CPU SAMPLES from `<sampler>`, CPU TIME
//! (ms) from `<profile>`, MONITOR TIME from `<lock>`.
//!
//! What is mapped to what (docs/READING.md, "convert --to hprof", says it too):
//! - A TRACE is a stack's top `depth` frames (HPROF's `depth`, 4 unless
//!   `--depth`), innermost first; nodes whose top frames agree share one, and
//!   their figures add up, as HPROF's own traces merge deeper stacks. Threads
//!   are merged (HPROF's `thread=n`). `TRACE 300000` is `<empty>`: sites
//!   with no stack (HPROF's own readers skip it; no CPU row names it).
//! - Every frame has HPROF's form, `class.method(File.java:LINE)`, which
//!   HPROF's readers parse: the line where the snapshot's frame carries one
//!   (`…():12`, or a node's `line` with the agent's `lines`), else `Unknown line`; the file is the class's `source` in
//!   `<coverage>` when the snapshot has it, else the outer class's name +
//!   `.java`. A constructor (`p.C(...)` in the snapshot) is `p.C.<init>`. A
//!   frame without a class (the agent's pseudo-frames: `[unknown_Java]`,
//!   `[no Java frame]` for samples without a Java frame, `[truncated]`…) is
//!   `name(<Unknown Source>:Unknown line)`, HPROF's form for a class without
//!   a source file. Names are escaped as the snapshot escapes them.
//! - Threads: the n-th thread of a name in one section is the n-th of that
//!   name in another; ids from 200001 in order of first appearance. No
//!   object address or group is known: `obj=0`, `group=""`. `THREAD END`
//!   for a thread whose `isAlive` is false.
//! - CPU SAMPLES: a trace's RUNNABLE samples (`hits`), HPROF's rule.
//! - CPU TIME (ms): self = a trace's own CPU time (`method`) over the total;
//!   count = its calls (`count`); the header's total in ms.
//! - SITES from `<memory>` (no stacks, no sizes): one row per class, threads
//!   merged, trace 300000; live objs = `count`, alloc'ed objs = `max` (the
//!   most alive at once: a lower bound of allocations); bytes 0; ordered by
//!   live objects. SITES from `<alloc>`: one row per (stack, class); a
//!   `live` section fills both live and alloc'ed columns (those objects were
//!   allocated), an all-allocations one the alloc'ed columns (live 0);
//!   ordered by the bytes it has.
//! - Every row with a non-zero figure is listed (HPROF's `cutoff` is 0).
//!
//! Time stays linear in the snapshot and memory within a fixed budget: a
//! node's trace is found by a rolling hash of its top frames
//! (`stacks::TopFrames`), so no trace is spelled out until it is written,
//! and `depth` is capped at [`MAX_FRAMES`]. [`Hprof::new`] computes every
//! block (`blocks.rs`): per trace, its figures summed and the first node
//! standing for it, by an external sort (`crate::sort`), then its rows
//! ranked by a second one and written as text to a scratch file, trace ids
//! given in the order the rows name them (a trace two blocks name has an
//! id in each). `traces.rs` then spells each trace out in one more walk of
//! its section, from the path at the node standing for it, and orders the
//! TRACEs by id. [`Hprof::write`] copies it all out.

use crate::error::CliError;
mod blocks;
mod traces;

use super::coverage::{default_source, escaped};
use super::stacks::{Key, TopFrames, MAX_FRAMES};
use crate::hprof_text::{column, ctime};
use crate::snapshot::{CallKind, Node, Snapshot, Tree, NO_LINE};
use blocks::Text;
use std::collections::{HashMap, HashSet};
use std::io::{self, Write};
use traces::{Numbering, Spelled};

/// HPROF's default `depth`.
pub const DEFAULT_DEPTH: usize = 4;
/// HPROF's first thread id and its empty trace (then 300001, …).
pub const FIRST_THREAD: u64 = 200_001;
pub const EMPTY_TRACE: u64 = 300_000;

pub struct Options<'a> {
    /// Frames per TRACE (capped at [`MAX_FRAMES`]).
    pub depth: usize,
    /// Only the threads of this name.
    pub thread: Option<&'a str>,
    /// When the snapshot was written, seconds since the epoch (the dates).
    pub created: u64,
}

/// What every block reads.
struct Ctx<'a> {
    snap: &'a Snapshot,
    opts: &'a Options<'a>,
    depth: usize,
    date: String,
    /// Class names known for certain (of frames that are surely methods).
    classes: HashSet<&'a str>,
    /// Class → `SourceFile`, from `<coverage>`.
    sources: HashMap<&'a str, &'a str>,
}

/// The report, ready to be written.
pub struct Hprof<'a> {
    ctx: Ctx<'a>,
    threads: Vec<(&'a str, bool)>,
    traces: Spelled,
    blocks: Vec<Text>,
}

impl<'a> Hprof<'a> {
    /// Fails on a snapshot without the sections HPROF's blocks come from,
    /// or without the `--thread` asked for.
    pub fn new(snap: &'a Snapshot, opts: &'a Options<'a>) -> Result<Hprof<'a>, CliError> {
        if snap.call_sections.is_empty() && snap.memory.is_none() {
            let tags: Vec<String> = CallKind::ALL
                .iter()
                .map(|k| format!("<{}>", k.tag()))
                .collect();
            return Err(CliError::Output(format!(
                "the snapshot has no {} or <{}> section: nothing for HPROF's blocks",
                tags.join(", "),
                profrj_format::memory::SECTION
            )));
        }
        let mut classes = HashSet::new();
        for name in snap.names.all() {
            if let Some((prefix, last)) = name.split('(').next().and_then(|b| b.rsplit_once('.')) {
                if last.starts_with(|c: char| c.is_lowercase() || c == '<' || c == '_') {
                    classes.insert(prefix);
                }
            }
        }
        let sources = snap.coverage.as_ref().map_or_else(HashMap::new, |c| {
            c.classes
                .iter()
                .filter_map(|c| Some((c.name.as_str(), c.source.as_deref()?)))
                .collect()
        });
        let ctx = Ctx {
            snap,
            opts,
            depth: opts.depth.min(MAX_FRAMES),
            date: ctime(opts.created),
            classes,
            sources,
        };
        let threads = threads(&ctx)?;
        let fail = |e: io::Error| CliError::Output(format!("converting to HPROF: {e}"));
        let mut numbering = Numbering::new()?;
        let blocks = blocks::all(&ctx, &mut numbering).map_err(fail)?;
        let traces = traces::spell(&ctx, numbering).map_err(fail)?;
        Ok(Hprof {
            ctx,
            threads,
            traces,
            blocks,
        })
    }

    pub fn write(&self, out: &mut dyn Write) -> io::Result<()> {
        let ctx = &self.ctx;
        header(ctx, out)?;
        for (i, (name, _)) in self.threads.iter().enumerate() {
            writeln!(
                out,
                "THREAD START (obj=0, id = {}, name=\"{}\", group=\"\")",
                FIRST_THREAD + i as u64,
                escaped(name)
            )?;
        }
        for (i, _) in self.threads.iter().enumerate().filter(|(_, t)| t.1) {
            writeln!(out, "THREAD END (id = {})", FIRST_THREAD + i as u64)?;
        }
        writeln!(out, "TRACE {EMPTY_TRACE}:\n\t<empty>")?;
        self.traces.write(out)?;
        for b in &self.blocks {
            b.write(out)?;
        }
        Ok(())
    }
}

fn header(ctx: &Ctx, out: &mut dyn Write) -> io::Result<()> {
    write!(
        out,
        "JAVA PROFILE 1.0.1, created {}\n\
         \n\
         Written by profrj {} (profrj convert --to hprof) from a snapshot, in the\n\
         layout of HPROF's java.hprof.txt with depth={}, thread=n, cutoff=0.\n\
         \n\
         THREAD START, THREAD END  the snapshot's threads (ids from {FIRST_THREAD}).\n\
         TRACE         a stack's top frames, innermost first; a frame's line is\n\
         \x20             Unknown unless the snapshot gives it. TRACE {EMPTY_TRACE}\n\
         \x20             is the empty stack.\n\
         SITES         from <memory> (live objects per class; no sizes: bytes 0)\n\
         \x20             and from <alloc> (estimated bytes and objects per stack\n\
         \x20             and class).\n\
         CPU SAMPLES   from <sampler>: samples of RUNNABLE threads per TRACE.\n\
         CPU TIME      from <profile>: own CPU time per TRACE; count = calls.\n\
         \n\
         --------\n\
         \n",
        ctx.date,
        env!("CARGO_PKG_VERSION"),
        ctx.depth
    )
}

/// Is this thread of a section wanted (`--thread`)?
fn wanted(ctx: &Ctx, name: &str) -> bool {
    match ctx.opts.thread {
        None => true,
        Some(n) => n == name,
    }
}

/// Every thread of every section, with whether it ended; the n-th thread
/// of a name is the same in every section.
fn threads<'a>(ctx: &Ctx<'a>) -> Result<Vec<(&'a str, bool)>, CliError> {
    // Per section, its wanted threads: (name, isAlive).
    let mut sections: Vec<Vec<(&str, Option<bool>)>> = Vec::new();
    for sec in &ctx.snap.call_sections {
        let names = sec.threads.iter().filter(|t| wanted(ctx, &t.name));
        sections.push(names.map(|t| (t.name.as_str(), t.is_alive)).collect());
    }
    if let Some(mem) = &ctx.snap.memory {
        let names = mem.threads.iter().filter(|t| wanted(ctx, &t.name));
        sections.push(names.map(|t| (t.name.as_str(), None)).collect());
    }
    // (name, n-th of that name) → index in `list` of (name, ended).
    let mut ids: HashMap<(&str, usize), usize> = HashMap::new();
    let mut list: Vec<(&str, bool)> = Vec::new();
    for names in sections {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (name, alive) in names {
            let n = seen.entry(name).or_insert(0);
            let key = (name, *n);
            *n += 1;
            let i = *ids.entry(key).or_insert_with(|| {
                list.push((name, false));
                list.len() - 1
            });
            if alive == Some(false) {
                list[i].1 = true;
            }
        }
    }
    if let (Some(n), true) = (ctx.opts.thread, list.is_empty()) {
        return Err(CliError::Output(format!(
            "no thread named {n:?} in the snapshot"
        )));
    }
    Ok(list)
}

/// Visits every node of a tree (in document order) with its index (from
/// 1) and trace key: the hash of its path's top `depth` frames.
fn walk(
    ctx: &Ctx,
    tree: &Tree,
    mut f: impl FnMut(u32, Key, &Node) -> io::Result<()>,
) -> io::Result<()> {
    let mut top = TopFrames::new(ctx.depth);
    for (i, n) in tree.walk().enumerate() {
        // A frame is its name and line (the agent's `lines`); the value stays
        // below the hash's modulus (2^61 - 1).
        let line = u64::from(n.line.min(1 << 28));
        let key = top.push(n.depth as usize, u64::from(n.name) | line << 32);
        f(i as u32 + 1, key, &n)?;
    }
    Ok(())
}

/// A frame's (class, method), or `None` for a frame that is no Java
/// method: a pseudo-frame (`[…]`) or a stub the sampler named as HotSpot
/// does (`I2C/C2I adapters`, `vtable stub`): every method's name has a `(`.
fn split<'a>(ctx: &Ctx, name: &'a str) -> Option<(&'a str, &'a str)> {
    if name.starts_with('[') || !name.contains('(') {
        return None;
    }
    let before = name.split('(').next().unwrap_or(name);
    let upper = |s: &str| s.starts_with(|c: char| c.is_uppercase());
    match before.rsplit_once('.') {
        Some((prefix, last)) => {
            let ctor = !last.starts_with('<')
                && (ctx.classes.contains(before) || (!ctx.classes.contains(prefix) && upper(last)));
            Some(if ctor {
                (before, "<init>")
            } else {
                (prefix, last)
            })
        }
        None if upper(before) => Some((before, "<init>")),
        None => Some(("", before)),
    }
}

/// HPROF's source file for a frame of no class, or of a class without one.
const UNKNOWN_SOURCE: &str = "<Unknown Source>";

/// `class.method(File.java:LINE)`: the line a frame named `…():12` gives,
/// or the node's `line` (the agent's `lines`), else `Unknown line`; a
/// pseudo-frame or a method of no class is `name(<Unknown Source>:Unknown line)`.
fn frame(ctx: &Ctx, name: &str, node_line: u32) -> String {
    let (name, line) = match name.rsplit_once("):") {
        Some((head, l)) if !l.is_empty() && l.bytes().all(|b| b.is_ascii_digit()) => {
            (&name[..head.len() + 1], l.to_owned())
        }
        _ if node_line != NO_LINE => (name, node_line.to_string()),
        _ => (name, "Unknown line".to_owned()),
    };
    let (head, file) = match split(ctx, name) {
        None => (name.to_owned(), UNKNOWN_SOURCE.to_owned()),
        Some(("", method)) => (method.to_owned(), UNKNOWN_SOURCE.to_owned()),
        Some((class, method)) => {
            let file = match ctx.sources.get(class) {
                Some(s) => s.to_string(),
                None => {
                    // A hidden class's address (`Foo$$Lambda$16.0x…`) is no file's.
                    let named = class.split(".0x").next().unwrap_or(class);
                    default_source(named.rsplit('.').next().unwrap_or(named))
                }
            };
            (format!("{class}.{method}"), file)
        }
    };
    format!("{}({}:{line})", column(&head), escaped(&file))
}

/// The `method` column: `class.method` of the name of the node standing
/// for the trace, or `<empty>`.
fn method_column(ctx: &Ctx, name: Option<u32>) -> String {
    let Some(name) = name else {
        return "<empty>".into();
    };
    let name = ctx.snap.names.get(name);
    match split(ctx, name) {
        Some((c, m)) if !c.is_empty() => column(&format!("{c}.{m}")).into_owned(),
        Some((_, m)) => column(m).into_owned(),
        None => column(name).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::parse_bytes;

    fn opts(depth: usize) -> Options<'static> {
        Options {
            depth,
            thread: None,
            created: 1_795_621_245,
        }
    }

    fn hprof(snap: &Snapshot, opts: &Options) -> Result<String, CliError> {
        let report = Hprof::new(snap, opts)?;
        let mut out = Vec::new();
        report.write(&mut out).unwrap();
        Ok(String::from_utf8(out).unwrap())
    }

    #[test]
    fn samples_merge_into_traces_of_depth() {
        let xml = r#"<doc><sampler>
          <thread name="a" isAlive="false"><profile name="p.A.main()" hits="1" elapsed="1">
            <profile name="p.A.f()" hits="3" elapsed="5"><profile name="p.A(native)" hits="2" elapsed="2"/></profile>
          </profile></thread>
          <thread name="b" cumulated="5" cumulatedElapsed="5"><profile name="q.B.run()" hits="0" elapsed="0"><profile name="p.A.f()" hits="2" elapsed="2"/></profile></thread>
        </sampler></doc>"#;
        let s = parse_bytes(xml.as_bytes()).unwrap();
        let text = hprof(&s, &opts(1)).unwrap();
        assert!(text.starts_with("JAVA PROFILE 1.0.1, created Wed Nov 25 15:40:45 2026\n"));
        assert!(text.contains("THREAD START (obj=0, id = 200001, name=\"a\", group=\"\")\n"));
        assert!(text.contains("THREAD START (obj=0, id = 200002, name=\"b\", group=\"\")\n"));
        assert!(text.contains("THREAD END (id = 200001)\n"));
        assert!(!text.contains("THREAD END (id = 200002)"));
        // depth 1: f() under main and under run() is one trace (5 samples);
        // b's 3 samples without a Java frame are a frame of their own (no
        // CPU row names the empty trace, which HPROF's readers skip).
        let block = text.split("CPU SAMPLES BEGIN").nth(1).unwrap();
        let want = " (total = 11) Wed Nov 25 15:40:45 2026\n\
                    rank   self  accum   count trace method\n   \
                    1 45.45% 45.45%       5 300001 p.A.f\n   \
                    2 27.27% 72.73%       3 300002 [no_Java_frame]\n   \
                    3 18.18% 90.91%       2 300003 p.A.<init>\n   \
                    4  9.09% 100.00%       1 300004 p.A.main\n\
                    CPU SAMPLES END\n";
        assert_eq!(block, want);
        assert!(text.contains("TRACE 300001:\n\tp.A.f(A.java:Unknown line)\nTRACE 300002:\n\t[no_Java_frame](<Unknown Source>:Unknown line)\nTRACE 300003:\n\tp.A.<init>(A.java:Unknown line)\n"));
        // depth 4: f() under main and under run() differ.
        let text = hprof(&s, &opts(4)).unwrap();
        assert!(text.contains(
            "\tp.A.<init>(A.java:Unknown line)\n\tp.A.f(A.java:Unknown line)\n\tp.A.main(A.java:Unknown line)\n"
        ));
        assert!(text.contains("\tp.A.f(A.java:Unknown line)\n\tq.B.run(B.java:Unknown line)\n"));
    }

    /// A stub frame (a name without `(`, as the sampler names HotSpot's
    /// generated code) is one frame of no class, spaces written `_`: not a
    /// constructor of a class `I2C/C2I adapters`.
    #[test]
    fn stub_frames_are_frames_of_no_class() {
        let xml = r#"<doc><sampler>
          <thread name="a"><profile name="p.A.main()" hits="0" elapsed="0">
            <profile name="I2C/C2I adapters" hits="3" elapsed="3"/>
            <profile name="p.A.f()" hits="1" elapsed="1"><profile name="vtable stub" hits="2" elapsed="2"/></profile>
          </profile></thread>
        </sampler></doc>"#;
        let s = parse_bytes(xml.as_bytes()).unwrap();
        let text = hprof(&s, &opts(2)).unwrap();
        let block = text.split("CPU SAMPLES BEGIN").nth(1).unwrap();
        assert!(block.contains(" I2C/C2I_adapters\n"), "{block}");
        assert!(block.contains(" vtable_stub\n"), "{block}");
        assert!(!text.contains("<init>"), "{text}");
        assert!(text.contains("\tI2C/C2I_adapters(<Unknown Source>:Unknown line)\n\tp.A.main(A.java:Unknown line)\n"), "{text}");
        assert!(
            text.contains(
                "\tvtable_stub(<Unknown Source>:Unknown line)\n\tp.A.f(A.java:Unknown line)\n"
            ),
            "{text}"
        );
    }

    #[test]
    fn a_snapshot_without_its_sections_is_refused() {
        let s = parse_bytes(b"<doc><coverage/></doc>").unwrap();
        let err = hprof(&s, &opts(4)).unwrap_err().to_string();
        assert!(err.contains("<memory>"), "{err}");
    }

    #[test]
    fn alloc_sites_per_stack_and_class() {
        let s = crate::snapshot::test_alloc::alloc();
        let text = hprof(&s, &opts(4)).unwrap();
        let block = text.split("SITES BEGIN").nth(1).unwrap();
        assert!(
            block.starts_with(" (ordered by allocated bytes)"),
            "{block}"
        );
        // p.A.big() allocates byte[] under main (600) and under B.run (300).
        assert!(block.contains("        0    0       600     1 "), "{block}");
        assert!(block.contains(" 300000 int[]\n"), "{block}");
        assert!(!text.contains("CPU SAMPLES BEGIN"), "no sampler section");
    }
}
