//! The three readers against each other on one dump.

use crate::common::heap_readers::{Frame, Object, ReaderView, Trace};
use crate::truth::{MAIN, NAMED};
use crate::{hotspot, Read};
use std::collections::BTreeSet;

#[test]
fn readers_agree_on_hotspots_dump() {
    let r = hotspot();
    assert_readers_agree(r);
    // HotSpot's traces are its threads' stacks at the dump: heap-a's and
    // heap-b's end in the builders' lambda, main's in HeapTruth.main.
    let names: BTreeSet<&str> = r.shark.threads.values().map(String::as_str).collect();
    for t in ["main", "heap-a", "heap-b"] {
        assert!(names.contains(t), "no thread root names {t}: {names:?}");
    }
    let main_stack = thread_stack(&r.shark, "main");
    assert_eq!(main_stack.last().unwrap().method, "main", "{main_stack:?}");
    assert_eq!(main_stack.last().unwrap().class, MAIN, "{main_stack:?}");
}

/// The readers against each other: the same classes, each with the same
/// count (on HotSpot's dumps of JDK 11 to 25 they agree on every class,
/// hidden ones included); Shark's and NetBeans' objects the same, field by
/// field and element by element, and their element totals; Shark's and
/// hprof-slurp's stack traces the same. Never sizes: readers may disagree on
/// a shallow size.
pub fn assert_readers_agree(r: &Read) {
    let views = [&r.shark, &r.netbeans, &r.slurp];
    let all: BTreeSet<&String> = views.iter().flat_map(|v| v.counts.keys()).collect();
    let differ: Vec<String> = all
        .iter()
        .map(|c| (c, views.map(|v| v.counts.get(*c).copied())))
        .filter(|(_, n)| n.iter().any(|k| *k != n[0]))
        .map(|(c, n)| format!("{c}: {n:?}"))
        .collect();
    assert!(
        differ.is_empty(),
        "the readers' counts differ (shark, netbeans, hprof-slurp):\n{}",
        differ.join("\n")
    );
    for class in NAMED {
        assert!(r.shark.counts.contains_key(class), "no {class} read");
    }

    assert_eq!(r.shark.elements, r.netbeans.elements, "array elements");
    let ids: BTreeSet<&u64> = r
        .shark
        .objects
        .keys()
        .chain(r.netbeans.objects.keys())
        .collect();
    for id in ids {
        let (Some(s), Some(n)) = (r.shark.objects.get(id), r.netbeans.objects.get(id)) else {
            panic!("object {id} read by one reader only");
        };
        let fields = |o: &Object| o.fields.iter().cloned().collect::<BTreeSet<_>>();
        assert_eq!(
            (&s.class, fields(s), &s.elements),
            (&n.class, fields(n), &n.elements),
            "object {id}: shark, netbeans"
        );
    }

    // hprof-slurp shows the traces that have frames, without their serials.
    let framed = |v: &ReaderView| -> Vec<(u32, Vec<Frame>)> {
        let mut t: Vec<_> = v
            .traces
            .iter()
            .filter(|t| !t.frames.is_empty())
            .map(|t| (t.thread, t.frames.clone()))
            .collect();
        t.sort();
        t
    };
    assert_eq!(
        framed(&r.shark),
        framed(&r.slurp),
        "traces: shark, hprof-slurp"
    );
}

/// The frames of the stack trace of the thread named `name` (its thread
/// root's serial is the trace's thread serial).
pub fn thread_stack<'v>(v: &'v ReaderView, name: &str) -> &'v [Frame] {
    let serial = v.thread_serial(name);
    let traces: Vec<&Trace> = v.traces.iter().filter(|t| t.thread == serial).collect();
    let [trace] = traces[..] else {
        panic!("thread {name} ({serial}) has {} traces", traces.len());
    };
    &trace.frames
}
