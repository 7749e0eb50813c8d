//! What `memory` hands a snapshot: per allocating thread, one row per type
//! with the objects alive now and the most ever alive at once, most alive
//! first (`<memory>`); and per thread each allocation site as a two-frame
//! path, the method and line, then the allocated class with its objects
//! alive, most alive at once and ever made there, most alive first at both
//! levels (`<sites>`, profrj's own, written after the contract's sections).

use super::{CensusCost, CounterUse, Row, SiteRow};
use crate::model::{CallTrees, Frame, Part, Rows, Section, ThreadTree, Unit, Value, Weight};
use crate::threads::ThreadId;
use std::collections::BTreeMap;

/// The agent's thread id as the model's (`-1`: a thread it does not know).
fn thread(id: i64) -> Option<ThreadId> {
    u32::try_from(id).ok().map(ThreadId)
}

/// The `memory` section: rows by thread (in id order, unknown first).
pub fn rows(rows: &[Row]) -> Section {
    let mut by_thread: BTreeMap<i64, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        by_thread.entry(r.thread).or_default().push(r);
    }
    let threads = by_thread
        .into_iter()
        .map(|(id, mut rows)| {
            rows.sort_by(|a, b| (b.count, b.max, &a.class).cmp(&(a.count, a.max, &b.class)));
            let rows = rows
                .into_iter()
                .map(|r| crate::model::Row {
                    key: r.class.clone(),
                    values: vec![r.count, r.max],
                })
                .collect();
            (thread(id), rows)
        })
        .collect();
    Section {
        name: profrj_format::memory::SECTION,
        extra: false,
        attributes: Vec::new(),
        parts: vec![Part::Rows(Rows {
            key: profrj_format::memory::row::CLASS,
            columns: vec![
                Weight::own("live", Unit::Count),
                Weight::own("max_live", Unit::Count),
            ],
            threads,
        })],
    }
}

/// (live, max live, allocated).
type Figures = [i64; 3];

fn figures(r: &SiteRow) -> Figures {
    [r.count, r.max, r.allocated]
}

/// The `sites` section: per thread (in id order, unknown first), each place
/// with the sums of its sites, then its classes; what the censuses cost as
/// its attributes (none before the first census: no stamp to count).
pub fn sites(rows: &[SiteRow], censuses: &CensusCost, counters: &CounterUse) -> Section {
    let weights = ["live", "max_live", "allocated"];
    let mut trees = CallTrees {
        period: None,
        weights: weights
            .iter()
            .map(|w| Weight::own(w, Unit::Count))
            .chain(weights.iter().map(|w| Weight::total(w, Unit::Count)))
            .collect(),
        frames: Vec::new(),
        threads: Vec::new(),
    };
    // thread → place → its rows
    let mut by_thread: BTreeMap<i64, BTreeMap<&str, Vec<&SiteRow>>> = BTreeMap::new();
    for r in rows {
        let places = by_thread.entry(r.thread).or_default();
        places.entry(r.place.as_str()).or_default().push(r);
    }
    for (id, places) in by_thread {
        let mut places: Vec<(&str, Vec<&SiteRow>, Figures)> = places
            .into_iter()
            .map(|(p, mut rows)| {
                rows.sort_by_key(|r| (std::cmp::Reverse(figures(r)), r.class.as_str()));
                let sum = rows.iter().fold([0; 3], |s, r| {
                    [s[0] + r.count, s[1] + r.max, s[2] + r.allocated]
                });
                (p, rows, sum)
            })
            .collect();
        places.sort_by(|a, b| (b.2, a.0).cmp(&(a.2, b.0)));
        let mut tree = ThreadTree::new(thread(id), vec![0; 6]);
        for (place, rows, sum) in places {
            let frame = trees.frames.len() as u32;
            trees.frames.push(Frame::method(place));
            tree.push(frame, 1, &values([0; 3], sum));
            for r in rows {
                let frame = trees.frames.len() as u32;
                trees.frames.push(Frame {
                    name: r.class.as_str().into(),
                    class: true,
                    descriptor: None,
                    line: None,
                });
                tree.push(frame, 2, &values(figures(r), figures(r)));
            }
        }
        trees.threads.push(tree);
    }
    use profrj_format::sites as f;
    let c = censuses;
    let mut attributes = match c.censuses {
        0 => Vec::new(),
        _ => vec![
            (f::CENSUS_PAUSE, Value::Number(c.last_ns)),
            (f::CENSUSES, Value::Number(c.censuses)),
            (f::CENSUS_PAUSES, Value::Number(c.total_ns)),
            (f::LONGEST_CENSUS_PAUSE, Value::Number(c.longest_ns)),
            (f::CENSUSES_SKIPPED, Value::Number(c.skipped)),
        ],
    };
    attributes.push((f::COUNTERS, Value::Number(counters.held)));
    attributes.push((f::COUNTERS_GIVEN_BACK, Value::Number(counters.given_back)));
    Section {
        name: profrj_format::sites::SECTION,
        extra: true,
        attributes,
        parts: vec![Part::Trees(trees)],
    }
}

/// A node's values: its own figures, then its cumulated ones.
fn values(own: Figures, all: Figures) -> [u64; 6] {
    let n = |v: i64| v.max(0) as u64;
    [
        n(own[0]),
        n(own[1]),
        n(own[2]),
        n(all[0]),
        n(all[1]),
        n(all[2]),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::threads::ThreadRecord;

    fn main_thread() -> Vec<ThreadRecord> {
        vec![ThreadRecord::named("main")]
    }

    /// The bytes of a small section, pinned (the names are `profrj_format`'s,
    /// the layout the contract's; a change here changes the format).
    #[test]
    fn bytes_of_a_small_memory_section() {
        let row = |thread, class: &str, count, max| Row {
            thread,
            class: class.into(),
            count,
            max,
        };
        let rows = [
            row(0, "int[]", 1, 5),
            row(0, "p.A<&>", 3, 3),
            row(-1, "java.lang.Object", 2, 2),
        ];
        let threads = main_thread();
        let text = crate::xml::to_text(&threads, (0, 0), vec![super::rows(&rows)]);
        assert_eq!(
            text,
            r#"<?xml version="1.0" encoding="UTF-8"?>
<doc>
 <memory>
  <thread name="(unknown)">
   <memory class="java.lang.Object" count="2" max="2"/>
  </thread>
  <thread name="main">
   <memory class="p.A&lt;&amp;&gt;" count="3" max="3"/>
   <memory class="int[]" count="1" max="5"/>
  </thread>
 </memory>
</doc>
"#
        );
    }

    /// The bytes of a small `<sites>` section, pinned.
    #[test]
    fn bytes_of_a_small_sites_section() {
        let row = |thread, place: &str, class: &str, count, max| SiteRow {
            thread,
            place: place.into(),
            class: class.into(),
            count,
            max,
            allocated: max + 1,
        };
        let rows = [
            row(0, "p.A.m():3", "int[]", 1, 5),
            row(0, "p.A.m():3", "p.B", 2, 2),
            row(0, "p.A():9", "p.A<&>", 7, 7),
            row(-1, "[VM or JNI]", "java.lang.Object", 2, 2),
        ];
        let threads = main_thread();
        let censuses = CensusCost {
            last_ns: 75_000_000,
            censuses: 3,
            total_ns: 200_000_000,
            longest_ns: 80_000_000,
            skipped: 1,
        };
        let counters = CounterUse {
            held: 12,
            given_back: 3,
        };
        let text = crate::xml::to_text(&threads, (0, 0), vec![sites(&rows, &censuses, &counters)]);
        assert_eq!(
            text,
            r#"<?xml version="1.0" encoding="UTF-8"?>
<doc>
 <sites censusPause="75000000" censuses="3" censusPauses="200000000" longestCensusPause="80000000" censusesSkipped="1" counters="12" countersGivenBack="3">
  <thread name="(unknown)">
   <profile name="[VM or JNI]" count="0" max="0" allocated="0" cumulatedCount="2" cumulatedMax="2" cumulatedAllocated="3">
    <profile name="java.lang.Object" class="true" count="2" max="2" allocated="3" cumulatedCount="2" cumulatedMax="2" cumulatedAllocated="3"/>
   </profile>
  </thread>
  <thread name="main">
   <profile name="p.A():9" count="0" max="0" allocated="0" cumulatedCount="7" cumulatedMax="7" cumulatedAllocated="8">
    <profile name="p.A&lt;&amp;&gt;" class="true" count="7" max="7" allocated="8" cumulatedCount="7" cumulatedMax="7" cumulatedAllocated="8"/>
   </profile>
   <profile name="p.A.m():3" count="0" max="0" allocated="0" cumulatedCount="3" cumulatedMax="7" cumulatedAllocated="9">
    <profile name="p.B" class="true" count="2" max="2" allocated="3" cumulatedCount="2" cumulatedMax="2" cumulatedAllocated="3"/>
    <profile name="int[]" class="true" count="1" max="5" allocated="6" cumulatedCount="1" cumulatedMax="5" cumulatedAllocated="6"/>
   </profile>
  </thread>
 </sites>
</doc>
"#
        );
    }
}
