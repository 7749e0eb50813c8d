//! The reader on the spec's examples (memory and coverage are written by
//! hand here, from the format document), and on broken input.

use super::*;
use crate::snapshot::{method_table, CallKind, Metric, MetricName, Weighted};

fn metric(kind: CallKind, name: &'static str) -> Metric {
    Metric::of(kind, Some(MetricName(name))).unwrap()
}

const SAMPLER: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<doc>
 <sampler>
  <thread name="AWT-EventQueue-0" cumulated="8" cpuTime="468750000" cumulatedElapsed="351" elapsedTime="7402889190" isAlive="true">
   <profile name="java.awt.EventDispatchThread.run()" hits="0" cumulated="8" cumulatedElapsed="351">
    <profile name="java.awt.EventQueue.getNextEvent()" hits="0" cumulated="0" cumulatedElapsed="323">
     <profile name="java.lang.Object.wait(native)" hits="0" elapsed="323" cumulated="0" cumulatedElapsed="323"/>
    </profile>
    <profile name="pkg.A.&lt;clinit&gt;()" hits="8" elapsed="28" cumulated="8" cumulatedElapsed="28"/>
   </profile>
  </thread>
 </sampler>
</doc>
"#;

#[test]
fn sampler_section() {
    let s = parse_bytes(SAMPLER.as_bytes()).unwrap();
    let sec = s.calls(CallKind::Sampler).unwrap();
    assert!(s.calls(CallKind::Profile).is_none() && s.memory.is_none() && s.coverage.is_none());
    assert_eq!(sec.threads.len(), 1);
    let t = &sec.threads[0];
    assert_eq!(t.name, "AWT-EventQueue-0");
    assert_eq!(t.cpu_time, Some(468_750_000));
    assert_eq!(t.elapsed_time, Some(7_402_889_190));
    assert_eq!(
        (
            sec.thread_total(t, "cumulated"),
            sec.thread_total(t, "cumulatedElapsed")
        ),
        (Some(8), Some(351))
    );
    assert_eq!(t.is_alive, Some(true));
    let nodes = t.tree.nodes();
    assert_eq!(nodes.len(), 5);
    assert_eq!(s.names.get(nodes[4].name), "pkg.A.<clinit>()");
    assert_eq!((nodes[4].parent, nodes[4].depth), (1, 2));
    assert_eq!((nodes[3].parent, nodes[3].depth), (2, 3));
    assert_eq!(sec.value(&nodes[3], "elapsed"), 323);
    let w = Weighted::new(&t.tree, metric(CallKind::Sampler, "wall"));
    assert_eq!(w.total[0], 351);
    assert_eq!(w.total[1], 351);
    let w = Weighted::new(&t.tree, metric(CallKind::Sampler, "cpu"));
    assert_eq!(w.total[0], 8);
}

#[test]
fn samples_without_a_java_frame_get_a_node() {
    let xml = r#"<doc><sampler>
      <thread name="Signal Dispatcher" cumulated="5" cumulatedElapsed="7"/>
      <thread name="w" cumulated="3" cumulatedElapsed="3"><profile name="m()" hits="2" elapsed="2"/></thread>
    </sampler></doc>"#;
    let s = parse_bytes(xml.as_bytes()).unwrap();
    let sec = s.calls(CallKind::Sampler).unwrap();
    let t = &sec.threads;
    let n = &t[0].tree.nodes()[1];
    assert_eq!(s.names.get(n.name), super::NO_JAVA_FRAME);
    let v = |n| (sec.value(n, "hits"), sec.value(n, "elapsed"));
    assert_eq!((v(n), n.depth), ((5, 7), 1));
    assert_eq!(t[1].tree.nodes().len(), 3);
    assert_eq!(v(&t[1].tree.nodes()[2]), (1, 1));
}

const PROFILE: &str = r#"<doc><profile>
  <thread name="AWT-Windows" cpuTime="187500000" isAlive="true">
    <profile name="java.awt.event.PaintEvent(java.awt.Component,int,java.awt.Rectangle)"
                signature="(Ljava/awt/Component;ILjava/awt/Rectangle;)V" count="88"
                cumulatedElapsed="16000" cumulated="0" method="0" overheadCumulated="0" overheadMethod="0"
                exceptions="0">
      <profile name="java.awt.event.ComponentEvent(java.awt.Component,int)"
                  signature="(Ljava/awt/Component;I)V" count="88"
                  cumulatedElapsed="13000" cumulated="0" method="0" overheadCumulated="0" overheadMethod="0"
                  exceptions="2">
      </profile>
  </profile>
  </thread>
</profile></doc>"#;

#[test]
fn profile_section() {
    let s = parse_bytes(PROFILE.as_bytes()).unwrap();
    let sec = s.calls(CallKind::Profile).unwrap();
    let t = &sec.threads[0];
    assert_eq!(t.cpu_time, Some(187_500_000));
    assert_eq!(t.elapsed_time, None);
    let n = &t.tree.nodes()[2];
    assert_eq!(s.names.get(n.signature), "(Ljava/awt/Component;I)V");
    assert_eq!(
        (
            sec.value(n, "count"),
            sec.value(n, "cumulatedElapsed"),
            sec.value(n, "exceptions")
        ),
        (88, 13000, 2)
    );
}

#[test]
fn memory_section_from_the_spec() {
    let xml = r#"<doc><memory>
  <thread name="AWT-EventQueue-0">
    <memory class="java.awt.geom.AffineTransform" count="69" max="799"/>
    <memory class="java.awt.Rectangle" count="61" max="1446"/>
  </thread>
    <thread name="AWT-Windows">
    <memory class="java.awt.Rectangle" count="45" max="88"></memory>
  </thread>
</memory></doc>"#;
    let s = parse_bytes(xml.as_bytes()).unwrap();
    let m = s.memory.unwrap();
    assert_eq!(m.threads.len(), 2);
    assert_eq!(m.threads[0].rows.len(), 2);
    assert_eq!(
        m.threads[0].rows[1],
        MemoryRow {
            class: "java.awt.Rectangle".into(),
            count: 61,
            max: 1446
        }
    );
    assert_eq!(m.threads[1].name, "AWT-Windows");
    assert_eq!(m.threads[1].rows[0].max, 88);
}

#[test]
fn coverage_section_from_the_spec() {
    let xml = r#"<doc><coverage>
    <class name="com.terrasoft.profilerj.tutorial.Example01" source="Example01.java">
        <method name="&lt;init&gt;" signature="(Ljava/lang/String;)V" firstline="11" count="0">
            <footprints>0 0 </footprints>
        </method>

        <method name="runLoop" signature="(I)V" firstline="26" count="605">
            <footprints>605 605605 -1 605000 605000 -1 605 </footprints>
        </method>
    </class>
    <class name="NoSource"><method name="m" signature="()V" firstline="1" count="1"><footprints/></method></class>
</coverage></doc>"#;
    let s = parse_bytes(xml.as_bytes()).unwrap();
    let c = s.coverage.unwrap();
    assert_eq!(c.classes.len(), 2);
    let k = &c.classes[0];
    assert_eq!(k.source.as_deref(), Some("Example01.java"));
    assert_eq!(k.methods[0].name, "<init>");
    assert_eq!(k.methods[0].footprints, vec![0, 0]);
    assert_eq!(k.methods[1].first_line, Some(26));
    assert_eq!(k.methods[1].count, 605);
    assert_eq!(
        k.methods[1].footprints,
        vec![605, 605605, -1, 605000, 605000, -1, 605]
    );
    assert_eq!(c.classes[1].source, None);
    assert!(c.classes[1].methods[0].footprints.is_empty());
}

/// As the agent writes a class compiled with `-g:none`.
#[test]
fn coverage_method_without_line_numbers() {
    let xml = r#"<doc><coverage><class name="p.NoLines">
   <method name="&lt;init&gt;" signature="()V" firstline="-1" count="2">
    <footprints></footprints>
   </method>
   <method name="f" signature="()V" firstline="-1" count="0"><footprints/></method>
</class></coverage></doc>"#;
    let s = parse_bytes(xml.as_bytes()).unwrap();
    let c = s.coverage.unwrap();
    let m = &c.classes[0].methods;
    assert_eq!(
        (m[0].name.as_str(), m[0].first_line, m[0].count),
        ("<init>", None, 2)
    );
    assert!(m[0].footprints.is_empty() && m[1].footprints.is_empty());
    assert_eq!(m[1].first_line, None);
    let e = error("<doc><coverage><class name='c'><method name='m' firstline='-1'><footprints>1 </footprints></method></class></coverage></doc>");
    assert!(e.message.contains("without line numbers"), "{e}");
    let e = error(
        "<doc><coverage><class name='c'><method name='m' firstline='-2'/></class></coverage></doc>",
    );
    assert!(e.message.contains("firstline=\"-2\""), "{e}");
}

#[test]
fn every_section_at_once_and_unknown_ones_skipped() {
    let xml = "<doc><future><x y='1'/></future><sampler/><profile/><memory/><coverage/></doc>";
    let s = parse_bytes(xml.as_bytes()).unwrap();
    assert!(s.calls(CallKind::Sampler).is_some() && s.calls(CallKind::Profile).is_some());
    assert!(s.memory.is_some() && s.coverage.is_some());
}

/// profrj's extensions (docs/SNAPSHOT.md): the class id, `<branches>` and
/// `<instructions>`; a snapshot without them reads them as unknown.
#[test]
fn coverage_extensions() {
    let xml = r#"<doc><coverage>
<class name="p.A" source="A.java" id="00ff00ff00ff00fe">
 <method name="f" signature="(I)I" firstline="12" count="8">
  <footprints>8 -1 5 </footprints>
  <branches>12:3,5 -1:1,0,7</branches>
  <instructions>4/4 0/0 1/3</instructions>
 </method>
 <method name="g" signature="()V" firstline="20" count="0"><footprints>0 </footprints></method>
</class>
<class name="p.Old"/>
</coverage></doc>"#;
    let s = parse_bytes(xml.as_bytes()).unwrap();
    let c = s.coverage.unwrap();
    assert_eq!(c.classes[0].id, Some(0x00ff_00ff_00ff_00fe));
    assert_eq!(c.classes[1].id, None);
    let f = &c.classes[0].methods[0];
    let b = &f.branches;
    assert_eq!((b[0].line, b[0].outcomes.clone()), (Some(12), vec![3, 5]));
    assert_eq!((b[1].line, b[1].outcomes.clone()), (None, vec![1, 0, 7]));
    assert_eq!(f.instructions, Some(vec![(4, 4), (0, 0), (1, 3)]));
    let g = &c.classes[0].methods[1];
    assert!(g.branches.is_empty() && g.instructions.is_none());
    for bad in [
        "<class name='c' id='12'/>",
        "<class name='c' id='00ff00ff00ff00fg'/>",
        "<class name='c'><method name='m' firstline='1'><branches>x:1,2</branches></method></class>",
        "<class name='c'><method name='m' firstline='1'><instructions>4/3</instructions></method></class>",
    ] {
        let e = error(&format!("<doc><coverage>{bad}</coverage></doc>"));
        assert!(!e.message.is_empty(), "{bad}");
    }
}

fn error(xml: &str) -> ParseError {
    parse_bytes(xml.as_bytes()).unwrap_err()
}

#[test]
fn truncated_input_names_the_end_and_the_open_element() {
    let cut = &SAMPLER[..SAMPLER.find("<profile name=\"pkg.A").unwrap()];
    let e = error(cut);
    assert_eq!((e.line, e.column), (9, 5), "{e}");
    assert!(e.message.contains("truncated"), "{e}");
    assert!(
        e.message.contains("<profile> opened at line 5, column 4"),
        "{e}"
    );
}

#[test]
fn truncated_inside_a_tag() {
    let cut = &SAMPLER[..SAMPLER.find("hits=\"8\"").unwrap()];
    let e = error(cut);
    assert!(e.message.contains("malformed XML"), "{e}");
    assert_eq!(e.line, 9, "{e}");
}

#[test]
fn mismatched_end_tag() {
    let e = error("<doc>\n <sampler>\n </memory>\n</doc>");
    assert_eq!(e.line, 3, "{e}");
    assert!(e.message.contains("malformed XML"), "{e}");
}

#[test]
fn bad_number_points_at_its_element() {
    let e = error("<doc>\n<sampler>\n  <thread name=\"t\">\n    <profile name=\"m\" hits=\"-3\"/>");
    assert_eq!((e.line, e.column), (4, 5), "{e}");
    assert!(e.message.contains("hits=\"-3\""), "{e}");
}

#[test]
fn structure_errors() {
    assert!(error("<html/>").message.contains("root element is <html>"));
    assert!(error("").message.contains("no <doc>"));
    assert!(error("<doc/><doc/>").message.contains("after the end"));
    let e = error("<doc><sampler><thread name='t'><memory class='x'/></thread></sampler></doc>");
    assert!(
        e.message.contains("unexpected <memory> inside <thread>"),
        "{e}"
    );
    let e = error("<doc><sampler><thread><profile name='x'/></thread></sampler></doc>");
    assert!(e.message.contains("lacks the attribute name"), "{e}");
    let e = error("<doc><coverage><class name='c'><method name='m'><footprints>1 x</footprints></method></class></coverage></doc>");
    assert!(e.message.contains("footprint \"x\""), "{e}");
}

#[test]
fn recursion_counts_once_in_totals() {
    // fib -> fib -> fib, each with own weight 1: total of fib is 3, not 3+2+1.
    let xml = r#"<doc><profile><thread name="t">
      <profile name="fib" count="1" method="1"><profile name="fib" count="2" method="1">
        <profile name="fib" count="4" method="1"/></profile></profile>
      <profile name="other" count="1" method="5"/>
    </thread></profile></doc>"#;
    let s = parse_bytes(xml.as_bytes()).unwrap();
    let sec = s.calls(CallKind::Profile).unwrap();
    let trees: Vec<_> = sec.threads.iter().map(|t| &t.tree).collect();
    let (rows, grand) = method_table(&s.names, &trees, metric(CallKind::Profile, "cpu"));
    assert_eq!(grand, 8);
    assert_eq!(rows[0].name, "other");
    assert_eq!(
        (rows[1].name.as_str(), rows[1].own, rows[1].total),
        ("fib", 3, 3)
    );
    let (rows, _) = method_table(&s.names, &trees, metric(CallKind::Profile, "calls"));
    let fib = rows.iter().find(|r| r.name == "fib").unwrap();
    assert_eq!((fib.own, fib.calls), (7, 7));
}

/// Thread and frame names as the agent escapes them come back as the Java
/// strings they were (the scheme itself is tested in `profrj_format::names`).
#[test]
fn names_escaped_by_the_agent_come_back() {
    let xml = r#"<doc><sampler>
  <thread name="odd-😀\u0000\uD83D-\u001B[31m-back\\slash" cumulated="1" cumulatedElapsed="1">
   <profile name="p.A\uD83D.run()" hits="1" elapsed="1" cumulated="1" cumulatedElapsed="1"/>
  </thread></sampler></doc>"#;
    let s = parse_bytes(xml.as_bytes()).unwrap();
    let t = &s.calls(CallKind::Sampler).unwrap().threads[0];
    let java = |units: &[u16]| profrj_format::names::from_java_units(units.iter().copied());
    let mut name: Vec<u16> = "odd-".encode_utf16().collect();
    name.extend([0xD83D, 0xDE00, 0, 0xD83D]);
    name.extend("-\u{1b}[31m-back\\slash".encode_utf16());
    assert_eq!(t.name, java(&name));
    let mut frame: Vec<u16> = "p.A".encode_utf16().collect();
    frame.push(0xD83D);
    frame.extend(".run()".encode_utf16());
    assert_eq!(s.names.get(t.tree.nodes()[1].name), java(&frame));
}

const LOCK: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<doc>
 <lock threshold="1000">
  <thread name="a" cpuTime="1" elapsedTime="2" isAlive="true" count="3" time="3000">
   <profile name="p.A.run()" count="0" time="0" cumulatedCount="3" cumulatedTime="3000">
    <profile name="p.Lock" class="true" count="3" time="3000" cumulatedCount="3" cumulatedTime="3000"/>
   </profile>
  </thread>
  <monitorDump>
   <thread id="1" name="a" state="MW" monitor="2"><frame name="p.A.run()"/></thread>
   <thread id="2" name="b" state="MW" monitor="1"/>
   <monitor id="1" class="p.Lock" hash="1f" owner="1" entryCount="1"><waiting thread="2"/></monitor>
   <monitor id="2" class="p.Lock" owner="2" entryCount="2"><waiting thread="1"/><notify thread="3"/></monitor>
   <monitor id="3" class="p.Sync" lock="true" owner="2"><waiting thread="4"/></monitor>
   <deadlock><waiting thread="1"/><waiting thread="2"/></deadlock>
  </monitorDump>
 </lock>
</doc>
"#;

#[test]
fn lock_section_and_its_monitor_dump() {
    let s = parse_bytes(LOCK.as_bytes()).unwrap();
    let sec = s.calls(CallKind::Lock).unwrap();
    assert_eq!(sec.values, [Some(1000)]);
    let t = &sec.threads[0];
    assert_eq!(
        (sec.thread_total(t, "count"), sec.thread_total(t, "time")),
        (Some(3), Some(3000))
    );
    assert!(t.tree.nodes().iter().any(|n| n.class));
    let d = s.monitor_dump.as_ref().unwrap();
    assert_eq!(d.threads.len(), 2);
    assert_eq!(
        (d.threads[0].state.as_str(), d.threads[0].monitor),
        ("MW", Some(2))
    );
    assert_eq!(d.threads[0].frames, ["p.A.run()"]);
    assert_eq!(d.monitors[0].hash.as_deref(), Some("1f"));
    assert_eq!(
        (d.monitors[1].owner, d.monitors[1].entry_count),
        (Some(2), 2)
    );
    assert_eq!(
        (&d.monitors[1].waiting[..], &d.monitors[1].notify[..]),
        (&[1][..], &[3][..])
    );
    assert!(!d.monitors[0].lock && d.monitors[2].lock);
    assert_eq!(d.deadlocks, [vec![1, 2]]);
    let report = crate::report::monitor_dump_report(d);
    assert!(
        report.contains("DEADLOCK: thread 1 \"a\" -> thread 2 \"b\" -> thread 1 \"a\""),
        "{report}"
    );
    assert!(
        report.contains("MONITOR p.Lock@1f\n\towner: thread 1 \"a\", entry count: 1"),
        "{report}"
    );
    assert!(
        report.contains(
            "LOCK p.Sync (monitor 3)\n\towner: thread 2 \"b\"\n\twaiting to enter: thread 4\n"
        ),
        "{report}"
    );
    // Anything else inside the dump is an error, as elsewhere.
    let bad = LOCK.replace(
        "<frame name=\"p.A.run()\"/>",
        "<monitor id=\"9\" class=\"x\"/>",
    );
    let e = parse_bytes(bad.as_bytes()).unwrap_err();
    assert!(
        e.message.contains("unexpected <monitor> inside <thread>"),
        "{}",
        e.message
    );
}

/// A snapshot read from a file keeps its trees in the scratch file: read
/// back, they are the nodes a read in memory holds, parents and figures.
#[test]
fn spilled_trees_read_back_as_in_memory() {
    let xml = r#"<doc><sampler>
      <thread name="a" cumulated="9" cumulatedElapsed="12"><profile name="main()" hits="1" elapsed="1">
        <profile name="f()" hits="3" elapsed="5" line="7" frameTypes="c2:300005 inlined:1" selfTypes="c2:5"><profile name="g()" hits="300000" elapsed="0"/></profile>
        <profile name="h()" hits="0" elapsed="2" selfTypes="kernel:1 interpreted:1"/>
      </profile><profile name="other()" hits="2" elapsed="2"/></thread>
      <thread name="b"><profile name="main()" hits="0" elapsed="0"/></thread>
    </sampler><alloc><thread name="c"><profile name="m()" bytes="5" objects="1">
      <profile name="int[]" class="true" bytes="5" objects="1"/></profile></thread></alloc></doc>"#;
    let dir = std::env::temp_dir().join(format!("profrj-spill-{}", std::process::id()));
    std::fs::write(&dir, xml).unwrap();
    let spilled = crate::snapshot::read_file(&dir).unwrap();
    std::fs::remove_file(&dir).unwrap();
    let mem = parse_bytes(xml.as_bytes()).unwrap();
    for (a, b) in spilled.call_sections.iter().zip(&mem.call_sections) {
        assert_eq!(a.threads.len(), b.threads.len());
        for (x, y) in a.threads.iter().zip(&b.threads) {
            let (x, y) = (x.tree.nodes(), y.tree.nodes());
            assert_eq!(x.len(), y.len());
            for (p, q) in x.iter().zip(y.iter()) {
                assert_eq!(
                    (p.name, p.signature, p.parent, p.depth, p.class, p.line, p.v),
                    (q.name, q.signature, q.parent, q.depth, q.class, q.line, q.v)
                );
                assert_eq!(p.types, q.types);
            }
        }
    }
    // The frame types came through the scratch file.
    let t = &spilled.call_sections[0].threads[0];
    let f = t.tree.walk().nth(1).unwrap();
    let c2 = crate::snapshot::type_slot(profrj_format::frame_types::FrameType::C2);
    assert_eq!((f.types.through[c2], f.types.own[c2]), (300_005, 5));
    let h = t.tree.walk().nth(3).unwrap();
    assert_eq!(h.types.own.iter().sum::<u64>(), 2);
    // The frameless samples' node is the last, on the spilled side too.
    let last = t.tree.walk().last().unwrap();
    assert_eq!(spilled.names.get(last.name), NO_JAVA_FRAME);
}

/// `frameTypes`, `selfTypes` and `jvmThread`: read where given, one
/// message naming the attribute when a value is not the format's.
#[test]
fn frame_types_and_jvm_threads() {
    let xml = r#"<doc><sampler><thread name="GC Thread#0" jvmThread="gc" cumulatedElapsed="3"/>
      <thread name="main"><profile name="m()" elapsed="2" frameTypes="c1:2" selfTypes="c1:2"/></thread>
      </sampler></doc>"#;
    let s = parse_bytes(xml.as_bytes()).unwrap();
    let sec = s.calls(CallKind::Sampler).unwrap();
    assert_eq!(
        sec.threads[0].jvm_thread,
        Some(crate::snapshot::JvmThread::Gc)
    );
    assert_eq!(sec.threads[1].jvm_thread, None);
    let m = sec.threads[1].tree.walk().next().unwrap();
    assert!(m.types.any());
    for (bad, said) in [
        (r#"<thread name="t" jvmThread="gcc"/>"#, "jvmThread=\"gcc\""),
        (
            r#"<thread name="t"><profile name="m()" selfTypes="c1:x"/></thread>"#,
            "selfTypes",
        ),
        (
            r#"<thread name="t"><profile name="m()" frameTypes="c9:1"/></thread>"#,
            "frameTypes",
        ),
        (
            r#"<thread name="t"><profile name="m()" frameTypes="c1:1" frameTypes="c1:1"/></thread>"#,
            "twice",
        ),
    ] {
        let e = error(&format!("<doc><sampler>{bad}</sampler></doc>"));
        assert!(e.message.contains(said), "{bad}: {e}");
    }
}

/// profrj's `<branches>`: one token per branching instruction; a snapshot
/// without them reads as before (no branches known).
#[test]
fn coverage_branches() {
    let xml = r#"<doc><coverage><class name="A">
   <method name="f" signature="()V" firstline="12" count="3">
    <footprints>3 -1 1 </footprints>
    <branches>12:3,0 12:5,5 14:1,0,7 -1:0,2</branches>
   </method>
   <method name="g" signature="()V" firstline="20" count="1"><footprints>1 </footprints></method>
</class></coverage></doc>"#;
    let s = parse_bytes(xml.as_bytes()).unwrap();
    let m = &s.coverage.unwrap().classes[0].methods;
    let b = &m[0].branches;
    assert_eq!(b.len(), 4);
    assert_eq!(
        (b[0].line, b[0].outcomes.as_slice()),
        (Some(12), &[3, 0][..])
    );
    assert_eq!(
        (b[2].line, b[2].outcomes.as_slice()),
        (Some(14), &[1, 0, 7][..])
    );
    assert_eq!(b[3].line, None);
    assert!(m[1].branches.is_empty());
    for bad in ["12", "x:1,2", "12:1,-2", "12:", "-3:1,1"] {
        let e = error(&format!(
            "<doc><coverage><class name='c'><method name='m' firstline='1'><branches>{bad}</branches></method></class></coverage></doc>"
        ));
        assert!(e.message.contains("branch"), "{bad}: {e}");
    }
}
