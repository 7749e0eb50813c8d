//! `profrj report --style xprof`: -Xprof's flat profile of hand-written
//! snapshots whose every tick's place is known (each section, the
//! thread-local rows, the global summary: exact text), of a real CpuSplit
//! snapshot (each thread's sections add up to its samples, the summary to
//! every thread's), and the errors a bad value gets.

use crate::common::*;
use crate::snapshots::*;
use std::path::PathBuf;

/// Thread main's 89 samples, placed by construction: main() interpreted on
/// top 4 (+1 of unknown type); loop() c2 20 and interpreted 6 on top, with
/// 7 in VM code above it (OptoRuntime, memset) while its frame ran compiled
/// in most samples below it (c2 22 against interpreted 3), and 3 in class
/// loading (SystemDictionary, ClassFileParser); helper() inlined 15; slow()
/// interpreted 8 with 3 in the interpreter's runtime above; the native
/// arraycopy 4 with 5 in JVM_ArrayCopy above; a stub 3; the interpreter's
/// code 2; a failed walk 6; 2 samples without a frame (89 less the nodes'
/// 87). The JVM's threads: GC 10, compiler 7, VM thread 3.
const TYPED: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<doc>
 <sampler>
  <thread name="main" cumulated="80" cumulatedElapsed="89" elapsedTime="2000000000" isAlive="false">
   <profile name="app.Main.main()" hits="5" elapsed="5" cumulated="81" cumulatedElapsed="81" frameTypes="interpreted:80" selfTypes="interpreted:4">
    <profile name="app.Main.loop()" hits="26" elapsed="26" cumulated="51" cumulatedElapsed="51" frameTypes="c2:42 interpreted:9" selfTypes="c2:20 interpreted:6">
     <profile name="app.Main.helper()" hits="15" elapsed="15" cumulated="15" cumulatedElapsed="15" frameTypes="inlined:15" selfTypes="inlined:15"/>
     <profile name="OptoRuntime::new_array_C" hits="5" elapsed="5" cumulated="7" cumulatedElapsed="7" frameTypes="vm:7" selfTypes="vm:5">
      <profile name="memset" hits="2" elapsed="2" cumulated="2" cumulatedElapsed="2" frameTypes="native:2" selfTypes="native:2"/>
     </profile>
     <profile name="SystemDictionary::resolve_or_fail" hits="1" elapsed="1" cumulated="3" cumulatedElapsed="3" frameTypes="vm:3" selfTypes="vm:1">
      <profile name="ClassFileParser::parse_stream" hits="2" elapsed="2" cumulated="2" cumulatedElapsed="2" frameTypes="vm:2" selfTypes="vm:2"/>
     </profile>
    </profile>
    <profile name="app.Main.slow()" hits="8" elapsed="8" cumulated="11" cumulatedElapsed="11" frameTypes="interpreted:11" selfTypes="interpreted:8">
     <profile name="InterpreterRuntime::_new" hits="3" elapsed="3" cumulated="3" cumulatedElapsed="3" frameTypes="vm:3" selfTypes="vm:3"/>
    </profile>
    <profile name="java.lang.System.arraycopy(native)" hits="4" elapsed="4" cumulated="9" cumulatedElapsed="9" frameTypes="native:9" selfTypes="native:4">
     <profile name="JVM_ArrayCopy" hits="5" elapsed="5" cumulated="5" cumulatedElapsed="5" frameTypes="vm:5" selfTypes="vm:5"/>
    </profile>
    <profile name="jbyte_disjoint_arraycopy" hits="3" elapsed="3" cumulated="3" cumulatedElapsed="3" frameTypes="stub:3" selfTypes="stub:3"/>
    <profile name="Interpreter" hits="2" elapsed="2" cumulated="2" cumulatedElapsed="2" frameTypes="stub:2" selfTypes="stub:2"/>
   </profile>
   <profile name="[unknown_Java]" hits="0" elapsed="6" cumulated="0" cumulatedElapsed="6"/>
  </thread>
  <thread name="GC Thread#0" jvmThread="gc" cumulated="10" cumulatedElapsed="10" elapsedTime="1500000000"/>
  <thread name="C2 CompilerThre" jvmThread="compiler" cumulated="7" cumulatedElapsed="7" elapsedTime="1500000000"/>
  <thread name="VM Thread" jvmThread="vm" cumulated="3" cumulatedElapsed="3" elapsedTime="2100000000"/>
 </sampler>
</doc>
"#;

const TYPED_MAIN: &str = "
Flat profile of 2.00 secs (89 total ticks): main

  Interpreted + native   Method
 12.4%     8  +     3    app.Main.slow()
  6.7%     6  +     0    app.Main.loop()
  4.5%     4  +     0    app.Main.main()
 23.6%    18  +     3    Total interpreted

     Compiled + native   Method
 30.3%    20  +     7    app.Main.loop()
 16.9%    15  +     0    app.Main.helper()
 47.2%    35  +     7    Total compiled

         Stub + native   Method
 10.1%     4  +     5    java.lang.System.arraycopy(native)
 10.1%     4  +     5    Total stub

  Runtime stub + native  Method
  3.4%     3  +     0    jbyte_disjoint_arraycopy
  3.4%     3  +     0    Total runtime stubs

  Type unknown + native  Method
  1.1%     1  +     0    app.Main.main()
  1.1%     1  +     0    Total type unknown

  Thread-local ticks:
  6.7%     6             Unknown code [unknown_Java]
  3.4%     3             Class loader
  2.2%     2             Interpreter
  2.2%     2             Unknown code [no Java frame]

";

const TYPED_SUMMARY: &str = "Global summary of 2.10 seconds:
100.0%   109             Received ticks
 81.7%    89             Java threads
  9.2%    10             Received GC ticks
  6.4%     7             Compilation
  2.8%     3             Other VM operations
";

/// A snapshot of an agent that recorded no types: a library frame above a
/// method, a `native` method, a stub, the interpreter, a failed walk, a
/// stack under `[truncated]`, 3 samples without a frame.
const UNTYPED: &str = r#"<doc><sampler>
  <thread name="worker" cumulated="20" cumulatedElapsed="20" elapsedTime="1000000000">
   <profile name="[truncated]" hits="0" elapsed="0" cumulated="12" cumulatedElapsed="12">
    <profile name="app.W.run()" hits="3" elapsed="3" cumulated="12" cumulatedElapsed="12">
     <profile name="[libjvm.so]" hits="2" elapsed="2" cumulated="2" cumulatedElapsed="2"/>
     <profile name="java.lang.Object.wait(native)" hits="0" elapsed="4" cumulated="0" cumulatedElapsed="4"/>
     <profile name="vtable stub" hits="1" elapsed="1" cumulated="1" cumulatedElapsed="1"/>
     <profile name="Interpreter" hits="2" elapsed="2" cumulated="2" cumulatedElapsed="2"/>
    </profile>
   </profile>
   <profile name="[unknown_Java]" hits="0" elapsed="5" cumulated="0" cumulatedElapsed="5"/>
  </thread>
</sampler></doc>"#;

const UNTYPED_REPORT: &str = r#"(no frame types in this snapshot (no frameTypes/selfTypes: an agent that did not record them, or a recording without them): Java methods' ticks are under "Type unknown", frame type not recorded; `native` methods, stubs and synthetic frames are told by their names)

Flat profile of 1.00 secs (20 total ticks): worker

         Stub + native   Method
 20.0%     4  +     0    java.lang.Object.wait(native)
 20.0%     4  +     0    Total stub

  Runtime stub + native  Method
  5.0%     1  +     0    vtable stub
  5.0%     1  +     0    Total runtime stubs

  Type unknown + native  Method
 25.0%     3  +     2    app.W.run()
 25.0%     3  +     2    Total type unknown

  Thread-local ticks:
 25.0%     5             Unknown code [unknown_Java]
 15.0%     3             Unknown code [no Java frame]
 10.0%     2             Interpreter

Global summary of 1.00 seconds:
100.0%    20             Received ticks
100.0%    20             Java threads
"#;

fn write(name: &str, xml: &str) -> PathBuf {
    let dir = temp_dir(&format!("report-xprof-{name}"));
    let p = dir.join(name);
    std::fs::write(&p, xml).unwrap();
    p
}

/// A flat profile's thread, its total ticks, and what its sections' total
/// rows and thread-local rows hold together.
type ThreadSums = (String, u64, u64);

/// Per flat profile of `report`, its [`ThreadSums`]; and the global
/// summary's received ticks with what its other rows hold.
fn sums(report: &str) -> (Vec<ThreadSums>, (u64, u64)) {
    let mut threads = Vec::new();
    let mut summary = (0, 0);
    let mut in_local = false;
    let mut in_summary = false;
    for line in report.lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if let Some(rest) = line.strip_prefix("Flat profile") {
            let (ticks, name) = rest.split_once(" total ticks): ").unwrap();
            let ticks = ticks.rsplit('(').next().unwrap().parse().unwrap();
            threads.push((name.to_owned(), ticks, 0));
            in_local = false;
        } else if line.starts_with("Global summary") {
            in_summary = true;
        } else if line == "  Thread-local ticks:" {
            in_local = true;
        } else if in_summary {
            let ticks: u64 = cols[1].parse().unwrap();
            match line.ends_with("Received ticks") {
                true => summary.0 = ticks,
                false => summary.1 += ticks,
            }
        } else if in_local && !cols.is_empty() {
            threads.last_mut().unwrap().2 += cols[1].parse::<u64>().unwrap();
        } else if cols.len() > 4 && cols[4] == "Total" {
            let t = threads.last_mut().unwrap();
            t.2 += cols[1].parse::<u64>().unwrap() + cols[3].parse::<u64>().unwrap();
        }
    }
    (threads, summary)
}

#[test]
fn xprof_places_every_tick_of_a_typed_snapshot() {
    let snap = write("typed.xml", TYPED);
    let out = profrj_ok(&["report", "--style", "xprof", s(&snap)]);
    assert_eq!(out, format!("{TYPED_MAIN}{TYPED_SUMMARY}"));
    let (threads, summary) = sums(&out);
    assert_eq!(threads, [("main".to_owned(), 89, 89)]);
    assert_eq!(summary, (109, 109));

    // One thread, the JVM's too; two rows a section: the totals keep the
    // elided rows and say so; the summary is still every thread's.
    let gc = profrj_ok(&[
        "report",
        "--style",
        "xprof",
        s(&snap),
        "--thread",
        "GC Thread#0",
    ]);
    assert_eq!(
        gc,
        format!(
            "\nFlat profile of 1.50 secs (10 total ticks): GC Thread#0\n\n  Thread-local ticks:\n\
             100.0%    10             Unknown code [no Java frame]\n\n{TYPED_SUMMARY}"
        )
    );
    let top = profrj_ok(&[
        "report",
        "--style",
        "xprof",
        s(&snap),
        "--thread",
        "main",
        "--top",
        "1",
    ]);
    let (threads, _) = sums(&top);
    assert_eq!(threads, [("main".to_owned(), 89, 89)]);
    assert!(top.contains(
        "  6.7%     6             Unknown code [unknown_Java]\n  3.4%     3             Class loader\n"
    ));
    assert!(top.contains(
        "\n 12.4%     8  +     3    app.Main.slow()\n 23.6%    18  +     3    Total interpreted (including elided)\n"
    ), "{top}");
    assert!(!top.contains("app.Main.loop()\n 23.6%"), "{top}");
}

#[test]
fn xprof_without_types_says_so_and_puts_java_ticks_in_one_section() {
    let snap = write("untyped.xml", UNTYPED);
    let out = profrj_ok(&["report", "--style", "xprof", s(&snap)]);
    assert_eq!(out, UNTYPED_REPORT);
    let (threads, summary) = sums(&out);
    assert_eq!(threads, [("worker".to_owned(), 20, 20)]);
    assert_eq!(summary, (20, 20));
}

/// A real snapshot (CpuSplit, sampled): every thread's sections add up to
/// its samples (the snapshot's `cumulatedElapsed`), the summary to every
/// thread's; whether it says it has no types is whether the snapshot has
/// none.
#[test]
fn xprof_of_a_real_snapshot_adds_up() {
    let snap = split_snapshot();
    let out = profrj_ok(&["report", "--style", "xprof", s(snap), "--top", "5"]);
    eprintln!("{out}");
    let xml = read_snapshot(snap);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let (threads, summary) = sums(&out);
    let main = threads
        .iter()
        .find(|t| t.0 == "main")
        .expect("main's profile");
    assert!(main.1 > 0, "{out}");
    // Threads of one name (CpuSplit's two "twin"s) are one profile each.
    let mut by_name: std::collections::BTreeMap<&str, u64> = Default::default();
    for (name, ticks, held) in &threads {
        assert_eq!(ticks, held, "thread {name}: {out}");
        *by_name.entry(name.as_str()).or_default() += ticks;
    }
    for (name, ticks) in by_name {
        let want: u64 = doc
            .descendants()
            .filter(|n| n.has_tag_name("thread") && n.attribute("name") == Some(name))
            .filter(|n| n.parent().is_some_and(|p| p.has_tag_name("sampler")))
            .map(|n| attr_u64(n, "cumulatedElapsed"))
            .sum();
        assert_eq!(ticks, want, "thread {name}");
    }
    assert_eq!(summary.0, sum_threads(&xml, "sampler", "cumulatedElapsed"));
    assert_eq!(summary.0, summary.1, "{out}");
    let typed = xml.contains(" selfTypes=\"") || xml.contains(" frameTypes=\"");
    assert_eq!(out.starts_with("(no frame types"), !typed, "{out}");
    assert!(out.contains(&format!("{SPLIT}.unit()")), "{out}");
}

/// A bad value: one line naming it, exit status 1, no panic.
#[test]
fn xprof_refuses_bad_values_with_one_message() {
    let cases = [
        (
            TYPED.replace("selfTypes=\"c2:20 interpreted:6\"", "selfTypes=\"c2:20 interp:6\""),
            "line 6, column 5: <profile> attribute selfTypes: bad frameTypes \"c2:20 interp:6\"",
        ),
        (
            TYPED.replace("selfTypes=\"c2:20 interpreted:6\"", "selfTypes=\"c2:20 interpreted:7\""),
            "<profile> \"app.Main.loop()\" of thread \"main\": selfTypes \"c2:20 interpreted:7\" counts 27 samples, more than its elapsed 26",
        ),
        (
            TYPED.replace("jvmThread=\"gc\"", "jvmThread=\"GC\""),
            "<thread> attribute jvmThread=\"GC\" is not one of gc, compiler, vm, other",
        ),
    ];
    for (i, (xml, said)) in cases.iter().enumerate() {
        let snap = write(&format!("bad{i}.xml"), xml);
        let out = profrj(&["report", "--style", "xprof", s(&snap)]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(out.stdout.is_empty());
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.starts_with("profrj: ") && err.contains(said), "{err}");
    }
    // Choices that do not fit the style are refused, not ignored; a thread
    // the snapshot lacks is named with those it has.
    let snap = write("typed.xml", TYPED);
    let out = profrj(&["report", "--style", "xprof", s(&snap), "--thread", "nosuch"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("no thread named \"nosuch\" in <sampler>; threads: C2 CompilerThre, GC Thread#0, VM Thread, main"),
        "{err}"
    );
    for extra in [&["--metric", "cpu"][..], &["--section", "alloc"]] {
        let mut args = vec!["report", "--style", "xprof", s(&snap)];
        args.extend(extra);
        let out = profrj(&args);
        assert_eq!(out.status.code(), Some(1), "{extra:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--style xprof"), "{err}");
    }
}
