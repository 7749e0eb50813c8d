//! The `<sampler>` section of a snapshot.

use super::tree::{CallTree, Visit};
use super::{SamplerData, NO_LINE};
use crate::snapshot::XmlWriter;
use crate::threads::{ThreadId, ThreadRecord};
use crate::xml::{push_attribute, push_number};
use profrj_format::sampler::{self as f, node, thread};
use quick_xml::events::{BytesEnd, BytesStart, Event};
use std::io;

/// One `<thread>` per thread that lived during `window` (start, end ns), each
/// holding its call tree.
pub fn write_section(
    w: &mut XmlWriter,
    data: &SamplerData,
    threads: &[ThreadRecord],
    window: (u64, u64),
) -> io::Result<()> {
    w.write_event(Event::Start(BytesStart::new(f::SECTION)))?;
    let empty = CallTree::default();
    // Names repeat across nodes: escape each once.
    let mut escaped = crate::xml::EscapedNames::default();
    let mut buf = String::with_capacity(256);
    for (i, t) in threads.iter().enumerate() {
        if !t.lived_in(window) {
            continue;
        }
        let tree = data.trees.get(&ThreadId(i as u32)).unwrap_or(&empty);
        let totals = tree.totals();
        let mut el = BytesStart::new(f::THREAD);
        el.push_attribute((thread::NAME, crate::xml::name(&t.name).as_ref()));
        el.push_attribute((thread::CUMULATED, totals.cumulated.to_string().as_str()));
        el.push_attribute((thread::CPU_TIME, t.cpu_ns.to_string().as_str()));
        el.push_attribute((
            thread::CUMULATED_ELAPSED,
            totals.cumulated_elapsed.to_string().as_str(),
        ));
        el.push_attribute((
            thread::ELAPSED_TIME,
            t.elapsed_ns(window).to_string().as_str(),
        ));
        el.push_attribute((thread::IS_ALIVE, profrj_format::boolean(t.is_alive())));
        w.write_event(Event::Start(el))?;
        tree.walk(|v| match v {
            Visit::Enter { name, counts, leaf } => {
                let (name_id, line) = data.keys.get(name);
                let esc = escaped.get(name_id, data.names.get(name_id));
                // The element is formatted into one reused buffer; numbers need no escaping.
                buf.clear();
                buf.push_str(f::NODE);
                push_attribute(&mut buf, node::NAME, esc);
                if line != NO_LINE {
                    push_number(&mut buf, node::LINE, line as u64);
                }
                push_number(&mut buf, node::HITS, counts.hits);
                push_number(&mut buf, node::ELAPSED, counts.elapsed);
                push_number(&mut buf, node::CUMULATED, counts.cumulated);
                push_number(&mut buf, node::CUMULATED_ELAPSED, counts.cumulated_elapsed);
                let el = BytesStart::from_content(buf.as_str(), f::NODE.len());
                w.write_event(if leaf {
                    Event::Empty(el)
                } else {
                    Event::Start(el)
                })
            }
            Visit::Leave => w.write_event(Event::End(BytesEnd::new(f::NODE))),
        })?;
        w.write_event(Event::End(BytesEnd::new(f::THREAD)))?;
    }
    w.write_event(Event::End(BytesEnd::new(f::SECTION)))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::MethodNames;
    use crate::sampler::FrameKeys;
    use crate::snapshot::write_document;
    use std::collections::HashMap;

    /// A million-node tree streams out as well-formed XML; the time is printed
    /// (docs/BENCHMARKS.md quotes it), never asserted.
    #[test]
    fn million_node_tree_writes_well_formed() {
        let mut names = MethodNames::default();
        let mut keys = FrameKeys::default();
        let ids: Vec<_> = (0..2000)
            .map(|i| keys.key(names.intern(&format!("pkg.Cls{i}.m<&\"{i}\">()")), NO_LINE))
            .collect();
        let mut tree = CallTree::default();
        for i in 0..1_000_000usize {
            tree.add_sample(&[ids[i / 1000], ids[1000 + i % 1000]], i % 3 == 0);
        }
        let mut trees = HashMap::new();
        trees.insert(ThreadId(0), tree);
        let data = SamplerData {
            trees,
            names,
            keys,
            ..Default::default()
        };
        let threads = vec![ThreadRecord {
            name: "main".into(),
            start_ns: 0,
            end_ns: Some(5),
            cpu_ns: 7,
            tid: 0,
        }];
        // Only the writing is timed (docs/BENCHMARKS.md quotes it).
        let path = std::env::temp_dir().join(format!("profrj-million-{}.xml", std::process::id()));
        let t = std::time::Instant::now();
        write_document(&path, |w| write_section(w, &data, &threads, (0, 10))).unwrap();
        let secs = t.elapsed().as_secs_f64();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        eprintln!(
            "1,001,000-node tree: wrote {} MB in {secs:.3} s",
            text.len() / 1_000_000
        );
        let doc = roxmltree::Document::parse_with_options(
            &text,
            roxmltree::ParsingOptions {
                nodes_limit: u32::MAX,
                ..Default::default()
            },
        )
        .unwrap();
        let nodes = doc
            .descendants()
            .filter(|n| n.has_tag_name("profile"))
            .count();
        assert_eq!(nodes, 1_001_000);
        let t = doc
            .descendants()
            .find(|n| n.has_tag_name("thread"))
            .unwrap();
        assert_eq!(t.attribute("cumulatedElapsed"), Some("1000000"));
        assert_eq!(t.attribute("cumulated"), Some("333334"));
        let first = doc
            .descendants()
            .find(|n| n.has_tag_name("profile"))
            .unwrap();
        assert!(
            first.attribute("name").unwrap().contains("<&\""),
            "names are escaped and read back"
        );
    }

    /// The section of one live thread `name` (started at `start_ns`, `cpu_ns`
    /// of CPU) holding `tree`, written for a window of 0 to 10 ns.
    fn one_thread(
        file: &str,
        tree: CallTree,
        names: MethodNames,
        keys: FrameKeys,
        name: &str,
        start_ns: u64,
        cpu_ns: u64,
    ) -> String {
        let mut trees = HashMap::new();
        trees.insert(ThreadId(0), tree);
        let data = SamplerData {
            trees,
            names,
            keys,
            ..Default::default()
        };
        let threads = vec![ThreadRecord {
            name: name.into(),
            start_ns,
            end_ns: None,
            cpu_ns,
            tid: 0,
        }];
        crate::snapshot::written(file, |w| write_section(w, &data, &threads, (0, 10)))
    }

    /// The bytes of a small section, pinned (the names are `profrj_format`'s,
    /// the layout the contract's; a change here changes the format).
    #[test]
    fn bytes_of_a_small_section() {
        let mut names = MethodNames::default();
        let mut keys = FrameKeys::default();
        let (a, b) = (names.intern("p.A.run()"), names.intern("p.B(\"<&\\x\")"));
        let (a, b) = (keys.key(a, NO_LINE), keys.key(b, NO_LINE));
        let mut tree = CallTree::default();
        tree.add_sample(&[a, b], true);
        tree.add_sample(&[a], false);
        let text = one_thread("sampler-bytes", tree, names, keys, "main\u{1}", 2, 7);
        assert_eq!(
            text,
            r#"<?xml version="1.0" encoding="UTF-8"?>
<doc>
 <sampler>
  <thread name="main\u0001" cumulated="1" cpuTime="7" cumulatedElapsed="2" elapsedTime="8" isAlive="true">
   <profile name="p.A.run()" hits="0" elapsed="1" cumulated="1" cumulatedElapsed="2">
    <profile name="p.B(&quot;&lt;&amp;\\x&quot;)" hits="1" elapsed="1" cumulated="1" cumulatedElapsed="1"/>
   </profile>
  </thread>
 </sampler>
</doc>
"#
        );
    }

    /// With `lines`, one method on two lines is two nodes, each with its
    /// `line` after the name; a frame with no line has no attribute.
    #[test]
    fn lines_are_an_attribute_beside_the_name() {
        let mut names = MethodNames::default();
        let mut keys = FrameKeys::default();
        let (run, f) = (names.intern("p.A.run()"), names.intern("p.A.f()"));
        let mut tree = CallTree::default();
        tree.add_sample(&[keys.key(run, 7), keys.key(f, 12)], true);
        tree.add_sample(&[keys.key(run, 7), keys.key(f, 13)], true);
        tree.add_sample(&[keys.key(run, NO_LINE)], true);
        let text = one_thread("sampler-lines", tree, names, keys, "main", 0, 1);
        assert!(
            text.contains(r#"<profile name="p.A.run()" line="7" hits="0" elapsed="0" cumulated="2" cumulatedElapsed="2">"#),
            "{text}"
        );
        assert!(text.contains(r#"<profile name="p.A.f()" line="12" hits="1""#));
        assert!(text.contains(r#"<profile name="p.A.f()" line="13" hits="1""#));
        assert!(text.contains(r#"<profile name="p.A.run()" hits="1""#));
    }
}
