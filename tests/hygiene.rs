//! The host JVM's output belongs to the application (issue 18, finding 11):
//! under `-Xcheck:jni`, in every mode, at start-up and under thread churn,
//! stdout carries only the program's own lines (HotSpot prints JNI warnings
//! there) and stderr only `profrj:` lines.

mod common;

use common::*;

fn check(options: &str, main: &str, args: &[&str], stdout: &[&str]) {
    let dir = temp_dir(&format!("hygiene-{}", options.replace([',', '='], "-")));
    let run = run_java_with(&dir, &["-Xcheck:jni"], options, main, args);
    run.assert_success();
    let own: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(own, stdout, "{options}: stdout is the program's alone");
    for line in run.stderr.lines() {
        assert!(
            line.starts_with("profrj:"),
            "{options}: foreign stderr line {line:?}"
        );
    }
}

#[test]
fn checked_jni_is_silent_on_both_streams_in_every_mode() {
    for options in [
        "sampling,file=h.xml",
        "profile,file=h.xml",
        "memory,file=h.xml",
        "coverage,file=h.xml",
        "sampling,profile,memory,coverage,file=h.xml",
        "lock,file=h.xml",
        "trace=h-trace.xml,memory,lock,file=h.xml",
        "sampling,alloc,lock,jfr=h.jfr,file=h.xml",
    ] {
        check(
            options,
            "profrj.harness.Hello",
            &[],
            &["hello from the harness"],
        );
    }
}

/// `lock`'s monitor events and its monitor dump (taken at exit, with two
/// threads deadlocked) under `-Xcheck:jni`.
#[test]
fn checked_jni_is_silent_with_a_monitor_dump() {
    check(
        "lock,file=d.xml",
        "profrj.harness.Deadlock",
        &[],
        &["deadlocked"],
    );
    // The same on ReentrantLocks: the dump reads each parked thread's blocker.
    check(
        "lock,file=r.xml",
        "profrj.harness.Deadlock",
        &["reentrant"],
        &["deadlocked"],
    );
}

#[test]
fn checked_jni_is_silent_under_thread_churn() {
    check(
        "sampling,profile,memory,interval=1ms,file=m.xml",
        "profrj.harness.ManyThreads",
        &["300"],
        &["joined 300"],
    );
}

/// Finding 8: names XML 1.0 cannot hold (a control character, an ANSI
/// escape) are written as `\uXXXX`, a backslash as `\\`; the snapshot stays
/// well-formed, profrj's reader gets the names back, and `profrj report`
/// never sends the escape to the terminal.
#[test]
fn names_with_control_characters_keep_the_snapshot_readable() {
    let dir = temp_dir("oddnames");
    for mode in ["sampling", "profile,include=profrj.*"] {
        let run = run_java(
            &dir,
            &format!("{mode},file=o.xml"),
            "profrj.harness.OddNames",
            &[],
        );
        run.assert_success();
        let xml = read_snapshot(&dir.join("o.xml"));
        let doc = roxmltree::Document::parse(&xml).unwrap();
        let section = if mode == "sampling" {
            "sampler"
        } else {
            "profile"
        };
        for written in ["odd\\u0001one", "\\u001B[31mred\\u001B[0m", "back\\\\slash"] {
            assert_eq!(
                threads(&doc, section, written).len(),
                1,
                "{mode}: thread {written:?}"
            );
        }
        let report = |thread: &str| {
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_profrj"))
                .args(["report", "--thread", thread])
                .arg(dir.join("o.xml"))
                .output()
                .unwrap();
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(
                out.status.success(),
                "{mode}: {text}{}",
                String::from_utf8_lossy(&out.stderr)
            );
            text
        };
        let text = report("\u{1b}[31mred\u{1b}[0m");
        assert!(
            !text.contains('\u{1b}'),
            "{mode}: raw escape in the report: {text}"
        );
        let text = report("odd\u{1}one");
        assert!(
            text.contains("odd\\u{1}one"),
            "{mode}: decoded name shown escaped: {text}"
        );
    }
}

/// Issue 29, item 3: names the JVM hands out in modified UTF-8 that UTF-8
/// cannot carry as they are: an emoji (a surrogate pair, six bytes there),
/// U+0000 (`C0 80`) and a lone surrogate, in a thread's name and in a class's
/// and its methods' (OddJavaNames, all modes and the trace in one run, fully
/// verified). Every section and the trace hold them exactly: the emoji as
/// itself, U+0000 and the lone surrogate as `\u0000` and `\uD83D`. `profrj
/// report --thread` finds the thread by its name typed as a user would (the
/// emoji as itself, the other two as their escapes).
#[test]
fn names_beyond_the_basic_plane_nul_and_lone_surrogates_are_exact() {
    const W: &str = "\u{1F600}\\u0000\\uD83D";
    let thread = format!("odd-{W}-thread");
    let class = format!("profrj.harness.OddName{W}");
    let dir = temp_dir("odd-java-names");
    let trace = dir.join("t.xml");
    let options = format!(
        "sampling,interval=5ms,profile,memory,coverage,alloc=64k,lock,trace={},include=profrj.harness.OddName*",
        trace.display()
    );
    let (run, xml) = run_verified(
        "odd-java-names",
        &options,
        "profrj.harness.OddJavaNames",
        &[],
    );
    assert!(run.stdout.contains("ran true"), "{}", run.stdout);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let of = |section: &str| {
        let t = threads(&doc, section, &thread);
        assert_eq!(t.len(), 1, "<{section}>: thread {thread:?}");
        t[0]
    };
    let work = format!("{class}.work{W}()");
    assert!(
        !find_nodes(of("sampler"), &work).is_empty(),
        "sampler: {work}"
    );
    let called = find_nodes(of("profile"), &format!("{class}.work{W}(long)"));
    assert_eq!(sum_attr(&called, "count"), 1, "profile");
    let kept = of("memory")
        .children()
        .find(|m| m.attribute("class") == Some(class.as_str()))
        .expect("memory: the class");
    assert_eq!(attr_u64(kept, "count"), 64, "memory: the 64 kept");
    let covered = doc
        .descendants()
        .find(|n| n.has_tag_name("class") && n.attribute("name") == Some(class.as_str()))
        .expect("coverage: the class");
    assert_eq!(
        covered.attribute("source"),
        Some(format!("OddName{W}.java").as_str())
    );
    assert!(covered
        .children()
        .any(|m| m.attribute("name") == Some(&format!("work{W}")) && attr_u64(m, "count") == 1));
    let arrays = find_nodes(of("alloc"), &format!("{class}[]"));
    assert!(
        arrays
            .iter()
            .any(|n| n.parent().unwrap().attribute("name") == Some(&work)),
        "alloc: {class}[] made in {work}"
    );
    let waits = find_nodes(of("lock"), &class);
    assert!(
        sum_attr(&waits, "count") > 0
            && waits
                .iter()
                .all(|n| n.parent().unwrap().attribute("name")
                    == Some(&format!("{class}.hold{W}()"))),
        "lock: waits for the class's monitor in hold"
    );
    let t = std::fs::read_to_string(&trace).unwrap();
    let t = roxmltree::Document::parse(&t).unwrap();
    let has = |tag: &str, attr: &str, value: &str| {
        t.descendants()
            .any(|n| n.has_tag_name(tag) && n.attribute(attr) == Some(value))
    };
    assert!(
        has("threadStart", "threadName", &thread),
        "trace: the thread"
    );
    assert!(has("classDef", "name", &class), "trace: the class");
    assert!(
        has("methodDef", "name", &format!("work{W}")),
        "trace: the method"
    );
    // Typed as a user would: the emoji itself, U+0000 and the lone surrogate escaped.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_profrj"))
        .args(["report", "--section", "sampler", "--thread", &thread])
        .arg(dir.join("snapshot.xml"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains(&format!("work{W}")),
        "report --thread {thread:?}: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
