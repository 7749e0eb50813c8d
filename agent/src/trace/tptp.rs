//! TPTP trace-event elements (`../shared/spec/tptp-trace-event-format.txt`,
//! the attribute names of TPTP's trace.dtd), formatted by hand into one
//! buffer: the writer formats millions of them, and `write!` per attribute
//! cost several times more.
//!
//! Choices where the format leaves room (docs/SNAPSHOT.md, "What a `trace` file holds"):
//! - ids are small integers from one sequence shared by every kind (thread,
//!   class, method, object), so no two ids of a document are ever equal;
//!   node, process, agent and trace ids are random UUIDs;
//! - `time` is seconds since the Unix epoch with nine decimals ("utc.fff");
//! - `collationValue` numbers the elements of a document from 1 at
//!   `traceStart`, in the order written, which is time order;
//! - `traceIdRef` appears on `traceEnd` only: a document holds one trace;
//! - `methodEntry`/`methodExit` carry no `classIdRef`: the method's
//!   `methodDef` names its class (15 bytes less per event, the file's bulk);
//! - an exception is an object: `objDef` defines it (with its class) before
//!   the first `throw` or `catch` that refers to it.

use std::fs::File;
use std::io::{self, BufWriter, Write};

/// One trace document being written.
pub struct Doc {
    out: BufWriter<File>,
    buf: Vec<u8>,
    /// Between `traceStart` and `traceEnd`: elements get a `collationValue`.
    in_trace: bool,
    /// The last `collationValue` written.
    collation: u64,
    pub bytes: u64,
    pub elements: u64,
}

/// The ids of the document's envelope.
pub struct Envelope {
    pub node: String,
    pub process: String,
    pub agent: String,
    pub trace: String,
}

/// `time` as "seconds.nanoseconds" since the Unix epoch.
pub fn push_time(buf: &mut Vec<u8>, unix_ns: u64) {
    push_u64(buf, unix_ns / 1_000_000_000);
    buf.push(b'.');
    let frac = unix_ns % 1_000_000_000;
    let mut digits = [b'0'; 9];
    let mut f = frac;
    for d in digits.iter_mut().rev() {
        *d = b'0' + (f % 10) as u8;
        f /= 10;
    }
    buf.extend_from_slice(&digits);
}

pub fn push_u64(buf: &mut Vec<u8>, n: u64) {
    let mut digits = [0u8; 20];
    buf.extend_from_slice(crate::escape::decimal(n, &mut digits).as_bytes());
}

/// A number the format caps at 32 bits per part: "low[,high]", low first.
fn push_wide(buf: &mut Vec<u8>, n: u64) {
    push_u64(buf, n & 0xFFFF_FFFF);
    if n >> 32 != 0 {
        buf.push(b',');
        push_u64(buf, n >> 32);
    }
}

/// A fresh UUID (version 4, from the kernel's random source).
pub fn uuid() -> String {
    let a = crate::snapshot::random_u64();
    let b = crate::snapshot::random_u64();
    let hi = (a & !0xF000) | 0x4000;
    let lo = (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xFFFF,
        hi & 0xFFFF,
        lo >> 48,
        lo & 0xFFFF_FFFF_FFFF
    )
}

/// Attributes and elements, appended to the current element's buffer.
impl Doc {
    pub fn new(file: File) -> Self {
        Doc {
            out: BufWriter::with_capacity(1 << 20, file),
            buf: Vec::with_capacity(512),
            in_trace: false,
            collation: 0,
            bytes: 0,
            elements: 0,
        }
    }

    fn open(&mut self, name: &str) {
        self.buf.clear();
        self.buf.push(b'<');
        self.buf.extend_from_slice(name.as_bytes());
    }

    fn num(&mut self, key: &str, n: u64) -> &mut Self {
        self.key(key);
        push_u64(&mut self.buf, n);
        self.buf.push(b'"');
        self
    }

    fn wide(&mut self, key: &str, n: u64) -> &mut Self {
        self.key(key);
        push_wide(&mut self.buf, n);
        self.buf.push(b'"');
        self
    }

    fn time(&mut self, unix_ns: u64) -> &mut Self {
        self.key("time");
        push_time(&mut self.buf, unix_ns);
        self.buf.push(b'"');
        self
    }

    /// `value` escaped for an attribute.
    fn text(&mut self, key: &str, value: &str) -> &mut Self {
        self.key(key);
        self.buf
            .extend_from_slice(crate::escape::attribute(value).as_bytes());
        self.buf.push(b'"');
        self
    }

    fn key(&mut self, key: &str) {
        self.buf.push(b' ');
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"=\"");
    }

    /// Ends the element, with its `collationValue` when inside the trace.
    fn close(&mut self) -> io::Result<()> {
        if self.in_trace {
            self.collation += 1;
            let c = self.collation;
            self.wide("collationValue", c);
        }
        self.buf.extend_from_slice(b"/>\n");
        self.elements += 1;
        let buf = std::mem::take(&mut self.buf);
        let written = self.raw(&buf);
        self.buf = buf;
        written
    }

    /// Text as it is (the prolog, a comment, the end tag), counted.
    fn raw(&mut self, text: &[u8]) -> io::Result<()> {
        self.out.write_all(text)?;
        self.bytes += text.len() as u64;
        Ok(())
    }

    pub fn header(&mut self, ids: &Envelope, agent_args: &str, unix_ns: u64) -> io::Result<()> {
        let head = b"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<TRACE>\n";
        self.raw(head)?;
        let host = hostname();
        self.open("node");
        self.text("nodeId", &ids.node)
            .text("hostname", &host)
            .time(unix_ns);
        self.close()?;
        self.open("processCreate");
        self.text("processId", &ids.process)
            .num("pid", std::process::id() as u64)
            .text("nodeIdRef", &ids.node)
            .time(unix_ns);
        self.close()?;
        self.open("agentCreate");
        self.text("agentId", &ids.agent)
            .text("version", env!("CARGO_PKG_VERSION"))
            .text("processIdRef", &ids.process)
            .text("agentName", "profrj")
            .text("agentType", "Profiler")
            .text("agentParameters", agent_args)
            .time(unix_ns);
        self.close()?;
        self.open("traceStart");
        self.text("traceId", &ids.trace)
            .text("agentIdRef", &ids.agent)
            .time(unix_ns);
        self.in_trace = true; // traceStart's collationValue is 1
        self.close()
    }

    pub fn thread_start(&mut self, id: u32, unix_ns: u64, name: &str) -> io::Result<()> {
        self.open("threadStart");
        self.num("threadId", id as u64)
            .time(unix_ns)
            .text("threadName", name);
        self.close()
    }

    pub fn thread_end(&mut self, id: u32, unix_ns: u64) -> io::Result<()> {
        self.open("threadEnd");
        self.num("threadIdRef", id as u64).time(unix_ns);
        self.close()
    }

    pub fn class_def(&mut self, id: u32, name: &str, unix_ns: u64) -> io::Result<()> {
        self.open("classDef");
        self.text("name", name)
            .num("classId", id as u64)
            .time(unix_ns);
        self.close()
    }

    pub fn method_def(
        &mut self,
        id: u32,
        name: &str,
        signature: &str,
        class: u32,
    ) -> io::Result<()> {
        self.open("methodDef");
        self.text("name", name)
            .text("signature", signature)
            .num("methodId", id as u64)
            .num("classIdRef", class as u64);
        self.close()
    }

    /// `methodEntry` or `methodExit`.
    pub fn method_event(&mut self, entry: bool, at: Call, unix_ns: u64) -> io::Result<()> {
        self.open(if entry { "methodEntry" } else { "methodExit" });
        self.num("threadIdRef", at.thread as u64)
            .time(unix_ns)
            .num("methodIdRef", at.method as u64)
            .wide("ticket", at.ticket)
            .num("stackDepth", at.depth as u64);
        self.close()
    }

    /// The exception object `id`, of class `class`.
    pub fn obj_def(&mut self, id: u32, class: u32) -> io::Result<()> {
        self.open("objDef");
        self.num("objId", id as u64)
            .num("isArray", 0)
            .num("classIdRef", class as u64);
        self.close()
    }

    /// `throw` or `catch` of object `obj` in the call `at` (no ticket when
    /// the call is not open).
    pub fn exception(&mut self, throw: bool, at: Call, obj: u32, unix_ns: u64) -> io::Result<()> {
        self.open(if throw { "throw" } else { "catch" });
        self.num("threadIdRef", at.thread as u64)
            .time(unix_ns)
            .num("objIdRef", obj as u64)
            .num("methodIdRef", at.method as u64);
        if at.ticket != 0 {
            self.wide("ticket", at.ticket)
                .num("stackDepth", at.depth as u64);
        }
        self.close()
    }

    /// A new object `obj` of class `class`, made in the call `at` when its
    /// method is known (`ticket` 0: that call is not open).
    pub fn obj_alloc(&mut self, thread: u32, obj: ObjAlloc, unix_ns: u64) -> io::Result<()> {
        self.open("objAlloc");
        self.num("threadIdRef", thread as u64)
            .time(unix_ns)
            .num("objId", obj.id as u64)
            .num("classIdRef", obj.class as u64)
            .num("isArray", obj.is_array);
        if let Some(size) = obj.size {
            self.num("size", size);
        }
        if let Some(m) = obj.method {
            self.num("methodIdRef", m as u64);
            if obj.ticket != 0 {
                self.wide("ticket", obj.ticket);
            }
        }
        if let Some(line) = obj.line {
            self.num("lineNumber", line as u64);
        }
        self.close()
    }

    pub fn obj_free(&mut self, obj: u32, unix_ns: u64) -> io::Result<()> {
        self.open("objFree");
        self.num("objIdRef", obj as u64).time(unix_ns);
        self.close()
    }

    /// `monitorContendedEnter` (`entered`: `monitorContendedEntered`).
    pub fn monitor(
        &mut self,
        entered: bool,
        thread: u32,
        obj: u32,
        unix_ns: u64,
    ) -> io::Result<()> {
        self.open(if entered {
            "monitorContendedEntered"
        } else {
            "monitorContendedEnter"
        });
        self.num("threadIdRef", thread as u64)
            .time(unix_ns)
            .num("objIdRef", obj as u64);
        self.close()
    }

    pub fn gc(&mut self, start: bool, unix_ns: u64) -> io::Result<()> {
        self.open(if start { "gcStart" } else { "gcFinish" });
        self.time(unix_ns);
        self.close()
    }

    pub fn method_count(&mut self, method: u32, count: u64) -> io::Result<()> {
        self.open("methodCount");
        self.num("methodIdRef", method as u64).num("count", count);
        self.close()
    }

    /// A gap: events a thread dropped (`overflow=drop`). A comment, which
    /// TPTP's readers skip.
    pub fn lost(&mut self, thread: u32, count: u64) -> io::Result<()> {
        let text = format!("<!-- profrj: {count} events of thread {thread} dropped here (its buffer was full) -->\n");
        self.raw(text.as_bytes())
    }

    /// `traceEnd`, `agentDestroy` and the end of the document; the file,
    /// flushed and synced.
    pub fn trailer(mut self, ids: &Envelope, unix_ns: u64) -> io::Result<File> {
        self.open("traceEnd");
        self.text("traceIdRef", &ids.trace).time(unix_ns);
        self.close()?;
        self.in_trace = false;
        self.open("agentDestroy");
        self.text("agentIdRef", &ids.agent).time(unix_ns);
        self.close()?;
        self.raw(b"</TRACE>\n")?;
        let file = self.out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        Ok(file)
    }
}

/// An `objAlloc`'s figures.
pub struct ObjAlloc {
    pub id: u32,
    pub class: u32,
    /// The format's `isArray` code ([`array_code`]).
    pub is_array: u64,
    pub size: Option<u64>,
    pub method: Option<u32>,
    pub ticket: u64,
    pub line: Option<u16>,
}

/// The format's `isArray` value for a type as Java writes it (`int[]`): 0
/// not an array, 2 of objects (or of arrays), 4 to 11 of a primitive type.
pub fn array_code(java_type: &str) -> u64 {
    let Some(element) = java_type.strip_suffix("[]") else {
        return 0;
    };
    match element {
        "boolean" => 4,
        "char" => 5,
        "float" => 6,
        "double" => 7,
        "byte" => 8,
        "short" => 9,
        "int" => 10,
        "long" => 11,
        _ => 2,
    }
}

/// Where a method event happened.
#[derive(Clone, Copy)]
pub struct Call {
    pub thread: u32,
    pub method: u32,
    pub ticket: u64,
    pub depth: u32,
}

fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into `buf`.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".into();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_wide_numbers_as_the_format_writes_them() {
        let mut b = Vec::new();
        push_time(&mut b, 1_732_555_555_000_000_042);
        assert_eq!(b, b"1732555555.000000042");
        let mut b = Vec::new();
        push_wide(&mut b, (7u64 << 32) | 5);
        assert_eq!(b, b"5,7");
        let mut b = Vec::new();
        push_wide(&mut b, 12);
        assert_eq!(b, b"12");
    }

    #[test]
    fn array_codes_as_the_format_lists_them() {
        assert_eq!(array_code("java.lang.String"), 0);
        assert_eq!(array_code("java.lang.String[]"), 2);
        assert_eq!(array_code("int[][]"), 2);
        assert_eq!(array_code("int[]"), 10);
        assert_eq!(array_code("byte[]"), 8);
        assert_eq!(array_code("boolean[]"), 4);
        assert_eq!(array_code("long[]"), 11);
    }

    #[test]
    fn uuids_are_version_4() {
        let u = uuid();
        assert_eq!(u.len(), 36);
        assert_eq!(u.as_bytes()[14], b'4');
        assert!(matches!(u.as_bytes()[19], b'8' | b'9' | b'a' | b'b'), "{u}");
        assert_ne!(u, uuid());
    }
}
