//! Sections of rows (`<memory>`: per thread, one row per class) and
//! `<lock>`'s monitor dump.

use super::XmlWriter;
use crate::escape::attribute;
use crate::model::{MonitorDump, Rows, Snapshot};
use profrj_format::lock::dump as f;
use quick_xml::events::{BytesEnd, BytesStart, Event};
use std::io::{self, Write};

/// Per thread a `<thread name=…>` with one empty element per row, named
/// like the section, its key and columns as attributes.
pub fn write_rows<W: Write>(
    w: &mut XmlWriter<W>,
    snapshot: &Snapshot,
    section: &str,
    rows: &Rows,
) -> io::Result<()> {
    use profrj_format::memory::thread;
    let columns: Vec<&str> = rows
        .columns
        .iter()
        .map(|c| column(section, c.name))
        .collect();
    for (id, list) in &rows.threads {
        let mut el = BytesStart::new(profrj_format::memory::THREAD);
        let name = super::thread_name(snapshot, *id);
        el.push_attribute((thread::NAME, super::name(name).as_ref()));
        super::push_virtual_threads(&mut el, snapshot, *id);
        w.write_event(Event::Start(el))?;
        for r in list {
            let mut el = BytesStart::new(section);
            el.push_attribute((rows.key, super::name(&r.key).as_ref()));
            for (c, v) in columns.iter().zip(&r.values) {
                el.push_attribute((*c, v.to_string().as_str()));
            }
            w.write_event(Event::Empty(el))?;
        }
        w.write_event(Event::End(BytesEnd::new(profrj_format::memory::THREAD)))?;
    }
    Ok(())
}

/// A column's attribute: `<memory>`'s names, else the weight's own.
fn column<'a>(section: &str, weight: &'a str) -> &'a str {
    use profrj_format::memory::row;
    match (section, weight) {
        (profrj_format::memory::SECTION, "live") => row::COUNT,
        (profrj_format::memory::SECTION, "max_live") => row::MAX,
        _ => weight,
    }
}

/// Writes `<monitorDump>`.
pub fn write_monitors<W: Write>(w: &mut XmlWriter<W>, dump: &MonitorDump) -> io::Result<()> {
    w.write_event(Event::Start(BytesStart::new(f::DUMP)))?;
    for t in &dump.threads {
        let mut el = BytesStart::new(f::THREAD);
        el.push_attribute((f::ID, t.id.to_string().as_str()));
        el.push_attribute((f::NAME, super::name(&t.name).as_ref()));
        el.push_attribute((f::STATE, t.state));
        if let Some(m) = t.waits_for {
            el.push_attribute((f::WAITS_FOR, (m + 1).to_string().as_str()));
        }
        if t.frames.is_empty() {
            w.write_event(Event::Empty(el))?;
            continue;
        }
        w.write_event(Event::Start(el))?;
        for frame in &t.frames {
            let el = format!("{} {}=\"{}\"", f::FRAME, f::NAME, attribute(frame));
            w.write_event(Event::Empty(BytesStart::from_content(el, f::FRAME.len())))?;
        }
        w.write_event(Event::End(BytesEnd::new(f::THREAD)))?;
    }
    for (i, m) in dump.monitors.iter().enumerate() {
        let mut el = BytesStart::new(f::MONITOR);
        el.push_attribute((f::ID, (i + 1).to_string().as_str()));
        el.push_attribute((f::CLASS, super::name(&m.class).as_ref()));
        if let Some(h) = m.hash {
            el.push_attribute((f::HASH, format!("{:x}", h as u32).as_str()));
        }
        if m.lock {
            el.push_attribute((f::LOCK, profrj_format::TRUE));
        }
        if let Some(o) = m.owner {
            el.push_attribute((f::OWNER, o.to_string().as_str()));
        }
        if !m.lock {
            el.push_attribute((f::ENTRY_COUNT, m.entry_count.to_string().as_str()));
        }
        if m.waiting.is_empty() && m.notify.is_empty() {
            w.write_event(Event::Empty(el))?;
            continue;
        }
        w.write_event(Event::Start(el))?;
        for (tag, ids) in [(f::WAITING, &m.waiting), (f::NOTIFY, &m.notify)] {
            for id in ids {
                let mut el = BytesStart::new(tag);
                el.push_attribute((f::THREAD_ID, id.to_string().as_str()));
                w.write_event(Event::Empty(el))?;
            }
        }
        w.write_event(Event::End(BytesEnd::new(f::MONITOR)))?;
    }
    for cycle in &dump.deadlocks {
        w.write_event(Event::Start(BytesStart::new(f::DEADLOCK)))?;
        for id in cycle {
            let mut el = BytesStart::new(f::WAITING);
            el.push_attribute((f::THREAD_ID, id.to_string().as_str()));
            w.write_event(Event::Empty(el))?;
        }
        w.write_event(Event::End(BytesEnd::new(f::DEADLOCK)))?;
    }
    w.write_event(Event::End(BytesEnd::new(f::DUMP)))?;
    Ok(())
}
