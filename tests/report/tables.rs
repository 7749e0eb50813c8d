//! `profrj report` and `profrj diff` tables: the hot method on top with the
//! snapshot's share, ProfileTruth's exact calls, the method that got hotter
//! between two CpuRatio runs, and the memory and coverage tables of a
//! hand-written snapshot.

use crate::common::*;
use crate::snapshots::*;

#[test]
fn report_puts_the_hot_method_on_top_with_its_share() {
    let snap = split_snapshot();
    let by_self = profrj_ok(&["report", s(snap), "--thread", "main", "--top", "0"]);
    eprintln!("{by_self}");
    let lines: Vec<&str> = by_self.lines().collect();
    assert!(
        lines[0].starts_with("CPU SAMPLES <sampler> thread \"main\""),
        "{by_self}"
    );
    assert!(lines[1].contains("thread \"main\": CPU "), "{by_self}");
    assert!(lines[1].contains("ended"), "{by_self}");
    assert_eq!(
        lines[2].split_whitespace().collect::<Vec<_>>(),
        ["rank", "self", "accum", "count", "total", "count", "method"]
    );
    // unit() is where main's CPU goes (self), under heavy() and light();
    // each share is the snapshot's.
    let rows = table_rows(&by_self);
    let unit = format!("{SPLIT}.unit()");
    assert!(rows[0].ends_with(&format!("  {unit}")), "{by_self}");
    let want = snapshot_share(snap, "main", &unit, "hits");
    assert_shown(
        percent(rows[0].split_whitespace().nth(1).unwrap()),
        want,
        "unit() self",
    );
    for method in ["heavy", "light"] {
        let name = format!("{SPLIT}.{method}()");
        let row = report_row(&by_self, &name);
        let want = snapshot_share(snap, "main", &name, "cumulated");
        eprintln!("{method}(): {} of main's RUNNABLE samples", row[4]);
        assert_shown(percent(row[4]), want, &format!("{method}() total"));
    }

    // By total: main() on top (100%), then unit(), then heavy().
    let by_total = profrj_ok(&[
        "report",
        s(snap),
        "--thread",
        "main",
        "--sort",
        "total",
        "--top",
        "3",
    ]);
    let rows = table_rows(&by_total);
    assert!(rows[0].ends_with(&format!("{SPLIT}.main()")), "{by_total}");
    assert!(rows[2].ends_with(&format!("{SPLIT}.heavy()")), "{by_total}");

    // All threads merged: the count column adds up to the header's total.
    let all = profrj_ok(&["report", s(snap), "--top", "0"]);
    let total: u64 = all
        .lines()
        .next()
        .unwrap()
        .split("total = ")
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    let counted: u64 = table_rows(&all)
        .iter()
        .map(|l| l.split_whitespace().nth(3).unwrap().parse::<u64>().unwrap())
        .sum();
    assert_eq!(total, counted, "{all}");
    // Every RUNNABLE sample the agent counted, those without a Java frame too.
    let xml = std::fs::read_to_string(snap).unwrap();
    assert_eq!(total, sum_threads(&xml, "sampler", "cumulated"));
}

#[test]
fn profile_report_shows_exact_calls() {
    let truth = truth_snapshot();
    let r = profrj_ok(&[
        "report",
        s(truth),
        "--section",
        "profile",
        "--metric",
        "calls",
        "--top",
        "0",
    ]);
    eprintln!("{}", r.lines().take(8).collect::<Vec<_>>().join("\n"));
    assert!(r.starts_with("METHOD PROFILE <profile> all"), "{r}");
    // Columns: rank self accum count total count calls method.
    let fib = report_row(&r, &format!("{TRUTH}.fib(int)"));
    assert_eq!(fib[6], (2 * 1973 + 15).to_string());
    let deep = report_row(&r, &format!("{TRUTH}.deep(int)"));
    assert_eq!(deep[6], "6002");
    let inner = report_row(&r, &format!("{TRUTH}.inner(int,int)"));
    assert_eq!(inner[6], "182");
    // One worker thread: half of those.
    let one = profrj_ok(&[
        "report",
        s(truth),
        "--section",
        "profile",
        "--metric",
        "calls",
        "--thread",
        "truth-1",
        "--top",
        "0",
    ]);
    assert_eq!(report_row(&one, &format!("{TRUTH}.fib(int)"))[6], "1973");
    // Wall time: nap() holds the sleeper's 300 ms.
    let wall = profrj_ok(&[
        "report",
        s(truth),
        "--section",
        "profile",
        "--metric",
        "wall",
        "--thread",
        "sleeper",
        "--sort",
        "total",
    ]);
    let nap = report_row(&wall, &format!("{TRUTH}.nap()"));
    assert!(nap[5].parse::<u64>().unwrap() >= 299_000, "{wall}");
    // The sampler has no calls: refused with a reason.
    let out = profrj(&["report", s(truth), "--section", "sampler"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no <sampler> section"));
}

#[test]
fn diff_names_the_method_that_got_hotter() {
    let dir = temp_dir("report-diff");
    let mut snaps = Vec::new();
    for (name, a, b) in [("before.xml", "3", "1"), ("after.xml", "1", "3")] {
        let snap = dir.join(name);
        run_java(
            &dir,
            &format!("sampling,interval=2ms,file={}", snap.display()),
            "profrj.harness.CpuRatio",
            &["2000", a, b],
        )
        .assert_success();
        snaps.push(snap);
    }
    // The before snapshot's hot method, on top of its report.
    let before = profrj_ok(&["report", s(&snaps[0]), "--thread", "main", "--top", "3"]);
    let top = table_rows(&before)[0];
    assert!(top.ends_with("profrj.harness.CpuRatio.alpha()"), "{before}");
    let alpha_name = "profrj.harness.CpuRatio.alpha()";
    let beta_name = "profrj.harness.CpuRatio.beta()";
    let share = percent(top.split_whitespace().nth(1).unwrap());
    eprintln!("before: alpha {share}% of main (75% by construction)");
    assert_shown(
        share,
        snapshot_share(&snaps[0], "main", alpha_name, "hits"),
        "alpha",
    );

    let diff = profrj_ok(&["diff", s(&snaps[0]), s(&snaps[1]), "--thread", "main"]);
    eprintln!("{diff}");
    let rows: Vec<&str> = diff.lines().skip(3).collect();
    let beta = rows
        .iter()
        .position(|l| l.contains("CpuRatio.beta()"))
        .unwrap();
    let alpha = rows
        .iter()
        .position(|l| l.contains("CpuRatio.alpha()"))
        .unwrap();
    assert!(
        beta < 2 && alpha < 2,
        "the two changed methods come first:\n{diff}"
    );
    assert!(
        rows[beta].ends_with("hotter") && rows[alpha].ends_with("colder"),
        "{diff}"
    );
    let delta = percent(
        rows[beta]
            .split_whitespace()
            .next()
            .unwrap()
            .trim_start_matches('+'),
    );
    // beta: 25% -> 75% of main by construction; the diff shows the change
    // the two snapshots hold (each share rounded, so within two roundings).
    let want = snapshot_share(&snaps[1], "main", beta_name, "hits")
        - snapshot_share(&snaps[0], "main", beta_name, "hits");
    assert!(
        (delta - want).abs() <= 0.01 + 1e-9,
        "beta: the diff shows {delta:+}%, the snapshots {want:+.4}%\n{diff}"
    );
}

/// Memory and coverage written by hand from the format's examples (the agent
/// does not write `<memory>` yet; real `<coverage>` snapshots are below):
/// the report tables and the page's.
#[test]
fn memory_and_coverage_tables() {
    let dir = temp_dir("report-memcov");
    let snap = dir.join("mc.xml");
    std::fs::write(
        &snap,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<doc>
<memory>
  <thread name="main"><memory class="java.lang.String" count="120" max="400"/><memory class="pkg.Node" count="30" max="31"/></thread>
  <thread name="worker"><memory class="java.lang.String" count="5" max="50"/></thread>
</memory>
<coverage>
  <class name="pkg.Main" source="Main.java">
    <method name="main" signature="([Ljava/lang/String;)V" firstline="5" count="1"><footprints>1 1 -1 0 1 </footprints></method>
    <method name="unused" signature="()V" firstline="12" count="0"><footprints>0 0 </footprints></method>
  </class>
  <class name="pkg.Util" source="Util.java">
    <method name="f" signature="(I)I" firstline="3" count="9"><footprints>9 9 </footprints></method>
  </class>
</coverage>
</doc>
"#,
    )
    .unwrap();
    let mem = profrj_ok(&["report", s(&snap)]);
    assert!(
        mem.starts_with("LIVE OBJECTS <memory> all 2 threads merged: 155 objects"),
        "{mem}"
    );
    let row = report_row(&mem, "java.lang.String");
    assert_eq!((row[1], row[4]), ("125", "450"), "{mem}");
    let worker = profrj_ok(&[
        "report",
        s(&snap),
        "--section",
        "memory",
        "--thread",
        "worker",
    ]);
    assert_eq!(report_row(&worker, "java.lang.String")[1], "5");
    let cov = profrj_ok(&["report", s(&snap), "--section", "coverage"]);
    assert!(cov.contains("lines 5/8 (62.5%), methods run 2/3"), "{cov}");
    let first = cov.lines().nth(3).unwrap();
    assert!(
        first.ends_with("pkg.Main (Main.java)") && first.contains("3/6"),
        "{cov}"
    );

    let page = dir.join("mc.html");
    profrj_ok(&["flame", s(&snap), "-o", s(&page)]);
    let dom = chromium(&["--dump-dom", &format!("file://{}", page.display())]);
    assert!(
        dom.contains("<tr data-class=\"java.lang.String\">"),
        "{dom}"
    );
    assert!(
        dom.contains("<tr data-class=\"pkg.Main\" data-covered=\"50.0\">"),
        "{dom}"
    );
    assert!(
        dom.contains("<tr data-class=\"pkg.Util\" data-covered=\"100.0\">"),
        "{dom}"
    );
    assert!(!dom.contains("class=\"frame"));
}
