//! The `<lock>` section: per thread, the call paths where it waited for a
//! contended monitor, shaped like `<alloc>`, the monitor's class as each
//! path's top frame (`class="true"`); then the monitor dump.

use super::{Captured, Wait};
use crate::calltree::WeightTree;
use crate::snapshot::XmlWriter;
use crate::threads::{ThreadId, ThreadRecord};
use crate::xml::push_number;
use profrj_format::lock::{self as f, node, thread};
use quick_xml::events::{BytesEnd, BytesStart, Event};
use std::io;

/// One `<thread>` per thread that lived during `window` and waited.
pub fn write_section(
    w: &mut XmlWriter,
    data: &Captured,
    threads: &[ThreadRecord],
    window: (u64, u64),
) -> io::Result<()> {
    let mut el = BytesStart::new(f::SECTION);
    el.push_attribute((f::THRESHOLD, data.threshold.to_string().as_str()));
    w.write_event(Event::Start(el))?;
    let mut escaped = crate::xml::EscapedNames::default();
    for (i, t) in threads.iter().enumerate() {
        let Some(tree) = data.trees.get(&ThreadId(i as u32)) else {
            continue;
        };
        if !t.lived_in(window) || tree.is_empty() {
            continue;
        }
        let totals = tree.totals();
        let mut el = crate::calltree::thread_start(t, window);
        el.push_attribute((thread::COUNT, totals.count.to_string().as_str()));
        el.push_attribute((thread::TIME, totals.time.to_string().as_str()));
        w.write_event(Event::Start(el))?;
        write_tree(w, data, tree, &mut escaped)?;
        w.write_event(Event::End(BytesEnd::new(f::THREAD)))?;
    }
    if let Some(dump) = &data.dump {
        super::dump::write(w, dump)?;
    }
    w.write_event(Event::End(BytesEnd::new(f::SECTION)))?;
    Ok(())
}

fn write_tree(
    w: &mut XmlWriter,
    data: &Captured,
    tree: &WeightTree<Wait>,
    escaped: &mut crate::xml::EscapedNames,
) -> io::Result<()> {
    let names = (&data.names[..], &data.classes);
    crate::calltree::write_nodes(w, tree, names, escaped, |buf, own, cumulated| {
        push_number(buf, node::COUNT, own.count);
        push_number(buf, node::TIME, own.time);
        push_number(buf, node::CUMULATED_COUNT, cumulated.count);
        push_number(buf, node::CUMULATED_TIME, cumulated.time);
    })
}
