//! The `<sites>` section (profrj's own, beside `<memory>`): per allocating
//! thread, each allocation site as a two-frame path shaped like `<alloc>`'s:
//! the method and line, then the allocated class (`class="true"`) with the
//! objects alive (`count`), the most ever alive at once (`max`) and the
//! objects ever made there (`allocated`), exact.
//! Most alive first, at both levels.

use super::SiteRow;
use crate::snapshot::XmlWriter;
use crate::threads::ThreadRecord;
use profrj_format::sites::{self as f, node, thread};
use quick_xml::events::{BytesEnd, BytesStart, Event};
use std::collections::BTreeMap;
use std::io;

pub fn write_sites(
    w: &mut XmlWriter,
    rows: &[SiteRow],
    threads: &[ThreadRecord],
) -> io::Result<()> {
    w.write_event(Event::Start(BytesStart::new(f::SECTION)))?;
    // thread → place → its rows
    let mut by_thread: BTreeMap<i64, BTreeMap<&str, Vec<&SiteRow>>> = BTreeMap::new();
    for r in rows {
        let places = by_thread.entry(r.thread).or_default();
        places.entry(r.place.as_str()).or_default().push(r);
    }
    for (thread, places) in by_thread {
        let name = super::section::thread_name(threads, thread);
        let mut el = BytesStart::new(f::THREAD);
        el.push_attribute((thread::NAME, crate::xml::name(name).as_ref()));
        crate::xml::push_virtual_threads(&mut el, super::section::record(threads, thread));
        w.write_event(Event::Start(el))?;
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
        for (place, rows, sum) in places {
            w.write_event(Event::Start(frame(place, false, [0; 3], sum)))?;
            for r in rows {
                let own = figures(r);
                w.write_event(Event::Empty(frame(&r.class, true, own, own)))?;
            }
            w.write_event(Event::End(BytesEnd::new(f::NODE)))?;
        }
        w.write_event(Event::End(BytesEnd::new(f::THREAD)))?;
    }
    w.write_event(Event::End(BytesEnd::new(f::SECTION)))?;
    Ok(())
}

/// (count, max, allocated).
type Figures = [i64; 3];

fn figures(r: &SiteRow) -> Figures {
    [r.count, r.max, r.allocated]
}

/// A node: its own figures and its cumulated ones.
fn frame(name: &str, class: bool, own: Figures, all: Figures) -> BytesStart<'static> {
    let mut el = BytesStart::new(f::NODE);
    el.push_attribute((node::NAME, crate::xml::name(name).as_ref()));
    if class {
        el.push_attribute((node::CLASS, profrj_format::TRUE));
    }
    let attrs = [
        (node::COUNT, own[0]),
        (node::MAX, own[1]),
        (node::ALLOCATED, own[2]),
        (node::CUMULATED_COUNT, all[0]),
        (node::CUMULATED_MAX, all[1]),
        (node::CUMULATED_ALLOCATED, all[2]),
    ];
    for (name, v) in attrs {
        el.push_attribute((name, v.to_string().as_str()));
    }
    el
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of a small section, pinned.
    #[test]
    fn bytes_of_a_small_section() {
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
        let threads = vec![ThreadRecord {
            name: "main".into(),
            start_ns: 0,
            end_ns: None,
            cpu_ns: 0,
            tid: 0,
            virtual_threads: 0,
            virtual_ended: 0,
        }];
        let text = crate::snapshot::written("sites-bytes", |w| write_sites(w, &rows, &threads));
        assert_eq!(
            text,
            r#"<?xml version="1.0" encoding="UTF-8"?>
<doc>
 <sites>
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
