//! The `<alloc>` section: per thread, the call paths that allocated, shaped
//! like `<sampler>`, the allocated class as each path's top frame
//! (`class="true"`). Figures are estimates in bytes and objects, rounded.

use super::{Alloc, Captured};
use crate::calltree::{Visit, WeightTree};
use crate::snapshot::XmlWriter;
use crate::threads::{ThreadId, ThreadRecord};
use quick_xml::events::{BytesEnd, BytesStart, Event};
use std::fmt::Write as _;
use std::io;

/// One `<thread>` per thread that lived during `window` and has samples.
pub fn write_section(
    w: &mut XmlWriter,
    data: &Captured,
    threads: &[ThreadRecord],
    window: (u64, u64),
) -> io::Result<()> {
    let mut el = BytesStart::new("alloc");
    el.push_attribute(("interval", data.interval.to_string().as_str()));
    el.push_attribute(("live", if data.live { "true" } else { "false" }));
    w.write_event(Event::Start(el))?;
    let mut escaped: Vec<Option<String>> = vec![None; data.names.len()];
    let mut buf = String::with_capacity(256);
    for (i, t) in threads.iter().enumerate() {
        let Some(tree) = data.trees.get(&ThreadId(i as u32)) else {
            continue;
        };
        if !t.lived_in(window) || tree.is_empty() {
            continue;
        }
        let totals = tree.totals();
        let mut el = BytesStart::new("thread");
        el.push_attribute(("name", crate::xml::name(&t.name).as_ref()));
        el.push_attribute(("cpuTime", t.cpu_ns.to_string().as_str()));
        el.push_attribute(("elapsedTime", t.elapsed_ns(window).to_string().as_str()));
        el.push_attribute(("isAlive", if t.is_alive() { "true" } else { "false" }));
        el.push_attribute(("bytes", round(totals.bytes).as_str()));
        el.push_attribute(("objects", round(totals.objects).as_str()));
        el.push_attribute(("samples", totals.samples.to_string().as_str()));
        w.write_event(Event::Start(el))?;
        write_tree(w, data, tree, &mut escaped, &mut buf)?;
        w.write_event(Event::End(BytesEnd::new("thread")))?;
    }
    w.write_event(Event::End(BytesEnd::new("alloc")))?;
    Ok(())
}

fn write_tree(
    w: &mut XmlWriter,
    data: &Captured,
    tree: &WeightTree<Alloc>,
    escaped: &mut [Option<String>],
    buf: &mut String,
) -> io::Result<()> {
    tree.walk(|v| match v {
        Visit::Enter {
            name,
            own,
            cumulated,
            leaf,
        } => {
            let text = data.names.get(name as usize).map_or("", |s| &**s);
            let esc = escaped[name as usize].get_or_insert_with(|| crate::xml::attribute(text));
            let class = if data.classes.contains(&name) {
                " class=\"true\""
            } else {
                ""
            };
            buf.clear();
            let _ = write!(
                buf,
                "profile name=\"{esc}\"{class} bytes=\"{}\" objects=\"{}\" samples=\"{}\" \
                 cumulatedBytes=\"{}\" cumulatedObjects=\"{}\" cumulatedSamples=\"{}\"",
                round(own.bytes),
                round(own.objects),
                own.samples,
                round(cumulated.bytes),
                round(cumulated.objects),
                cumulated.samples
            );
            let el = BytesStart::from_content(buf.as_str(), "profile".len());
            w.write_event(if leaf {
                Event::Empty(el)
            } else {
                Event::Start(el)
            })
        }
        Visit::Leave => w.write_event(Event::End(BytesEnd::new("profile"))),
    })
}

fn round(x: f64) -> String {
    format!("{:.0}", x.max(0.0))
}
