//! The `<sampler>` section of a snapshot.

use super::tree::{CallTree, Visit};
use super::SamplerData;
use crate::snapshot::XmlWriter;
use crate::threads::{ThreadId, ThreadRecord};
use quick_xml::events::{BytesEnd, BytesStart, Event};
use std::io;

/// One `<thread>` per thread record, each holding its call tree.
pub fn write_section(
    w: &mut XmlWriter,
    data: &SamplerData,
    threads: &[ThreadRecord],
    now_ns: u64,
) -> io::Result<()> {
    w.write_event(Event::Start(BytesStart::new("sampler")))?;
    let empty = CallTree::default();
    for (i, t) in threads.iter().enumerate() {
        let tree = data.trees.get(&ThreadId(i as u32)).unwrap_or(&empty);
        let totals = tree.totals();
        let mut el = BytesStart::new("thread");
        el.push_attribute(("name", t.name.as_str()));
        el.push_attribute(("cumulated", totals.cumulated.to_string().as_str()));
        el.push_attribute(("cpuTime", t.cpu_ns.to_string().as_str()));
        el.push_attribute((
            "cumulatedElapsed",
            totals.cumulated_elapsed.to_string().as_str(),
        ));
        el.push_attribute(("elapsedTime", t.elapsed_ns(now_ns).to_string().as_str()));
        el.push_attribute(("isAlive", if t.is_alive() { "true" } else { "false" }));
        w.write_event(Event::Start(el))?;
        tree.walk(|v| match v {
            Visit::Enter { name, counts, leaf } => {
                let mut el = BytesStart::new("profile");
                el.push_attribute(("name", data.names.get(name)));
                el.push_attribute(("hits", counts.hits.to_string().as_str()));
                el.push_attribute(("elapsed", counts.elapsed.to_string().as_str()));
                el.push_attribute(("cumulated", counts.cumulated.to_string().as_str()));
                el.push_attribute((
                    "cumulatedElapsed",
                    counts.cumulated_elapsed.to_string().as_str(),
                ));
                w.write_event(if leaf {
                    Event::Empty(el)
                } else {
                    Event::Start(el)
                })
            }
            Visit::Leave => w.write_event(Event::End(BytesEnd::new("profile"))),
        })?;
        w.write_event(Event::End(BytesEnd::new("thread")))?;
    }
    w.write_event(Event::End(BytesEnd::new("sampler")))?;
    Ok(())
}
