//! Collapsed stacks: `root;caller;callee count`, one line per distinct stack
//! with a non-zero own weight, sorted. The sum of the counts is the sum of
//! every node's own weight: the section's total for the chosen metric.
//! A stack deeper than [`MAX_FRAMES`] keeps its top frames under a
//! `[truncated]` root (the agent's own convention), so a pathological
//! 100,000-deep chain cannot make the output quadratic in its depth.

use crate::snapshot::{CallThread, Metric, Names, Weighted, NO_LINE};
use std::collections::BTreeMap;

/// The most frames a stack keeps in the converted formats (the agent's
/// default `depth`); deeper ones keep their top frames.
pub const MAX_FRAMES: usize = 2048;

/// Name of the root that stands for the frames cut off a deeper stack.
pub const TRUNCATED: &str = "[truncated]";

/// A frame as the format allows: `;` separates frames and a line ends the
/// stack, so neither may appear inside one.
pub fn frame(name: &str) -> String {
    name.replace(';', ":").replace(['\n', '\r'], " ")
}

pub fn collapsed(
    names: &Names,
    threads: &[&CallThread],
    metric: Metric,
    thread_frames: bool,
) -> String {
    let mut lines: BTreeMap<String, u64> = BTreeMap::new();
    for t in threads {
        let w = Weighted::new(&t.tree, metric);
        // The path to the current node, as frames; nodes come in document
        // order, so truncating to a node's depth gives its parent's path.
        let mut path: Vec<String> = Vec::new();
        if thread_frames {
            path.push(frame(&format!("[{}]", t.name)));
        }
        let base = path.len();
        for (i, n) in t.tree.nodes.iter().enumerate().skip(1) {
            path.truncate(base + n.depth as usize - 1);
            path.push(match n.line {
                NO_LINE => frame(names.get(n.name)),
                // async-profiler's `lines`: `method:line`.
                line => frame(&format!("{}:{line}", names.get(n.name))),
            });
            if w.own[i] > 0 {
                let frames = &path[base..];
                let cut = frames.len().saturating_sub(MAX_FRAMES);
                let mut line = path[..base].join(";");
                for f in std::iter::once(TRUNCATED)
                    .filter(|_| cut > 0)
                    .chain(frames[cut..].iter().map(String::as_str))
                {
                    if !line.is_empty() {
                        line.push(';');
                    }
                    line.push_str(f);
                }
                let e = lines.entry(line).or_insert(0);
                *e = e.saturating_add(w.own[i]);
            }
        }
    }
    let mut out = String::new();
    for (stack, count) in lines {
        out.push_str(&stack);
        out.push(' ');
        out.push_str(&count.to_string());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{parse_bytes, CallKind, MetricName};

    fn metric(kind: CallKind, name: &'static str) -> Metric {
        Metric::of(kind, Some(MetricName(name))).unwrap()
    }

    #[test]
    fn lines_merge_threads_and_keep_totals() {
        let xml = r#"<doc><sampler>
          <thread name="a"><profile name="main()" hits="1" elapsed="1">
            <profile name="f()" hits="3" elapsed="5"/><profile name="g;h()" hits="0" elapsed="2"/>
          </profile></thread>
          <thread name="b"><profile name="main()" hits="0" elapsed="0"><profile name="f()" hits="2" elapsed="2"/></profile></thread>
        </sampler></doc>"#;
        let s = parse_bytes(xml.as_bytes()).unwrap();
        let sec = s.calls(CallKind::Sampler).unwrap();
        let threads: Vec<_> = sec.threads.iter().collect();
        let cpu = collapsed(&s.names, &threads, metric(CallKind::Sampler, "cpu"), false);
        assert_eq!(cpu, "main() 1\nmain();f() 5\n");
        let wall = collapsed(&s.names, &threads, metric(CallKind::Sampler, "wall"), true);
        assert_eq!(
            wall,
            "[a];main() 1\n[a];main();f() 5\n[a];main();g:h() 2\n[b];main();f() 2\n"
        );
    }

    #[test]
    fn alloc_stacks_end_in_their_class() {
        use crate::snapshot::test_alloc::alloc;
        let s = alloc();
        let sec = s.calls(CallKind::Alloc).unwrap();
        let threads: Vec<_> = sec.threads.iter().collect();
        let bytes = collapsed(&s.names, &threads, metric(CallKind::Alloc, "bytes"), false);
        assert_eq!(
            bytes,
            "int[] 100\n\
             p.A.main();p.A.big();byte[] 600\n\
             p.A.main();p.A.small();byte[] 200\n\
             p.A.main();p.A.small();java.lang.String 200\n\
             p.B.run();p.A.big();byte[] 300\n"
        );
        let objects = collapsed(&s.names, &threads, metric(CallKind::Alloc, "objects"), true);
        assert!(
            objects.contains("[worker];p.B.run();p.A.big();byte[] 3\n"),
            "{objects}"
        );
        assert!(objects.contains("[main];int[] 1\n"), "{objects}");
    }
}
