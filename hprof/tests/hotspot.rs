//! Real HotSpot dumps: a small program that keeps 1000 `Keep$Node`s and ten
//! `int[7]` alive dumps its own heap (`HotSpotDiagnosticMXBean.dumpHeap`)
//! on the test's JDK ($PROFRJ_TEST_JAVA, $JAVA_HOME, else `java` on PATH)
//! and on JDK 25 ($PROFRJ_TEST_JAVA25, else Temurin 25's; missing, it fails
//! Debian path), where `jcmd GC.heap_dump -parallel=4` also dumps it with
//! the parallel dumper (segment files merged). Each dump must parse to its
//! end, the same from the whole file and from a 64 KiB refilled buffer,
//! with the counts and the record order the crate's notes describe.

use profrj_hprof::*;
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const PROGRAM: &str = r#"
import com.sun.management.HotSpotDiagnosticMXBean;
import java.lang.management.ManagementFactory;
public class Keep {
    static class Node { Node next; int v; Node(Node n, int v) { next = n; this.v = v; } }
    static Object keep;
    public static void main(String[] a) throws Exception {
        Node n = null;
        for (int i = 0; i < 1000; i++) n = new Node(n, i);
        int[][] arrs = new int[10][];
        for (int i = 0; i < 10; i++) arrs[i] = new int[7];
        keep = new Object[] { n, arrs };
        ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class).dumpHeap(a[0], true);
        System.out.println("ready");
        System.out.flush();
        System.in.read();
        System.out.println(keep.hashCode());
    }
}
"#;

fn java() -> PathBuf {
    if let Ok(j) = std::env::var("PROFRJ_TEST_JAVA") {
        return j.into();
    }
    if let Ok(home) = std::env::var("JAVA_HOME") {
        let p = Path::new(&home).join("bin/java");
        if p.is_file() {
            return p;
        }
    }
    "java".into()
}

fn java25() -> Option<PathBuf> {
    let p: PathBuf = std::env::var("PROFRJ_TEST_JAVA25")
        .unwrap_or_else(|_| "/usr/lib/jvm/temurin-25-jdk-amd64/bin/java".into())
        .into();
    p.is_file().then_some(p)
}

/// Runs the program on `java`, which dumps itself to `dir/NAME.hprof`;
/// with `parallel`, `jcmd` beside `java` dumps it again, 4 threads, to
/// `dir/NAME-parallel.hprof`. Returns the dumps.
fn dumps(java: &Path, dir: &Path, name: &str, parallel: bool) -> Vec<PathBuf> {
    let src = dir.join("Keep.java");
    std::fs::write(&src, PROGRAM).unwrap();
    let own = dir.join(format!("{name}.hprof"));
    let _ = std::fs::remove_file(&own);
    let mut child = Command::new(java)
        .arg(&src)
        .arg(&own)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", java.display()));
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(
        line.trim(),
        "ready",
        "{} did not dump its heap",
        java.display()
    );
    let mut out = vec![own];
    if parallel {
        let file = dir.join(format!("{name}-parallel.hprof"));
        let _ = std::fs::remove_file(&file);
        let status = Command::new(java.with_file_name("jcmd"))
            .arg(child.id().to_string())
            .args(["GC.heap_dump", "-parallel=4"])
            .arg(&file)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        out.push(file);
    }
    child.stdin.as_mut().unwrap().write_all(b"\n").unwrap();
    assert!(child.wait().unwrap().success());
    out
}

/// What a walk saw.
#[derive(Default, Debug, PartialEq)]
struct Seen {
    /// Each item's kind in order, runs folded: the record order.
    order: Vec<&'static str>,
    counts: HashMap<&'static str, u64>,
    /// Class id → name id (LOAD_CLASS), name id → text (UTF8).
    class_names: HashMap<u64, u64>,
    texts: HashMap<u64, String>,
    /// Class id → (super id, instance fields' types).
    classes: HashMap<u64, (u64, Vec<BasicType>)>,
    /// Instances per class id, `int[]` of 7, traces named by objects.
    instances: HashMap<u64, u64>,
    int7: u64,
    traces: HashSet<u32>,
    empty_traces: HashSet<u32>,
    /// Instances whose data is not their classes' fields exactly.
    misfit: u64,
}

fn kind(item: &Item) -> &'static str {
    match item {
        Item::Utf8 { .. } => "UTF8",
        Item::LoadClass(_) => "LOAD_CLASS",
        Item::Frame(_) | Item::Trace(_) => "FRAME/TRACE",
        Item::HeapDump { .. } => "HEAP_DUMP_SEGMENT",
        Item::HeapDumpEnd { .. } => "HEAP_DUMP_END",
        Item::Class(_) => "CLASS_DUMP",
        Item::Root(_) => "ROOT",
        Item::Instance(_) | Item::ObjArray(_) | Item::PrimArray(_) => "OBJECT",
        _ => "OTHER",
    }
}

impl Seen {
    fn see(&mut self, item: &Item, body: &[u8], id: IdSize) {
        let k = kind(item);
        *self.counts.entry(k).or_default() += 1;
        if k != "HEAP_DUMP_SEGMENT" && self.order.last() != Some(&k) {
            self.order.push(k);
        }
        match item {
            Item::Utf8 { id, .. } => {
                self.texts
                    .insert(*id, String::from_utf8_lossy(body).into_owned());
            }
            Item::LoadClass(l) => {
                self.class_names.insert(l.class_id, l.name_id);
            }
            Item::Trace(t) if t.count == 0 => {
                self.empty_traces.insert(t.serial);
            }
            Item::Class(c) => {
                let fields = c.fields().map(|f| f.ty).collect();
                self.classes.insert(c.id, (c.super_id, fields));
            }
            Item::Instance(i) => {
                *self.instances.entry(i.class_id).or_default() += 1;
                self.traces.insert(i.trace);
                // Its fields, its class's then its superclasses'.
                let mut v = Values::new(body, id);
                let mut class = i.class_id;
                while let Some((sup, fields)) = self.classes.get(&class) {
                    for &t in fields {
                        if v.next_value(t).is_none() {
                            self.misfit += 1;
                        }
                    }
                    class = *sup;
                }
                if v.remaining() != 0 || class != 0 {
                    self.misfit += 1;
                }
            }
            Item::PrimArray(a) => {
                self.traces.insert(a.trace);
                if a.elem == BasicType::Int && a.length == 7 {
                    self.int7 += 1;
                }
            }
            Item::ObjArray(a) => {
                self.traces.insert(a.trace);
            }
            _ => {}
        }
    }

    fn class_named(&self, name: &str) -> Option<u64> {
        self.class_names
            .iter()
            .find(|(_, n)| self.texts.get(n).map(String::as_str) == Some(name))
            .map(|(c, _)| *c)
    }
}

/// The whole file in one slice, its length known. Bodies are read only
/// for UTF8s and instances (the others are skipped).
fn walk_whole(file: &[u8]) -> Seen {
    let (h, start) = Header::parse(file).unwrap().unwrap();
    assert_eq!(h.format, "JAVA PROFILE 1.0.2");
    let mut s = Scanner::new(h.id_size, start as u64);
    s.set_file_len(file.len() as u64);
    let mut seen = Seen::default();
    loop {
        let at = s.position();
        match s.next(&file[at as usize..], at).unwrap() {
            Step::Item { item, len, body } => {
                let from = at as usize + len;
                seen.see(&item, &file[from..from + body as usize], h.id_size);
            }
            Step::NeedMore { .. } => panic!("the whole file is there"),
            Step::End => return seen,
        }
    }
}

/// The file read through a 64 KiB buffer refilled from the start of the
/// next item, as a caller with no map would; a body longer than what is
/// buffered is skipped by reading past it.
fn walk_stream(path: &Path) -> Seen {
    let mut input = std::fs::File::open(path).unwrap();
    let mut buf: Vec<u8> = Vec::new();
    let mut eof = false;
    // Fills `buf` to at least `n` bytes (less at the end of the file);
    // says whether the file has ended.
    let mut fill = move |buf: &mut Vec<u8>, n: usize| {
        let mut chunk = [0u8; 1 << 16];
        while buf.len() < n && !eof {
            let got = input.read(&mut chunk).unwrap();
            eof = got == 0;
            buf.extend_from_slice(&chunk[..got]);
        }
        eof
    };
    fill(&mut buf, 64);
    let (h, start) = Header::parse(&buf).unwrap().unwrap();
    buf.drain(..start);
    let mut s = Scanner::new(h.id_size, start as u64);
    let mut seen = Seen::default();
    let mut want = 1 << 16;
    loop {
        let eof = fill(&mut buf, want);
        let at = s.position();
        let before = s.clone();
        match s.next(&buf, at).unwrap() {
            // Its body is not all buffered: again, once it is (the scanner
            // is a value, so a step is taken back by keeping a copy).
            Step::Item { len, body, .. } if len + body as usize > buf.len() && !eof => {
                want = len + body as usize;
                s = before;
            }
            Step::Item { item, len, body } => {
                let end = (len + body as usize).min(buf.len());
                seen.see(&item, &buf[len..end], h.id_size);
                buf.drain(..end);
                want = 1 << 16;
            }
            Step::NeedMore { at_least } => {
                if buf.len() < at_least && buf.len() < want {
                    s.finish(buf.len()).unwrap();
                    return seen;
                }
                want = at_least;
            }
            Step::End => unreachable!("no file length given"),
        }
    }
}

fn check(path: &Path, parallel: bool) {
    let file = std::fs::read(path).unwrap();
    let seen = walk_whole(&file);
    let streamed = walk_stream(path);
    assert_eq!(
        seen,
        streamed,
        "{}: whole and streamed differ",
        path.display()
    );
    let what = path.display();
    eprintln!("{what}: {:?}\n  counts {:?}", seen.order, seen.counts);
    // The order: symbols, classes, stacks, then the heap dump: JDK 17's
    // (roots last) or JDK 25's (roots with the classes, first), which its
    // parallel dumper keeps.
    const JDK17: [&str; 7] = [
        "UTF8",
        "LOAD_CLASS",
        "FRAME/TRACE",
        "CLASS_DUMP",
        "OBJECT",
        "ROOT",
        "HEAP_DUMP_END",
    ];
    const JDK25: [&str; 7] = [
        "UTF8",
        "LOAD_CLASS",
        "FRAME/TRACE",
        "CLASS_DUMP",
        "ROOT",
        "OBJECT",
        "HEAP_DUMP_END",
    ];
    assert!(
        seen.order == JDK17 || seen.order == JDK25,
        "{what}: {:?}",
        seen.order
    );
    if parallel {
        assert_eq!(seen.order, JDK25, "{what}");
    }
    // Counts that make sense.
    assert!(seen.counts["CLASS_DUMP"] > 1000, "{what}");
    assert!(
        seen.counts["LOAD_CLASS"] >= seen.counts["CLASS_DUMP"],
        "{what}"
    );
    assert!(seen.counts["OBJECT"] > 5000, "{what}");
    let node = seen.class_named("Keep$Node").expect("Keep$Node loaded");
    assert_eq!(seen.instances.get(&node), Some(&1000), "{what}");
    assert!(seen.int7 >= 10, "{what}: {} int[7]", seen.int7);
    for class in seen.instances.keys() {
        assert!(
            seen.classes.contains_key(class),
            "{what}: no CLASS_DUMP for {class:x}"
        );
    }
    assert_eq!(
        seen.misfit, 0,
        "{what}: instances whose data is not their fields"
    );
    // Every object's trace is 1, the empty trace.
    assert_eq!(seen.traces, HashSet::from([1]), "{what}");
    assert!(seen.empty_traces.contains(&1), "{what}");
}

#[test]
fn hotspot_dumps_parse_to_their_end() {
    let dir = std::env::temp_dir().join(format!("profrj-hprof-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for d in dumps(&java(), &dir, "default", false) {
        check(&d, false);
    }
    match java25() {
        Some(j) => {
            let d = dumps(&j, &dir, "jdk25", true);
            check(&d[0], false);
            check(&d[1], true);
        }
        // CI has Temurin 25: a missing JDK is a failure, never a skip.
        None => panic!("no JDK 25 at $PROFRJ_TEST_JAVA25 or Temurin 25's path: its parallel dumps cannot be checked"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
