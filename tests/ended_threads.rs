//! Threads that come and go: a snapshot folds the ended threads of a name
//! pattern past the first 16 into one group (`ended=16`, the default), its
//! size bounded however many threads ended, its totals exact; `ended=keep`
//! lists each one. Ground truth: `ThreadChurn` runs N threads `req-0` ..
//! `req-N-1` one after another, each calling `work` once, which makes 10
//! `Item`s kept alive to the end.

mod common;
use common::*;

const N: usize = 1000;
const ITEMS: usize = 10;
const MODES: &str = "sampling,memory,alloc,lock,profile,include=profrj.harness.ThreadChurn*";

fn run(dir: &std::path::Path, file: &str, extra: &str) -> String {
    let run = run_java(
        dir,
        &format!("{MODES},{extra}file={file}"),
        "profrj.harness.ThreadChurn",
        &[&N.to_string(), &ITEMS.to_string()],
    );
    run.assert_success();
    assert!(
        run.stdout
            .contains(&format!("threads={N} kept={}", N * ITEMS)),
        "{}",
        run.stdout
    );
    read_snapshot(&dir.join(file))
}

/// The `<thread>`s of `section` whose name starts `req-`.
fn req_threads<'a, 'i>(
    doc: &'a roxmltree::Document<'i>,
    section: &str,
) -> Vec<roxmltree::Node<'a, 'i>> {
    doc.root_element()
        .children()
        .filter(|s| s.has_tag_name(section))
        .flat_map(|s| s.children())
        .filter(|t| t.has_tag_name("thread"))
        .filter(|t| t.attribute("name").is_some_and(|n| n.starts_with("req-")))
        .collect()
}

fn number(n: roxmltree::Node, attr: &str) -> u64 {
    n.attribute(attr)
        .unwrap_or_else(|| panic!("{attr} on {n:?}"))
        .parse()
        .unwrap()
}

/// Sum of `attr` over the nodes named `name` below `t` (any depth).
fn sum_named(t: roxmltree::Node, tag: &str, key: &str, name: &str, attr: &str) -> u64 {
    t.descendants()
        .filter(|n| n.has_tag_name(tag) && n.attribute(key) == Some(name))
        .map(|n| number(n, attr))
        .sum()
}

#[test]
fn ended_threads_past_the_first_sixteen_fold_into_their_pattern_exactly() {
    let dir = temp_dir("ended-threads");
    let xml = run(&dir, "fold.xml", "");
    let size = std::fs::metadata(dir.join("fold.xml")).unwrap().len();
    assert!(size <= 1 << 20, "{size} bytes for {N} ended threads");
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let kept: Vec<String> = (0..16).map(|i| format!("req-{i}")).collect();
    for section in ["profile", "memory", "sites"] {
        let req = req_threads(&doc, section);
        let mut names: Vec<&str> = req.iter().filter_map(|t| t.attribute("name")).collect();
        names.sort_unstable();
        let mut want: Vec<&str> = kept.iter().map(String::as_str).collect();
        want.push("req-#");
        want.sort_unstable();
        assert_eq!(names, want, "{section}: the first 16 and the group");
        let group = req
            .iter()
            .find(|t| t.attribute("name") == Some("req-#"))
            .unwrap();
        assert_eq!(number(*group, "endedThreads"), (N - 16) as u64, "{section}");
        assert_eq!(group.attribute("isAlive").unwrap_or("false"), "false");
    }
    // profile: work() called once per thread, exactly.
    let calls = |t: roxmltree::Node| {
        sum_named(
            t,
            "profile",
            "name",
            "profrj.harness.ThreadChurn.work(int,int)",
            "count",
        )
    };
    let req = req_threads(&doc, "profile");
    let group = req
        .iter()
        .find(|t| t.attribute("name") == Some("req-#"))
        .unwrap();
    assert_eq!(calls(*group), (N - 16) as u64, "the group's calls");
    assert_eq!(req.iter().map(|t| calls(*t)).sum::<u64>(), N as u64);
    // memory: every Item alive, by its thread.
    let item = "profrj.harness.ThreadChurn$Item";
    let alive = |t: roxmltree::Node| sum_named(t, "memory", "class", item, "count");
    let req = req_threads(&doc, "memory");
    let group = req
        .iter()
        .find(|t| t.attribute("name") == Some("req-#"))
        .unwrap();
    assert_eq!(alive(*group), ((N - 16) * ITEMS) as u64);
    assert_eq!(
        req.iter().map(|t| alive(*t)).sum::<u64>(),
        (N * ITEMS) as u64
    );
    // Its peak: at least what is alive (never summed past the true peak).
    let row = group
        .children()
        .find(|r| r.attribute("class") == Some(item))
        .unwrap();
    assert_eq!(number(row, "max"), ((N - 16) * ITEMS) as u64);
    // sites: the same Items under work()'s line.
    let sited = |t: roxmltree::Node| {
        t.descendants()
            .filter(|n| n.attribute("class") == Some("true") && n.attribute("name") == Some(item))
            .map(|n| number(n, "count"))
            .sum::<u64>()
    };
    let req = req_threads(&doc, "sites");
    assert_eq!(
        req.iter().map(|t| sited(*t)).sum::<u64>(),
        (N * ITEMS) as u64
    );
    // Sampling and alloc sample the threads: whatever rows they have are
    // the first 16's and the group's.
    for section in ["sampler", "alloc", "lock"] {
        for t in req_threads(&doc, section) {
            let name = t.attribute("name").unwrap();
            assert!(
                kept.iter().any(|k| k == name) || name == "req-#",
                "{section}: {name}"
            );
        }
    }
}

#[test]
fn ended_keep_lists_every_thread() {
    let dir = temp_dir("ended-keep");
    let xml = run(&dir, "keep.xml", "ended=keep,");
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let req = req_threads(&doc, "profile");
    assert_eq!(req.len(), N, "every thread its own row");
    assert!(req.iter().all(|t| t.attribute("endedThreads").is_none()));
    let calls: u64 = req
        .iter()
        .map(|t| {
            sum_named(
                *t,
                "profile",
                "name",
                "profrj.harness.ThreadChurn.work(int,int)",
                "count",
            )
        })
        .sum();
    assert_eq!(calls, N as u64);
}

/// The counters `memory` holds for ended threads are given back once none
/// of their objects is alive, and what they counted stays in the group's
/// figures exactly. `ThreadChurn 1000 0 20 25`: each thread makes 20 Items
/// and an ArrayList that all die, a full GC every 25 threads (each followed
/// by a census, `census=100%`): every Item made is counted, none alive; with
/// `ended=keep` (nothing folded, nothing given back) the agent holds every
/// counter, with the default at most a quarter of that.
#[test]
fn counters_of_ended_threads_are_given_back_their_totals_kept() {
    const DROPPED: usize = 20;
    let dir = temp_dir("ended-give-back");
    let snapshot = |file: &str, extra: &str| {
        let run = run_java(
            &dir,
            &format!("memory,census=100%,include=profrj.harness.ThreadChurn*,{extra}file={file}"),
            "profrj.harness.ThreadChurn",
            &[&N.to_string(), "0", &DROPPED.to_string(), "25"],
        );
        run.assert_success();
        assert!(
            run.stdout.contains(&format!("threads={N} kept=0")),
            "{}",
            run.stdout
        );
        read_snapshot(&dir.join(file))
    };
    let fold = snapshot("fold.xml", "");
    let keep = snapshot("keep.xml", "ended=keep,");
    let counters = |xml: &str| {
        let doc = roxmltree::Document::parse(xml).unwrap();
        let sites = doc
            .root_element()
            .children()
            .find(|s| s.has_tag_name("sites"))
            .unwrap();
        (
            number(sites, "counters"),
            number(sites, "countersGivenBack"),
        )
    };
    let (held, given_back) = counters(&fold);
    let (held_keep, given_back_keep) = counters(&keep);
    assert_eq!(given_back_keep, 0, "nothing folded, nothing given back");
    assert!(given_back > 0, "none given back");
    assert!(
        held * 4 <= held_keep,
        "{held} counters held (ended=keep: {held_keep}), {given_back} given back"
    );
    let doc = roxmltree::Document::parse(&fold).unwrap();
    let item = "profrj.harness.ThreadChurn$Item";
    let list = "java.util.ArrayList";
    let sited = |class: &str, attr: &str| {
        req_threads(&doc, "sites")
            .iter()
            .flat_map(|t| t.descendants())
            .filter(|n| n.attribute("class") == Some("true") && n.attribute("name") == Some(class))
            .map(|n| number(n, attr))
            .sum::<u64>()
    };
    assert_eq!(sited(item, "allocated"), (N * DROPPED) as u64, "Items made");
    assert_eq!(sited(item, "count"), 0, "Items alive");
    assert_eq!(sited(list, "allocated"), N as u64, "ArrayLists made");
    assert_eq!(sited(list, "count"), 0, "ArrayLists alive");
    let group = req_threads(&doc, "sites")
        .into_iter()
        .find(|t| t.attribute("name") == Some("req-#"))
        .unwrap();
    assert_eq!(number(group, "endedThreads"), (N - 16) as u64);
    // Each thread's peak is known at no instant (its Items die young), so
    // the group's is at most what one thread made.
    let max = group
        .descendants()
        .filter(|n| n.attribute("name") == Some(item))
        .map(|n| number(n, "max"))
        .max()
        .unwrap();
    assert!(max <= DROPPED as u64, "max {max}");
}
