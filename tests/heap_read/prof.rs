//! `convert SNAPSHOT --to prof --dump HEAP`: the JDK 1.1 `-prof` file of
//! ProfileTruth (`profile,memory`, a heap dump at exit), whose calls are
//! known by construction, its arrays and classes beside hprof-slurp's.

use crate::*;

const TRUTH: &str = "profrj.harness.ProfileTruth";

#[test]
fn prof_file_has_the_calls_per_caller_and_the_heap_at_the_end() {
    let dir = temp_dir("heap-read-prof");
    let (snap, dump) = (dir.join("s.xml"), dir.join("exit.hprof"));
    let options = format!(
        "profile,memory,heapdumps=exit,heapfile={},file={}",
        dump.display(),
        snap.display()
    );
    run_java_with(&dir, &[], &options, TRUTH, &[]).assert_success();
    let text = to_prof(&snap, Some(&dump));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("count callee caller time"));
    // Section 1: calls per (callee, caller), both threads summed.
    let mut calls: BTreeMap<(String, String), u64> = BTreeMap::new();
    let mut prev = u64::MAX;
    let high_water = loop {
        let line = lines.next().expect("the high-water line");
        if line.starts_with("handles_used: ") {
            break line;
        }
        let f: Vec<&str> = line.split(' ').collect();
        assert_eq!(f.len(), 4, "{line}");
        let count: u64 = f[0].parse().unwrap();
        assert!(count <= prev, "most calls first: {line}");
        prev = count;
        f[3].parse::<u64>().unwrap();
        calls.insert((f[1].to_owned(), f[2].to_owned()), count);
    };
    let h = "profrj/harness/ProfileTruth";
    let pair = |callee: &str, caller: &str| {
        // "H" stands for ProfileTruth in a method's name.
        let full = |m: &str| match m.strip_prefix('H') {
            Some(rest) => format!("{h}{rest}"),
            None => m.to_owned(),
        };
        let key = (full(callee), full(caller));
        calls
            .get(&key)
            .copied()
            .unwrap_or_else(|| panic!("{key:?}: {calls:?}"))
    };
    assert_eq!(pair("H.inner(II)V", "H.outer(I)V"), 2 * 7 * 13);
    assert_eq!(pair("H.outer(I)V", "H.loops()V"), 2 * 7);
    // fib(15): 1,973 calls per thread, one from work(); <clinit>'s fib(5): 15.
    assert_eq!(pair("H.fib(I)I", "H.fib(I)I"), 2 * 1972 + 14);
    assert_eq!(pair("H.fib(I)I", "H.work()V"), 2);
    assert_eq!(pair("H.fib(I)I", "H$Lazy.<clinit>()V"), 1);
    // deep(3000): 3,001 calls per thread, 3,000 of them from deep itself.
    assert_eq!(pair("H.deep(I)I", "H.deep(I)I"), 2 * 3000);
    assert_eq!(pair("H$Picky.<init>(I)V", "H.constructors()V"), 2 * 20);
    assert_eq!(pair("H.work()V", "<root>"), 2);
    // Section 2: the <memory> rows' peaks, summed (ProfileTruth holds none
    // of what it makes at a full GC's end, where `max` is taken: 0; the
    // MemoryTruth test below has peaks).
    let peaks = memory_peaks(&snap);
    assert!(
        high_water.starts_with(&format!(
            "handles_used: {peaks}, handles_free: 0, heap-used: "
        )),
        "{high_water}"
    );
    // Section 3: the primitive arrays, as many as hprof-slurp counts.
    assert_eq!(lines.next(), Some("sig count bytes indx"));
    let slurp = heap_readers::hprof_slurp(&dump);
    let java = [
        ("[Z", "boolean[]", 4),
        ("[C", "char[]", 5),
        ("[F", "float[]", 6),
        ("[D", "double[]", 7),
        ("[B", "byte[]", 8),
        ("[S", "short[]", 9),
        ("[I", "int[]", 10),
        ("[J", "long[]", 11),
    ];
    let mut rest = Vec::new();
    for line in lines.by_ref() {
        if line.starts_with("*** ") {
            rest.push(line);
            break;
        }
        let f: Vec<&str> = line.split(' ').collect();
        let &(_, name, code) = java.iter().find(|j| j.0 == f[0]).expect(line);
        assert_eq!(f[1].parse::<u64>().unwrap(), slurp.count(name), "{line}");
        assert_eq!(f[3], code.to_string(), "{line}");
    }
    // Section 4: per class, its instances as hprof-slurp counts them.
    rest.extend(lines);
    let instances = |sig: &str| -> u64 {
        let line = rest
            .iter()
            .find(|l| l.split(' ').next() == Some(sig))
            .unwrap_or_else(|| panic!("no {sig} line"));
        line.split(' ').nth(1).unwrap().parse().unwrap()
    };
    for (sig, class) in [
        ("Ljava/lang/String;", "java.lang.String"),
        ("Ljava/util/HashMap$Node;", "java.util.HashMap$Node"),
        ("Ljava/lang/Class;", "java.lang.Class"),
    ] {
        assert_eq!(instances(sig), slurp.count(class), "{sig}");
    }
}

/// `profrj convert SNAPSHOT --to prof [--dump HEAP]`'s file.
fn to_prof(snap: &std::path::Path, dump: Option<&std::path::Path>) -> String {
    let out = snap.with_file_name("java.prof");
    let mut args = vec!["convert", snap.to_str().unwrap(), "--to", "prof"];
    if let Some(d) = dump {
        args.extend(["--dump", d.to_str().unwrap()]);
    }
    args.extend(["-o", out.to_str().unwrap()]);
    let (code, text) = profrj_run(&args);
    assert_eq!(code, 0, "{text}");
    std::fs::read_to_string(&out).unwrap()
}

/// The `<memory>` rows' `max`, summed.
fn memory_peaks(snap: &std::path::Path) -> u64 {
    let doc = std::fs::read_to_string(snap).unwrap();
    let doc = roxmltree::Document::parse(&doc).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("memory") && n.attribute("class").is_some())
        .map(|n| attr_u64(n, "max"))
        .sum()
}

/// The high-water line of MemoryTruth's `-prof` file (`profile,memory`, no
/// heap dump): its `<memory>` rows' peaks summed (1,020 `Kept`, 20,001
/// `Sheep`, the waves of 400 held across a full GC…), and nothing of the dump.
#[test]
fn prof_high_water_is_the_memory_peaks() {
    let dir = temp_dir("heap-read-prof-memory");
    let snap = dir.join("s.xml");
    let options = format!("profile,memory,file={}", snap.display());
    run_java_with(&dir, &[], &options, "profrj.harness.MemoryTruth", &[]).assert_success();
    let text = to_prof(&snap, None);
    let peaks = memory_peaks(&snap);
    assert!(peaks > 20_001 + 1_020 + 500 + 400, "{peaks}");
    let line = text.lines().find(|l| l.starts_with("handles_used: "));
    assert_eq!(
        line,
        Some(
            format!("handles_used: {peaks}, handles_free: 0, heap-used: 0, heap-free: 0").as_str()
        )
    );
}
