//! The data the flame page draws, as JSON: threads of one name merged into one
//! tree (`merge.rs`: children merged by method name, and line with the
//! agent's `lines`: `name:line`, as collapsed stacks write it), each tree in
//! preorder as flat triples `[name, own, children]`, written as it is read
//! back; `classes`, the names that are class
//! frames (an allocated class); the coverage and memory tables beside it.
//! A section with frame types adds `frameTypes`, the types' names, and
//! each node's triple is followed by its count of types and that many
//! pairs `type, samples` (`type` an index into `frameTypes`; the samples
//! through the node whose frame ran so, `frameTypes` summed over the merged
//! threads): `[name, own, children, k, t1, c1, …, tk, ck]`.

use super::merge::{frame_text, merge, Frame, Group};
use crate::report::coverage_table;
use crate::snapshot::{CallSection, CoverageClass, MemorySection, Metric, Names};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::{self, Write};

/// A JSON string literal. `<` is escaped so the data can sit in a `<script>`.
pub fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A name from the snapshot as a JSON string literal: escaped first as every
/// writer escapes names (`profrj_format::escape`: a control character as
/// `\uXXXX`, never raw on the page), then as JSON wants.
pub fn json_name(out: &mut String, s: &str) {
    json_str(out, &profrj_format::names::escape(s));
}

pub struct PageInput<'a> {
    pub title: &'a str,
    pub names: &'a Names,
    pub calls: Option<(&'a CallSection, Metric)>,
    pub memory: Option<&'a MemorySection>,
    pub coverage: Option<&'a [CoverageClass]>,
}

/// The page's JSON written to `w` as it is made: what is held is the merged
/// trees, the names they use, and up to [`SPILL`] bytes of JSON.
pub fn write_page_json(w: &mut dyn Write, input: &PageInput) -> io::Result<()> {
    let mut out = String::from("{");
    out.push_str("\"title\":");
    json_str(&mut out, input.title);
    if let Some((sec, metric)) = input.calls {
        out.push_str(",\"section\":");
        json_str(&mut out, sec.kind.tag());
        out.push_str(",\"metric\":");
        json_str(&mut out, metric.name());
        out.push_str(",\"unit\":");
        json_str(&mut out, metric.unit());
        out.push_str(",\"weight\":");
        json_str(&mut out, metric.describe());
        let _ = write!(out, ",\"live\":{}", sec.live);
        let desc = sec.desc();
        out.push_str(",\"scope\":");
        json_str(&mut out, desc.scope(sec.live));
        out.push_str(",\"classFrames\":");
        json_str(&mut out, desc.class_frames);
        calls_json(w, &mut out, input.names, sec, metric)?;
    }
    if let Some(mem) = input.memory {
        out.push_str(",\"memory\":");
        memory_json(&mut out, mem);
    }
    if let Some(classes) = input.coverage {
        out.push_str(",\"coverage\":[");
        for (i, c) in coverage_table(classes).iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str("{\"name\":");
            json_name(&mut out, &c.name);
            out.push_str(",\"source\":");
            json_name(&mut out, c.source.as_deref().unwrap_or(""));
            let _ = write!(
                out,
                ",\"lines\":{},\"covered\":{},\"methods\":{},\"run\":{}}}",
                c.lines, c.covered, c.methods, c.methods_run
            );
        }
        out.push(']');
    }
    out.push('}');
    w.write_all(out.as_bytes())
}

/// JSON held before it is written out.
const SPILL: usize = 1 << 16;

/// Writes `buf` out once it holds [`SPILL`] bytes (`all`: whatever it holds).
pub fn spill(w: &mut dyn Write, buf: &mut String, all: bool) -> io::Result<()> {
    if all || buf.len() >= SPILL {
        w.write_all(buf.as_bytes())?;
        buf.clear();
    }
    Ok(())
}

/// The trees, then the names they use (which the walk numbers: an object's
/// keys may come in any order).
fn calls_json(
    w: &mut dyn Write,
    out: &mut String,
    names: &Names,
    sec: &CallSection,
    metric: Metric,
) -> io::Result<()> {
    let merged = merge(sec, metric)?;
    if merged.typed {
        out.push_str(",\"frameTypes\":[");
        for (i, t) in profrj_format::frame_types::ALL.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            json_str(out, t.name());
        }
        out.push(']');
    }
    // Only names the trees use, renumbered; a class frame's apart.
    let mut used: HashMap<u32, u32> = HashMap::new();
    let mut table: Vec<Frame> = Vec::new();
    out.push_str(",\"threads\":[");
    let trees = out;
    let mut ordered: Vec<&Group> = merged.groups.iter().filter(|g| g.total > 0).collect();
    ordered.sort_by(|a, b| b.total.cmp(&a.total).then(a.name.cmp(&b.name)));
    for (k, g) in ordered.iter().enumerate() {
        if k > 0 {
            trees.push(',');
        }
        trees.push_str("{\"name\":");
        json_name(trees, &g.name);
        if let Some(n) = g.virtual_threads {
            let _ = write!(trees, ",\"virtualThreads\":{n}");
        }
        if let Some(n) = g.ended_threads {
            let _ = write!(trees, ",\"endedThreads\":{n}");
        }
        if let Some(k) = g.jvm_thread {
            trees.push_str(",\"jvmThread\":");
            json_str(trees, jvm_thread_name(k));
        }
        let _ = write!(trees, ",\"total\":{},\"nodes\":[", g.total);
        // Preorder, subtrees without weight left out: [name, own, children].
        let _ = write!(trees, "-1,0,{}", g.roots);
        if merged.typed {
            trees.push_str(",0");
        }
        let mut nodes = merged.nodes(g);
        while let Some((frame, own, kids, types)) = nodes.next_node()? {
            let next = table.len() as u32;
            let id = *used.entry(frame).or_insert_with(|| {
                table.push(merged.frame(frame));
                next
            });
            let _ = write!(trees, ",{id},{own},{kids}");
            if merged.typed {
                let k = types.iter().filter(|&&c| c > 0).count();
                let _ = write!(trees, ",{k}");
                for (t, c) in types.iter().enumerate().filter(|(_, &c)| c > 0) {
                    let _ = write!(trees, ",{t},{c}");
                }
            }
            spill(w, trees, false)?;
        }
        trees.push_str("]}");
    }
    let out = trees;
    out.push_str("],\"names\":[");
    for (i, &f) in table.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_name(out, &frame_text(names, f));
        spill(w, out, false)?;
    }
    out.push_str("],\"classes\":[");
    let classes = table.iter().enumerate().filter(|(_, f)| f.1);
    for (k, (i, _)) in classes.enumerate() {
        if k > 0 {
            out.push(',');
        }
        let _ = write!(out, "{i}");
    }
    out.push(']');
    spill(w, out, true)
}

/// `jvmThread`'s value for `k`.
fn jvm_thread_name(k: crate::snapshot::JvmThread) -> &'static str {
    use crate::snapshot::JvmThread;
    let [gc, compiler, vm, other] = profrj_format::sampler::thread::JVM_THREAD_KINDS;
    match k {
        JvmThread::Gc => gc,
        JvmThread::Compiler => compiler,
        JvmThread::Vm => vm,
        JvmThread::Other => other,
    }
}

fn memory_json(out: &mut String, mem: &MemorySection) {
    let mut by_class: HashMap<&str, (u64, u64)> = HashMap::new();
    for t in &mem.threads {
        for r in &t.rows {
            let e = by_class.entry(&r.class).or_default();
            e.0 = e.0.saturating_add(r.count);
            e.1 = e.1.saturating_add(r.max);
        }
    }
    let mut rows: Vec<_> = by_class.into_iter().collect();
    rows.sort_by(|a, b| b.1 .0.cmp(&a.1 .0).then(a.0.cmp(b.0)));
    out.push('[');
    for (i, (class, (count, max))) in rows.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"class\":");
        json_name(out, class);
        let _ = write!(out, ",\"count\":{count},\"max\":{max}}}");
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{parse_bytes, CallKind};

    fn page_json(input: &PageInput) -> String {
        let mut out = Vec::new();
        write_page_json(&mut out, input).unwrap();
        String::from_utf8(out).unwrap()
    }

    /// The page data of a snapshot's `<sampler>` section, by its default metric.
    fn sampler_page_json(xml: &str) -> String {
        let s = parse_bytes(xml.as_bytes()).unwrap();
        let sec = s.calls(CallKind::Sampler).unwrap();
        page_json(&PageInput {
            title: "t",
            names: &s.names,
            calls: Some((sec, Metric::of(sec.kind, None).unwrap())),
            memory: None,
            coverage: None,
        })
    }

    #[test]
    fn threads_of_one_name_merge_and_json_is_safe() {
        let xml = r#"<doc><sampler>
          <thread name="w"><profile name="a()" hits="1"><profile name="b()" hits="2"/></profile></thread>
          <thread name="w"><profile name="a()" hits="0"><profile name="b()" hits="3"/><profile name="&lt;/script&gt;" hits="1"/></profile></thread>
          <thread name="idle"><profile name="z()" hits="0"/></thread>
        </sampler></doc>"#;
        let json = sampler_page_json(xml);
        assert!(!json.contains('<'), "{json}");
        assert!(
            json.contains(r#""names":["a()","b()","\u003c/script\u003e"]"#),
            "{json}"
        );
        // One tree for both "w", none for the idle thread.
        assert!(
            json.contains(
                r#""threads":[{"name":"w","total":7,"nodes":[-1,0,1,0,1,2,1,5,0,2,1,0]}]"#
            ),
            "{json}"
        );
    }

    /// Frame types summed over the threads of one name (merged through
    /// the sorter) and carried for a thread alone; a node without weight
    /// of its own keeps its types (`a()` in the second "w").
    #[test]
    fn frame_types_follow_the_merged_nodes() {
        let xml = r#"<doc><sampler>
          <thread name="w"><profile name="a()" hits="1" elapsed="1" frameTypes="interpreted:3"><profile name="b()" hits="2" elapsed="2" frameTypes="c2:2"/></profile></thread>
          <thread name="w"><profile name="a()" hits="0" elapsed="0" frameTypes="c1:2"><profile name="b()" hits="2" elapsed="2" frameTypes="c2:1 inlined:1"/></profile></thread>
          <thread name="solo" jvmThread="compiler"><profile name="a()" hits="1" elapsed="1" frameTypes="jit:1"/></thread>
        </sampler></doc>"#;
        let json = sampler_page_json(xml);
        assert!(
            json.contains(r#""frameTypes":["interpreted","c1","c2","jit","inlined","native","vm","stub","kernel"],"threads":[{"name":"w","total":5,"nodes":[-1,0,1,0,0,1,1,2,0,3,1,2,1,4,0,2,2,3,4,1]},{"name":"solo","jvmThread":"compiler","total":1,"nodes":[-1,0,1,0,0,1,0,1,3,1]}]"#),
            "{json}"
        );
    }

    /// Class frames are listed by their index in `names`, apart from a
    /// method of the same name.
    #[test]
    fn class_frames_are_marked() {
        use crate::snapshot::test_alloc::{alloc, metric};
        let xml = crate::snapshot::test_alloc::ALLOC.replace(
            "<profile name=\"p.B.run()\" bytes",
            "<profile name=\"int[]\" bytes",
        );
        let s = parse_bytes(xml.as_bytes()).unwrap();
        let sec = s.calls(CallKind::Alloc).unwrap();
        let json = page_json(&PageInput {
            title: "t",
            names: &s.names,
            calls: Some((sec, metric("bytes"))),
            memory: None,
            coverage: None,
        });
        assert!(
            json.contains(r#""section":"alloc","metric":"bytes","unit":"bytes""#),
            "{json}"
        );
        assert!(json.contains(r#""live":false"#), "{json}");
        assert!(
            json.contains(r#""names":["p.A.main()","p.A.big()","byte[]","p.A.small()","java.lang.String","int[]","int[]"],"classes":[2,4,5]"#),
            "{json}"
        );
        let s = alloc();
        let sec = s.calls(CallKind::Alloc).unwrap();
        let json = page_json(&PageInput {
            title: "t",
            names: &s.names,
            calls: Some((sec, metric("objects"))),
            memory: None,
            coverage: None,
        });
        assert!(
            json.contains(r#""threads":[{"name":"main","total":12,"#),
            "{json}"
        );
    }
}
