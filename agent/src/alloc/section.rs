//! The `<alloc>` section: per thread, the call paths that allocated, shaped
//! like `<sampler>`, the allocated class as each path's top frame
//! (`class="true"`). Figures are estimates in bytes and objects, rounded.

use super::{Alloc, Captured};
use crate::calltree::WeightTree;
use crate::snapshot::XmlWriter;
use crate::threads::{ThreadId, ThreadRecord};
use crate::xml::push_number;
use profrj_format::alloc::{self as f, node, thread};
use quick_xml::events::{BytesEnd, BytesStart, Event};
use std::io;

/// One `<thread>` per thread that lived during `window` and has samples.
pub fn write_section(
    w: &mut XmlWriter,
    data: &Captured,
    threads: &[ThreadRecord],
    window: (u64, u64),
) -> io::Result<()> {
    let mut el = BytesStart::new(f::SECTION);
    el.push_attribute((f::INTERVAL, data.interval.to_string().as_str()));
    el.push_attribute((f::LIVE, profrj_format::boolean(data.live_rule.is_some())));
    if let Some(rule) = data.live_rule {
        el.push_attribute((f::LIVE_RULE, rule.name()));
    }
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
        el.push_attribute((thread::BYTES, round(totals.bytes).to_string().as_str()));
        el.push_attribute((thread::OBJECTS, round(totals.objects).to_string().as_str()));
        el.push_attribute((thread::SAMPLES, totals.samples.to_string().as_str()));
        w.write_event(Event::Start(el))?;
        write_tree(w, data, tree, &mut escaped)?;
        w.write_event(Event::End(BytesEnd::new(f::THREAD)))?;
    }
    w.write_event(Event::End(BytesEnd::new(f::SECTION)))?;
    Ok(())
}

fn write_tree(
    w: &mut XmlWriter,
    data: &Captured,
    tree: &WeightTree<Alloc>,
    escaped: &mut crate::xml::EscapedNames,
) -> io::Result<()> {
    let names = (&data.names[..], &data.classes);
    crate::calltree::write_nodes(w, tree, names, escaped, |buf, own, cumulated| {
        push_number(buf, node::BYTES, round(own.bytes));
        push_number(buf, node::OBJECTS, round(own.objects));
        push_number(buf, node::SAMPLES, own.samples);
        push_number(buf, node::CUMULATED_BYTES, round(cumulated.bytes));
        push_number(buf, node::CUMULATED_OBJECTS, round(cumulated.objects));
        push_number(buf, node::CUMULATED_SAMPLES, cumulated.samples);
    })
}

/// An estimate as a whole number (never negative).
fn round(x: f64) -> u64 {
    x.max(0.0).round() as u64
}
