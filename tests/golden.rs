//! The snapshot's bytes do not change when the agent's code moves: every
//! section's XML from deterministic programs, compared with golden files
//! written by an earlier agent (issue 30: modes hand a model, one writer
//! renders the XML, byte for byte as before).
//!
//! Only what a run decides is normalised: times (`cpuTime`, `elapsedTime`,
//! profile's times and overheads), the sampler's counts and its call trees
//! (which stacks a sample meets), identity hash codes in the monitor dump,
//! lambda classes' addresses, the `max` of objects whose peak a GC's timing
//! decides (MemoryTruth's churn, and the `cumulatedMax` of the frame that
//! allocates it), what `<sites>` says the heap censuses cost, and `alloc`'s samples on the main thread (HotSpot draws
//! a thread's first sample point when the thread starts, at the interval
//! then in force: a random point of the main thread's first 512 KiB).
//! Siblings in `<profile>` are ordered by time, and the threads of `<sampler>`, `<memory>` and
//! `<sites>` by when the agent met them, so those are compared as sets. Every other byte of
//! every line is compared, escaping and attribute order included.
//!
//! The golden files come from real runs, never from editing:
//! `scripts/golden-snapshots REV` builds the agent of a revision and runs
//! this test with `PROFRJ_GOLDEN_AGENT` (that agent) and
//! `PROFRJ_GOLDEN_WRITE=1` (write the files instead of comparing). They
//! are per JDK (the JVM's own threads and frames differ between JDKs).

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One deterministic run: a harness program under some modes.
struct Case {
    name: &'static str,
    jvm: &'static [&'static str],
    options: &'static str,
    main: &'static str,
}

const CASES: [Case; 4] = [
    // Interpreted: the JIT's timing decides nothing.
    Case {
        name: "instrumented",
        jvm: &["-Xint"],
        options: "sampling,profile,memory,coverage,include=profrj.harness.*",
        main: "profrj.harness.CoverageTruth",
    },
    // Every object sampled (escape analysis, off with -Xint, would drop
    // some) on a thread started after the agent.
    Case {
        name: "alloc",
        jvm: &["-Xint"],
        options: "alloc=0",
        main: "profrj.harness.GoldenAllocs",
    },
    Case {
        name: "memory",
        jvm: &[],
        options: "memory",
        main: "profrj.harness.MemoryTruth",
    },
    Case {
        name: "lock-dump",
        jvm: &[],
        options: "lock",
        main: "profrj.harness.Deadlock",
    },
];

/// The agent under test: `PROFRJ_GOLDEN_AGENT`, else this build's.
fn agent_under_test() -> PathBuf {
    match std::env::var_os("PROFRJ_GOLDEN_AGENT") {
        Some(p) => PathBuf::from(p),
        None => agent().to_path_buf(),
    }
}

/// The running JVM's major version (`java -version`'s first quoted word).
fn java_major() -> String {
    let out = Command::new(java()).arg("-version").output().unwrap();
    let text = String::from_utf8_lossy(&out.stderr);
    let version = text.split('"').nth(1).unwrap_or("unknown");
    let major = version.split(['.', '-', '+']).next().unwrap_or("unknown");
    major.to_owned()
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/golden")
        .join(java_major())
}

fn snapshot(case: &Case) -> String {
    let dir = temp_dir(&format!("golden-{}", case.name));
    let out = dir.join("snapshot.xml");
    let output = Command::new(java())
        .current_dir(&dir)
        .arg(format!(
            "-agentpath:{}={},file={}",
            agent_under_test().display(),
            case.options,
            out.display()
        ))
        .arg("-Xmx256m")
        .args(case.jvm)
        .args(["-cp", harness_classes(), case.main])
        .output()
        .expect("cannot start java");
    assert!(
        output.status.success(),
        "{}: {}",
        case.name,
        String::from_utf8_lossy(&output.stderr)
    );
    read_snapshot(&out)
}

/// A line's element name (`<name …`, `</name>`), if it holds a tag.
fn tag(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix('<')?;
    let rest = rest.strip_prefix('/').unwrap_or(rest);
    rest.split([' ', '>', '/']).next()
}

/// `line` with the value of each attribute in `names` replaced by `#`.
fn blank(line: &str, names: &[&str]) -> String {
    let mut out = line.to_owned();
    for name in names {
        let key = format!(" {name}=\"");
        let mut from = 0;
        while let Some(at) = out[from..].find(&key) {
            let start = from + at + key.len();
            let Some(len) = out[start..].find('"') else {
                break;
            };
            out.replace_range(start..start + len, "#");
            from = start + 1;
        }
    }
    out
}

/// A lambda class's address (`Cls$$Lambda$1.0x00007f76b8000400`) as `0x#`.
fn blank_lambda_addresses(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    // `$$Lambda$1.0x…` (JDK 17), `$$Lambda.0x…` (JDK 21+).
    while let Some(at) = rest.find("$$Lambda") {
        let (head, tail) = rest.split_at(at);
        out.push_str(head);
        let Some(x) = tail.find(".0x") else {
            out.push_str(tail);
            return out;
        };
        out.push_str(&tail[..x + 3]);
        out.push('#');
        let hex = tail[x + 3..]
            .find(|c: char| !c.is_ascii_hexdigit())
            .unwrap_or(tail.len() - x - 3);
        rest = &tail[x + 3 + hex..];
    }
    out.push_str(rest);
    out
}

/// One element and what it holds, as lines (its start line first).
struct Block {
    lines: Vec<String>,
}

/// Splits `lines` (one element's children, indented alike) into blocks:
/// a start tag's block runs to its end tag at the same indentation.
fn blocks(lines: &[String]) -> Vec<Block> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        let indent = line.len() - line.trim_start().len();
        let open = line.trim_end().ends_with('>')
            && !line.trim_end().ends_with("/>")
            && !line.trim_start().starts_with("</")
            && !line.contains("</");
        let mut j = i + 1;
        if open {
            while j < lines.len() {
                let l = &lines[j];
                let ind = l.len() - l.trim_start().len();
                j += 1;
                if ind == indent && l.trim_start().starts_with("</") {
                    break;
                }
            }
        }
        out.push(Block {
            lines: lines[i..j].to_vec(),
        });
        i = j;
    }
    out
}

/// The `cumulatedMax` of the frame that allocates MemoryTruth's churn: it
/// adds the churn's peak, which a GC's timing decides (the frame's other
/// children are its own and exact, so only this total moves).
fn blank_churn_parents(mut lines: Vec<String>) -> Vec<String> {
    for i in 1..lines.len() {
        let parent_opens =
            lines[i - 1].trim_start().starts_with("<profile ") && !lines[i - 1].ends_with("/>");
        if parent_opens && lines[i].contains("MemoryTruth$Churn\"") {
            lines[i - 1] = blank(&lines[i - 1], &["cumulatedMax"]);
        }
    }
    lines
}

/// `<alloc>` without the main thread's tree (see the file's comment).
fn drop_main_allocations(lines: Vec<String>) -> Vec<String> {
    let mut out = Vec::with_capacity(lines.len());
    let mut section = String::new();
    let mut skipping = false;
    for line in lines {
        if line.starts_with(" <") && !line.starts_with(" </") {
            section = tag(&line).unwrap_or_default().to_owned();
        }
        if section == "alloc" && line.starts_with("  <thread name=\"main\"") {
            skipping = !line.ends_with("/>");
            continue;
        }
        if skipping {
            skipping = line != "  </thread>";
            continue;
        }
        out.push(line);
    }
    out
}

/// The threads of the sections whose order follows the agent's thread ids
/// sorted: ids follow the order threads were met in (the sampler's ticks
/// against the JVM's own threads' starts, two threads starting at once).
fn sort_threads(mut lines: Vec<String>) -> Vec<String> {
    for section in ["sampler", "memory", "sites"] {
        let open = format!(" <{section}>");
        let close = format!(" </{section}>");
        let Some(start) = lines.iter().position(|l| *l == open) else {
            continue;
        };
        let Some(end) = lines.iter().position(|l| *l == close) else {
            continue;
        };
        let mut threads: Vec<Vec<String>> = blocks(&lines[start + 1..end])
            .into_iter()
            .map(|b| b.lines)
            .collect();
        threads.sort();
        let mut out = lines[..=start].to_vec();
        out.extend(threads.into_iter().flatten());
        out.extend_from_slice(&lines[end..]);
        lines = out;
    }
    lines
}

/// The children of every `<profile>` in the profile section sorted (their
/// order follows measured times); other sections keep their order.
fn sort_profile_siblings(lines: Vec<String>) -> Vec<String> {
    fn sorted(block: Block) -> Vec<String> {
        if block.lines.len() <= 2 {
            return block.lines;
        }
        let n = block.lines.len();
        let mut kids: Vec<Vec<String>> = blocks(&block.lines[1..n - 1])
            .into_iter()
            .map(sorted)
            .collect();
        kids.sort();
        let mut out = vec![block.lines[0].clone()];
        out.extend(kids.into_iter().flatten());
        out.push(block.lines[n - 1].clone());
        out
    }
    let mut out = Vec::new();
    let mut in_profile = false;
    let mut section = Vec::new();
    for line in lines {
        if line == " <profile>" {
            in_profile = true;
        }
        if in_profile {
            section.push(line.clone());
            if line == " </profile>" {
                in_profile = false;
                // Each thread's trees sorted; threads keep their order.
                let n = section.len();
                out.push(section[0].clone());
                for thread in blocks(&section[1..n - 1]) {
                    out.extend(sorted(thread));
                }
                out.push(section[n - 1].clone());
                section.clear();
            }
            continue;
        }
        out.push(line);
    }
    out
}

/// The snapshot with what a run decides blanked (see the file's comment).
fn normalise(text: &str) -> String {
    let mut lines = Vec::new();
    let mut section = String::new();
    for line in text.lines() {
        if line.starts_with(" <") && !line.starts_with(" </") {
            section = tag(line).unwrap_or_default().to_owned();
        }
        let mut line = blank(line, &["cpuTime", "elapsedTime"]);
        match section.as_str() {
            "sampler" => {
                if tag(&line) == Some("profile") {
                    continue; // which stacks a sample meets
                }
                line = blank(&line, &["cumulated", "cumulatedElapsed"]);
            }
            "profile" => {
                line = blank(
                    &line,
                    &[
                        "methodElapsed",
                        "method",
                        "cumulatedElapsed",
                        "cumulated",
                        "overheadCumulated",
                        "overheadMethod",
                    ],
                );
            }
            // What the censuses cost (their pauses, and how many a run's
            // GCs gave): the section's own attributes.
            "sites" if line.starts_with(" <sites") => {
                line = blank(
                    &line,
                    &[
                        "censusPause",
                        "censuses",
                        "censusPauses",
                        "longestCensusPause",
                        "censusesSkipped",
                        "counters",
                        "countersGivenBack",
                    ],
                );
            }
            "memory" | "sites" if line.contains("MemoryTruth$Churn\"") => {
                line = blank(&line, &["max", "cumulatedMax"]);
            }
            "lock" => {
                line = blank(&line, &["hash", "time", "cumulatedTime"]);
            }
            _ => {}
        }
        lines.push(blank_lambda_addresses(&line));
    }
    let lines = blank_churn_parents(lines);
    let lines = drop_main_allocations(lines);
    let mut out = sort_threads(sort_profile_siblings(lines)).join("\n");
    out.push('\n');
    out
}

#[test]
fn every_section_is_written_as_before() {
    let write = std::env::var_os("PROFRJ_GOLDEN_WRITE").is_some();
    let dir = golden_dir();
    let mut differ = Vec::new();
    for case in &CASES {
        let got = normalise(&snapshot(case));
        let path = dir.join(format!("{}.xml", case.name));
        if write {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &got).unwrap();
            eprintln!("wrote {}", path.display());
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; golden files are written by scripts/golden-snapshots",
                path.display()
            )
        });
        if same_dump_threads(&got) != same_dump_threads(&want) {
            let actual = std::env::temp_dir().join(format!("golden-{}-actual.xml", case.name));
            std::fs::write(&actual, &got).unwrap();
            let first = got
                .lines()
                .zip(want.lines())
                .position(|(g, w)| g != w)
                .unwrap_or(got.lines().count().min(want.lines().count()));
            differ.push(format!(
                "{}: differs from line {} (got {}, want {}); diff {} {}",
                case.name,
                first + 1,
                got.lines().nth(first).unwrap_or("(end)"),
                want.lines().nth(first).unwrap_or("(end)"),
                path.display(),
                actual.display()
            ));
        }
    }
    assert!(differ.is_empty(), "{}", differ.join("\n"));
}

/// The monitor dump's thread ids, in the JVM's thread list's order, are
/// decided by which of two threads started at once was listed first: each
/// is replaced by its thread's name (in `<thread id>`, `owner`, `thread`),
/// and a run of waiting threads sorted. Applied to both sides of the
/// comparison, so the golden files stay as a run wrote them.
fn same_dump_threads(text: &str) -> String {
    let attr = |line: &str, name: &str| -> Option<String> {
        let key = format!(" {name}=\"");
        let at = line.find(&key)? + key.len();
        let len = line[at..].find('"')?;
        Some(line[at..at + len].to_owned())
    };
    let names: std::collections::HashMap<String, String> = text
        .lines()
        .filter(|l| l.trim_start().starts_with("<thread id=\""))
        .filter_map(|l| Some((attr(l, "id")?, attr(l, "name")?)))
        .collect();
    let rename = |line: &str, key: &str| -> String {
        match attr(line, key).and_then(|id| Some((names.get(&id)?, id))) {
            Some((name, id)) => line.replacen(
                &format!(" {key}=\"{id}\""),
                &format!(" {key}=\"{name}\""),
                1,
            ),
            None => line.to_owned(),
        }
    };
    let mut out: Vec<String> = Vec::new();
    let mut waiting: Vec<String> = Vec::new();
    for line in text.lines() {
        let mut line = line.to_owned();
        if line.trim_start().starts_with("<thread id=\"") {
            line = rename(&line, "id");
        }
        line = rename(&rename(&line, "owner"), "thread");
        if line.trim_start().starts_with("<waiting thread=") {
            waiting.push(line);
            continue;
        }
        waiting.sort();
        out.append(&mut waiting);
        out.push(line);
    }
    waiting.sort();
    out.append(&mut waiting);
    out.join("\n")
}

#[test]
fn dump_thread_ids_compare_by_name() {
    let a = "<thread id=\"4\" name=\"a\" monitor=\"3\">\n<thread id=\"5\" name=\"b\">\n\
             <monitor id=\"3\" owner=\"5\">\n<waiting thread=\"4\"/>\n</monitor>\n\
             <deadlock>\n<waiting thread=\"4\"/>\n<waiting thread=\"5\"/>\n</deadlock>";
    let b = a
        .replace("\"4\"", "\"x\"")
        .replace("\"5\"", "\"4\"")
        .replace("\"x\"", "\"5\"");
    assert_ne!(a, b);
    assert_eq!(same_dump_threads(a), same_dump_threads(&b));
    // A monitor's id is not a thread's, and another owner is another dump.
    assert_ne!(
        same_dump_threads(a),
        same_dump_threads(&a.replace("owner=\"5\"", "owner=\"4\""))
    );
    assert!(same_dump_threads(a).contains("<monitor id=\"3\" owner=\"b\">"));
}

#[test]
fn normalising_blanks_only_what_a_run_decides() {
    assert_eq!(
        blank(
            r#"<thread name="a" cpuTime="12" isAlive="true">"#,
            &["cpuTime"]
        ),
        r##"<thread name="a" cpuTime="#" isAlive="true">"##
    );
    assert_eq!(
        blank(r#"<p method="1" methodElapsed="2">"#, &["method"]),
        r##"<p method="#" methodElapsed="2">"##
    );
    assert_eq!(
        blank_lambda_addresses(r#"<frame name="p.D$$Lambda$1.0x00007f76b8000400.run()"/>"#),
        r#"<frame name="p.D$$Lambda$1.0x#.run()"/>"#
    );
    let churn = vec![
        r#"   <profile name="M.main():134" cumulatedMax="1702012">"#.to_owned(),
        r##"    <profile name="p.MemoryTruth$Churn" max="#" cumulatedMax="#"/>"##.to_owned(),
        r#"   <profile name="M.main():68" cumulatedMax="500">"#.to_owned(),
    ];
    let churn = blank_churn_parents(churn);
    assert_eq!(
        churn[0],
        r##"   <profile name="M.main():134" cumulatedMax="#">"##
    );
    assert_eq!(
        churn[2],
        r#"   <profile name="M.main():68" cumulatedMax="500">"#
    );
    let text = " <profile>\n  <thread name=\"t\">\n   <profile name=\"b\"/>\n   <profile name=\"a\">\n    <profile name=\"z\"/>\n    <profile name=\"y\"/>\n   </profile>\n  </thread>\n </profile>";
    let lines = sort_profile_siblings(text.lines().map(str::to_owned).collect());
    assert_eq!(
        lines.join("\n"),
        " <profile>\n  <thread name=\"t\">\n   <profile name=\"a\">\n    <profile name=\"y\"/>\n    <profile name=\"z\"/>\n   </profile>\n   <profile name=\"b\"/>\n  </thread>\n </profile>"
    );
}
