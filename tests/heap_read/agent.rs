//! `profrj report` on profrj's own dump of HeapRetain (`memory`,
//! `heapdumps=exit`): each followed object names its allocation site and
//! thread, so retained bytes come by site and by allocating thread.

use crate::*;

pub fn agent_dump() -> &'static PathBuf {
    static DUMP: OnceLock<PathBuf> = OnceLock::new();
    DUMP.get_or_init(|| {
        let dir = temp_dir("heap-read-agent");
        let dump = dir.join("exit.hprof");
        let options = format!("memory,heapdumps=exit,heapfile={}", dump.display());
        let dir_arg = dir.to_str().unwrap().to_owned();
        let run = run_java_with(&dir, &[], &options, MAIN, &[&dir_arg, &ROUNDS.to_string()]);
        run.assert_success();
        dump
    })
}

#[test]
fn report_gives_retained_bytes_by_allocation_site_and_thread() {
    let r = report(agent_dump(), &["--top", "0"]);
    // The agent gives Leaked a stamp field: its size is read, not assumed.
    let (count, shallow, retained) = r.classes["profrj.harness.HeapRetain$Leaked"];
    assert_eq!(count, K * ROUNDS);
    let each = shallow / count + long_array(LEAK_LEN);
    assert_eq!(retained, count * each);
    let site = |prefix: &str| {
        let found: Vec<(&String, &Row)> = r
            .sites
            .iter()
            .filter(|(s, _)| s.starts_with(prefix))
            .collect();
        assert_eq!(found.len(), 1, "{prefix}: {:?}", r.sites);
        *found[0].1
    };
    // Each Leaked made in leakRound; each long[] in Leaked's constructor.
    assert_eq!(
        site("profrj.harness.HeapRetain.leakRound(HeapRetain.java:"),
        (count, shallow, count * each)
    );
    let arrays = site("profrj.harness.HeapRetain$Leaked.<init>(HeapRetain.java:");
    assert_eq!(
        arrays,
        (
            count,
            count * long_array(LEAK_LEN),
            count * long_array(LEAK_LEN)
        )
    );
    // On the thread named leaker (ended before the dump: its START_THREAD
    // names it), the Leaked objects retain their arrays.
    assert_eq!(
        r.threads["leaker"],
        (2 * count, shallow + arrays.1, count * each)
    );
    assert!(r.threads.contains_key("main"), "{:?}", r.threads);
}

#[test]
fn report_thread_keeps_the_objects_that_thread_allocated() {
    let r = report(agent_dump(), &["--top", "5", "--thread", "leaker"]);
    let classes: Vec<&String> = r.classes.keys().collect();
    assert_eq!(classes, ["long[]", "profrj.harness.HeapRetain$Leaked"]);
    assert_eq!(r.classes["long[]"].0, K * ROUNDS);
    assert_eq!(r.retainers.len(), 5);
    assert!(r
        .retainers
        .iter()
        .all(|x| x.object.starts_with("profrj.harness.HeapRetain$Leaked@0x")));
    let (code, text) = profrj_run(&[
        "report",
        agent_dump().to_str().unwrap(),
        "--thread",
        "nobody",
    ]);
    assert_eq!(code, 1, "{text}");
    assert!(
        text.contains("no object of the heap dump names thread \"nobody\""),
        "{text}"
    );
}

/// One sample of `go tool pprof -traces`: its value, its `thread` label
/// and its frames, leaf first.
#[derive(Debug)]
struct Traced {
    value: u64,
    thread: Option<String>,
    frames: Vec<String>,
}

/// The samples of a pprof file as `go tool pprof -traces` prints them for
/// `index` (a real consumer: Go's own reader).
fn pprof_traces(file: &Path, index: &str) -> Vec<Traced> {
    let out = Command::new("go")
        // Bytes as exact numbers (`2407200B`), not rounded (`2.30MB`).
        .args(["tool", "pprof", "-traces", "-unit=B"])
        .arg(format!("-sample_index={index}"))
        .arg(file)
        .output()
        .expect("go tool pprof (Go is needed for this test)");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut samples = Vec::new();
    for block in text.split("-----------+").skip(1) {
        let mut t = Traced {
            value: 0,
            thread: None,
            frames: Vec::new(),
        };
        for line in block.lines().skip(1).map(str::trim) {
            if let Some(name) = line.strip_prefix("thread:") {
                t.thread = Some(name.trim().to_owned());
            } else if let Some((v, frame)) = line.split_once(char::is_whitespace) {
                match v.trim_end_matches('B').parse() {
                    Ok(v) if t.frames.is_empty() => {
                        t.value = v;
                        t.frames.push(frame.trim().to_owned());
                    }
                    _ => t.frames.push(line.to_owned()),
                }
            } else if !line.is_empty() {
                t.frames.push(line.to_owned());
            }
        }
        if !t.frames.is_empty() {
            samples.push(t);
        }
    }
    samples
}

/// `convert --to pprof` of profrj's dump: a heap profile Go's pprof reads,
/// one sample per class, allocation site and thread, with the objects and
/// shallow bytes `report` gives (its classes and sites tables).
#[test]
fn pprof_heap_profile_names_classes_sites_and_threads() {
    let dir = temp_dir("heap-read-pprof");
    let pb = dir.join("heap.pb.gz");
    let (code, text) = profrj_run(&[
        "convert",
        agent_dump().to_str().unwrap(),
        "--to",
        "pprof",
        "-o",
        pb.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");
    let r = report(agent_dump(), &["--top", "0"]);
    let objects = pprof_traces(&pb, "inuse_objects");
    let space = pprof_traces(&pb, "inuse_space");
    // Every object of the dump, in all and class by class.
    let total: u64 = r.classes.values().map(|row| row.0).sum();
    assert_eq!(objects.iter().map(|s| s.value).sum::<u64>(), total);
    let mut by_class: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for (o, s) in objects.iter().zip(&space) {
        assert_eq!(o.frames, s.frames, "the same samples in both views");
        let e = by_class.entry(o.frames[0].as_str()).or_default();
        e.0 += o.value;
        e.1 += s.value;
    }
    for (class, row) in &r.classes {
        assert_eq!(
            by_class.get(class.as_str()),
            Some(&(row.0, row.1)),
            "{class}"
        );
    }
    // The leak: Leaked made in leakRound, its long[] in Leaked's
    // constructor, both on the thread named leaker.
    let leaked = "profrj.harness.HeapRetain$Leaked";
    let find = |samples: &[Traced], class: &str, method: &str| -> u64 {
        let found: Vec<&Traced> = samples
            .iter()
            .filter(|s| s.frames.first().is_some_and(|f| f == class))
            .filter(|s| s.frames.get(1).is_some_and(|f| f == method))
            .collect();
        assert_eq!(found.len(), 1, "{class} at {method}: {samples:?}");
        assert_eq!(found[0].thread.as_deref(), Some("leaker"));
        found[0].value
    };
    let made_in = "profrj.harness.HeapRetain.leakRound";
    assert_eq!(find(&objects, leaked, made_in), K * ROUNDS);
    assert_eq!(find(&space, leaked, made_in), r.classes[leaked].1);
    let init = "profrj.harness.HeapRetain$Leaked.<init>";
    assert_eq!(find(&objects, "long[]", init), K * ROUNDS);
    assert_eq!(
        find(&space, "long[]", init),
        K * ROUNDS * long_array(LEAK_LEN)
    );
}
