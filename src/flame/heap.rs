//! `profrj flame HEAP.hprof`: a heap dump's type paths
//! (`crate::heapread::type_paths`: by dominator, or by allocating thread
//! and site) as the flame page's one tree, `heap`.

use super::data::{json_name, json_str, spill};
use super::render;
use crate::error::CliError;
use crate::heapread::type_paths::{self, By, Paths, ROOT};
use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

/// Writes the page for the dump at `path` to `out`.
pub fn write(path: &Path, gzip: bool, by: By, title: &str, out: &Path) -> Result<(), CliError> {
    let (paths, unreachable) = type_paths::read(path, gzip, by)?;
    let (weight, scope) = match by {
        By::Dominator => (
            "retained bytes, by dominator path",
            "each frame an object type, under the objects that dominate it",
        ),
        By::Site => (
            "shallow bytes, by allocating thread and site",
            "the live objects' own sizes where they were allocated",
        ),
    };
    let scope = match unreachable {
        0 => scope.to_owned(),
        b => format!("{scope}; {b} bytes no GC root reaches left out"),
    };
    crate::output::stream(Some(out), |w| {
        render(w, title, |w| page_json(w, title, &paths, weight, &scope))
    })
}

/// The page's data: the flame page's JSON (`crate::flame`'s shape), one
/// tree named "heap", in preorder.
fn page_json(
    w: &mut dyn Write,
    title: &str,
    paths: &Paths,
    weight: &str,
    scope: &str,
) -> io::Result<()> {
    let count = paths.parent.len();
    // Children lists (CSR) and each path's total, children after parents.
    let mut kids_at = vec![0u32; count + 1];
    for p in 1..count {
        kids_at[paths.parent[p] as usize + 1] += 1;
    }
    for i in 0..count {
        kids_at[i + 1] += kids_at[i];
    }
    let mut fill = kids_at.clone();
    let mut kids = vec![0u32; count.saturating_sub(1)];
    for p in 1..count {
        let at = &mut fill[paths.parent[p] as usize];
        kids[*at as usize] = p as u32;
        *at += 1;
    }
    let mut total = paths.own.clone();
    // A child's index is above its parent's: one backward pass sums them.
    for p in (1..count).rev() {
        total[paths.parent[p] as usize] += total[p];
    }
    let mut out = String::from("{\"title\":");
    json_str(&mut out, title);
    out.push_str(",\"section\":\"heap\",\"metric\":\"bytes\",\"unit\":\"bytes\",\"weight\":");
    json_str(&mut out, weight);
    out.push_str(",\"live\":true,\"scope\":");
    json_str(&mut out, scope);
    out.push_str(",\"classFrames\":\"object types\"");
    let _ = write!(
        out,
        ",\"threads\":[{{\"name\":\"heap\",\"total\":{},\"nodes\":[-1,{},{}",
        total[ROOT as usize],
        paths.own[ROOT as usize],
        kids_at[1] - kids_at[0]
    );
    let mut stack = vec![ROOT];
    // Preorder: a path, then its children's subtrees.
    while let Some(p) = stack.pop() {
        let p = p as usize;
        if p != ROOT as usize {
            let n = kids_at[p + 1] - kids_at[p];
            let _ = write!(out, ",{},{},{}", paths.frame[p], paths.own[p], n);
        }
        stack.extend(
            kids[kids_at[p] as usize..kids_at[p + 1] as usize]
                .iter()
                .rev(),
        );
        spill(w, &mut out, false)?;
    }
    out.push_str("]}],\"names\":[");
    for (i, name) in paths.names.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        json_name(&mut out, name);
    }
    out.push_str("],\"classes\":[");
    let types = paths.is_type.iter().enumerate().filter(|(_, &t)| t);
    for (k, (i, _)) in types.enumerate() {
        if k > 0 {
            out.push(',');
        }
        let _ = write!(out, "{i}");
    }
    out.push_str("]}");
    w.write_all(out.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_data_is_the_tree_in_preorder_with_its_total() {
        let mut p = Paths::new();
        let (map, node, arr) = (
            p.frame_named("Map".into(), true),
            p.frame_named("Node".into(), true),
            p.frame_named("long[]".into(), true),
        );
        let m = p.child(ROOT, map);
        let n = p.child(m, node);
        let a = p.child(n, arr);
        let b = p.child(ROOT, arr);
        for (path, bytes) in [(m, 48), (n, 32), (a, 8024), (b, 24)] {
            p.own[path as usize] += bytes;
        }
        let mut out = Vec::new();
        page_json(&mut out, "t", &p, "w", "s").unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let t = &v["threads"][0];
        assert_eq!(t["total"], 48 + 32 + 8024 + 24);
        let nodes: Vec<i64> = t["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_i64().unwrap())
            .collect();
        // [name, own, children]: the root, Map > Node > long[], then long[].
        let want = [-1, 0, 2, 0, 48, 1, 1, 32, 1, 2, 8024, 0, 2, 24, 0];
        assert_eq!(nodes, want);
        assert_eq!(v["names"], serde_json::json!(["Map", "Node", "long[]"]));
        assert_eq!(v["classes"], serde_json::json!([0, 1, 2]));
    }
}
