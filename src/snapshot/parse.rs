//! Streaming snapshot reader: quick-xml events straight into the model, with a
//! stack of what each open element is. Errors carry the byte offset of the
//! element at fault (or of the XML error); [`read_file`] and [`parse_bytes`]
//! turn it into a line and column.

use super::spill::SpillWriter;
use super::{
    CallKind, CoverageBranch, CoverageClass, CoverageFiltered, CoverageMethod, CoverageSection,
    MemoryRow, MemorySection, MemoryThread, Snapshot, Values,
};
use crate::error::CliError;
use call_sections::{add_frameless_samples, call_kind};
use monitor_dump::DumpParent;
use profrj_format::lock::dump;
use profrj_format::{calls, coverage, memory, DOC};
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::Path;

/// A reading error at a place in the input.
#[cfg(any(test, fuzzing))]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based.
    pub line: u64,
    /// 1-based, in characters.
    pub column: u64,
    pub message: String,
}

#[cfg(any(test, fuzzing))]
impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

/// An error before its position is turned into a line and column.
struct RawError {
    offset: u64,
    message: String,
    /// Where the element that was left open starts (truncated input).
    opened: Option<(String, u64)>,
}

impl RawError {
    fn render<F: FnMut(u64) -> (u64, u64)>(self, mut line_col: F) -> (u64, u64, String) {
        let (line, column) = line_col(self.offset);
        let message = match self.opened {
            None => self.message,
            Some((tag, at)) => {
                let (l, c) = line_col(at);
                format!("{} (<{tag}> opened at line {l}, column {c})", self.message)
            }
        };
        (line, column, message)
    }
}

/// Reads a snapshot file. The error names the file, line and column.
pub fn read_file(path: &Path) -> Result<Snapshot, CliError> {
    read_file_with_lines(path, false)
}

/// As [`read_file`]; `lines`: a JFR recording's frames keyed by their line
/// too (`--lines`; a snapshot has lines when the agent ran with `lines`).
pub fn read_file_with_lines(path: &Path, lines: bool) -> Result<Snapshot, CliError> {
    use std::os::unix::fs::FileTypeExt;
    let open = || {
        std::fs::File::open(path).map_err(|e| CliError::Input(format!("{}: {e}", path.display())))
    };
    let file = open()?;
    // A regular file or a pipe; a device (/dev/zero, a disk) is no snapshot.
    let t = file
        .metadata()
        .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?
        .file_type();
    if t.is_char_device() || t.is_block_device() || t.is_dir() || t.is_socket() {
        return Err(CliError::Input(format!(
            "{}: not a snapshot file (a device, directory or socket)",
            path.display()
        )));
    }
    let mut input = BufReader::with_capacity(1 << 16, file);
    // A JFR recording (its magic first) is read as one.
    let head = input
        .fill_buf()
        .map_err(|e| CliError::Input(format!("{}: {e}", path.display())))?;
    if profrj_jfr::is_jfr(head) {
        return super::jfr::read_file(path, lines);
    }
    parse(input, true)
        .map_err(|e| {
            // A regular file is read again to turn the offset into a line and
            // column; a pipe cannot be, so its error gives the byte offset.
            let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
            if !regular {
                let offset = e.offset;
                let (_, _, message) = e.render(|_| (0, 0));
                return format!("{}: byte {offset}: {message}", path.display());
            }
            let (line, column, message) = e.render(|offset| match open() {
                Ok(f) => line_col(BufReader::new(f), offset),
                Err(_) => (0, 0),
            });
            format!(
                "{}: line {line}, column {column}: {message}",
                path.display()
            )
        })
        .map_err(CliError::Input)
}

/// Reads a snapshot held in memory.
#[cfg(any(test, fuzzing))]
pub fn parse_bytes(bytes: &[u8]) -> Result<Snapshot, ParseError> {
    parse(bytes, false).map_err(|e| {
        let (line, column, message) = e.render(|offset| line_col(bytes, offset));
        ParseError {
            line,
            column,
            message,
        }
    })
}

/// Line and column (both from 1, column in characters) of a byte offset.
fn line_col<R: BufRead>(r: R, offset: u64) -> (u64, u64) {
    let (mut line, mut column) = (1, 1);
    for b in r.bytes().take(offset as usize) {
        let Ok(b) = b else { break };
        if b == b'\n' {
            line += 1;
            column = 1;
        } else if b & 0xC0 != 0x80 {
            column += 1;
        }
    }
    (line, column)
}

/// What an open element is.
enum Open {
    Doc,
    /// A section or element we do not read (anything unknown at the top level).
    Skip,
    Calls,
    CallThread,
    /// A node: its index in its tree, and its depth.
    CallNode(u32, u32),
    Memory,
    MemoryThread,
    MemoryRow,
    Coverage,
    Class,
    Method,
    Footprints,
    Branches,
    Instructions,
    Filtered,
    /// `<monitorDump>` and its elements (`monitor_dump.rs`).
    Dump,
    DumpThread,
    DumpMonitor,
    Deadlock,
    DumpLeaf,
}

struct Parser {
    snap: Snapshot,
    /// Where the call trees' nodes go (a snapshot read from a file), or
    /// `None`: kept in memory.
    spill: Option<SpillWriter>,
    /// The open thread's nodes' figures summed (`add_frameless_samples`).
    own_sum: Values,
    stack: Vec<(Open, Vec<u8>, u64)>,
    /// Which call section `Calls` elements belong to.
    kind: CallKind,
    root_done: bool,
    offset: u64,
}

/// The most bytes one XML event (an element's tag with its attributes, or a
/// run of text) may take: a snapshot's largest are a few kilobytes, and
/// without a bound an endless input (`/dev/zero` through a pipe) would grow
/// one event until memory ran out.
const MAX_EVENT: u64 = 64 << 20;

/// A reader that fails once an event has consumed more than [`MAX_EVENT`]
/// bytes; the parser resets it after each event.
struct Bounded<R> {
    inner: R,
    used: u64,
}

impl<R: std::io::Read> std::io::Read for Bounded<R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(out)?;
        self.used += n as u64;
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Bounded<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if self.used > MAX_EVENT {
            return Err(std::io::Error::other(format!(
                "an element or text of over {} MiB: not a snapshot",
                MAX_EVENT >> 20
            )));
        }
        self.inner.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        self.used += n as u64;
        self.inner.consume(n)
    }
}

fn parse<R: BufRead>(input: R, spill: bool) -> Result<Snapshot, RawError> {
    let mut reader = Reader::from_reader(Bounded {
        inner: input,
        used: 0,
    });
    // Whitespace stays a text event, so an element's offset is its `<`.
    reader.config_mut().trim_text(false);
    let spill = if spill {
        Some(SpillWriter::new().map_err(|e| RawError {
            offset: 0,
            message: e.to_string(),
            opened: None,
        })?)
    } else {
        None
    };
    let mut p = Parser {
        snap: Snapshot::default(),
        spill,
        own_sum: Values::default(),
        stack: Vec::new(),
        kind: CallKind::Sampler,
        root_done: false,
        offset: 0,
    };
    let mut buf = Vec::new();
    loop {
        p.offset = reader.buffer_position();
        let ev = reader.read_event_into(&mut buf).map_err(|e| RawError {
            offset: reader.error_position(),
            message: format!("malformed XML: {e}"),
            opened: None,
        })?;
        match ev {
            Event::Start(e) => p.start(&e)?,
            Event::Empty(e) => {
                p.start(&e)?;
                p.end()?;
            }
            Event::End(_) => p.end()?,
            Event::Text(t) => {
                let text = t.unescape().map_err(|e| p.err(format!("bad text: {e}")))?;
                p.text(&text)?;
            }
            Event::CData(t) => {
                let text = String::from_utf8_lossy(&t).into_owned();
                p.text(&text)?;
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
        reader.get_mut().used = 0;
    }
    if let Some((_, name, at)) = p.stack.last() {
        let what = String::from_utf8_lossy(name).into_owned();
        return Err(RawError {
            offset: reader.buffer_position(),
            message: format!("unexpected end of input, <{what}> is not closed: truncated snapshot"),
            opened: Some((what, *at)),
        });
    }
    if !p.root_done {
        return Err(RawError {
            offset: reader.buffer_position(),
            message: format!("no <{DOC}> element: not a snapshot"),
            opened: None,
        });
    }
    if let Some(w) = p.spill.take() {
        let file = w
            .finish()
            .map_err(|e| p.err(format!("the call trees' scratch file: {e}")))?;
        for sec in &mut p.snap.call_sections {
            for t in &mut sec.threads {
                t.tree.attach(&file);
            }
        }
    }
    Ok(p.snap)
}

/// Name of the node that holds a sampler thread's samples without a Java
/// frame (HPROF's `<empty>` trace): a thread in native code or the VM only.
pub const NO_JAVA_FRAME: &str = "[no Java frame]";

impl Parser {
    fn err(&self, message: String) -> RawError {
        RawError {
            offset: self.offset,
            message,
            opened: None,
        }
    }

    fn start(&mut self, e: &BytesStart) -> Result<(), RawError> {
        let tag = e.name().as_ref().to_vec();
        let parent = self.stack.last().map(|s| &s.0);
        // A name that is not UTF-8 is none of the format's: "" matches none.
        let open = match (parent, std::str::from_utf8(&tag).unwrap_or("")) {
            (None, DOC) if !self.root_done => Open::Doc,
            (None, _) if self.root_done => {
                return Err(self.err(format!("content after the end of <{DOC}>")))
            }
            (None, _) => {
                return Err(self.err(format!(
                    "the root element is <{}>, a snapshot's is <{DOC}>",
                    String::from_utf8_lossy(&tag)
                )))
            }
            (Some(Open::Skip), _) => Open::Skip,
            (Some(Open::Doc), t) if call_kind(t).is_some() => {
                self.open_calls(call_kind(t).expect("matched"), e)?
            }
            (Some(Open::Doc), memory::SECTION) => {
                self.snap.memory.get_or_insert_with(MemorySection::default);
                Open::Memory
            }
            (Some(Open::Doc), coverage::SECTION) => {
                self.snap
                    .coverage
                    .get_or_insert_with(CoverageSection::default);
                Open::Coverage
            }
            (Some(Open::Doc), _) => Open::Skip,
            (Some(Open::Calls), calls::THREAD) => {
                let t = self.call_thread(e)?;
                self.section().threads.push(t);
                Open::CallThread
            }
            (Some(Open::CallThread), calls::NODE) => {
                let (i, d) = self.call_node(e, 0, 0)?;
                Open::CallNode(i, d)
            }
            (Some(&Open::CallNode(p, pd)), calls::NODE) => {
                let (i, d) = self.call_node(e, p, pd)?;
                Open::CallNode(i, d)
            }
            (Some(Open::Memory), memory::THREAD) => {
                let a = self.attrs(e)?;
                let name = self.required(&a, memory::thread::NAME)?;
                let mem = self.snap.memory.as_mut().expect("opened");
                mem.threads.push(MemoryThread {
                    name,
                    rows: Vec::new(),
                });
                Open::MemoryThread
            }
            (Some(Open::MemoryThread), memory::ROW) => {
                let a = self.attrs(e)?;
                let row = MemoryRow {
                    class: self.required(&a, memory::row::CLASS)?,
                    count: self.number(&a, memory::row::COUNT)?.unwrap_or(0),
                    max: self.number(&a, memory::row::MAX)?.unwrap_or(0),
                };
                let mem = self.snap.memory.as_mut().expect("opened");
                mem.threads.last_mut().expect("open").rows.push(row);
                Open::MemoryRow
            }
            (Some(Open::Coverage), coverage::CLASS) => {
                let a = self.attrs(e)?;
                let class = CoverageClass {
                    name: self.required(&a, coverage::class::NAME)?,
                    source: a.get(coverage::class::SOURCE),
                    id: self.class_id(&a)?,
                    methods: Vec::new(),
                };
                let cov = self.snap.coverage.as_mut().expect("opened");
                cov.classes.push(class);
                Open::Class
            }
            (Some(Open::Class), coverage::METHOD) => {
                let a = self.attrs(e)?;
                let m = CoverageMethod {
                    name: self.required(&a, coverage::method::NAME)?,
                    signature: a.get(coverage::method::SIGNATURE).unwrap_or_default(),
                    first_line: self.first_line(&a)?,
                    count: self.number(&a, coverage::method::COUNT)?.unwrap_or(0),
                    footprints: Vec::new(),
                    branches: Vec::new(),
                    instructions: None,
                    filtered: None,
                    generated: a.get(coverage::method::GENERATED),
                };
                let cov = self.snap.coverage.as_mut().expect("opened");
                cov.classes.last_mut().expect("open").methods.push(m);
                Open::Method
            }
            (Some(Open::Method), coverage::FOOTPRINTS) => Open::Footprints,
            (Some(Open::Method), coverage::BRANCHES) => Open::Branches,
            (Some(Open::Method), coverage::INSTRUCTIONS) => {
                self.open_method().instructions.get_or_insert_with(Vec::new);
                Open::Instructions
            }
            (Some(Open::Method), coverage::FILTERED) => {
                let a = self.attrs(e)?;
                let indexes = a.get(coverage::filtered::BRANCHES).unwrap_or_default();
                let branches = indexes
                    .split_ascii_whitespace()
                    .map(|w| {
                        w.parse::<u32>().map_err(|_| {
                            self.err(format!("<filtered> branch index {w:?} is not a number"))
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                let pairs = a.get(coverage::filtered::MERGED).unwrap_or_default();
                let merged = coverage::filtered::parse_merged(&pairs)
                    .map_err(|w| self.err(format!("<filtered> merged pair {w:?} is not K:J")))?;
                self.open_method().filtered = Some(CoverageFiltered {
                    instructions: Vec::new(),
                    branches,
                    merged,
                });
                Open::Filtered
            }
            (Some(Open::Calls), dump::DUMP) => {
                self.snap.monitor_dump.get_or_insert_with(Default::default);
                Open::Dump
            }
            (Some(p @ (Open::Dump | Open::DumpThread | Open::DumpMonitor | Open::Deadlock)), t) => {
                let p = match p {
                    Open::Dump => DumpParent::Dump,
                    Open::DumpThread => DumpParent::Thread,
                    Open::DumpMonitor => DumpParent::Monitor,
                    _ => DumpParent::Deadlock,
                };
                self.dump_element(p, t, e)?
            }
            (Some(_), _) => {
                let inside = String::from_utf8_lossy(&self.stack.last().expect("some").1);
                return Err(self.err(format!(
                    "unexpected <{}> inside <{inside}>",
                    String::from_utf8_lossy(&tag)
                )));
            }
        };
        self.stack.push((open, tag, self.offset));
        Ok(())
    }

    fn end(&mut self) -> Result<(), RawError> {
        // quick-xml checks that end tags match, so this pops the right element.
        match self.stack.pop() {
            Some((Open::Doc, _, _)) => self.root_done = true,
            Some((Open::CallThread, _, _)) => {
                let kind = self.kind;
                let names = &mut self.snap.names;
                let sec = self.snap.call_sections.iter_mut().find(|c| c.kind == kind);
                add_frameless_samples(
                    names,
                    sec.expect("open"),
                    &self.own_sum,
                    self.spill.as_mut(),
                )
                .map_err(|e| self.err(format!("the call trees' scratch file: {e}")))?;
            }
            _ => {}
        }
        Ok(())
    }

    fn text(&mut self, text: &str) -> Result<(), RawError> {
        match self.stack.last() {
            Some((Open::Footprints, _, _)) => {
                let mut lines = Vec::new();
                for word in text.split_ascii_whitespace() {
                    let n: i64 = word
                        .parse()
                        .map_err(|_| self.err(format!("footprint {word:?} is not an integer")))?;
                    if n < -1 {
                        return Err(self.err(format!("footprint {n} is below -1")));
                    }
                    lines.push(n);
                }
                let err = self.err(format!(
                    "footprints in a method without line numbers ({} {} or absent)",
                    coverage::method::FIRST_LINE,
                    coverage::method::NO_LINES
                ));
                let cov = self.snap.coverage.as_mut().expect("opened");
                let class = cov.classes.last_mut().expect("open");
                let method = class.methods.last_mut().expect("open");
                if method.first_line.is_none() && !lines.is_empty() {
                    return Err(err);
                }
                method.footprints.extend(lines);
                Ok(())
            }
            Some((Open::Branches, _, _)) => {
                let mut branches = Vec::new();
                for word in text.split_ascii_whitespace() {
                    branches.push(parse_branch(word).map_err(|why| {
                        self.err(format!("branch {word:?}: {why} (LINE:N0,N1…)"))
                    })?);
                }
                let cov = self.snap.coverage.as_mut().expect("opened");
                let class = cov.classes.last_mut().expect("open");
                let method = class.methods.last_mut().expect("open");
                method.branches.extend(branches);
                Ok(())
            }
            Some((Open::Instructions, _, _)) => {
                let cells = self.cells(coverage::INSTRUCTIONS, text)?;
                let m = self.open_method();
                m.instructions.get_or_insert_with(Vec::new).extend(cells);
                Ok(())
            }
            Some((Open::Filtered, _, _)) => {
                let cells = self.cells(coverage::FILTERED, text)?;
                let m = self.open_method();
                if let Some(f) = m.filtered.as_mut() {
                    f.instructions.extend(cells);
                }
                Ok(())
            }
            _ if text.trim().is_empty() => Ok(()),
            None if !self.root_done => {
                Err(self.err(format!("text before <{DOC}>: not a snapshot")))
            }
            _ => Ok(()),
        }
    }

    /// An element's attributes, read in one pass: linear in their number
    /// (quick-xml's duplicate check and a look-up per key would be quadratic).
    fn attrs(&self, e: &BytesStart) -> Result<Attrs, RawError> {
        let mut map = HashMap::new();
        for a in e.attributes().with_checks(false) {
            let a = a.map_err(|err| self.err(format!("bad attribute: {err}")))?;
            let key = String::from_utf8_lossy(a.key.as_ref()).into_owned();
            let v = a
                .unescape_value()
                .map_err(|err| self.err(format!("bad value of {key}: {err}")))?;
            let v = unescape_name(&v).into_owned();
            if map.insert(key.clone(), v).is_some() {
                return Err(self.err(format!(
                    "<{}> has the attribute {key} twice",
                    String::from_utf8_lossy(e.name().as_ref())
                )));
            }
        }
        Ok(Attrs {
            tag: String::from_utf8_lossy(e.name().as_ref()).into_owned(),
            map,
        })
    }

    fn required(&self, a: &Attrs, key: &str) -> Result<String, RawError> {
        a.get(key)
            .ok_or_else(|| self.err(format!("<{}> lacks the attribute {key}", a.tag)))
    }

    /// A `<method>`'s `firstline`: a line number, or -1 (the agent's word
    /// for a method without line numbers) as `None`; absent is `None` too.
    fn first_line(&self, a: &Attrs) -> Result<Option<u32>, RawError> {
        use coverage::method::{FIRST_LINE, NO_LINES};
        match a.get(FIRST_LINE) {
            None => Ok(None),
            Some(v) if v.trim() == NO_LINES.to_string() => Ok(None),
            Some(v) => v.trim().parse().map(Some).map_err(|_| {
                self.err(format!(
                    "<{}> attribute {FIRST_LINE}={v:?} is not a line number or {NO_LINES}",
                    coverage::METHOD
                ))
            }),
        }
    }

    /// The method being read (inside `<coverage>`'s last class).
    /// `<instructions>`' or `<filtered>`'s tokens (`tag` names it).
    fn cells(&self, tag: &str, text: &str) -> Result<Vec<(u64, u64)>, RawError> {
        text.split_ascii_whitespace()
            .map(|w| {
                instruction_cell(w)
                    .ok_or_else(|| self.err(format!("{tag} {w:?} is not C/T with C at most T")))
            })
            .collect()
    }

    fn open_method(&mut self) -> &mut CoverageMethod {
        let cov = self.snap.coverage.as_mut().expect("opened");
        let class = cov.classes.last_mut().expect("open");
        class.methods.last_mut().expect("open")
    }

    /// A `<class>`'s `id`: 16 hex digits, or absent (an older snapshot).
    fn class_id(&self, a: &Attrs) -> Result<Option<u64>, RawError> {
        use coverage::class::ID;
        match a.get(ID) {
            None => Ok(None),
            Some(v) if v.len() == 16 && v.bytes().all(|b| b.is_ascii_hexdigit()) => {
                Ok(u64::from_str_radix(&v, 16).ok())
            }
            Some(v) => Err(self.err(format!(
                "<{}> attribute {ID}={v:?} is not 16 hex digits",
                coverage::CLASS
            ))),
        }
    }

    fn number(&self, a: &Attrs, key: &str) -> Result<Option<u64>, RawError> {
        match a.get(key) {
            None => Ok(None),
            Some(v) => v.trim().parse().map(Some).map_err(|_| {
                self.err(format!(
                    "<{}> attribute {key}={v:?} is not a non-negative integer",
                    a.tag
                ))
            }),
        }
    }
}

/// An `<instructions>` token, `C/T` with C ≤ T.
fn instruction_cell(word: &str) -> Option<(u64, u64)> {
    let (c, t) = word.split_once('/')?;
    let (c, t) = (c.parse().ok()?, t.parse().ok()?);
    (c <= t).then_some((c, t))
}

/// A name as the agent wrote it, decoded: the agent writes a character XML
/// 1.0 forbids and a lone surrogate as `\uXXXX` and a backslash as `\\`
/// (agent/src/xml.rs); one scheme for both sides, in the format crate.
pub use profrj_format::names::unescape as unescape_name;

/// A `<branches>` token: `LINE:N0,N1…`, LINE -1 for none.
fn parse_branch(word: &str) -> Result<CoverageBranch, &'static str> {
    let (line, counts) = word.split_once(':').ok_or("no ':'")?;
    let line = match line
        .parse::<i64>()
        .map_err(|_| "the line is not an integer")?
    {
        -1 => None,
        l => Some(u32::try_from(l).map_err(|_| "the line is out of range")?),
    };
    let outcomes = counts
        .split(',')
        .map(|n| n.parse::<u64>())
        .collect::<Result<Vec<u64>, _>>()
        .map_err(|_| "a count is not a number of times")?;
    Ok(CoverageBranch { line, outcomes })
}

/// The attributes of one element, by key.
struct Attrs {
    tag: String,
    map: HashMap<String, String>,
}

impl Attrs {
    fn get(&self, key: &str) -> Option<String> {
        self.map.get(key).cloned()
    }
}

mod call_sections;
mod monitor_dump;
#[cfg(test)]
mod tests;
