//! `profrj report` on profrj's own dump of HeapRetain (`memory`,
//! `heapdumps=exit`): each followed object names its allocation site and
//! thread, so retained bytes come by site and by allocating thread.

use crate::*;

fn agent_dump() -> &'static PathBuf {
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
