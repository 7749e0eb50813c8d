//! The `<profile>` section: per thread, the call tree with ProfilerJ's
//! attributes (times in µs; `method*` exclude callees; overhead is the
//! agent's own probe time).

use super::clock::ticks_to_ns;
use super::tree::{Node, Tree};
use super::ThreadProfile;
use crate::instrument::registry::MethodInfo;
use crate::snapshot::XmlWriter;
use crate::threads::ThreadRecord;
use crate::xml::{push_attribute, push_number};
use profrj_format::profile::{self as f, node, thread};
use quick_xml::events::{BytesEnd, BytesStart, Event};
use std::io;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;

pub fn write_section(
    w: &mut XmlWriter,
    profiles: &[Arc<ThreadProfile>],
    methods: &[MethodInfo],
    threads: &[ThreadRecord],
) -> io::Result<()> {
    w.write_event(Event::Start(BytesStart::new(f::SECTION)))?;
    // Names and descriptors, escaped once per method.
    let mut names: Vec<Option<(String, String)>> = vec![None; methods.len()];
    let mut buf = String::with_capacity(256);
    for p in profiles {
        let record = p.thread.and_then(|id| threads.get(id.0 as usize));
        let mut el = BytesStart::new(f::THREAD);
        el.push_attribute((
            thread::NAME,
            crate::xml::name(record.map_or("(unknown)", |r| r.name.as_str())).as_ref(),
        ));
        el.push_attribute((
            thread::CPU_TIME,
            record.map_or(0, |r| r.cpu_ns).to_string().as_str(),
        ));
        let alive = record.is_none_or(|r| r.is_alive());
        el.push_attribute((thread::IS_ALIVE, profrj_format::boolean(alive)));
        w.write_event(Event::Start(el))?;
        // Depth-first with an explicit stack: recursion 3,000 calls deep must
        // not need 3,000 native frames here.
        let mut stack: Vec<(u32, bool)> = sorted_children(&p.tree, Tree::ROOT)
            .into_iter()
            .rev()
            .map(|c| (c, false))
            .collect();
        while let Some((index, closing)) = stack.pop() {
            if closing {
                w.write_event(Event::End(BytesEnd::new(f::NODE)))?;
                continue;
            }
            let n = p.tree.node(index);
            let m = n.method.load(Relaxed) as usize;
            let (name, sig) = match names.get_mut(m) {
                Some(slot) => slot
                    .get_or_insert_with(|| {
                        let info = &methods[m];
                        (
                            crate::xml::attribute(info.java_name().as_str()),
                            crate::xml::attribute(info.descriptor.as_str()),
                        )
                    })
                    .clone(),
                None => (format!("(method {m})"), String::new()),
            };
            buf.clear();
            write_attributes(&mut buf, &name, &sig, n);
            let el = BytesStart::from_content(buf.as_str(), f::NODE.len());
            let children = sorted_children(&p.tree, index);
            if children.is_empty() {
                w.write_event(Event::Empty(el))?;
            } else {
                w.write_event(Event::Start(el))?;
                stack.push((index, true));
                stack.extend(children.into_iter().rev().map(|c| (c, false)));
            }
        }
        w.write_event(Event::End(BytesEnd::new(f::THREAD)))?;
    }
    w.write_event(Event::End(BytesEnd::new(f::SECTION)))?;
    Ok(())
}

/// Children, the most expensive first.
fn sorted_children(tree: &Tree, index: u32) -> Vec<u32> {
    let mut c = tree.children(index);
    c.sort_by_key(|&i| std::cmp::Reverse(tree.node(i).cum_ticks.load(Relaxed)));
    c
}

/// The node's element, `name` and `sig` already escaped.
fn write_attributes(buf: &mut String, name: &str, sig: &str, n: &Node) {
    let us = |ticks: u64| ticks_to_ns(ticks) / 1000;
    let get = |a: &std::sync::atomic::AtomicU64| a.load(Relaxed);
    buf.push_str(f::NODE);
    push_attribute(buf, node::NAME, name);
    push_attribute(buf, node::SIGNATURE, sig);
    push_number(buf, node::COUNT, get(&n.count));
    push_number(buf, node::METHOD_ELAPSED, us(get(&n.self_ticks)));
    push_number(buf, node::METHOD, us(get(&n.self_cpu)));
    push_number(buf, node::CUMULATED_ELAPSED, us(get(&n.cum_ticks)));
    push_number(buf, node::CUMULATED, us(get(&n.cum_cpu)));
    push_number(buf, node::OVERHEAD_CUMULATED, us(get(&n.overhead_cum)));
    push_number(buf, node::OVERHEAD_METHOD, us(get(&n.overhead_self)));
    push_number(buf, node::EXCEPTIONS, get(&n.exceptions));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node's element, pinned (the names are `profrj_format`'s, the order
    /// the contract's; a change here changes the format).
    #[test]
    fn bytes_of_a_node() {
        let n = Node::default();
        n.count.store(3, Relaxed);
        n.exceptions.store(1, Relaxed);
        let mut buf = String::new();
        write_attributes(&mut buf, "p.A.f(int)", "(I)V", &n);
        assert_eq!(
            buf,
            "profile name=\"p.A.f(int)\" signature=\"(I)V\" count=\"3\" methodElapsed=\"0\" \
             method=\"0\" cumulatedElapsed=\"0\" cumulated=\"0\" overheadCumulated=\"0\" \
             overheadMethod=\"0\" exceptions=\"1\""
        );
    }
}
