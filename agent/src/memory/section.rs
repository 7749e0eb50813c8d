//! The `<memory>` section: per allocating thread, one row per type with the
//! objects alive now (`count`) and the most ever alive at once (`max`),
//! most alive first.

use super::Row;
use crate::snapshot::XmlWriter;
use crate::threads::ThreadRecord;
use profrj_format::memory::{self as f, row, thread};
use quick_xml::events::{BytesEnd, BytesStart, Event};
use std::collections::BTreeMap;
use std::io;

/// The name of the thread with agent id `id` (`-1`: one the agent does not
/// know).
pub fn thread_name(threads: &[ThreadRecord], id: i64) -> &str {
    record(threads, id).map_or("(unknown)", |r| r.name.as_str())
}

/// The record of the thread with agent id `id`, if known.
pub fn record(threads: &[ThreadRecord], id: i64) -> Option<&ThreadRecord> {
    usize::try_from(id).ok().and_then(|t| threads.get(t))
}

pub fn write_section(w: &mut XmlWriter, rows: &[Row], threads: &[ThreadRecord]) -> io::Result<()> {
    w.write_event(Event::Start(BytesStart::new(f::SECTION)))?;
    let mut by_thread: BTreeMap<i64, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        by_thread.entry(r.thread).or_default().push(r);
    }
    for (thread, mut rows) in by_thread {
        rows.sort_by(|a, b| (b.count, b.max, &a.class).cmp(&(a.count, a.max, &b.class)));
        let name = thread_name(threads, thread);
        let mut el = BytesStart::new(f::THREAD);
        el.push_attribute((thread::NAME, crate::xml::name(name).as_ref()));
        crate::xml::push_virtual_threads(&mut el, record(threads, thread));
        w.write_event(Event::Start(el))?;
        for r in rows {
            let mut el = BytesStart::new(f::ROW);
            el.push_attribute((row::CLASS, crate::xml::name(&r.class).as_ref()));
            el.push_attribute((row::COUNT, r.count.to_string().as_str()));
            el.push_attribute((row::MAX, r.max.to_string().as_str()));
            w.write_event(Event::Empty(el))?;
        }
        w.write_event(Event::End(BytesEnd::new(f::THREAD)))?;
    }
    w.write_event(Event::End(BytesEnd::new(f::SECTION)))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bytes of a small section, pinned (the names are `profrj_format`'s,
    /// the layout the contract's; a change here changes the format).
    #[test]
    fn bytes_of_a_small_section() {
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
        let threads = vec![ThreadRecord {
            name: "main".into(),
            start_ns: 0,
            end_ns: None,
            cpu_ns: 0,
            tid: 0,
            virtual_threads: 0,
            virtual_ended: 0,
        }];
        let text = crate::snapshot::written("memory-bytes", |w| write_section(w, &rows, &threads));
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
}
