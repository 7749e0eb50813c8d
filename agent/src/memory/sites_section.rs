//! The `<sites>` section (profrj's own, beside `<memory>`): per allocating
//! thread, each allocation site as a two-frame path shaped like `<alloc>`'s:
//! the method and line, then the allocated class (`class="true"`) with the
//! objects alive (`count`) and the most ever alive at once (`max`), exact.
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
        let name = usize::try_from(thread)
            .ok()
            .and_then(|t| threads.get(t))
            .map_or("(unknown)", |r| r.name.as_str());
        let mut el = BytesStart::new(f::THREAD);
        el.push_attribute((thread::NAME, crate::xml::name(name).as_ref()));
        w.write_event(Event::Start(el))?;
        let mut places: Vec<(&str, Vec<&SiteRow>, (i64, i64))> = places
            .into_iter()
            .map(|(p, mut rows)| {
                rows.sort_by(|a, b| (b.count, b.max, &a.class).cmp(&(a.count, a.max, &b.class)));
                let sum = rows
                    .iter()
                    .fold((0, 0), |(c, m), r| (c + r.count, m + r.max));
                (p, rows, sum)
            })
            .collect();
        places.sort_by(|a, b| (b.2, a.0).cmp(&(a.2, b.0)));
        for (place, rows, (count, max)) in places {
            w.write_event(Event::Start(frame(place, false, (0, 0), (count, max))))?;
            for r in rows {
                let el = frame(&r.class, true, (r.count, r.max), (r.count, r.max));
                w.write_event(Event::Empty(el))?;
            }
            w.write_event(Event::End(BytesEnd::new(f::NODE)))?;
        }
        w.write_event(Event::End(BytesEnd::new(f::THREAD)))?;
    }
    w.write_event(Event::End(BytesEnd::new(f::SECTION)))?;
    Ok(())
}

/// A node: its own (count, max) and its cumulated ones.
fn frame(name: &str, class: bool, own: (i64, i64), all: (i64, i64)) -> BytesStart<'static> {
    let mut el = BytesStart::new(f::NODE);
    el.push_attribute((node::NAME, crate::xml::name(name).as_ref()));
    if class {
        el.push_attribute((node::CLASS, profrj_format::TRUE));
    }
    el.push_attribute((node::COUNT, own.0.to_string().as_str()));
    el.push_attribute((node::MAX, own.1.to_string().as_str()));
    el.push_attribute((node::CUMULATED_COUNT, all.0.to_string().as_str()));
    el.push_attribute((node::CUMULATED_MAX, all.1.to_string().as_str()));
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
        }];
        let text = crate::snapshot::written("sites-bytes", |w| write_sites(w, &rows, &threads));
        assert_eq!(
            text,
            r#"<?xml version="1.0" encoding="UTF-8"?>
<doc>
 <sites>
  <thread name="(unknown)">
   <profile name="[VM or JNI]" count="0" max="0" cumulatedCount="2" cumulatedMax="2">
    <profile name="java.lang.Object" class="true" count="2" max="2" cumulatedCount="2" cumulatedMax="2"/>
   </profile>
  </thread>
  <thread name="main">
   <profile name="p.A():9" count="0" max="0" cumulatedCount="7" cumulatedMax="7">
    <profile name="p.A&lt;&amp;&gt;" class="true" count="7" max="7" cumulatedCount="7" cumulatedMax="7"/>
   </profile>
   <profile name="p.A.m():3" count="0" max="0" cumulatedCount="3" cumulatedMax="7">
    <profile name="p.B" class="true" count="2" max="2" cumulatedCount="2" cumulatedMax="2"/>
    <profile name="int[]" class="true" count="1" max="5" cumulatedCount="1" cumulatedMax="5"/>
   </profile>
  </thread>
 </sites>
</doc>
"#
        );
    }
}
