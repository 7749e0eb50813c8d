//! The allocation traces of the agent's dumps: the check, that it fails on
//! HotSpot's dump (no allocation traces), and that it passes on the traces
//! the agent is to write and fails when one thing in them is off.

use crate::common::harness_line;
use crate::common::heap_readers::{Frame, Object, ReaderView, Trace};
use crate::hotspot;
use crate::truth::*;
use std::collections::{BTreeMap, BTreeSet};

/// The check of the agent's traces, on a dump without them (every object
/// on HotSpot's empty trace): it must fail, or it proves nothing.
#[test]
fn allocation_trace_check_fails_on_hotspots_dump() {
    let shark = &hotspot().shark;
    let serials: BTreeSet<Option<u32>> = shark.objects.values().map(|o| o.trace).collect();
    assert_eq!(
        serials,
        BTreeSet::from([Some(1)]),
        "HotSpot gives every object trace 1"
    );
    assert!(shark.trace(1).frames.is_empty());
    let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        assert_allocation_traces(shark, "HeapTruth")
    }));
    let message = failed.expect_err("the trace check passed on a dump with no allocation traces");
    let text = message
        .downcast_ref::<String>()
        .map(String::as_str)
        .unwrap_or_default();
    assert!(
        text.contains("has 0 frames"),
        "failed for another reason: {text}"
    );
}

/// The trace check passes on what the agent is to write (Shark's view of
/// HotSpot's dump with each site's objects put on a trace of one frame, at
/// their site, on their thread's serial), and fails when one thing is off.
#[test]
fn allocation_trace_check_passes_on_the_traces_the_agent_is_to_write() {
    let shark = &hotspot().shark;
    assert_allocation_traces(&with_site_traces(shark, |_| {}), "HeapTruth");
    let spoilt: [(&str, Spoil); 3] = [
        ("leaf-b on heap-a's serial", |t| {
            t.get_mut("leaf-b").unwrap().thread = t["leaf-a"].thread
        }),
        ("holder one line off", |t| {
            t.get_mut("holder").unwrap().frames[0].line += 1
        }),
        ("ints with its caller's frame", |t| {
            let caller = t["leaves"].frames[0].clone();
            t.get_mut("ints").unwrap().frames.push(caller)
        }),
    ];
    for (what, spoil) in spoilt {
        let view = with_site_traces(shark, spoil);
        let failed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            assert_allocation_traces(&view, "HeapTruth")
        }));
        assert!(failed.is_err(), "the trace check passed with {what}");
    }
}

/// A change to the sites' traces (by marker) that the check must catch.
type Spoil = fn(&mut BTreeMap<&str, Trace>);

/// `v` with each site's objects on a new trace of their own site (one frame,
/// the thread serial of the site's thread), after `spoil` has changed those.
fn with_site_traces(v: &ReaderView, spoil: Spoil) -> ReaderView {
    let mut v = v.clone();
    let first = v.traces.iter().filter_map(|t| t.serial).max().unwrap() + 1;
    let mut traces: BTreeMap<&str, Trace> = BTreeMap::new();
    for (k, site) in SITES.iter().enumerate() {
        let thread = v.thread_serial(site.thread);
        let frame = Frame {
            class: MAIN.into(),
            method: site.method.into(),
            file: "HeapTruth.java".into(),
            line: harness_line("HeapTruth", &format!("// SITE {}", site.marker)) as i32,
        };
        let serial = Some(first + k as u32);
        traces.insert(
            site.marker,
            Trace {
                serial,
                thread,
                frames: vec![frame],
            },
        );
    }
    spoil(&mut traces);
    for site in &SITES {
        for o in v.objects.values_mut().filter(|o| o.class == site.class) {
            if (site.ours)(o) {
                o.trace = traces[site.marker].serial;
            }
        }
    }
    v.traces.extend(traces.into_values());
    v
}

/// Where HeapTruth made what, as its `// SITE` comments mark it.
struct Site {
    marker: &'static str,
    class: &'static str,
    /// The method the allocation is in, and the thread that ran it.
    method: &'static str,
    thread: &'static str,
    count: u64,
    /// Which objects of `class` are this site's.
    ours: fn(&Object) -> bool,
}

const SITES: [Site; 6] = [
    Site {
        marker: "leaf-a",
        class: LEAF,
        method: "buildA",
        thread: "heap-a",
        count: N_A,
        ours: |o| o.field("weight").int() - o.field("index").int() == WEIGHT_A,
    },
    Site {
        marker: "leaf-b",
        class: LEAF,
        method: "buildB",
        thread: "heap-b",
        count: N_B,
        ours: |o| o.field("weight").int() - o.field("index").int() == WEIGHT_B,
    },
    Site {
        marker: "ints",
        class: "int[]",
        method: "buildA",
        thread: "heap-a",
        count: N_INTS,
        ours: |o| o.elements() == int_contents(),
    },
    Site {
        marker: "bytes",
        class: "byte[]",
        method: "buildB",
        thread: "heap-b",
        count: N_BYTES,
        ours: |o| o.elements() == byte_contents(),
    },
    Site {
        marker: "leaves",
        class: LEAF_ARRAY,
        method: "buildMain",
        thread: "main",
        count: 1,
        ours: |_| true,
    },
    Site {
        marker: "holder",
        class: HOLDER,
        method: "buildMain",
        thread: "main",
        count: DEPTH,
        ours: |_| true,
    },
];

/// The allocation traces the agent's dump gives each object it followed, as
/// `v` (a reader that exposes each object's trace) read them: for each
/// `// SITE` of harness program `source`, each of its objects on a trace of
/// one frame, `source`'s method at that line of `source`.java, and on no
/// other object of its class; the site's count of them; every trace of a
/// site on its allocating thread's serial, which the dump's thread roots
/// name, so the sites of two threads never share one.
pub fn assert_allocation_traces(v: &ReaderView, source: &str) {
    assert_traces_where(v, source, |_| Check::Traced)
}

/// What a site's objects must show.
pub enum Check {
    /// Their allocation trace ([`assert_allocation_traces`]).
    Traced,
    /// The empty trace, as in HotSpot's own dumps (the agent says it
    /// cannot follow them there).
    Untraced,
    /// Nothing checked (a dump of every object holds garbage that looks
    /// like them).
    Skip,
}

/// As [`assert_allocation_traces`] for the sites `traced` accepts (by
/// marker); every object of the other sites must be on an empty trace.
pub fn assert_traces_of(v: &ReaderView, source: &str, traced: fn(&str) -> bool) {
    assert_traces_where(v, source, |m| match traced(m) {
        true => Check::Traced,
        false => Check::Untraced,
    })
}

/// Each site checked as `check` says of its marker.
pub fn assert_traces_where(v: &ReaderView, source: &str, check: impl Fn(&str) -> Check) {
    let r = v.reader;
    assert!(v.object_traces, "{r} exposes no object's trace");
    let class = format!("profrj.harness.{source}");
    let file = format!("{source}.java");
    let mut thread_serials: BTreeMap<&str, u32> = BTreeMap::new();
    for site in &SITES {
        let how = check(site.marker);
        if matches!(how, Check::Skip) {
            continue;
        }
        if matches!(how, Check::Untraced) {
            for o in v
                .objects_of(site.class)
                .into_iter()
                .filter(|o| (site.ours)(o))
            {
                let serial = o
                    .trace
                    .unwrap_or_else(|| panic!("{r}: {} has no trace", o.id));
                assert!(
                    v.trace(serial).frames.is_empty(),
                    "{r}: {}: object {} has frames, though the agent cannot follow it",
                    site.marker,
                    o.id
                );
            }
            continue;
        }
        let line = harness_line(source, &format!("// SITE {}", site.marker)) as i32;
        let want = Frame {
            class: class.clone(),
            method: site.method.into(),
            file: file.clone(),
            line,
        };
        let mut on_site = 0;
        let mut threads = BTreeSet::new();
        for o in v.objects_of(site.class) {
            let ours = (site.ours)(o);
            let serial = o
                .trace
                .unwrap_or_else(|| panic!("{r}: object {} has no trace serial", o.id));
            let trace = v.trace(serial);
            if ours {
                assert_eq!(
                    trace.frames.len(),
                    1,
                    "{r}: {}: object {} ({}) is on trace {serial}, which has {} frames, not its allocating method's one",
                    site.marker,
                    o.id,
                    o.class,
                    trace.frames.len()
                );
                threads.insert(trace.thread);
            }
            if trace.frames.first() == Some(&want) {
                assert!(
                    ours,
                    "{r}: object {} ({}) on site {}'s trace",
                    o.id, o.class, site.marker
                );
                on_site += 1;
            } else {
                assert!(
                    !ours,
                    "{r}: {}: object {} is on trace {serial}: {:?}, not at {want:?}",
                    site.marker, o.id, trace.frames
                );
            }
        }
        assert_eq!(
            on_site, site.count,
            "{r}: objects on site {}'s trace",
            site.marker
        );
        let [serial] = threads.iter().copied().collect::<Vec<_>>()[..] else {
            panic!(
                "{r}: site {}'s traces are on threads {threads:?}, not one",
                site.marker
            );
        };
        assert_eq!(
            v.threads.get(&serial).map(String::as_str),
            Some(site.thread),
            "{r}: site {}'s thread serial {serial}",
            site.marker
        );
        let known = *thread_serials.entry(site.thread).or_insert(serial);
        assert_eq!(known, serial, "{r}: {} on two serials", site.thread);
    }
    let serials: BTreeSet<&u32> = thread_serials.values().collect();
    assert_eq!(
        serials.len(),
        thread_serials.len(),
        "{r}: threads share a serial: {thread_serials:?}"
    );
}
