//! What sampling hands a snapshot: per thread that lived during the
//! session, the call tree of its samples, each node with the samples that
//! ended on it and those that passed through it, all and those that found
//! the thread running.

use super::{SamplerData, NO_LINE};
use crate::model::{CallTrees, Frame, Part, Section, ThreadTree, Unit, Weight};
use crate::threads::{ThreadId, ThreadRecord};

const WEIGHTS: [Weight; 4] = [
    Weight::own("runnable_samples", Unit::Count),
    Weight::own("samples", Unit::Count),
    Weight::total("runnable_samples", Unit::Count),
    Weight::total("samples", Unit::Count),
];

/// One tree per thread that lived during `window` (start, end ns), empty
/// for one never sampled, in thread order.
pub fn section(
    data: &SamplerData,
    threads: &[std::sync::Arc<ThreadRecord>],
    window: (u64, u64),
) -> Section {
    Section {
        name: profrj_format::sampler::SECTION,
        extra: false,
        attributes: Vec::new(),
        parts: vec![Part::Trees(trees(data, threads, window, None))],
    }
}

/// [`section`]'s trees; `period`: what one sample stands for.
pub fn trees(
    data: &SamplerData,
    threads: &[std::sync::Arc<ThreadRecord>],
    window: (u64, u64),
    period: Option<crate::model::Period>,
) -> CallTrees {
    let mut trees = CallTrees {
        weights: WEIGHTS.to_vec(),
        period: None,
        frames: frames(data),
        threads: Vec::new(),
    };
    for (i, t) in threads.iter().enumerate() {
        if !t.lived_in(window) {
            continue;
        }
        let id = ThreadId(i as u32);
        trees.threads.push(match data.trees.get(&id) {
            Some(tree) => tree.to_model(Some(id)),
            None => ThreadTree::new(Some(id), vec![0; WEIGHTS.len()]),
        });
    }
    trees.period = period;
    trees
}

/// The model's frames, one per tree key: the key's method name and, with
/// `lines`, its line.
fn frames(data: &SamplerData) -> Vec<Frame> {
    let names = data.tables.names.snapshot();
    data.tables
        .keys
        .iter()
        .map(|(name, line)| Frame {
            line: (line != NO_LINE).then_some(line),
            ..Frame::method(names[name as usize].clone())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::MethodNames;
    use crate::model::Snapshot;
    use crate::sampler::frames::{FrameKeys, NameTables};
    use crate::sampler::tree::CallTree;
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
            tables: NameTables {
                names,
                keys,
                ..Default::default()
            },
            ..Default::default()
        };
        let threads = vec![ThreadRecord {
            name: "main".into(),
            start_ns: 0,
            end_ns: Some(5),
            cpu_ns: 7,
            tid: 0,
            java_id: None,
            virtual_threads: 0,
            virtual_ended: 0,
            ended_threads: 0,
            lived_ns: 0,
            folded_into: None,
            jvm: None,
        }];
        let threads = crate::threads::shared(&threads);
        // Only the writing is timed (docs/BENCHMARKS.md quotes it).
        let path = std::env::temp_dir().join(format!("profrj-million-{}.xml", std::process::id()));
        let t = std::time::Instant::now();
        let snapshot = Snapshot {
            threads: &threads,
            window: (0, 10),
            sections: vec![section(&data, &threads, (0, 10))],
        };
        write_document(&path, |w| crate::xml::write(&snapshot, w).map(|_| ())).unwrap();
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

    /// The text of a snapshot whose sampler section has one live thread
    /// `name` (started at 2 ns, 7 ns of CPU) holding `tree`, for a window of
    /// 0 to 10 ns.
    fn one_thread(tree: CallTree, names: MethodNames, keys: FrameKeys, name: &str) -> String {
        let mut trees = HashMap::new();
        trees.insert(ThreadId(0), tree);
        let data = SamplerData {
            trees,
            tables: NameTables {
                names,
                keys,
                ..Default::default()
            },
            ..Default::default()
        };
        let threads = vec![ThreadRecord {
            name: name.into(),
            start_ns: 2,
            end_ns: None,
            cpu_ns: 7,
            tid: 0,
            java_id: None,
            virtual_threads: 0,
            virtual_ended: 0,
            ended_threads: 0,
            lived_ns: 0,
            folded_into: None,
            jvm: None,
        }];
        let shared = crate::threads::shared(&threads);
        crate::xml::to_text(&threads, (0, 10), vec![section(&data, &shared, (0, 10))])
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
        let text = one_thread(tree, names, keys, "main\u{1}");
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
        let text = one_thread(tree, names, keys, "main");
        assert!(
            text.contains(r#"<profile name="p.A.run()" line="7" hits="0" elapsed="0" cumulated="2" cumulatedElapsed="2">"#),
            "{text}"
        );
        assert!(text.contains(r#"<profile name="p.A.f()" line="12" hits="1""#));
        assert!(text.contains(r#"<profile name="p.A.f()" line="13" hits="1""#));
        assert!(text.contains(r#"<profile name="p.A.run()" hits="1""#));
    }
}
