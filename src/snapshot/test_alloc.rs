//! A small `<alloc>` section, written as the agent writes one, that the
//! readers' unit tests share; and the reader's tests on it.
//!
//! Sites: `big()`/`byte[]` 900 bytes, 4 objects (two threads, two call
//! paths); `small()`/`byte[]` and `small()`/`java.lang.String` 200 bytes,
//! 5 objects each; `int[]` with no Java frame below it, 100 bytes, 1 object.
//! In all: 1400 bytes, 15 objects, 9 samples.

use super::{parse_bytes, CallKind, Metric, MetricName, Snapshot};
use crate::snapshot::{method_table, site_table};

pub const ALLOC: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<doc>
 <alloc interval="1024" live="false">
  <thread name="main" cpuTime="5000000" elapsedTime="9000000" isAlive="false" bytes="1100" objects="12" samples="7">
   <profile name="p.A.main()" bytes="0" objects="0" samples="0" cumulatedBytes="1000" cumulatedObjects="11" cumulatedSamples="6">
    <profile name="p.A.big()" bytes="0" objects="0" samples="0" cumulatedBytes="600" cumulatedObjects="1" cumulatedSamples="3">
     <profile name="byte[]" class="true" bytes="600" objects="1" samples="3" cumulatedBytes="600" cumulatedObjects="1" cumulatedSamples="3"/>
    </profile>
    <profile name="p.A.small()" bytes="0" objects="0" samples="0" cumulatedBytes="400" cumulatedObjects="10" cumulatedSamples="3">
     <profile name="byte[]" class="true" bytes="200" objects="5" samples="2" cumulatedBytes="200" cumulatedObjects="5" cumulatedSamples="2"/>
     <profile name="java.lang.String" class="true" bytes="200" objects="5" samples="1" cumulatedBytes="200" cumulatedObjects="5" cumulatedSamples="1"/>
    </profile>
   </profile>
   <profile name="int[]" class="true" bytes="100" objects="1" samples="1" cumulatedBytes="100" cumulatedObjects="1" cumulatedSamples="1"/>
  </thread>
  <thread name="worker" cpuTime="1000000" elapsedTime="2000000" isAlive="true" bytes="300" objects="3" samples="2">
   <profile name="p.B.run()" bytes="0" objects="0" samples="0" cumulatedBytes="300" cumulatedObjects="3" cumulatedSamples="2">
    <profile name="p.A.big()" bytes="0" objects="0" samples="0" cumulatedBytes="300" cumulatedObjects="3" cumulatedSamples="2">
     <profile name="byte[]" class="true" bytes="300" objects="3" samples="2" cumulatedBytes="300" cumulatedObjects="3" cumulatedSamples="2"/>
    </profile>
   </profile>
  </thread>
 </alloc>
</doc>
"#;

pub fn alloc() -> Snapshot {
    parse_bytes(ALLOC.as_bytes()).unwrap()
}

/// The same, `live="true"`.
pub fn live() -> Snapshot {
    parse_bytes(ALLOC.replace("live=\"false\"", "live=\"true\"").as_bytes()).unwrap()
}

pub fn metric(name: &'static str) -> Metric {
    Metric::of(CallKind::Alloc, Some(MetricName(name))).unwrap()
}

#[test]
fn own_and_cumulated_figures_class_frames_and_thread_totals() {
    let s = alloc();
    let sec = s.calls(CallKind::Alloc).unwrap();
    assert!(!sec.live);
    assert_eq!(sec.values, [Some(1024)]);
    assert_eq!(sec.threads.len(), 2);
    let t = &sec.threads[0];
    assert_eq!(
        (t.cpu_time, t.elapsed_time, t.is_alive),
        (Some(5_000_000), Some(9_000_000), Some(false))
    );
    let totals = ["bytes", "objects", "samples"].map(|a| sec.thread_total(t, a));
    assert_eq!(totals, [Some(1100), Some(12), Some(7)]);
    let n = &t.tree.nodes();
    assert_eq!(n.len(), 8);
    assert_eq!((s.names.get(n[1].name), n[1].class), ("p.A.main()", false));
    assert_eq!((s.names.get(n[3].name), n[3].class), ("byte[]", true));
    assert_eq!((n[3].parent, n[3].depth), (2, 3));
    let own = |i: usize| ["bytes", "objects", "samples"].map(|a| sec.value(&n[i], a));
    assert_eq!(own(1), [0, 0, 0]);
    assert_eq!(own(6), [200, 5, 1]);
    assert_eq!(sec.value(&n[1], "cumulatedBytes"), 1000);
    assert_eq!(sec.value(&n[4], "cumulatedObjects"), 10);
    // The int[] frame sits at the root: a class allocated with no Java frame.
    assert_eq!(
        (s.names.get(n[7].name), n[7].class, n[7].depth),
        ("int[]", true, 1)
    );
    // No frameless fill: every event has its class frame.
    assert_eq!(sec.threads[1].tree.nodes().len(), 4);
}

#[test]
fn live_and_other_sections_beside_it() {
    let s = live();
    assert!(s.calls(CallKind::Alloc).unwrap().live);
    let mixed = ALLOC.replace(
        "<doc>",
        "<doc><sampler><thread name=\"t\"><profile name=\"m()\" hits=\"1\" class=\"true\"/></thread></sampler>",
    );
    let s = parse_bytes(mixed.as_bytes()).unwrap();
    assert_eq!(s.call_kinds(), [CallKind::Sampler, CallKind::Alloc]);
    // `class` is no sampler attribute: ignored there.
    let sampler = s.calls(CallKind::Sampler).unwrap();
    assert!(!sampler.threads[0].tree.nodes()[1].class);
    assert_eq!(s.call_section(None).unwrap().kind, CallKind::Sampler);
}

#[test]
fn alloc_attribute_errors() {
    let err = |xml: &str| parse_bytes(xml.as_bytes()).unwrap_err().message;
    let node = |attrs: &str| {
        format!(
            "<doc><alloc><thread name=\"t\"><profile name=\"x\" {attrs}/></thread></alloc></doc>"
        )
    };
    let e = err(&node("class=\"true\" class=\"true\""));
    assert!(e.contains("attribute class twice"), "{e}");
    let e = err(&node("bytes=\"1\" bytes=\"2\""));
    assert!(e.contains("attribute bytes twice"), "{e}");
    let e = err(&node("class=\"yes\""));
    assert!(e.contains("class=\"yes\" is not true or false"), "{e}");
    let e = err(&node("objects=\"-1\""));
    assert!(
        e.contains("objects=\"-1\" is not a non-negative integer"),
        "{e}"
    );
    let e = err("<doc><alloc live=\"maybe\"/></doc>");
    assert!(e.contains("live=\"maybe\""), "{e}");
    let e = err("<doc><alloc interval=\"x\"/></doc>");
    assert!(e.contains("interval=\"x\""), "{e}");
    // Another section's figures mean nothing here: ignored.
    let s = parse_bytes(node("hits=\"5\" bytes=\"7\"").as_bytes()).unwrap();
    let sec = s.calls(CallKind::Alloc).unwrap();
    assert_eq!(sec.value(&sec.threads[0].tree.nodes()[1], "bytes"), 7);
    assert_eq!(sec.threads[0].tree.nodes()[1].v.0.iter().sum::<u64>(), 7);
}

#[test]
fn metrics_of_the_alloc_section() {
    assert_eq!(Metric::of(CallKind::Alloc, None).unwrap().name(), "bytes");
    let e = Metric::of(CallKind::Alloc, Some(MetricName("cpu")))
        .unwrap_err()
        .to_string();
    assert!(e.contains("<alloc> section has no metric cpu"), "{e}");
    assert!(e.contains("objects") && e.contains("bytes"), "{e}");
    assert_eq!(metric("objects").unit(), "objects");
}

/// A class frame is no method row: its weight is the method's own.
#[test]
fn method_table_folds_class_frames_into_their_method() {
    let s = alloc();
    let sec = s.calls(CallKind::Alloc).unwrap();
    let trees: Vec<_> = sec.threads.iter().map(|t| &t.tree).collect();
    let (rows, grand) = method_table(&s.names, &trees, metric("bytes"));
    assert_eq!(grand, 1400);
    let row = |name: &str| {
        let r = rows.iter().find(|r| r.name == name).unwrap();
        (r.own, r.total)
    };
    assert_eq!(rows[0].name, "p.A.big()");
    assert_eq!(row("p.A.big()"), (900, 900));
    assert_eq!(row("p.A.small()"), (400, 400));
    assert_eq!(row("p.A.main()"), (0, 1000));
    assert_eq!(row("p.B.run()"), (0, 300));
    // At a root, with no method below it, the class stays a row.
    assert_eq!(row("int[]"), (100, 100));
    assert!(rows.iter().all(|r| r.name != "byte[]"));
}

#[test]
fn sites_merge_call_paths_and_threads() {
    let s = alloc();
    let sec = s.calls(CallKind::Alloc).unwrap();
    let trees: Vec<_> = sec.threads.iter().map(|t| &t.tree).collect();
    let (rows, grand) = site_table(&s.names, &trees, metric("bytes"));
    // In the section's metric order: objects, bytes, samples.
    assert_eq!(grand, [15, 1400, 9]);
    let got: Vec<(&str, &str, &[u64])> = rows
        .iter()
        .map(|r| (r.method.as_str(), r.class.as_str(), r.values.as_slice()))
        .collect();
    assert_eq!(
        got,
        [
            ("p.A.big()", "byte[]", &[4, 900, 5][..]),
            ("p.A.small()", "byte[]", &[5, 200, 2][..]),
            ("p.A.small()", "java.lang.String", &[5, 200, 1][..]),
            (super::parse::NO_JAVA_FRAME, "int[]", &[1, 100, 1][..]),
        ]
    );
    let (rows, _) = site_table(&s.names, &trees, metric("objects"));
    assert_eq!(
        (rows[2].method.as_str(), rows[2].values[0]),
        ("p.A.big()", 4)
    );
}
