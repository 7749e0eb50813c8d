//! `profrj flame` pages loaded in headless Chromium: the frames' shares,
//! zoom and search from the URL, the page's own handlers driven as a person
//! would, and a deep chain drawn with a DOM linear in its frames.

use crate::common::*;
use crate::snapshots::*;
use std::collections::HashMap;

#[test]
fn flame_page_in_headless_chromium() {
    let snap = split_snapshot();
    let dir = temp_dir("report-flame");
    let page = dir.join("split.html");
    profrj_ok(&["flame", s(snap), "-o", s(&page)]);
    let html = std::fs::read_to_string(&page).unwrap();
    for remote in ["http://", "https://", "//cdn", "<link", "src=\""] {
        assert!(
            !html.contains(remote),
            "the page must be self-contained: {remote}"
        );
    }
    let url = format!("file://{}", page.display());
    let heavy_name = format!("{SPLIT}.heavy()");
    let heavy_path = format!("{SPLIT}.main();{heavy_name}");

    // Thread main: heavy()'s frame holds 75% of the width.
    let dom = chromium(&["--dump-dom", &format!("{url}#thread=main")]);
    let fs = frames(&dom);
    assert!(fs.len() > 5, "no frames drawn: {dom}");
    let heavy = fs
        .iter()
        .find(|f| f["path"] == heavy_path)
        .unwrap_or_else(|| panic!("no frame for {heavy_path}"));
    let share: f64 = heavy["data-share"].parse().unwrap();
    eprintln!("flame: heavy() share {share}%, width {}%", width(heavy));
    let want = snapshot_share(snap, "main", &heavy_name, "cumulated");
    assert_shown(share, want, "heavy() frame");
    assert!((width(heavy) - share).abs() < 0.01);
    assert!(fs.iter().all(|f| !f["class"].contains("match")));
    assert!(dom.contains("<option value=\"main\""), "thread selector");
    assert!(
        dom.contains(&format!("<tr data-name=\"{SPLIT}.unit()\"")),
        "top-methods table"
    );

    // Zoomed on heavy(): its frame spans the whole width, its caller too (faded).
    let zoom = format!(
        "{url}#thread=main&zoom={}",
        heavy_path
            .replace(';', "%3B")
            .replace('(', "%28")
            .replace(')', "%29")
    );
    let fs = frames(&chromium(&["--dump-dom", &zoom]));
    let heavy = fs.iter().find(|f| f["path"] == heavy_path).unwrap();
    assert_eq!(width(heavy), 100.0);
    assert!(heavy["class"].contains("zoomed"));
    assert!(
        fs.iter().all(|f| !f["path"].contains("light()")),
        "light() is outside the zoom"
    );
    // Its callee: its share of heavy() (heavy() has a few samples of its own).
    let unit = fs
        .iter()
        .find(|f| f["path"] == format!("{heavy_path};{SPLIT}.unit()"))
        .unwrap();
    let of_heavy = |f: &HashMap<String, String>| f["data-total"].parse::<f64>().unwrap();
    let expect = of_heavy(unit) * 100.0 / of_heavy(heavy);
    assert!(
        (width(unit) - expect).abs() < 0.001,
        "{} vs {expect}",
        width(unit)
    );

    // Search: frames whose name contains "heavy" are highlighted, others not;
    // in the all-threads view.
    let dom = chromium(&["--dump-dom", &format!("{url}#thread=all&search=heavy")]);
    let fs = frames(&dom);
    let matched: Vec<_> = fs.iter().filter(|f| f["class"].contains("match")).collect();
    assert!(!matched.is_empty());
    assert!(matched.iter().all(|f| f["data-name"].contains("heavy")));
    assert!(fs
        .iter()
        .filter(|f| f["data-name"].contains("heavy"))
        .all(|f| f["class"].contains("match")));
    assert!(dom.contains("data-matched=\""), "search summary");

    // A screenshot (docs/flame.png is one of these).
    let png = dir.join("flame.png");
    chromium(&[
        "--hide-scrollbars",
        &format!("--screenshot={}", png.display()),
        "--window-size=1200,800",
        &format!("{url}#thread=main&search=heavy"),
    ]);
    let bytes = std::fs::read(&png).expect("no screenshot");
    assert!(
        bytes.starts_with(b"\x89PNG") && bytes.len() > 10_000,
        "screenshot {}",
        bytes.len()
    );
}

/// The page's own handlers: a script added to a copy of the page clicks a
/// frame, types a search, hovers and picks a thread, as a person would, and
/// writes what it saw into the DOM that Chromium dumps.
#[test]
fn flame_page_reacts_to_clicks_typing_hover_and_thread_choice() {
    let snap = split_snapshot();
    let dir = temp_dir("report-flame-ui");
    let page = dir.join("split.html");
    profrj_ok(&["flame", s(snap), "-o", s(&page)]);
    let html = std::fs::read_to_string(&page).unwrap();
    let driver = format!(
        r#"<script>
window.addEventListener("load", function () {{
  var out = {{}};
  function frame(path) {{
    var fs = document.querySelectorAll(".frame"), byId = {{}};
    for (var i = 0; i < fs.length; i++) byId[fs[i].getAttribute("data-id")] = fs[i];
    for (var j = 0; j < fs.length; j++) {{
      var names = [];
      for (var n = fs[j]; n && n.getAttribute("data-parent") !== ""; n = byId[n.getAttribute("data-parent")]) names.push(n.getAttribute("data-name"));
      if (names.reverse().join(";") === path) return fs[j];
    }}
    return null;
  }}
  function w(f) {{ return f ? f.getAttribute("style").match(/width:([0-9.]+)%/)[1] : "none"; }}
  function done() {{ document.body.setAttribute("data-ui", JSON.stringify(out)); }}
  var heavy = "{SPLIT}.main();{SPLIT}.heavy()";
  frame(heavy).dispatchEvent(new MouseEvent("mousemove", {{ bubbles: true, clientX: 50, clientY: 50 }}));
  out.tip = document.getElementById("tip").textContent;
  frame(heavy).click();
  setTimeout(function () {{
    out.hashAfterClick = decodeURIComponent(location.hash);
    out.widthAfterClick = w(frame(heavy));
    var search = document.getElementById("search");
    search.value = "light";
    search.dispatchEvent(new Event("input"));
    setTimeout(function () {{
      out.hashAfterTyping = decodeURIComponent(location.hash);
      out.matches = document.querySelectorAll(".frame.match").length;
      document.getElementById("reset").click();
      setTimeout(function () {{
        out.hashAfterReset = decodeURIComponent(location.hash);
        out.lightMatched = frame("{SPLIT}.main();{SPLIT}.light()").className;
        var sel = document.getElementById("thread");
        sel.value = "burner";
        sel.dispatchEvent(new Event("change"));
        setTimeout(function () {{
          out.hashAfterThread = decodeURIComponent(location.hash);
          out.rootAfterThread = document.querySelector(".frame").getAttribute("data-name");
          done();
        }}, 100);
      }}, 100);
    }}, 400);
  }}, 100);
}});
</script>
</body>"#
    );
    let driven = dir.join("driven.html");
    std::fs::write(&driven, html.replacen("</body>", &driver, 1)).unwrap();
    let dom = chromium(&[
        "--virtual-time-budget=5000",
        "--dump-dom",
        &format!("file://{}#thread=main", driven.display()),
    ]);
    let ui = dom
        .split("data-ui=\"")
        .nth(1)
        .unwrap_or_else(|| panic!("the driver did not finish: {dom}"));
    let ui = ui[..ui.find('"').unwrap()]
        .replace("&quot;", "\"")
        .replace("&amp;", "&");
    eprintln!("{ui}");
    let heavy_path = format!("{SPLIT}.main();{SPLIT}.heavy()");
    assert!(
        ui.contains(&format!("\"tip\":\"{SPLIT}.heavy()total ")),
        "hover: {ui}"
    );
    assert!(
        ui.contains(&format!(
            "\"hashAfterClick\":\"#thread=main&zoom={heavy_path}\""
        )),
        "{ui}"
    );
    assert!(ui.contains("\"widthAfterClick\":\"100.0000\""), "{ui}");
    assert!(
        ui.contains(&format!(
            "\"hashAfterTyping\":\"#thread=main&search=light&zoom={heavy_path}\""
        )),
        "{ui}"
    );
    // Zoomed on heavy(), nothing named light is drawn.
    assert!(ui.contains("\"matches\":0"), "{ui}");
    assert!(
        ui.contains("\"hashAfterReset\":\"#thread=main&search=light\""),
        "{ui}"
    );
    assert!(ui.contains("\"lightMatched\":\"frame  match\""), "{ui}");
    assert!(
        ui.contains("\"hashAfterThread\":\"#thread=burner&search=light\""),
        "{ui}"
    );
    assert!(ui.contains("\"rootAfterThread\":\"burner\""), "{ui}");
}

/// Issue 18, finding 7: a 2,048-deep chain (weight at every level) opens in
/// headless Chromium with a DOM linear in its frames: frames carry ids, not
/// their paths (which made 139 MB of attributes and took 21 s).
#[test]
fn a_deep_chain_opens_with_a_linear_dom() {
    let dir = temp_dir("report-flame-deep");
    let n = 2048;
    let mut xml =
        String::from("<doc><sampler><thread name=\"main\" cumulated=\"1\" cumulatedElapsed=\"1\">");
    for i in 0..n {
        xml.push_str(&format!(
            "<profile name=\"pkg.Deep.level{i}()\" hits=\"1\" elapsed=\"1\" cumulated=\"{0}\" cumulatedElapsed=\"{0}\">",
            n - i
        ));
    }
    for _ in 0..n {
        xml.push_str("</profile>");
    }
    xml.push_str("</thread></sampler></doc>");
    let snap = dir.join("deep.xml");
    std::fs::write(&snap, xml).unwrap();
    let page = dir.join("deep.html");
    profrj_ok(&["flame", s(&snap), "-o", s(&page)]);
    let t = std::time::Instant::now();
    let dom = chromium(&[
        "--dump-dom",
        &format!("file://{}#thread=main", page.display()),
    ]);
    let took = t.elapsed();
    let drawn = frames(&dom);
    eprintln!(
        "deep chain: {} frames drawn, DOM {} bytes, Chromium {took:?}",
        drawn.len(),
        dom.len()
    );
    assert!(
        drawn.len() >= 1000,
        "the chain is drawn: {} frames",
        drawn.len()
    );
    assert!(
        dom.len() < 4 << 20,
        "DOM of {} bytes is not linear in the frames",
        dom.len()
    );
    let deepest = drawn.iter().max_by_key(|f| f["path"].len()).unwrap();
    assert!(deepest["path"].starts_with("pkg.Deep.level0();pkg.Deep.level1()"));
}
