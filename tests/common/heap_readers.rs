//! Heap dumps (HPROF binary) read by three readers that share no code with
//! profrj or with each other, each turned into one [`ReaderView`] so a test
//! can check a dump against its ground truth and the readers against each
//! other:
//!
//! - Square's Shark (`com.squareup.leakcanary:shark-graph`, LeakCanary's
//!   heap library): `java-test-harness/heap-readers/SharkRead.java`. Counts,
//!   fields, array elements, and the stack traces: each object's trace
//!   serial from its own record, every STACK TRACE with its frames, and the
//!   thread roots' serials with their threads' names.
//! - NetBeans' heap library (`org.netbeans.lib.profiler.heap`, VisualVM's):
//!   `java-test-harness/heap-readers/NetBeansRead.java`. Counts, fields and
//!   elements only: its public API exposes no object's trace.
//! - `hprof-slurp` (a Rust command-line analyser): its JSON class table
//!   (instances per class) and the stack traces it prints (frames and thread
//!   serial, but not their serial numbers, nor which objects carry them).
//!
//! `scripts/test-all` installs them (Maven Central's jars into ~/.m2,
//! `cargo install hprof-slurp` into /tmp/profrj-hprof-slurp); a missing one
//! fails the test, saying so.
//!
//! The Java readers print lines the parser below reads (CLASS as the readers
//! name it: `a.b.C$D`, `int[]`, `a.b.C[]`; VALUE a primitive as Java prints
//! it, a char as its code, or `null`, or `@ID:CLASS` for a reference):
//!
//! ```text
//! count CLASS N                       objects of a class (arrays: of that array type)
//! elements CLASS N                    an array type's elements, all its arrays together
//! object ID CLASS TRACE               an instance of a named class (TRACE: '-' if unexposed)
//! field ID NAME TYPE VALUE            one of its fields (TYPE: int, long, ..., object)
//! array ID CLASS LENGTH TRACE VALUE…  an array of a named class, every element
//! trace SERIAL THREAD FRAMES          a STACK TRACE record (Shark)
//! frame SERIAL CLASS METHOD FILE LINE its frames, top first (FILE '-' if none)
//! thread SERIAL NAME                  a thread root's serial and its thread's name (Shark)
//! ```

use super::json;
use super::{host_java, stdout_of, temp_dir};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Shark's heap graph and everything it needs at run time (its POMs' whole
/// closure, as `scripts/test-all` fetches it), under ~/.m2/repository.
const SHARK_JARS: [&str; 7] = [
    "com/squareup/leakcanary/shark-graph/2.14/shark-graph-2.14.jar",
    "com/squareup/leakcanary/shark-hprof/2.14/shark-hprof-2.14.jar",
    "com/squareup/leakcanary/shark-log/2.14/shark-log-2.14.jar",
    "com/squareup/okio/okio/2.2.2/okio-2.2.2.jar",
    "org/jetbrains/kotlin/kotlin-stdlib/1.3.72/kotlin-stdlib-1.3.72.jar",
    "org/jetbrains/kotlin/kotlin-stdlib-common/1.3.72/kotlin-stdlib-common-1.3.72.jar",
    "org/jetbrains/annotations/13.0/annotations-13.0.jar",
];
/// NetBeans' profiler library: its heap package needs only the JDK.
const NETBEANS_JARS: [&str; 1] = [
    "org/netbeans/modules/org-netbeans-lib-profiler/RELEASE220/org-netbeans-lib-profiler-RELEASE220.jar",
];
/// Where `scripts/test-all` installs hprof-slurp 0.10.0.
pub const HPROF_SLURP: &str = "/tmp/profrj-hprof-slurp/bin/hprof-slurp";

/// One value of a field or an array element, as the reader printed it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Value {
    Null,
    Ref {
        id: u64,
        class: String,
    },
    /// A primitive's text: `12`, `-16`, `true`, a char's code.
    Prim(String),
}

impl Value {
    /// The integer a primitive holds; panics on anything else.
    pub fn int(&self) -> i64 {
        match self {
            Value::Prim(p) => p.parse().unwrap_or_else(|_| panic!("{p:?} is no integer")),
            other => panic!("{other:?} is no primitive"),
        }
    }
}

/// An object of a named class: an instance with its fields, or an array
/// with its elements.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Object {
    pub id: u64,
    pub class: String,
    /// Its stack-trace serial, where the reader exposes it.
    pub trace: Option<u32>,
    /// (name, type, value) in the reader's order.
    pub fields: Vec<(String, String, Value)>,
    /// An array's elements; None for an instance.
    pub elements: Option<Vec<Value>>,
}

impl Object {
    /// The value of its field `name`; panics if it has none.
    pub fn field(&self, name: &str) -> &Value {
        self.fields
            .iter()
            .find(|(n, _, _)| n == name)
            .map(|(_, _, v)| v)
            .unwrap_or_else(|| panic!("object {} ({}) has no field {name}", self.id, self.class))
    }

    /// An array's elements; panics for an instance.
    pub fn elements(&self) -> &[Value] {
        self.elements
            .as_deref()
            .unwrap_or_else(|| panic!("object {} ({}) is no array", self.id, self.class))
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Frame {
    pub class: String,
    pub method: String,
    /// `-` where the frame names none.
    pub file: String,
    /// HPROF's: a line, or -1 unknown, -2 compiled, -3 native.
    pub line: i32,
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Trace {
    /// The record's serial; None where the reader prints none (hprof-slurp).
    pub serial: Option<u32>,
    pub thread: u32,
    /// Top first.
    pub frames: Vec<Frame>,
}

/// What one reader read of a dump.
#[derive(Debug, Clone, Default)]
pub struct ReaderView {
    pub reader: &'static str,
    /// Objects per class, arrays per array type (classes with none left out).
    pub counts: BTreeMap<String, u64>,
    /// Elements per array type, all its arrays together (Shark, NetBeans).
    pub elements: BTreeMap<String, u64>,
    /// The objects of the classes asked for, by id.
    pub objects: BTreeMap<u64, Object>,
    /// Whether `Object::trace` is read (Shark) or unknown (the others).
    pub object_traces: bool,
    /// Every STACK TRACE the reader shows (hprof-slurp: those with frames).
    pub traces: Vec<Trace>,
    /// Thread serial → the thread's name, from the dump's thread roots (Shark).
    pub threads: BTreeMap<u32, String>,
}

impl ReaderView {
    /// The objects of `class` read (only the classes asked for are).
    pub fn objects_of(&self, class: &str) -> Vec<&Object> {
        self.objects.values().filter(|o| o.class == class).collect()
    }

    pub fn count(&self, class: &str) -> u64 {
        self.counts.get(class).copied().unwrap_or(0)
    }

    /// The serial of the thread named `name`; panics if no thread root names it.
    pub fn thread_serial(&self, name: &str) -> u32 {
        let found = self.threads.iter().find(|(_, n)| *n == name);
        let (serial, _) = found.unwrap_or_else(|| panic!("{}: no thread {name}", self.reader));
        *serial
    }

    /// The trace with this serial; panics if the reader shows none.
    pub fn trace(&self, serial: u32) -> &Trace {
        self.traces
            .iter()
            .find(|t| t.serial == Some(serial))
            .unwrap_or_else(|| panic!("{}: no trace {serial} in the dump", self.reader))
    }
}

/// Shark's view of `dump`: counts of every class, and the objects (fields,
/// elements, trace serials) of `classes`, every trace and thread root.
pub fn shark(dump: &Path, classes: &[&str]) -> ReaderView {
    let mut view = read_java("shark", "SharkRead", &SHARK_JARS, dump, classes);
    view.object_traces = true;
    view
}

/// NetBeans' view of `dump`: counts of every class, and the objects of
/// `classes` (fields, elements; no traces: the library exposes none).
pub fn netbeans(dump: &Path, classes: &[&str]) -> ReaderView {
    // The library keeps its index of a dump in DUMP.nbcache beside it, and
    // takes one it finds there as the dump's: one left by an earlier dump at
    // the same path would misread this one.
    let mut cache = dump.as_os_str().to_owned();
    cache.push(".nbcache");
    let _ = std::fs::remove_dir_all(&cache);
    read_java("netbeans", "NetBeansRead", &NETBEANS_JARS, dump, classes)
}

/// NetBeans' sizes of `dump` (`NetBeansRetained`): per class, its
/// instances, their sizes (`getAllInstancesSize`) and its retained size
/// (`getRetainedSizeByClass`, from its dominator tree); classes with no
/// instance left out.
pub fn netbeans_sizes(dump: &Path) -> BTreeMap<String, (u64, u64, u64)> {
    let mut cache = dump.as_os_str().to_owned();
    cache.push(".nbcache");
    let _ = std::fs::remove_dir_all(&cache);
    let cp = format!(
        "{}:{}",
        readers_dir().display(),
        super::m2_class_path(&NETBEANS_JARS)
    );
    let text = stdout_of(
        Command::new(host_java())
            .args(["-Xmx512m", "-cp", &cp, "NetBeansRetained"])
            .arg(dump),
    );
    let _ = std::fs::remove_dir_all(&cache);
    text.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split(' ').collect();
            let num = |i: usize| -> u64 { w[i].parse().unwrap_or_else(|_| panic!("{l:?}")) };
            (w[0] == "class" && num(2) > 0).then(|| (w[1].to_owned(), (num(2), num(3), num(4))))
        })
        .collect()
}

/// hprof-slurp's view of `dump`: instances per class (its JSON table, every
/// class: `--top` past their number) and the stack traces it prints.
pub fn hprof_slurp(dump: &Path) -> ReaderView {
    let exe = Path::new(HPROF_SLURP);
    assert!(
        exe.is_file(),
        "{HPROF_SLURP} missing: scripts/test-all --install-only installs it \
         (cargo install hprof-slurp --version 0.10.0 --locked --root /tmp/profrj-hprof-slurp)"
    );
    let json_path = dump.with_extension("slurp.json");
    let text = stdout_of(
        Command::new(exe)
            .args(["--top", "1000000", "--json", "-o"])
            .arg(&json_path)
            .arg(dump),
    );
    let doc = json::parse_json(&std::fs::read_to_string(&json_path).unwrap());
    let heap = doc.get("heap");
    let table = heap.get("top_allocated_classes").items();
    assert_eq!(
        table.len(),
        heap.get("class_count").num() as usize,
        "hprof-slurp's table left classes out"
    );
    let mut view = ReaderView {
        reader: "hprof-slurp",
        ..ReaderView::default()
    };
    for row in table {
        let n = row.get("instance_count").num() as u64;
        if n > 0 {
            view.counts
                .insert(row.get("class_name").str().to_owned(), n);
        }
    }
    view.traces = slurp_traces(&text);
    view
}

/// The `Stack trace N (thread T)` blocks of hprof-slurp's text, each frame
/// `  at CLASS.METHOD (FILE:LINE)`. N is its own count, not the serial; a
/// trace of thread serial 0 prints no `(thread T)`.
fn slurp_traces(text: &str) -> Vec<Trace> {
    let mut traces = Vec::new();
    let mut open = false;
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("Stack trace ") {
            let thread = rest
                .split_once(" (thread ")
                .map_or(0, |(_, t)| t.trim_end_matches(')').parse().unwrap());
            traces.push(Trace {
                serial: None,
                thread,
                frames: Vec::new(),
            });
            open = true;
        } else if let Some(frame) = line.strip_prefix("  at ").filter(|_| open) {
            let bad = || -> ! { panic!("hprof-slurp frame {line:?}") };
            let (name, place) = frame.split_once(" (").unwrap_or_else(|| bad());
            let (class, method) = name.rsplit_once('.').unwrap_or_else(|| bad());
            let (file, line_text) = place
                .strip_suffix(')')
                .and_then(|p| p.rsplit_once(':'))
                .unwrap_or_else(|| bad());
            let line = match line_text {
                "unknown line number" => -1,
                "compiled method" => -2,
                "native method" => -3,
                n => n.parse().unwrap_or_else(|_| bad()),
            };
            traces.last_mut().unwrap().frames.push(Frame {
                class: class.to_owned(),
                method: method.to_owned(),
                file: if file == "unknown source file" {
                    "-"
                } else {
                    file
                }
                .to_owned(),
                line,
            });
        } else if !line.is_empty() {
            open = false;
        }
    }
    traces
}

/// Runs reader `main` (compiled against `jars`) on `dump` and parses its lines.
fn read_java(
    reader: &'static str,
    main: &str,
    jars: &[&str],
    dump: &Path,
    classes: &[&str],
) -> ReaderView {
    let cp = format!("{}:{}", readers_dir().display(), super::m2_class_path(jars));
    let text = stdout_of(
        Command::new(host_java())
            .args(["-Xmx512m", "-cp", &cp, main])
            .arg(dump)
            .args(classes),
    );
    parse(reader, &text)
}

/// The lines of a Java reader (the module comment's table) into a view.
fn parse(reader: &'static str, text: &str) -> ReaderView {
    let mut view = ReaderView {
        reader,
        ..ReaderView::default()
    };
    for line in text.lines() {
        let w: Vec<&str> = line.split(' ').collect();
        let bad = || -> ! { panic!("{reader}: line {line:?}") };
        let num = |i: usize| -> u64 {
            w.get(i)
                .and_then(|t| t.parse().ok())
                .unwrap_or_else(|| bad())
        };
        let trace = |i: usize| match w.get(i) {
            Some(&"-") => None,
            Some(t) => Some(t.parse::<u32>().unwrap_or_else(|_| bad())),
            None => bad(),
        };
        match w[0] {
            "count" if w.len() == 3 => {
                if num(2) > 0 {
                    view.counts.insert(w[1].to_owned(), num(2));
                }
            }
            "elements" if w.len() == 3 => {
                view.elements.insert(w[1].to_owned(), num(2));
            }
            "object" if w.len() == 4 => {
                let o = Object {
                    id: num(1),
                    class: w[2].to_owned(),
                    trace: trace(3),
                    fields: Vec::new(),
                    elements: None,
                };
                assert!(
                    view.objects.insert(o.id, o).is_none(),
                    "{reader}: twice: {line}"
                );
            }
            "field" if w.len() == 5 => {
                let o = view.objects.get_mut(&num(1)).unwrap_or_else(|| bad());
                o.fields
                    .push((w[2].to_owned(), w[3].to_owned(), value(w[4])));
            }
            "array" if w.len() >= 5 => {
                let o = Object {
                    id: num(1),
                    class: w[2].to_owned(),
                    trace: trace(4),
                    fields: Vec::new(),
                    elements: Some(w[5..].iter().map(|t| value(t)).collect()),
                };
                assert_eq!(o.elements().len() as u64, num(3), "{reader}: {line}");
                assert!(
                    view.objects.insert(o.id, o).is_none(),
                    "{reader}: twice: {line}"
                );
            }
            "trace" if w.len() == 4 => view.traces.push(Trace {
                serial: Some(num(1) as u32),
                thread: num(2) as u32,
                frames: Vec::with_capacity(num(3) as usize),
            }),
            "frame" if w.len() == 6 => {
                let t = view.traces.last_mut().unwrap_or_else(|| bad());
                assert_eq!(t.serial, Some(num(1) as u32), "{reader}: {line}");
                t.frames.push(Frame {
                    class: w[2].to_owned(),
                    method: w[3].to_owned(),
                    file: w[4].to_owned(),
                    line: w[5].parse().unwrap_or_else(|_| bad()),
                });
            }
            "thread" if w.len() >= 3 => {
                let name = line.splitn(3, ' ').nth(2).unwrap();
                view.threads.insert(num(1) as u32, name.to_owned());
            }
            _ => bad(),
        }
    }
    view
}

fn value(token: &str) -> Value {
    if token == "null" {
        return Value::Null;
    }
    match token.strip_prefix('@').and_then(|r| r.split_once(':')) {
        Some((id, class)) => Value::Ref {
            id: id.parse().unwrap_or_else(|_| panic!("reference {token:?}")),
            class: class.to_owned(),
        },
        None => Value::Prim(token.to_owned()),
    }
}

/// SharkRead and NetBeansRead compiled against their jars, once per test
/// binary (one javac for both: each runs with its own jars only).
fn readers_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = temp_dir("heap-readers");
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("java-test-harness/heap-readers");
        let all: Vec<&str> = SHARK_JARS.iter().chain(&NETBEANS_JARS).copied().collect();
        stdout_of(
            Command::new(host_java().with_file_name("javac"))
                .args(["-nowarn", "-encoding", "UTF-8", "-d"])
                .arg(&dir)
                .args(["-cp", &super::m2_class_path(&all)])
                .arg(src.join("SharkRead.java"))
                .arg(src.join("NetBeansRead.java"))
                .arg(src.join("NetBeansRetained.java")),
        );
        dir
    })
}
