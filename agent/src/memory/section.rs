//! The `<memory>` section: per allocating thread, one row per type with the
//! objects alive now (`count`) and the most ever alive at once (`max`),
//! most alive first.

use super::Row;
use crate::snapshot::XmlWriter;
use crate::threads::ThreadRecord;
use quick_xml::events::{BytesEnd, BytesStart, Event};
use std::collections::BTreeMap;
use std::io;

pub fn write_section(w: &mut XmlWriter, rows: &[Row], threads: &[ThreadRecord]) -> io::Result<()> {
    w.write_event(Event::Start(BytesStart::new("memory")))?;
    let mut by_thread: BTreeMap<i64, Vec<&Row>> = BTreeMap::new();
    for r in rows {
        by_thread.entry(r.thread).or_default().push(r);
    }
    for (thread, mut rows) in by_thread {
        rows.sort_by(|a, b| (b.count, b.max, &a.class).cmp(&(a.count, a.max, &b.class)));
        let name = usize::try_from(thread)
            .ok()
            .and_then(|t| threads.get(t))
            .map_or("(unknown)", |r| r.name.as_str());
        let mut el = BytesStart::new("thread");
        el.push_attribute(("name", crate::xml::name(name).as_ref()));
        w.write_event(Event::Start(el))?;
        for r in rows {
            let mut el = BytesStart::new("memory");
            el.push_attribute(("class", crate::xml::name(&r.class).as_ref()));
            el.push_attribute(("count", r.count.to_string().as_str()));
            el.push_attribute(("max", r.max.to_string().as_str()));
            w.write_event(Event::Empty(el))?;
        }
        w.write_event(Event::End(BytesEnd::new("thread")))?;
    }
    w.write_event(Event::End(BytesEnd::new("memory")))?;
    Ok(())
}
