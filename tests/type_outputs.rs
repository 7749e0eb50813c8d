//! Issue 40, part 2: frame types in every CLI output. Ground truth:
//! tests/data/frame-types.xml, a sampler snapshot whose `frameTypes` and
//! `selfTypes` are known by construction (two threads named main, a worker
//! in a native wait, a JIT compiler thread); each output is read by a real
//! consumer: FlameGraph's flamegraph.pl (collapsed), protoc (pprof), JDK
//! Mission Control's parser (JFR), headless Chromium (the flame page). A
//! real JVM's snapshot without types gives the outputs it gave before.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// `xml` without any ` NAME="…"` attribute.
fn strip_attr(xml: &str, name: &str) -> String {
    let key = format!(" {name}=\"");
    let mut out = String::with_capacity(xml.len());
    let mut rest = xml;
    while let Some(i) = rest.find(&key) {
        out.push_str(&rest[..i]);
        let value = &rest[i + key.len()..];
        let end = value.find('"').expect("a closing quote");
        rest = &value[end + 1..];
    }
    out.push_str(rest);
    out
}

fn typed() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/frame-types.xml")
}

#[test]
fn collapsed_frames_end_in_async_profilers_suffixes() {
    let text = profrj_ok(&[
        "convert",
        s(&typed()),
        "--to",
        "collapsed",
        "--frame-types",
        "--thread-frames",
        "--metric",
        "wall",
    ]);
    // Each frame: its node's dominant frameTypes; native and VM frames and
    // a frame without types get no suffix.
    assert_eq!(
        text,
        "[main];p.Main.main()_[0];p.Main.hot()_[j] 2\n\
         [main];p.Main.main()_[0];p.Main.hot()_[j];p.Main.leaf()_[i] 6\n\
         [main];p.Main.main()_[0];p.Main.cold() 1\n\
         [main];p.Main.main()_[0];p.Main.hot()_[0];p.Main.leaf()_[0] 3\n\
         [worker];p.W.run()_[0] 1\n\
         [worker];p.W.run()_[0];java.lang.Object.wait(native) 6\n\
         [C2 CompilerThread0];[libjvm.so] 2\n"
    );
    // FlameGraph's flamegraph.pl draws them: each suffixed frame is a box
    // with its samples (hot()_[j]: its own 2 and leaf()'s 6). It knows
    // `_[i]` (an inlined frame: aqua in its java palette) and shows the
    // name without it.
    let dir = temp_dir("frame-types-collapsed");
    let folded = dir.join("typed.folded");
    std::fs::write(&folded, &text).unwrap();
    let out = Command::new("flamegraph.pl")
        .args(["--colors", "java"])
        .arg(&folded)
        .output()
        .expect(
            "flamegraph.pl is required (scripts/test-all installs hprof2flamegraph, which has it)",
        );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let svg = String::from_utf8(out.stdout).unwrap();
    let mut boxes: BTreeMap<String, u64> = BTreeMap::new();
    for title in svg.split("<title>").skip(1) {
        let title = &title[..title.find("</title>").unwrap()];
        let Some((name, rest)) = title.rsplit_once(" (") else {
            continue;
        };
        let n = rest.split(' ').next().unwrap().replace(',', "");
        *boxes.entry(name.replace("&lt;", "<")).or_default() += n.parse::<u64>().unwrap();
    }
    for (frame, samples) in [
        ("p.Main.hot()_[j]", 8),
        ("p.Main.leaf()", 6),
        ("p.Main.hot()_[0]", 3),
        ("p.Main.leaf()_[0]", 3),
        ("p.Main.main()_[0]", 12),
        ("p.W.run()_[0]", 7),
        ("java.lang.Object.wait(native)", 6),
        ("[libjvm.so]", 2),
    ] {
        assert_eq!(boxes.get(frame), Some(&samples), "{frame}: {boxes:?}");
    }
}

/// protoc's text form, samples only: (leaf function name, frame_type
/// label) -> each value summed.
fn pprof_by_leaf_type(pb: &Path) -> BTreeMap<(String, String), Vec<u64>> {
    let text = protoc_decode(pb);
    let d = parse_decoded(&text);
    // Labels: parse_decoded keeps none; read them here, sample by sample.
    let mut labels: Vec<Vec<(usize, usize)>> = Vec::new();
    let (mut in_sample, mut in_label, mut key) = (false, false, 0usize);
    for line in text.lines().map(str::trim) {
        match line {
            "sample {" => {
                in_sample = true;
                labels.push(Vec::new());
            }
            "label {" if in_sample => in_label = true,
            "}" if in_label => in_label = false,
            "}" if in_sample => in_sample = false,
            _ if in_label => {
                let (k, v) = line.split_once(": ").unwrap();
                let v: usize = v.parse().unwrap();
                match k {
                    "key" => key = v,
                    "str" => labels.last_mut().unwrap().push((key, v)),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    assert_eq!(labels.len(), d.samples.len());
    // Location ids are function ids here (one line per location, no lines).
    let locations = location_functions(&text);
    let mut out: BTreeMap<(String, String), Vec<u64>> = BTreeMap::new();
    for ((values, locs), labels) in d.samples.iter().zip(&labels) {
        let leaf = &d.strings[d.functions[&locations[&locs[0]]]];
        let ty = labels
            .iter()
            .find(|(k, _)| d.strings[*k] == "frame_type")
            .map_or("-".to_owned(), |(_, v)| d.strings[*v].clone());
        let sum = out
            .entry((leaf.clone(), ty))
            .or_insert(vec![0; values.len()]);
        for (a, b) in sum.iter_mut().zip(values) {
            *a += b;
        }
    }
    out
}

/// Location id -> function id, from protoc's text form.
fn location_functions(text: &str) -> BTreeMap<u64, u64> {
    let mut out = BTreeMap::new();
    let (mut depth, mut in_location, mut id) = (0, false, 0u64);
    for line in text.lines().map(str::trim) {
        if let Some(block) = line.strip_suffix(" {") {
            depth += 1;
            if depth == 1 && block == "location" {
                in_location = true;
            }
            continue;
        }
        if line == "}" {
            depth -= 1;
            if depth == 0 {
                in_location = false;
            }
            continue;
        }
        if !in_location {
            continue;
        }
        let (k, v) = line.split_once(": ").unwrap();
        match (depth, k) {
            (1, "id") => id = v.parse().unwrap(),
            (2, "function_id") => {
                out.insert(id, v.parse().unwrap());
            }
            _ => {}
        }
    }
    out
}

#[test]
fn pprof_samples_carry_their_leafs_frame_type() {
    let dir = temp_dir("frame-types-pprof");
    let pb = dir.join("typed.pb.gz");
    profrj_ok(&["convert", s(&typed()), "--to", "pprof", "-o", s(&pb)]);
    let got = pprof_by_leaf_type(&pb);
    // [samples, runnable_samples]: a leaf's selfTypes split its samples
    // exactly; its runnable ones in proportion (wait(): all 4 of 6 samples
    // are native); a node without types has no label.
    let want: BTreeMap<(String, String), Vec<u64>> = [
        ("p.Main.hot()", "c2", [2, 2]),
        ("p.Main.leaf()", "inlined", [5, 5]),
        ("p.Main.leaf()", "c2", [1, 1]),
        ("p.Main.leaf()", "interpreted", [3, 3]),
        ("p.Main.cold()", "-", [1, 1]),
        ("p.W.run()", "c1", [1, 1]),
        ("java.lang.Object.wait(native)", "native", [6, 4]),
        ("[libjvm.so]", "vm", [2, 2]),
    ]
    .into_iter()
    .map(|(f, t, v)| ((f.to_owned(), t.to_owned()), v.to_vec()))
    .collect();
    assert_eq!(got, want);
}

/// JMC's parser's frame types of `recording` (JmcFrameTypes).
fn jmc_frame_types(recording: &Path) -> String {
    run_jmc_reader("JmcFrameTypes", recording)
}

#[test]
fn jfr_frames_have_the_types_jmc_knows() {
    let dir = temp_dir("frame-types-jfr");
    let rec = dir.join("typed.jfr");
    profrj_ok(&["convert", s(&typed()), "--to", "jfr", "-o", s(&rec)]);
    // `frame METHOD DEPTH TYPE EVENTS` over the sample events: a stack's top
    // frame by its selfTypes, its callers by their frameTypes; hits are
    // execution samples, the other samples one wall-clock event per node.
    // C1 is `JIT compiled` (JFR has no tiers), the VM's code `Native`.
    assert_eq!(
        jmc_frame_types(&rec),
        "frame .[libjvm.so] 0 NATIVE 2\n\
         frame java.lang.Object.wait 0 NATIVE 5\n\
         frame p.Main.cold 0 other:JAVA 1\n\
         frame p.Main.hot 0 JIT_COMPILED 2\n\
         frame p.Main.hot 1 INTERPRETED 3\n\
         frame p.Main.hot 1 JIT_COMPILED 6\n\
         frame p.Main.leaf 0 INLINED 6\n\
         frame p.Main.leaf 0 INTERPRETED 3\n\
         frame p.Main.main 1 INTERPRETED 3\n\
         frame p.Main.main 2 INTERPRETED 9\n\
         frame p.W.run 0 JIT_COMPILED 1\n\
         frame p.W.run 1 INTERPRETED 5\n"
    );
    // profrj reads the types back: the recording's stacks give the lines
    // the snapshot gives (each frame written with its dominant type).
    let args = [
        "--to",
        "collapsed",
        "--frame-types",
        "--thread-frames",
        "--metric",
        "wall",
    ];
    let lines = |f: &Path| {
        let mut a = vec!["convert", s(f)];
        a.extend(args);
        collapsed_lines(&profrj_ok(&a))
    };
    assert_eq!(lines(&rec), lines(&typed()));
}

/// async-profiler's recording of a JVM that only interprets (`-Xint`):
/// every Java frame is interpreted, by construction, and profrj's reader
/// takes its frame types: every Java frame ends in `_[0]`, none is
/// compiled or inlined.
#[test]
fn async_profilers_types_are_read_from_its_recording() {
    let dir = temp_dir("frame-types-async-profiler");
    let so = async_profiler_library(&dir);
    let rec = dir.join("ap.jfr");
    let out = Command::new(java())
        .current_dir(&dir)
        .arg("-Xint")
        .arg(format!(
            "-agentpath:{}=start,event=cpu,interval=2ms,jfr,file={}",
            so.display(),
            rec.display()
        ))
        .args(["-cp", harness_classes(), "profrj.harness.CpuSplit", "1000"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = profrj_ok(&["convert", s(&rec), "--to", "collapsed", "--frame-types"]);
    let mut java_frames = 0;
    for line in text.lines() {
        let (stack, _) = line.rsplit_once(' ').unwrap();
        for frame in stack.split(';') {
            assert!(
                !["_[j]", "_[i]", "_[1]"].iter().any(|s| frame.ends_with(s)),
                "nothing is compiled under -Xint: {frame}"
            );
            if frame.starts_with("profrj.harness.") || frame.starts_with("java.") {
                assert!(
                    frame.ends_with("_[0]"),
                    "a Java frame, interpreted: {frame}"
                );
                java_frames += 1;
            }
        }
    }
    assert!(
        text.contains("profrj.harness.CpuSplit.heavy()_[0];profrj.harness.CpuSplit.unit()_[0] "),
        "{text}"
    );
    assert!(java_frames > 0);
}

/// async-profiler's palette as the page holds it: base colour and range.
const PALETTE: [(&str, [u8; 3], [u8; 3]); 6] = [
    ("interpreted", [0xb2, 0xe1, 0xb2], [20, 20, 20]),
    ("c2", [0x50, 0xe1, 0x50], [30, 30, 30]),
    ("inlined", [0x50, 0xcc, 0xcc], [30, 30, 30]),
    ("native", [0xe1, 0x5a, 0x5a], [30, 40, 40]),
    ("vm", [0xc8, 0xc8, 0x3c], [30, 30, 10]),
    ("c1", [0xcc, 0xe8, 0x80], [20, 20, 20]),
];

/// A frame's `background:rgb(r,g,b)`.
fn rgb(style: &str) -> Option<[u8; 3]> {
    let v = style.split("background:rgb(").nth(1)?;
    let v = &v[..v.find(')')?];
    let c: Vec<u8> = v.split(',').map(|x| x.trim().parse().unwrap()).collect();
    Some([c[0], c[1], c[2]])
}

fn in_palette(ty: &str, c: [u8; 3]) -> bool {
    let (_, base, range) = PALETTE.iter().find(|p| p.0 == ty).unwrap();
    (0..3).all(|i| c[i] >= base[i] && c[i] <= base[i].saturating_add(range[i]))
}

#[test]
fn flame_page_colours_frames_by_type_with_a_legend_and_tooltip() {
    let dir = temp_dir("frame-types-flame");
    let page = dir.join("typed.html");
    profrj_ok(&["flame", s(&typed()), "-o", s(&page), "--metric", "wall"]);
    let html = std::fs::read_to_string(&page).unwrap();
    // A script added to a copy hovers leaf() and reads the tooltip.
    let driver = r#"<script>
window.addEventListener("load", function () {
  var leaf = null, fs = document.querySelectorAll(".frame");
  for (var i = 0; i < fs.length; i++) if (fs[i].getAttribute("data-name") === "p.Main.leaf()") leaf = fs[i];
  leaf.dispatchEvent(new MouseEvent("mousemove", { bubbles: true, clientX: 50, clientY: 50 }));
  document.body.setAttribute("data-tip", document.getElementById("tip").textContent);
});
</script>
</body>"#;
    let driven = dir.join("driven.html");
    std::fs::write(&driven, html.replacen("</body>", driver, 1)).unwrap();
    let dom = chromium(&[
        "--virtual-time-budget=3000",
        "--dump-dom",
        &format!("file://{}#thread=main", driven.display()),
    ]);
    // The two main threads merged: each frame's dominant type over both.
    let fs = frames(&dom);
    let by_path = |p: &str| {
        fs.iter()
            .find(|f| f["path"] == p)
            .unwrap_or_else(|| panic!("no frame {p}: {dom}"))
    };
    for (path, ty, types) in [
        ("p.Main.main()", "interpreted", "interpreted:12"),
        (
            "p.Main.main();p.Main.hot()",
            "c2",
            "c2:6 interpreted:3 c1:2",
        ),
        (
            "p.Main.main();p.Main.hot();p.Main.leaf()",
            "inlined",
            "inlined:5 interpreted:3 c2:1",
        ),
    ] {
        let f = by_path(path);
        assert_eq!(f["data-type"], ty, "{path}");
        assert_eq!(f["data-types"], types, "{path}");
        let c = rgb(&f["style"]).unwrap_or_else(|| panic!("{path}: {}", f["style"]));
        assert!(in_palette(ty, c), "{path}: {c:?} is not {ty}'s colour");
    }
    // No type: today's colours (hsl), no type attribute.
    let cold = by_path("p.Main.main();p.Main.cold()");
    assert_eq!(cold["data-type"], "");
    assert!(
        cold["style"].contains("background:hsl("),
        "{}",
        cold["style"]
    );
    // The legend: every palette entry, each swatch the type's base colour.
    let legend = dom.split("<div id=\"legend\"").nth(1).unwrap();
    let legend = &legend[..legend.find("</div>").unwrap()];
    assert!(!legend.starts_with(" hidden"), "{legend}");
    for (ty, base, _) in PALETTE {
        let item = legend
            .split("class=\"legend-type\"")
            .find(|i| i.contains(&format!("data-types=\"{ty}")) || i.contains(&format!(" {ty}\"")))
            .unwrap_or_else(|| panic!("no legend entry for {ty}: {legend}"));
        let want = format!("background:rgb({},{},{})", base[0], base[1], base[2]);
        assert!(item.contains(&want), "{ty}: {item}");
    }
    let tip = dom.split("data-tip=\"").nth(1).unwrap();
    let tip = &tip[..tip.find('"').unwrap()];
    assert!(
        tip.ends_with(
            "ran as: inlined 5 (55.56%), interpreted 3 (33.33%), c2 1 (11.11%) of 9 samples"
        ),
        "{tip}"
    );
    // The JVM's compiler thread says what it is in the thread list.
    assert!(
        dom.contains("C2 CompilerThread0 (") && dom.contains(", JVM compiler thread)"),
        "thread list"
    );
}

#[test]
fn a_bad_type_is_one_error_naming_the_attribute() {
    let dir = temp_dir("frame-types-bad");
    let bad = dir.join("bad.xml");
    let xml = std::fs::read_to_string(typed())
        .unwrap()
        .replace("selfTypes=\"c1:1\"", "selfTypes=\"c1:one\"");
    std::fs::write(&bad, xml).unwrap();
    for to in ["collapsed", "pprof"] {
        let out = profrj(&["convert", s(&bad), "--to", to, "-o", s(&dir.join("out"))]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.contains("bad.xml: line 22, column 1: <profile> attribute selfTypes: ")
                && err.contains("\"c1:one\""),
            "{err}"
        );
    }
    // --frame-types is collapsed's own.
    let out = profrj(&["convert", s(&typed()), "--to", "pprof", "--frame-types"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--frame-types is for --to collapsed"));
}

/// A real JVM's typed snapshot (FrameTypes' compiled phase under C2, its
/// helper inlined: by construction measured() interpreted, work() C2,
/// helper() inlined) gives those suffixes; the same snapshot with its type
/// attributes taken out converts as an untyped one: no suffix, label,
/// legend or JFR type, and its plain collapsed lines are the typed one's.
#[test]
fn a_real_snapshot_with_and_without_types() {
    let dir = temp_dir("frame-types-real");
    let typed_snap = dir.join("typed.xml");
    run_java_with(
        &dir,
        &[
            "-XX:CompileCommand=quiet",
            "-Xbatch",
            "-XX:CompileCommand=exclude,profrj.harness.FrameTypes::measured",
            "-XX:CompileCommand=exclude,profrj.harness.FrameTypes::warm",
            "-XX:-TieredCompilation",
            "-XX:CompileCommand=inline,profrj.harness.FrameTypes::helper",
        ],
        &format!("sampling,event=cpu,file={}", typed_snap.display()),
        "profrj.harness.FrameTypes",
        &["compiled", "1500"],
    )
    .assert_success();
    let typed_xml = read_snapshot(&typed_snap);
    assert!(typed_xml.contains("frameTypes="), "the agent types frames");
    let suffixed = profrj_ok(&[
        "convert",
        s(&typed_snap),
        "--to",
        "collapsed",
        "--frame-types",
    ]);
    let mut helper_lines = 0;
    for line in suffixed
        .lines()
        .filter(|l| l.contains("FrameTypes.measured()"))
    {
        assert!(line.contains("FrameTypes.measured()_[0]"), "{line}");
        if line.contains("FrameTypes.work()") {
            assert!(line.contains("FrameTypes.work()_[j]"), "{line}");
        }
        if line.contains("FrameTypes.helper()") {
            assert!(line.contains("FrameTypes.helper()_[i]"), "{line}");
            helper_lines += 1;
        }
    }
    assert!(helper_lines > 0, "{suffixed}");
    let typed_pb = dir.join("typed.pb.gz");
    profrj_ok(&[
        "convert",
        s(&typed_snap),
        "--to",
        "pprof",
        "-o",
        s(&typed_pb),
    ]);
    assert!(protoc_decode(&typed_pb).contains("frame_type"));

    let snap = dir.join("split.xml");
    let untyped = strip_attr(&strip_attr(&typed_xml, "frameTypes"), "selfTypes");
    assert!(!untyped.contains("Types="), "{untyped}");
    roxmltree::Document::parse(&untyped).expect("still a snapshot");
    std::fs::write(&snap, &untyped).unwrap();
    assert_eq!(
        profrj_ok(&["convert", s(&typed_snap), "--to", "collapsed"]),
        profrj_ok(&["convert", s(&snap), "--to", "collapsed"]),
        "types change no plain line"
    );
    let plain = profrj_ok(&["convert", s(&snap), "--to", "collapsed"]);
    let out = profrj(&["convert", s(&snap), "--to", "collapsed", "--frame-types"]);
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), plain);
    assert!(!plain.contains("_["), "{plain}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("profrj: <sampler> has no frame types"),
        "a warning says why no suffix was added"
    );
    let pb = dir.join("split.pb.gz");
    profrj_ok(&["convert", s(&snap), "--to", "pprof", "-o", s(&pb)]);
    assert!(!protoc_decode(&pb).contains("frame_type"));
    let page = dir.join("split.html");
    profrj_ok(&["flame", s(&snap), "-o", s(&page)]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("\"frameTypes\""));
    let dom = chromium(&["--dump-dom", &format!("file://{}", page.display())]);
    assert!(
        dom.contains("<div id=\"legend\" hidden=\"\">"),
        "no legend without types"
    );
    assert!(frames(&dom).iter().all(|f| f["data-type"].is_empty()));
    let rec = dir.join("split.jfr");
    profrj_ok(&["convert", s(&snap), "--to", "jfr", "-o", s(&rec)]);
    let types = jmc_frame_types(&rec);
    assert!(
        types
            .lines()
            .all(|l| l.contains(" other:JAVA ") || l.contains(" NATIVE ")),
        "{types}"
    );
}

/// `profrj merge` sums the types as it sums the figures: the snapshot
/// merged with itself, its two main threads into one.
#[test]
fn merged_snapshots_sum_their_types() {
    let dir = temp_dir("frame-types-merge");
    let merged = dir.join("merged.xml");
    profrj_ok(&["merge", s(&typed()), s(&typed()), "-o", s(&merged)]);
    let text = profrj_ok(&[
        "convert",
        s(&merged),
        "--to",
        "collapsed",
        "--frame-types",
        "--thread-frames",
        "--metric",
        "wall",
    ]);
    let lines: BTreeMap<&str, &str> = text.lines().map(|l| l.rsplit_once(' ').unwrap()).collect();
    for (stack, count) in [
        ("[main];p.Main.main()_[0];p.Main.hot()_[j]", "4"),
        (
            "[main];p.Main.main()_[0];p.Main.hot()_[j];p.Main.leaf()_[i]",
            "18",
        ),
        ("[main];p.Main.main()_[0];p.Main.cold()", "2"),
        ("[worker];p.W.run()_[0];java.lang.Object.wait(native)", "12"),
    ] {
        assert_eq!(lines.get(stack), Some(&count), "{stack}: {text}");
    }
    let xml = read_snapshot(&merged);
    let doc = roxmltree::Document::parse(&xml).unwrap();
    let node = |name: &str| {
        doc.descendants()
            .find(|n| n.attribute("name") == Some(name))
            .unwrap_or_else(|| panic!("no {name}"))
    };
    let leaf = node("p.Main.leaf()");
    assert_eq!(
        leaf.attribute("frameTypes"),
        Some("inlined:10 interpreted:6 c2:2")
    );
    assert_eq!(
        leaf.attribute("selfTypes"),
        Some("inlined:10 interpreted:6 c2:2")
    );
    assert_eq!(
        node("p.Main.hot()").attribute("frameTypes"),
        Some("c2:12 interpreted:6 c1:4")
    );
    assert_eq!(node("p.Main.cold()").attribute("frameTypes"), None);
}
