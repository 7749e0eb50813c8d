//! `profrj flame HEAP.hprof` loaded in headless Chromium: the dominator
//! view's frames weigh HeapRetain's retained sizes known by construction,
//! and the site view weighs profrj's dump's objects where they were made.

use crate::agent::agent_dump;
use crate::common::*;
use crate::report::harness_rows;
use crate::*;
use std::collections::HashMap;

/// The drawn frames of `page` (its one tree, "heap").
fn heap_frames(page: &Path) -> Vec<HashMap<String, String>> {
    let url = format!("file://{}#thread=heap", page.display());
    frames(&chromium(&["--dump-dom", &url]))
}

fn total(f: &HashMap<String, String>) -> u64 {
    f["data-total"].parse().unwrap()
}

/// The tree's total (its root's).
fn tree_total(fs: &[HashMap<String, String>]) -> u64 {
    total(fs.iter().find(|f| f["data-parent"].is_empty()).unwrap())
}

#[test]
fn flame_of_a_heap_weighs_retained_bytes_by_dominator_path_and_bytes_by_site() {
    let dir = temp_dir("heap-flame");
    let (dominated, by_site) = (dir.join("dominator.html"), dir.join("site.html"));
    let dump = &dumps().0;
    profrj_ok(&["flame", s(dump), "-o", s(&dominated)]);
    profrj_ok(&["flame", s(dump), "--by", "site", "-o", s(&by_site)]);
    let url = format!("file://{}#thread=heap", dominated.display());
    let dom = chromium(&["--dump-dom", &url]);
    assert!(dom.contains("Top types") && dom.contains("placeholder=\"type name\""));
    let fs = frames(&dom);
    let rows: HashMap<&str, Row> = harness_rows().into_iter().collect();
    // One frame each, weighing what it retains.
    for class in [
        "profrj.harness.HeapRetain$Cache",
        "profrj.harness.HeapRetain$Pair",
    ] {
        let found: Vec<_> = fs.iter().filter(|f| f["data-name"] == class).collect();
        assert_eq!(found.len(), 1, "{class}");
        assert_eq!(total(found[0]), rows[class].2, "{class}");
    }
    // The shared object is dominated by the pair, by neither holder.
    let shared: Vec<_> = fs
        .iter()
        .filter(|f| f["data-name"] == "profrj.harness.HeapRetain$Shared")
        .collect();
    assert_eq!(shared.len(), 1);
    assert!(
        shared[0]["path"]
            .ends_with("profrj.harness.HeapRetain$Pair;profrj.harness.HeapRetain$Shared"),
        "{}",
        shared[0]["path"]
    );
    assert_eq!(total(shared[0]), rows["profrj.harness.HeapRetain$Shared"].2);
    // The Cache's 300 keys: one frame below the map's nodes, 300 × 20 bytes.
    let keys: u64 = fs
        .iter()
        .filter(|f| f["data-name"] == "profrj.harness.HeapRetain$Key")
        .map(total)
        .sum();
    assert_eq!(keys, N * 20);
    // Both views weigh every reachable object once (the page draws only
    // frames wide enough to see, so their own bytes are not summed here).
    assert_eq!(tree_total(&heap_frames(&by_site)), tree_total(&fs));
}

#[test]
fn flame_of_profrjs_dump_weighs_objects_by_thread_and_site() {
    let dir = temp_dir("heap-flame-agent");
    let page = dir.join("site.html");
    profrj_ok(&["flame", s(agent_dump()), "--by", "site", "-o", s(&page)]);
    let fs = heap_frames(&page);
    let r = report(agent_dump(), &["--top", "0"]);
    let (count, shallow, _) = r.classes["profrj.harness.HeapRetain$Leaked"];
    let under = |prefix: &str, class: &str| -> u64 {
        let found: Vec<_> = fs
            .iter()
            .filter(|f| f["path"].starts_with(prefix) && f["data-name"] == class)
            .collect();
        assert_eq!(found.len(), 1, "{prefix} … {class}");
        total(found[0])
    };
    // Made by the thread named leaker, in leakRound; their arrays in
    // Leaked's constructor.
    assert_eq!(
        under(
            "leaker;profrj.harness.HeapRetain.leakRound(HeapRetain.java:",
            "profrj.harness.HeapRetain$Leaked"
        ),
        shallow
    );
    assert_eq!(
        under(
            "leaker;profrj.harness.HeapRetain$Leaked.<init>(HeapRetain.java:",
            "long[]"
        ),
        count * long_array(LEAK_LEN)
    );
}

#[test]
fn flame_of_a_heap_refuses_a_snapshots_options() {
    let dump = &dumps().0;
    let out = profrj(&["flame", s(dump), "--thread", "main"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("--by, -o and --title"), "{err}");
    // And a snapshot refuses --by.
    let dir = temp_dir("heap-flame-snapshot");
    let snap = dir.join("s.xml");
    std::fs::write(&snap, "<snapshot version=\"1.0\"></snapshot>").unwrap();
    let out = profrj(&["flame", s(&snap), "--by", "site"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("--by is for a heap dump"), "{err}");
}

/// A gzipped dump draws the same page as the plain one.
#[test]
fn flame_of_a_gzipped_heap_is_the_plain_ones() {
    let dir = temp_dir("heap-flame-gz");
    let plain = &dumps().0;
    let gz = dir.join("a.hprof.gz");
    let mut enc = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    std::io::copy(&mut std::fs::File::open(plain).unwrap(), &mut enc).unwrap();
    enc.finish().unwrap();
    let data = |dump: &Path, name: &str| -> String {
        let page = dir.join(name);
        profrj_ok(&["flame", s(dump), "--title", "t", "-o", s(&page)]);
        let html = std::fs::read_to_string(&page).unwrap();
        let at = html.find("application/json\">").unwrap();
        html[at..at + html[at..].find("</script>").unwrap()].to_owned()
    };
    assert_eq!(data(plain, "plain.html"), data(&gz, "gz.html"));
}
