//! `profrj convert HEAP.hprof --to hprof` on a real HotSpot dump of
//! HeapKeep, whose heap is known by construction (1000 `HeapKeep$Link`s
//! chained by `next`, ten `int[7]`, a 48 MiB `byte[]`, an `Object[100000]`
//! holding a Link every tenth element), dumped with `jcmd PID GC.heap_dump`:
//! the text's entries against the construction and against profrj-hprof's
//! own count of the dump's objects, SITES, a gzipped dump, the memory a
//! conversion takes, and cut dumps refused with the offset.

mod common;

use common::*;
use profrj_hprof::{Header, Item, Scanner, Step};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

const LINK: &str = "profrj/harness/HeapKeep$Link";

/// HeapKeep's dump, made once per test binary.
fn dump() -> &'static Path {
    static DUMP: OnceLock<PathBuf> = OnceLock::new();
    DUMP.get_or_init(|| {
        let dir = temp_dir("heap-text");
        let file = dir.join("keep.hprof");
        let mut child = Command::new(java())
            .args(["-cp", harness_classes(), "profrj.harness.HeapKeep"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("cannot run java");
        await_ready(&mut child);
        let out = Command::new(jdk_tool("jcmd"))
            .arg(child.id().to_string())
            .arg("GC.heap_dump")
            .arg(&file)
            .output()
            .unwrap();
        // The same heap, gzipped by HotSpot (several gzip members).
        let gz = Command::new(jdk_tool("jcmd"))
            .arg(child.id().to_string())
            .args(["GC.heap_dump", "-gz=1"])
            .arg(file.with_extension("hprof.gz"))
            .output()
            .unwrap();
        assert!(gz.status.success(), "jcmd GC.heap_dump -gz=1 failed");
        child.stdin.as_mut().unwrap().write_all(b"\n").unwrap();
        assert!(child.wait().unwrap().success());
        assert!(
            out.status.success() && file.is_file(),
            "jcmd GC.heap_dump failed: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        file
    })
}

/// The dump's INSTANCE, OBJ_ARRAY and PRIM_ARRAY dumps, counted by
/// profrj-hprof over the whole file.
fn crate_objects(path: &Path) -> u64 {
    let file = std::fs::read(path).unwrap();
    let (h, start) = Header::parse(&file).unwrap().unwrap();
    let mut s = Scanner::new(h.id_size, start as u64);
    s.set_file_len(file.len() as u64);
    let mut n = 0;
    loop {
        let at = s.position();
        match s.next(&file[at as usize..], at).unwrap() {
            Step::Item { item, .. } => {
                if matches!(
                    item,
                    Item::Instance(_) | Item::ObjArray(_) | Item::PrimArray(_)
                ) {
                    n += 1;
                }
            }
            Step::NeedMore { .. } => panic!("the whole file is there"),
            Step::End => return n,
        }
    }
}

/// Where the first HEAP_DUMP_SEGMENT record starts.
fn first_segment(file: &[u8]) -> usize {
    let (h, start) = Header::parse(file).unwrap().unwrap();
    let mut s = Scanner::new(h.id_size, start as u64);
    loop {
        let at = s.position();
        if let Step::Item {
            item: Item::HeapDump { offset, .. },
            ..
        } = s.next(&file[at as usize..], at).unwrap()
        {
            return offset as usize;
        }
    }
}

/// One OBJ or ARR entry of the text: its header line's fields, and the
/// `name\tid` lines under it.
struct Entry<'a> {
    kind: &'a str,
    id: &'a str,
    attrs: HashMap<&'a str, &'a str>,
    refs: Vec<(&'a str, &'a str)>,
}

/// The HEAP DUMP block's OBJ and ARR entries.
fn entries(text: &str) -> Vec<Entry<'_>> {
    let block = text
        .split("HEAP DUMP BEGIN")
        .nth(1)
        .expect("a HEAP DUMP block");
    let block = block.split("HEAP DUMP END").next().unwrap();
    let mut out: Vec<Entry> = Vec::new();
    let mut open = false;
    for line in block.lines().skip(1) {
        if let Some(r) = line.strip_prefix('\t') {
            if open {
                let (name, id) = r.split_once('\t').unwrap();
                out.last_mut()
                    .unwrap()
                    .refs
                    .push((name, id.trim_start_matches('\t')));
            }
            continue;
        }
        let (kind, rest) = line.split_once(' ').unwrap();
        open = kind == "OBJ" || kind == "ARR";
        assert!(open || kind == "CLS" || kind == "ROOT", "{line}");
        if !open {
            continue;
        }
        let (id, attrs) = rest.split_once(" (").unwrap();
        let attrs = attrs
            .strip_suffix(')')
            .unwrap()
            .split(", ")
            .map(|kv| kv.split_once('=').unwrap())
            .collect();
        out.push(Entry {
            kind,
            id,
            attrs,
            refs: Vec::new(),
        });
    }
    out
}

#[test]
fn a_heap_dump_as_hprof_text() {
    let dir = temp_dir("heap-text-dump");
    let out = dir.join("heap.txt");
    profrj_ok(&["convert", s(dump()), "--to", "hprof", "-o", s(&out)]);
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(
        text.starts_with("JAVA PROFILE 1.0.1, created "),
        "{}",
        &text[..200]
    );
    assert!(text.contains("\nTRACE 1:\n\t<empty>\n"));
    assert!(
        text.contains("profrj.harness.HeapKeep.main(HeapKeep.java:"),
        "main's stack"
    );
    assert!(!text.contains("SITES BEGIN"), "--heap dump is the default");
    let entries = entries(&text);
    let objs: HashSet<&str> = entries
        .iter()
        .filter(|e| e.kind == "OBJ")
        .map(|e| e.id)
        .collect();

    // 1000 Links, each one's reference an OBJ of the dump (all but the
    // first have one: `next`).
    let links: Vec<&Entry> = entries
        .iter()
        .filter(|e| e.kind == "OBJ" && e.attrs["class"].starts_with(&format!("{LINK}@")))
        .collect();
    assert_eq!(links.len(), 1000);
    let mut with_next = 0;
    for l in &links {
        assert_eq!(l.attrs["sz"], "12", "an 8-byte id and an int");
        assert_eq!(l.attrs["trace"], "1");
        for (name, id) in &l.refs {
            assert_eq!(*name, "next");
            assert!(objs.contains(id), "{}'s next {id} is no OBJ", l.id);
            with_next += 1;
        }
    }
    assert_eq!(with_next, 999);

    // Ten int[7] (the JDK may keep more of its own).
    let sevens = entries
        .iter()
        .filter(|e| e.kind == "ARR" && e.attrs["elem type"] == "int" && e.attrs["nelems"] == "7")
        .count();
    assert!(sevens >= 10, "{sevens} int[7]");
    // The Object[100000]: its 10000 non-null elements, every tenth, Links.
    let wide = entries
        .iter()
        .find(|e| e.kind == "ARR" && e.attrs["nelems"] == "100000")
        .expect("the Object[100000]");
    assert_eq!(
        wide.attrs["elem type"].split('@').next(),
        Some("java/lang/Object")
    );
    assert_eq!(wide.refs.len(), 10_000);
    assert!(wide.refs.iter().all(|(i, id)| {
        i.trim_matches(['[', ']']).parse::<u64>().unwrap() % 10 == 0 && objs.contains(id)
    }));
    assert!(entries
        .iter()
        .any(|e| e.attrs.get("sz") == Some(&"50331648") && e.attrs["elem type"] == "byte"));

    // The header's count, the entries and the crate's count agree.
    let head = text.split("HEAP DUMP BEGIN (").nth(1).unwrap();
    let declared: u64 = head.split(' ').next().unwrap().parse().unwrap();
    assert_eq!(entries.len() as u64, declared);
    assert_eq!(declared, crate_objects(dump()));
    assert!(text.ends_with("HEAP DUMP END\n"));
}

/// HotSpot's own gzipped dump (`-gz=1`, a gzip member per block) of the
/// same heap reads whole: the same SITES as the plain dump.
#[test]
fn hotspots_gzipped_dump_reads_whole() {
    let plain = profrj_ok(&["convert", s(dump()), "--to", "hprof", "--heap", "sites"]);
    let gz = dump().with_extension("hprof.gz");
    let zipped = profrj_ok(&["convert", s(&gz), "--to", "hprof", "--heap", "sites"]);
    // Only the dates differ (each dump's own time).
    let rows = |t: &str| -> Vec<String> {
        t.lines()
            .filter(|l| !l.starts_with("SITES BEGIN") && !l.starts_with("JAVA PROFILE"))
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(rows(&plain), rows(&zipped));
}

#[test]
fn sites_from_a_gzipped_dump_equal_the_plain_ones() {
    let dir = temp_dir("heap-text-sites");
    let gz = dir.join("keep.hprof.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    enc.write_all(&std::fs::read(dump()).unwrap()).unwrap();
    enc.finish().unwrap();
    let plain = profrj_ok(&["convert", s(dump()), "--to", "hprof", "--heap", "sites"]);
    let zipped = profrj_ok(&["convert", s(&gz), "--to", "hprof", "--heap", "sites"]);
    assert_eq!(plain, zipped);
    let block = plain
        .split("SITES BEGIN (ordered by live bytes) ")
        .nth(1)
        .unwrap();
    let rows: Vec<Vec<&str>> = block
        .lines()
        .skip(3)
        .take_while(|l| *l != "SITES END")
        .map(|l| l.split_whitespace().collect())
        .collect();
    // rank self accum bytes objs bytes objs trace name; the byte[] first.
    assert!(
        rows[0][3].parse::<u64>().unwrap() >= 48 << 20,
        "{:?}",
        rows[0]
    );
    assert_eq!(rows[0][8], "byte[]");
    let link: Vec<_> = rows
        .iter()
        .filter(|r| r[8] == "profrj.harness.HeapKeep$Link")
        .collect();
    assert_eq!(link.len(), 1);
    assert_eq!(link[0][3..8], ["12000", "1000", "12000", "1000", "1"]);
    // Every object counted once.
    let total: u64 = rows.iter().map(|r| r[4].parse::<u64>().unwrap()).sum();
    assert_eq!(total, crate_objects(dump()));
    // `all`: the dump, then the sites.
    let all = profrj_ok(&["convert", s(&gz), "--to", "hprof", "--heap", "all"]);
    let (dump_part, sites_part) = all.split_once("HEAP DUMP END\n").unwrap();
    assert!(dump_part.contains("HEAP DUMP BEGIN"));
    assert!(sites_part.starts_with("SITES BEGIN"));
}

/// The dump (over 48 MiB) converts with the address space capped at
/// 32 MiB: no body is buffered, the output is streamed.
#[test]
fn a_conversion_streams_in_bounded_memory() {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    assert!(std::fs::metadata(dump()).unwrap().len() > 48 << 20);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_profrj"));
    cmd.args(["convert", s(dump()), "--to", "hprof", "--heap", "all"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    // SAFETY: setrlimit is async-signal-safe and the closure touches only
    // its own copy of the limit.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 32 << 20,
                rlim_max: 32 << 20,
            };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut buf = vec![0u8; 1 << 16];
    let mut total = 0u64;
    while let Ok(n @ 1..) = stdout.read(&mut buf) {
        total += n as u64;
    }
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(child.wait().unwrap().success(), "{err}");
    assert!(total > 1 << 20, "{total} bytes of text");
}

/// profrj on a file: (exit code, stderr).
fn refused(args: &[&str]) -> (Option<i32>, String) {
    let out = profrj(args);
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_cut_dump_is_refused_with_its_offset() {
    let dir = temp_dir("heap-text-cut");
    let whole = std::fs::read(dump()).unwrap();
    let cut = dir.join("cut.hprof");
    let out = dir.join("never.txt");
    for at in [20, 40, 5_000, whole.len() / 2, whole.len() - 3] {
        std::fs::write(&cut, &whole[..at]).unwrap();
        let (code, err) = refused(&["convert", s(&cut), "--to", "hprof", "-o", s(&out)]);
        assert!(
            code.is_some_and(|c| c != 0),
            "a cut at {at}: {code:?} {err}"
        );
        assert!(!err.contains("panicked"), "{err}");
        assert!(err.contains(s(&cut)) && err.contains(": byte "), "{err}");
        let offset: u64 = err
            .split(": byte ")
            .nth(1)
            .unwrap()
            .split(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(offset <= at as u64, "{err} for a cut at {at}");
        assert!(!out.exists(), "nothing written for a cut dump");
        // Gzipped, its length unknown: cut found where the bytes end.
        let gz = dir.join("cut.hprof.gz");
        let mut enc = flate2::write::GzEncoder::new(
            std::fs::File::create(&gz).unwrap(),
            flate2::Compression::fast(),
        );
        enc.write_all(&whole[..at]).unwrap();
        enc.finish().unwrap();
        let (code, err) = refused(&["convert", s(&gz), "--to", "hprof", "-o", s(&out)]);
        assert!(code.is_some_and(|c| c != 0), "{err}");
        assert!(
            !err.contains("panicked") && err.contains(": byte "),
            "{err}"
        );
        assert!(!out.exists());
    }
    // A lying length: the first heap-dump segment claims 1 GiB more.
    let seg = first_segment(&whole);
    let mut lying = whole.clone();
    let len = u32::from_be_bytes(lying[seg + 5..seg + 9].try_into().unwrap());
    lying[seg + 5..seg + 9].copy_from_slice(&(len + (1 << 30)).to_be_bytes());
    std::fs::write(&cut, &lying).unwrap();
    let (code, err) = refused(&["convert", s(&cut), "--to", "hprof", "-o", s(&out)]);
    assert!(code.is_some_and(|c| c != 0), "{err}");
    assert!(err.contains(&format!(": byte {seg}: ")), "{err}");
    assert!(!out.exists());
    let (code, err) = refused(&["convert", s(dump()), "--to", "collapsed"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("only --to hprof"), "{err}");
}

/// The agent's use: the first ten Links' trace serials patched in place
/// (at the offsets profrj-hprof gives) to a TRACE appended, with its FRAME
/// and symbols, after HEAP_DUMP_END. The text names the trace and prints it.
#[test]
fn traces_appended_after_the_heap_dump_name_objects() {
    let mut file = std::fs::read(dump()).unwrap();
    let (h, start) = Header::parse(&file).unwrap().unwrap();
    let id = h.id_size.bytes();
    // The names, the classes' serials and ids, the Links' trace offsets.
    let (mut texts, mut classes) = (HashMap::new(), Vec::new());
    let mut links = Vec::new();
    let mut sc = Scanner::new(h.id_size, start as u64);
    sc.set_file_len(file.len() as u64);
    loop {
        let at = sc.position();
        match sc.next(&file[at as usize..], at).unwrap() {
            Step::Item { item, len, body } => match item {
                Item::Utf8 { id, .. } => {
                    let t = &file[at as usize + len..][..body as usize];
                    texts.insert(id, String::from_utf8_lossy(t).into_owned());
                }
                Item::LoadClass(l) => classes.push((l.serial, l.class_id, l.name_id)),
                Item::Instance(i) => links.push((i.class_id, i.trace_offset)),
                _ => {}
            },
            Step::End => break,
            Step::NeedMore { .. } => unreachable!(),
        }
    }
    let class = |name: &str| {
        *classes
            .iter()
            .find(|c| texts[&c.2] == name)
            .unwrap_or_else(|| panic!("{name} not loaded"))
    };
    let link = class(LINK).1;
    let keep = class("profrj/harness/HeapKeep").0;
    const SERIAL: u32 = 4242;
    for (_, at) in links.iter().filter(|l| l.0 == link).take(10) {
        file[*at as usize..][..4].copy_from_slice(&SERIAL.to_be_bytes());
    }
    // UTF8s, a FRAME and a TRACE, after everything.
    let ident = |v: u64| v.to_be_bytes()[8 - id..].to_vec();
    let mut record = |tag: u8, body: Vec<u8>| {
        file.push(tag);
        file.extend(0u32.to_be_bytes());
        file.extend((body.len() as u32).to_be_bytes());
        file.extend(body);
    };
    let base = 0x7fff_0000u64;
    for (k, t) in ["make", "()V", "HeapKeep.java"].iter().enumerate() {
        record(1, [ident(base + k as u64), t.as_bytes().to_vec()].concat());
    }
    let frame = [
        ident(base + 10),
        ident(base),
        ident(base + 1),
        ident(base + 2),
        keep.to_be_bytes().to_vec(),
        33u32.to_be_bytes().to_vec(),
    ];
    record(4, frame.concat());
    let trace = [
        SERIAL.to_be_bytes().to_vec(),
        1u32.to_be_bytes().to_vec(),
        1u32.to_be_bytes().to_vec(),
        ident(base + 10),
    ];
    record(5, trace.concat());
    let dir = temp_dir("heap-text-appended");
    let patched = dir.join("patched.hprof");
    std::fs::write(&patched, &file).unwrap();

    let text = profrj_ok(&["convert", s(&patched), "--to", "hprof", "--heap", "all"]);
    assert!(
        text.contains("\nTRACE 4242:\n\tprofrj.harness.HeapKeep.make(HeapKeep.java:33)\n"),
        "the appended trace"
    );
    let named = entries(&text)
        .into_iter()
        .filter(|e| e.attrs.get("trace") == Some(&"4242"))
        .map(|e| e.attrs["class"].split('@').next().unwrap().to_owned())
        .collect::<Vec<_>>();
    assert_eq!(named, vec![LINK; 10]);
    let sites = text.split("SITES BEGIN").nth(1).unwrap();
    let row = |trace: &str| {
        sites
            .lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|r| r.len() == 9 && r[7] == trace && r[8] == "profrj.harness.HeapKeep$Link")
            .unwrap_or_else(|| panic!("no Link row of trace {trace}"))
    };
    assert_eq!(row("4242")[3..7], ["120", "10", "120", "10"]);
    assert_eq!(row("1")[3..7], ["11880", "990", "11880", "990"]);
}
